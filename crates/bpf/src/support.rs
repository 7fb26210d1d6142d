//! Whether this kernel can run a BPF congestion control at all, and if not, what it lacks.

use std::path::Path;

use libbpf_rs::btf::types::Struct;
use libbpf_rs::btf::Btf;

use crate::error::{BpfError, Result};

const KERNEL_BTF: &str = "/sys/kernel/btf/vmlinux";
/// The kernel declares this type when TCP congestion controls may be BPF struct_ops
/// (CONFIG_BPF_JIT and CONFIG_BPF_SYSCALL with the TCP struct_ops built in).
const TCP_STRUCT_OPS: &str = "bpf_struct_ops_tcp_congestion_ops";

pub fn check() -> Result<()> {
    if !Path::new(KERNEL_BTF).exists() {
        return Err(BpfError::Unsupported(format!(
            "no {KERNEL_BTF} (the kernel needs CONFIG_DEBUG_INFO_BTF)"
        )));
    }
    let btf = Btf::from_vmlinux()
        .map_err(|e| BpfError::Unsupported(format!("{KERNEL_BTF} unreadable: {e}")))?;
    if btf.type_by_name::<Struct>(TCP_STRUCT_OPS).is_none() {
        return Err(BpfError::Unsupported(format!(
            "no struct_ops for tcp_congestion_ops ({TCP_STRUCT_OPS} is not in its BTF)"
        )));
    }
    Ok(())
}
