//! The two socket options no socket crate wraps, `TCP_INFO` and `SO_MAX_PACING_RATE`, and the
//! clock tick of /proc's process times.
//!
//! This is the crate's only unsafe code: plain `getsockopt`/`setsockopt` calls on a file
//! descriptor the caller owns, with buffers whose size is passed alongside.
#![allow(unsafe_code)]

use std::io;
use std::mem::{offset_of, size_of};
use std::os::fd::{AsRawFd, BorrowedFd};

/// `struct tcp_info` of Linux 6.x `include/uapi/linux/tcp.h`, field for field.
///
/// Older kernels return a shorter struct: `getsockopt` reports how many bytes it filled, and
/// a field is valid only if it ends within that length (`TcpInfo::has`). The two bitfield
/// bytes (window scales; app-limited and fastopen flags) are kept as raw bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpInfo {
    pub state: u8,
    pub ca_state: u8,
    pub retransmits: u8,
    pub probes: u8,
    pub backoff: u8,
    pub options: u8,
    pub wscale_bits: u8,
    pub flag_bits: u8,
    pub rto_us: u32,
    pub ato_us: u32,
    pub snd_mss: u32,
    pub rcv_mss: u32,
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans: u32,
    pub fackets: u32,
    pub last_data_sent_ms: u32,
    pub last_ack_sent_ms: u32,
    pub last_data_recv_ms: u32,
    pub last_ack_recv_ms: u32,
    pub pmtu: u32,
    pub rcv_ssthresh: u32,
    pub rtt_us: u32,
    pub rttvar_us: u32,
    pub snd_ssthresh: u32,
    pub snd_cwnd: u32,
    pub advmss: u32,
    pub reordering: u32,
    pub rcv_rtt_us: u32,
    pub rcv_space: u32,
    pub total_retrans: u32,
    pub pacing_rate: u64,
    pub max_pacing_rate: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub segs_out: u32,
    pub segs_in: u32,
    pub notsent_bytes: u32,
    pub min_rtt_us: u32,
    pub data_segs_in: u32,
    pub data_segs_out: u32,
    pub delivery_rate: u64,
    pub busy_time_us: u64,
    pub rwnd_limited_us: u64,
    pub sndbuf_limited_us: u64,
    pub delivered: u32,
    pub delivered_ce: u32,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub dsack_dups: u32,
    pub reord_seen: u32,
    pub rcv_ooopack: u32,
    pub snd_wnd: u32,
    pub rcv_wnd: u32,
    pub rehash: u32,
    pub total_rto: u16,
    pub total_rto_recoveries: u16,
    pub total_rto_time_ms: u32,
}

/// What the kernel filled: the struct and how many of its bytes are valid.
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpInfoReading {
    pub info: TcpInfo,
    pub len_bytes: usize,
}

/// Offsets of the fields whose presence depends on the kernel's version.
pub mod field_end {
    use super::*;
    pub const DELIVERY_RATE: usize = offset_of!(TcpInfo, delivery_rate) + 8;
    pub const SNDBUF_LIMITED: usize = offset_of!(TcpInfo, sndbuf_limited_us) + 8;
    pub const DELIVERED: usize = offset_of!(TcpInfo, delivered) + 4;
    pub const DELIVERED_CE: usize = offset_of!(TcpInfo, delivered_ce) + 4;
    pub const BYTES_RETRANS: usize = offset_of!(TcpInfo, bytes_retrans) + 8;
    pub const RCV_WND: usize = offset_of!(TcpInfo, rcv_wnd) + 4;
    pub const TOTAL_RTO: usize = offset_of!(TcpInfo, total_rto) + 2;
    pub const MIN_RTT: usize = offset_of!(TcpInfo, min_rtt_us) + 4;
    pub const BYTES_ACKED: usize = offset_of!(TcpInfo, bytes_acked) + 8;
    /// `tcpi_reord_seen`, Linux 4.19.
    pub const REORD_SEEN: usize = offset_of!(TcpInfo, reord_seen) + 4;
    /// `tcpi_dsack_dups`, Linux 4.19.
    pub const DSACK_DUPS: usize = offset_of!(TcpInfo, dsack_dups) + 4;
}

impl TcpInfoReading {
    /// True when the kernel filled the field ending at `end` (see `field_end`).
    pub fn has(&self, end: usize) -> bool {
        self.len_bytes >= end
    }

    /// `tcpi_delivery_rate_app_limited`, the low bit of the second bitfield byte.
    pub fn app_limited(&self) -> bool {
        self.info.flag_bits & 1 == 1
    }

    /// (`tcpi_snd_wscale`, `tcpi_rcv_wscale`): the shift applied to the windows the peer
    /// advertises and to the ones this end advertises (RFC 7323 §2.2). Both are 0 when the
    /// option was not negotiated; a negotiated shift of 0 caps the window at 64 KiB alike.
    /// The kernel's bitfield puts `snd` in the first four bits: the low nibble on a
    /// little-endian machine.
    pub fn window_scales(&self) -> (u8, u8) {
        let (first, second) = (self.info.wscale_bits & 0x0f, self.info.wscale_bits >> 4);
        if cfg!(target_endian = "little") {
            (first, second)
        } else {
            (second, first)
        }
    }
}

pub fn tcp_info(fd: BorrowedFd<'_>) -> io::Result<TcpInfoReading> {
    let mut info = TcpInfo::default();
    let mut len = size_of::<TcpInfo>() as libc::socklen_t;
    // SAFETY: `info` is a plain-old-data buffer of `len` bytes; the kernel writes at most
    // `len` bytes into it and stores how many it wrote back into `len`.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut TcpInfo).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(TcpInfoReading {
        info,
        len_bytes: len as usize,
    })
}

/// Sets `SO_MAX_PACING_RATE` (bytes per second; socket(7)). The kernel accepts a u64 since
/// 4.20 and a u32 before; we pass the u64.
pub fn set_max_pacing_rate(fd: BorrowedFd<'_>, bytes_per_s: u64) -> io::Result<()> {
    // SAFETY: a pointer to a live u64 and its exact size.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_MAX_PACING_RATE,
            (&bytes_per_s as *const u64).cast(),
            size_of::<u64>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Reads `SO_MAX_PACING_RATE` back (bytes per second; `u64::MAX` or `u32::MAX` = unlimited).
pub fn max_pacing_rate(fd: BorrowedFd<'_>) -> io::Result<u64> {
    let mut value: u64 = 0;
    let mut len = size_of::<u64>() as libc::socklen_t;
    // SAFETY: a pointer to a live u64 and its size; the kernel writes at most `len` bytes.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_MAX_PACING_RATE,
            (&mut value as *mut u64).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    if len as usize == size_of::<u32>() {
        // Little- or big-endian alike, a u32 answer sits in the low-addressed four bytes.
        let bytes = value.to_ne_bytes();
        return Ok(u32::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as u64);
    }
    Ok(value)
}

/// Clock ticks per second, the unit of /proc's process times (`sysconf(_SC_CLK_TCK)`);
/// 100, what Linux uses everywhere, if the call fails.
pub fn clock_ticks_per_s() -> u64 {
    // SAFETY: sysconf reads a constant of the running system; no memory is passed.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(ticks).ok().filter(|t| *t > 0).unwrap_or(100)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsFd;

    #[test]
    fn struct_matches_the_6x_uapi_layout() {
        // Offsets from include/uapi/linux/tcp.h of Linux 6.x.
        assert_eq!(offset_of!(TcpInfo, rto_us), 8);
        assert_eq!(offset_of!(TcpInfo, snd_cwnd), 80);
        assert_eq!(offset_of!(TcpInfo, pacing_rate), 104);
        assert_eq!(offset_of!(TcpInfo, delivery_rate), 160);
        assert_eq!(offset_of!(TcpInfo, reord_seen), 220);
        assert_eq!(field_end::REORD_SEEN, 224);
        assert_eq!(offset_of!(TcpInfo, snd_wnd), 228);
        assert_eq!(size_of::<TcpInfo>(), 248);
    }

    #[test]
    fn reads_tcp_info_of_a_loopback_connection() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let _server = listener.accept().unwrap();
        let reading = tcp_info(client.as_fd()).unwrap();
        assert!(reading.len_bytes >= field_end::BYTES_ACKED);
        // Every kernel this runs on in CI is newer than 4.19.
        assert!(reading.has(field_end::REORD_SEEN));
        assert_eq!(
            reading.info.reord_seen, 0,
            "nothing reordered on a fresh connection"
        );
        assert_eq!(reading.info.state, 1, "TCP_ESTABLISHED");
        // Linux scales by default (net.ipv4.tcp_window_scaling = 1), and loopback's default
        // receive buffers need a shift of at least 1 to be advertised.
        let (snd, rcv) = reading.window_scales();
        assert!(snd >= 1 && rcv >= 1, "{snd} {rcv}");
        assert!(reading.info.snd_cwnd >= 1);
    }

    #[test]
    fn pacing_rate_is_set_and_read_back() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        set_max_pacing_rate(client.as_fd(), 125_000_000).unwrap();
        assert_eq!(max_pacing_rate(client.as_fd()).unwrap(), 125_000_000);
    }
}
