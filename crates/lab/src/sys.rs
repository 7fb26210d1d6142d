//! The packet-socket system calls no allowed crate wraps: socket options of AF_PACKET,
//! `recvmmsg`/`sendmmsg` over raw frame buffers with their control messages, and CPU
//! affinity.
//!
//! This is the crate's only unsafe code. Every call gets pointers to memory that lives for the
//! whole call (structs owned here, or frame buffers of the caller's pool whose size is passed
//! alongside), and lengths that match.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// From the kernel's `include/uapi/linux/if_packet.h` and `if_ether.h`.
const SOL_PACKET: libc::c_int = 263;
const PACKET_STATISTICS: libc::c_int = 6;
const PACKET_VNET_HDR: libc::c_int = 15;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const PACKET_OUTGOING: u8 = 4;
const ETH_P_ALL: u16 = 0x0003;

/// `struct virtio_net_hdr` (include/uapi/linux/virtio_net.h): what PACKET_VNET_HDR puts in
/// front of every frame, received and sent.
pub const VNET_HDR_BYTES: usize = 10;

/// Frames per recvmmsg/sendmmsg call.
pub const BATCH: usize = 64;

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

fn set_int(
    fd: BorrowedFd<'_>,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: a pointer to a live c_int and its exact size.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    check(rc).map(drop)
}

pub fn if_index(name: &str) -> io::Result<u32> {
    let c = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: a NUL-terminated string that outlives the call.
    let index = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if index == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(index)
}

/// A raw packet socket on one interface, non-blocking: it sees every frame the interface
/// receives (not those sent on it), each preceded by its virtio-net header and stamped by
/// the kernel (SO_TIMESTAMPNS, CLOCK_REALTIME); frames sent on it take a virtio-net header
/// too. The socket is created with protocol 0 and bound with ETH_P_ALL, so it receives
/// nothing from other interfaces before the bind.
pub fn packet_socket(ifindex: u32, buffer_bytes: libc::c_int) -> io::Result<OwnedFd> {
    let kind = libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;
    // SAFETY: plain socket(2); the descriptor is owned from here on.
    let fd = unsafe { OwnedFd::from_raw_fd(check(libc::socket(libc::AF_PACKET, kind, 0))?) };
    let b = {
        use std::os::fd::AsFd;
        fd.as_fd()
    };
    set_int(b, SOL_PACKET, PACKET_VNET_HDR, 1)?;
    set_int(b, SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)?;
    set_int(b, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)?;
    // FORCE needs CAP_NET_ADMIN; without it the plain options are capped by net.core.*mem_max.
    if set_int(b, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, buffer_bytes).is_err() {
        set_int(b, libc::SOL_SOCKET, libc::SO_RCVBUF, buffer_bytes)?;
    }
    if set_int(b, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, buffer_bytes).is_err() {
        set_int(b, libc::SOL_SOCKET, libc::SO_SNDBUF, buffer_bytes)?;
    }
    // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
    let mut addr: libc::sockaddr_ll = unsafe { zeroed() };
    addr.sll_family = libc::AF_PACKET as u16;
    addr.sll_protocol = ETH_P_ALL.to_be();
    addr.sll_ifindex = ifindex as libc::c_int;
    // SAFETY: a pointer to a live sockaddr_ll and its exact size.
    let rc = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&addr as *const libc::sockaddr_ll).cast(),
            size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    check(rc)?;
    Ok(fd)
}

/// Frames the kernel dropped for this socket since the last call (PACKET_STATISTICS resets
/// on read).
pub fn take_drops(fd: BorrowedFd<'_>) -> io::Result<u64> {
    // struct tpacket_stats { unsigned int tp_packets, tp_drops; }
    let mut stats = [0u32; 2];
    let mut len = size_of::<[u32; 2]>() as libc::socklen_t;
    // SAFETY: a pointer to a live 8-byte buffer and its size; the kernel writes at most `len`.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            SOL_PACKET,
            PACKET_STATISTICS,
            stats.as_mut_ptr().cast(),
            &mut len,
        )
    };
    check(rc)?;
    Ok(u64::from(stats[1]))
}

/// Pin the calling thread to one CPU.
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    // SAFETY: cpu_set_t is plain old data; CPU_SET is given an index below CPU_SETSIZE, and
    // sched_setaffinity reads exactly size_of::<cpu_set_t>() bytes from a live set.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set)
    };
    check(rc).map(drop)
}

/// Room for one SCM_TIMESTAMPNS control message (CMSG_SPACE(16) = 32 bytes), aligned.
type Control = [u64; 8];

/// The headers of one `recvmmsg` batch. Receiving with recvmmsg rather than a TPACKET ring:
/// the kernel copies each frame straight into a buffer of our pool, where it waits out its
/// queueing and propagation and from which `sendmmsg` sends it, so a frame is copied once in
/// and once out. A ring's slots must be returned quickly, so frames held for tens of
/// milliseconds would need a second copy out of the ring; and the virtio-net header comes
/// inline with recvmsg.
pub struct RxBatch {
    hdrs: [libc::mmsghdr; BATCH],
    iovs: [libc::iovec; BATCH],
    names: [libc::sockaddr_ll; BATCH],
    controls: [Control; BATCH],
}

impl RxBatch {
    pub fn new() -> Box<Self> {
        // SAFETY: all four are arrays of plain-old-data C structs; all-zero is valid (null
        // pointers, zero lengths) and every pointer is set before use.
        Box::new(unsafe { zeroed() })
    }

    /// Receive up to `bufs.len()` frames, each into the `buf_bytes` bytes at `bufs[i]`, without
    /// blocking. Returns how many arrived (0 when none was waiting).
    ///
    /// Every `bufs[i]` must point to `buf_bytes` writable bytes no one else uses during the
    /// call (distinct buffers of the caller's pool).
    pub fn recv(
        &mut self,
        fd: BorrowedFd<'_>,
        bufs: &[*mut u8],
        buf_bytes: usize,
    ) -> io::Result<usize> {
        let n = bufs.len().min(BATCH);
        for (i, &buf) in bufs.iter().take(n).enumerate() {
            self.iovs[i] = libc::iovec {
                iov_base: buf.cast(),
                iov_len: buf_bytes,
            };
            let h = &mut self.hdrs[i].msg_hdr;
            h.msg_name = (&mut self.names[i] as *mut libc::sockaddr_ll).cast();
            h.msg_namelen = size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            h.msg_iov = &mut self.iovs[i];
            h.msg_iovlen = 1;
            h.msg_control = self.controls[i].as_mut_ptr().cast();
            h.msg_controllen = size_of::<Control>();
            h.msg_flags = 0;
            self.hdrs[i].msg_len = 0;
        }
        // SAFETY: the first `n` headers point to live names, controls and iovecs set above,
        // and the iovecs to caller buffers of `buf_bytes` bytes (the contract above).
        let rc = unsafe {
            libc::recvmmsg(
                fd.as_raw_fd(),
                self.hdrs.as_mut_ptr(),
                n as libc::c_uint,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        match check(rc) {
            Ok(got) => Ok(got as usize),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
            Err(e) => Err(e),
        }
    }

    /// Bytes written into buffer `i` (virtio-net header included).
    pub fn len(&self, i: usize) -> usize {
        self.hdrs[i].msg_len as usize
    }

    /// The frame was longer than its buffer.
    pub fn truncated(&self, i: usize) -> bool {
        self.hdrs[i].msg_hdr.msg_flags & libc::MSG_TRUNC != 0
    }

    /// The frame was sent by this host (a fallback should PACKET_IGNORE_OUTGOING be ignored).
    pub fn outgoing(&self, i: usize) -> bool {
        self.names[i].sll_pkttype == PACKET_OUTGOING
    }

    /// The kernel's receive timestamp (CLOCK_REALTIME, ns), if it gave one.
    pub fn stamp_ns(&self, i: usize) -> Option<u64> {
        let h = &self.hdrs[i].msg_hdr;
        // SAFETY: `h` is a header the kernel filled; CMSG_FIRSTHDR/NXTHDR stay within
        // msg_control[..msg_controllen], and the timespec is read unaligned from a control
        // message whose type says it holds one.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(h);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                    let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                    return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
                }
                c = libc::CMSG_NXTHDR(h, c);
            }
        }
        None
    }
}

/// The headers of one `sendmmsg` batch, sent on the socket's bound interface.
pub struct TxBatch {
    hdrs: [libc::mmsghdr; BATCH],
    iovs: [libc::iovec; BATCH],
}

impl TxBatch {
    pub fn new() -> Box<Self> {
        // SAFETY: arrays of plain-old-data C structs; all-zero is valid, pointers set before use.
        Box::new(unsafe { zeroed() })
    }

    /// Send frames (each `(pointer, length)`, virtio-net header first). Returns how many the
    /// kernel took (at least one), or the error of the first.
    ///
    /// Every pointer must point to `length` readable bytes that stay live during the call.
    pub fn send(&mut self, fd: BorrowedFd<'_>, frames: &[(*const u8, usize)]) -> io::Result<usize> {
        let n = frames.len().min(BATCH);
        for (i, &(ptr, len)) in frames.iter().take(n).enumerate() {
            self.iovs[i] = libc::iovec {
                iov_base: ptr as *mut libc::c_void,
                iov_len: len,
            };
            // SAFETY: msghdr is plain old data; all-zero is a valid value.
            self.hdrs[i].msg_hdr = unsafe { zeroed() };
            self.hdrs[i].msg_hdr.msg_iov = &mut self.iovs[i];
            self.hdrs[i].msg_hdr.msg_iovlen = 1;
        }
        // SAFETY: the first `n` headers point to the iovecs set above, and those to caller
        // buffers of the given lengths (the contract above); the kernel only reads them.
        let rc = unsafe {
            libc::sendmmsg(
                fd.as_raw_fd(),
                self.hdrs.as_mut_ptr(),
                n as libc::c_uint,
                libc::MSG_DONTWAIT,
            )
        };
        check(rc).map(|sent| sent as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_are_boxed_plain_data() {
        let rx = RxBatch::new();
        assert_eq!(rx.len(0), 0);
        assert_eq!(rx.stamp_ns(0), None);
        let _tx = TxBatch::new();
    }

    #[test]
    fn an_unknown_interface_is_an_error() {
        assert!(if_index("tle-no-such-if").is_err());
    }
}
