//! Compiles every congestion control in `bpf/` into a BPF object, CO-RE against the BTF of the
//! kernel this machine runs (the header comes from `bpftool btf dump`), for `src/stacks.rs` to
//! embed. Needs clang (19 by default; `TCPEVAL_CLANG` names another) and bpftool; the BPF
//! helper headers come from libbpf-dev.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const KERNEL_BTF: &str = "/sys/kernel/btf/vmlinux";
const SOURCES: &str = "bpf";
const INSTALL_HINT: &str =
    "apt-get install clang-19 bpftool libbpf-dev libelf-dev zlib1g-dev pkg-config";

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed={SOURCES}");
    println!("cargo:rerun-if-env-changed=TCPEVAL_CLANG");
    write_kernel_header(&out.join("vmlinux.h"));
    let clang = env::var("TCPEVAL_CLANG").unwrap_or_else(|_| "clang-19".to_owned());
    let arch = match env::var("CARGO_CFG_TARGET_ARCH").as_deref() {
        Ok("x86_64") => "x86",
        Ok("aarch64") => "arm64",
        Ok(other) => panic!("no BPF target architecture known for {other}"),
        Err(_) => panic!("cargo sets CARGO_CFG_TARGET_ARCH"),
    };
    let mut sources: Vec<PathBuf> = std::fs::read_dir(SOURCES)
        .expect("the bpf/ directory")
        .map(|entry| entry.expect("a readable bpf/ entry").path())
        .filter(|path| path.to_string_lossy().ends_with(".bpf.c"))
        .collect();
    sources.sort();
    for source in sources {
        let stem = source
            .file_name()
            .and_then(|n| n.to_str())
            .expect("a UTF-8 name");
        let object = out.join(stem.replace(".bpf.c", ".bpf.o"));
        run(Command::new(&clang)
            .args(["-g", "-O2", "-Wall", "-Werror", "-target", "bpf"])
            .arg(format!("-D__TARGET_ARCH_{arch}"))
            .arg("-I")
            .arg(&out)
            .args(["-I", SOURCES, "-c"])
            .arg(&source)
            .arg("-o")
            .arg(&object));
    }
}

/// The kernel's types as a C header: what CO-RE relocates against when the object is loaded.
fn write_kernel_header(path: &Path) {
    let dumped = Command::new("bpftool")
        .args(["btf", "dump", "file", KERNEL_BTF, "format", "c"])
        .output()
        .unwrap_or_else(|e| panic!("bpftool could not be run ({e}); {INSTALL_HINT}"));
    if !dumped.status.success() {
        panic!(
            "bpftool could not read {KERNEL_BTF}: {}; the kernel needs CONFIG_DEBUG_INFO_BTF",
            String::from_utf8_lossy(&dumped.stderr).trim()
        );
    }
    std::fs::write(path, dumped.stdout).expect("OUT_DIR is writable");
}

fn run(command: &mut Command) {
    let status = command
        .status()
        .unwrap_or_else(|e| panic!("{command:?} could not be run ({e}); {INSTALL_HINT}"));
    assert!(status.success(), "{command:?} failed");
}
