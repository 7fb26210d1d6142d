//! A BPF stack registered in the running kernel under a name of the caller's choosing.
//!
//! The object is opened, its struct_ops value renamed and its parameter block filled before
//! loading (the verifier then sees the parameters as constants), and attached as a
//! struct_ops *link*: the registration lives exactly as long as this process holds the link,
//! so a process killed by any signal leaves nothing registered.

use std::collections::BTreeMap;
use std::os::fd::{AsFd, AsRawFd};

use libbpf_rs::btf::types::{MemberAttr, Struct};
use libbpf_rs::btf::Btf;
use libbpf_rs::{ErrorKind, Link, MapCore, MapType, Object, ObjectBuilder, OpenObject};

use serde::Serialize;

use crate::error::{BpfError, Result};
use crate::stacks::Stack;

/// Linux's TCP_CA_NAME_MAX (16) with its terminating NUL.
pub const NAME_MAX_BYTES: usize = 15;
const PARAMS_SECTION: &str = ".rodata.params";

pub struct Registration {
    pub name: String,
    // Dropped in this order: the link unregisters the stack, then the object goes.
    _link: Link,
    object: Object,
}

/// How often the kernel ran one of the stack's programs and for how long in all; counted only
/// while `kernel.bpf_stats_enabled` is 1 (it costs two clock reads per call).
#[derive(Debug, Serialize)]
pub struct ProgramStats {
    pub calls: u64,
    pub run_ns: u64,
    /// Calls the kernel skipped because the program was already running on that CPU (its
    /// trampoline's recursion guard): the caller then reads a return value the program
    /// never gave. Counted whether or not the statistics are on.
    pub recursion_misses: u64,
}

impl Registration {
    /// Each program's counters, by name, read from its descriptor's fdinfo (`run_cnt`,
    /// `run_time_ns`).
    pub fn program_stats(&self) -> BTreeMap<String, ProgramStats> {
        self.object
            .progs()
            .map(|program| {
                let fdinfo = format!("/proc/self/fdinfo/{}", program.as_fd().as_raw_fd());
                let text = std::fs::read_to_string(fdinfo).unwrap_or_default();
                let field = |key: &str| {
                    text.lines()
                        .find_map(|line| line.strip_prefix(key)?.trim().parse().ok())
                        .unwrap_or(0)
                };
                let stats = ProgramStats {
                    calls: field("run_cnt:"),
                    run_ns: field("run_time_ns:"),
                    recursion_misses: field("recursion_misses:"),
                };
                (program.name().to_string_lossy().into_owned(), stats)
            })
            .collect()
    }
}

pub fn register(stack: &Stack, name: &str, words: &[u64]) -> Result<Registration> {
    check_name(name)?;
    let mut open = ObjectBuilder::default()
        .open_memory(stack.object)
        .map_err(BpfError::libbpf("opening the BPF object"))?;
    rename(&mut open, name_offset()?, name)?;
    fill_params(&mut open, words)?;
    let mut object = open.load().map_err(|source| match source.kind() {
        ErrorKind::AlreadyExists => BpfError::Registered(name.to_owned()),
        _ => BpfError::Libbpf {
            what: "loading the BPF object (the verifier's log is above)",
            source,
        },
    })?;
    let link = attach(&mut object, name)?;
    Ok(Registration {
        name: name.to_owned(),
        _link: link,
        object,
    })
}

fn attach(object: &mut Object, name: &str) -> Result<Link> {
    let mut map = object
        .maps_mut()
        .find(|m| m.map_type() == MapType::StructOps)
        .expect("every stack's object has one struct_ops map");
    map.attach_struct_ops()
        .map_err(|source| match source.kind() {
            ErrorKind::AlreadyExists => BpfError::Registered(name.to_owned()),
            _ => BpfError::Libbpf {
                what: "registering the congestion control",
                source,
            },
        })
}

fn check_name(name: &str) -> Result<()> {
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_';
    if name.is_empty() || name.len() > NAME_MAX_BYTES || !name.chars().all(allowed) {
        return Err(BpfError::Name(name.to_owned()));
    }
    Ok(())
}

/// Where `tcp_congestion_ops.name` lies in this kernel's layout of the struct, which is the
/// layout of the struct_ops value the object carries.
fn name_offset() -> Result<usize> {
    let btf = Btf::from_vmlinux().map_err(|e| BpfError::Unsupported(format!("no BTF: {e}")))?;
    let ops: Struct = btf
        .type_by_name("tcp_congestion_ops")
        .ok_or_else(|| BpfError::Unsupported("no tcp_congestion_ops in its BTF".into()))?;
    let member = ops
        .iter()
        .find(|m| m.name.and_then(|n| n.to_str()) == Some("name"));
    match member.map(|m| m.attr) {
        Some(MemberAttr::Normal { offset }) => Ok(offset as usize / 8),
        _ => Err(BpfError::Unsupported(
            "tcp_congestion_ops has no name".into(),
        )),
    }
}

fn rename(open: &mut OpenObject, offset: usize, name: &str) -> Result<()> {
    let mut map = open
        .maps_mut()
        .find(|m| m.map_type() == MapType::StructOps)
        .expect("every stack's object has one struct_ops map");
    let value = map
        .initial_value_mut()
        .expect("a struct_ops map has a value");
    let field = &mut value[offset..offset + NAME_MAX_BYTES + 1];
    field.fill(0);
    field[..name.len()].copy_from_slice(name.as_bytes());
    Ok(())
}

fn fill_params(open: &mut OpenObject, words: &[u64]) -> Result<()> {
    let Some(mut map) = open
        .maps_mut()
        .find(|m| m.name().to_string_lossy().ends_with(PARAMS_SECTION))
    else {
        assert!(
            words.is_empty(),
            "a stack with parameters has a parameter block"
        );
        return Ok(());
    };
    let block = map.initial_value_mut().expect("a data section has a value");
    assert_eq!(block.len(), 8 * words.len(), "the block and the list agree");
    for (slot, word) in block.chunks_exact_mut(8).zip(words) {
        slot.copy_from_slice(&word.to_ne_bytes());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{params, stacks};

    const AVAILABLE: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";

    fn available() -> Vec<String> {
        let listed = std::fs::read_to_string(AVAILABLE).unwrap();
        listed.split_whitespace().map(str::to_owned).collect()
    }

    fn unique_name(stack: &Stack) -> String {
        let mut name = format!("t{}{}", std::process::id() % 100_000, stack.name);
        name.truncate(NAME_MAX_BYTES);
        name
    }

    #[test]
    fn every_stack_registers_under_its_name_until_dropped() {
        for stack in stacks::STACKS {
            let table = serde_json::json!({"name": stack.name});
            let words = params::resolve(stack, table.as_object().unwrap())
                .unwrap()
                .words;
            let name = unique_name(stack);
            let registration = register(stack, &name, &words).unwrap();
            assert!(
                available().contains(&name),
                "{name} not in {:?}",
                available()
            );
            drop(registration);
            assert!(!available().contains(&name), "{name} still registered");
        }
    }

    #[test]
    fn a_name_taken_is_refused_by_name() {
        let stack = &stacks::STACKS[0];
        let words = vec![0; stack.params.len()];
        let name = format!("{}x", unique_name(stack));
        let _held = register(stack, &name, &words).unwrap();
        let again = register(stack, &name, &words).err().unwrap();
        assert!(
            matches!(again, BpfError::Registered(ref n) if *n == name),
            "{again}"
        );
    }

    #[test]
    fn names_the_kernel_would_refuse_are_refused_first() {
        for bad in ["", "UPPER", "sixteen_bytes_xx", "a-b"] {
            assert!(matches!(check_name(bad), Err(BpfError::Name(_))), "{bad}");
        }
    }
}
