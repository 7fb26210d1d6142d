//! TCP_INFO samples and the sampler that takes one per stream every interval.
//!
//! This is the web100-style history of the studies: the sender's view of each connection
//! (cwnd, ssthresh, RTT, losses, delivery) every 10 ms by default. Fields a kernel does not
//! fill (older `struct tcp_info`) are `None`, never zero.

use std::fmt::Write as _;
use std::net::TcpStream;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::sys::{self, field_end, TcpInfoReading};

macro_rules! sample_struct {
    ($($(#[$doc:meta])* $field:ident : $ty:ty),* $(,)?) => {
        /// One reading of one stream's `TCP_INFO`. Units are in the names.
        #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
        pub struct Sample { $($(#[$doc])* pub $field: $ty),* }

        impl Sample {
            pub const CSV_HEADER: &'static str = concat!($(stringify!($field), ","),*);

            pub fn write_csv(&self, out: &mut String) {
                $( self.$field.write_field(out); out.push(','); )*
                out.pop();
                out.push('\n');
            }
        }
    };
}

sample_struct! {
    t_ns: u64,
    stream: u32,
    state: u8,
    ca_state: u8,
    snd_mss_bytes: u32,
    snd_cwnd_pkts: u32,
    snd_ssthresh_pkts: u32,
    rtt_us: u32,
    rttvar_us: u32,
    min_rtt_us: Option<u32>,
    rto_us: u32,
    unacked_pkts: u32,
    sacked_pkts: u32,
    lost_pkts: u32,
    retrans_pkts: u32,
    total_retrans_pkts: u32,
    pacing_rate_bps: u64,
    bytes_acked: Option<u64>,
    bytes_received: Option<u64>,
    bytes_sent: Option<u64>,
    bytes_retrans: Option<u64>,
    segs_out: u32,
    notsent_bytes: u32,
    delivery_rate_bps: Option<u64>,
    app_limited: bool,
    busy_time_us: Option<u64>,
    rwnd_limited_us: Option<u64>,
    sndbuf_limited_us: Option<u64>,
    delivered_pkts: Option<u32>,
    /// Of those, packets acknowledged by an ACK echoing CE (`tcpi_delivered_ce`, Linux 4.18).
    delivered_ce_pkts: Option<u32>,
    snd_wnd_bytes: Option<u32>,
    rcv_wnd_bytes: Option<u32>,
    total_rto: Option<u16>,
    /// Reordering events the sender detected (`tcpi_reord_seen`, Linux 4.19).
    reord_seen: Option<u32>,
    /// The window scale shifts in use (RFC 7323 §2.2): the peer's advertised windows are
    /// shifted by `snd_wscale`, this end's by `rcv_wscale`; both 0 when the option was not
    /// negotiated (a window of at most 64 KiB). `None` only from a peer too old to send them.
    snd_wscale: Option<u8>,
    rcv_wscale: Option<u8>,
    /// Segments the peer reported received twice (D-SACK, RFC 2883): retransmissions that
    /// were not needed (`tcpi_dsack_dups`, Linux 4.19).
    dsack_dups: Option<u32>,
    /// The path MTU this socket uses (`tcpi_pmtu`): lower than the interface's after a
    /// black hole is probed around (RFC 4821) or an ICMP "too big".
    pmtu_bytes: Option<u32>,
    /// The MSS this end advertised in its SYN, less the 12 bytes of the timestamp option when
    /// it was negotiated: the payload the peer can send per segment (`tcpi_advmss`).
    advmss_bytes: Option<u32>,
    /// The receive-buffer autotuning's estimate of what the application reads per RTT
    /// (`tcpi_rcv_space`): small when the receiving application reads slowly.
    rcv_space_bytes: Option<u32>,
    /// `SO_SNDBUF` as the kernel holds it (doubled for its bookkeeping, socket(7)), which
    /// autotuning grows up to `tcp_wmem`'s maximum: what a send-buffer limit is held against.
    sndbuf_bytes: Option<u32>,
}

trait CsvField {
    fn write_field(&self, out: &mut String);
}

macro_rules! csv_display {
    ($($ty:ty),*) => {$(
        impl CsvField for $ty {
            fn write_field(&self, out: &mut String) {
                let _ = write!(out, "{self}");
            }
        }
    )*};
}
csv_display!(u8, u16, u32, u64, bool);

impl<T: CsvField> CsvField for Option<T> {
    fn write_field(&self, out: &mut String) {
        if let Some(value) = self {
            value.write_field(out);
        }
    }
}

impl Sample {
    pub fn from_reading(t_ns: u64, stream: u32, r: &TcpInfoReading) -> Self {
        let i = &r.info;
        let when = |end: usize| r.has(end);
        Sample {
            t_ns,
            stream,
            state: i.state,
            ca_state: i.ca_state,
            snd_mss_bytes: i.snd_mss,
            snd_cwnd_pkts: i.snd_cwnd,
            snd_ssthresh_pkts: i.snd_ssthresh,
            rtt_us: i.rtt_us,
            rttvar_us: i.rttvar_us,
            min_rtt_us: when(field_end::MIN_RTT).then_some(i.min_rtt_us),
            rto_us: i.rto_us,
            unacked_pkts: i.unacked,
            sacked_pkts: i.sacked,
            lost_pkts: i.lost,
            retrans_pkts: i.retrans,
            total_retrans_pkts: i.total_retrans,
            pacing_rate_bps: i.pacing_rate.saturating_mul(8),
            bytes_acked: when(field_end::BYTES_ACKED).then_some(i.bytes_acked),
            bytes_received: when(field_end::BYTES_ACKED).then_some(i.bytes_received),
            bytes_sent: when(field_end::BYTES_RETRANS).then_some(i.bytes_sent),
            bytes_retrans: when(field_end::BYTES_RETRANS).then_some(i.bytes_retrans),
            segs_out: i.segs_out,
            notsent_bytes: i.notsent_bytes,
            delivery_rate_bps: when(field_end::DELIVERY_RATE)
                .then_some(i.delivery_rate.saturating_mul(8)),
            app_limited: r.app_limited(),
            busy_time_us: when(field_end::SNDBUF_LIMITED).then_some(i.busy_time_us),
            rwnd_limited_us: when(field_end::SNDBUF_LIMITED).then_some(i.rwnd_limited_us),
            sndbuf_limited_us: when(field_end::SNDBUF_LIMITED).then_some(i.sndbuf_limited_us),
            delivered_pkts: when(field_end::DELIVERED).then_some(i.delivered),
            delivered_ce_pkts: when(field_end::DELIVERED_CE).then_some(i.delivered_ce),
            snd_wnd_bytes: when(field_end::RCV_WND).then_some(i.snd_wnd),
            rcv_wnd_bytes: when(field_end::RCV_WND).then_some(i.rcv_wnd),
            total_rto: when(field_end::TOTAL_RTO).then_some(i.total_rto),
            reord_seen: when(field_end::REORD_SEEN).then_some(i.reord_seen),
            snd_wscale: Some(r.window_scales().0),
            rcv_wscale: Some(r.window_scales().1),
            dsack_dups: when(field_end::DSACK_DUPS).then_some(i.dsack_dups),
            pmtu_bytes: Some(i.pmtu),
            advmss_bytes: Some(i.advmss),
            rcv_space_bytes: Some(i.rcv_space),
            sndbuf_bytes: None,
        }
    }
}

pub fn read(stream: u32, socket: &TcpStream, t_ns: u64) -> Option<Sample> {
    let reading = sys::tcp_info(socket.as_fd()).ok()?;
    let mut sample = Sample::from_reading(t_ns, stream, &reading);
    let sndbuf = socket2::SockRef::from(socket).send_buffer_size().ok();
    sample.sndbuf_bytes = sndbuf.and_then(|bytes| u32::try_from(bytes).ok());
    Some(sample)
}

pub fn to_csv(samples: &[Sample]) -> String {
    let mut out = String::with_capacity(64 + samples.len() * 160);
    out.push_str(Sample::CSV_HEADER.trim_end_matches(','));
    out.push('\n');
    for sample in samples {
        sample.write_csv(&mut out);
    }
    out
}

/// What a sampler collected, and how many ticks it could not keep.
#[derive(Debug, Default)]
pub struct History {
    pub samples: Vec<Sample>,
    pub missed_ticks: u64,
}

/// Samples every stream at `start + k·interval`, on absolute deadlines so that a late tick
/// does not shift the ones after it; ticks missed entirely are counted, not made up.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<History>,
}

impl Sampler {
    pub fn start(sockets: Vec<(u32, TcpStream)>, start: Instant, interval: Duration) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = thread::spawn(move || sample_loop(&sockets, start, interval, &flag));
        Sampler { stop, handle }
    }

    pub fn finish(self) -> History {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap_or_default()
    }
}

fn sample_loop(
    sockets: &[(u32, TcpStream)],
    start: Instant,
    interval: Duration,
    stop: &AtomicBool,
) -> History {
    let mut history = History::default();
    let mut tick: u32 = 1;
    while !stop.load(Ordering::Relaxed) {
        let due = start + interval * tick;
        let now = Instant::now();
        if due > now {
            thread::sleep(due - now);
        }
        let t_ns = start.elapsed().as_nanos() as u64;
        for (id, socket) in sockets {
            history.samples.extend(read(*id, socket, t_ns));
        }
        let behind = (start.elapsed().as_nanos() / interval.as_nanos()) as u32;
        let next = (tick + 1).max(behind);
        history.missed_ticks += u64::from(next - tick - 1);
        tick = next;
    }
    history
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::TcpInfo;
    use std::net::TcpListener;

    #[test]
    fn csv_has_one_column_per_field_and_blanks_for_missing() {
        let reading = TcpInfoReading {
            info: Default::default(),
            len_bytes: 104,
        };
        let sample = Sample::from_reading(5, 2, &reading);
        assert_eq!(sample.min_rtt_us, None);
        let csv = to_csv(&[sample]);
        let lines: Vec<&str> = csv.lines().collect();
        let columns = lines[0].split(',').count();
        assert_eq!(lines[1].split(',').count(), columns);
        assert!(lines[1].starts_with("5,2,"));
    }

    #[test]
    fn reord_seen_is_read_only_when_the_kernel_filled_it() {
        let mut reading = TcpInfoReading {
            info: TcpInfo {
                reord_seen: 3,
                ..Default::default()
            },
            len_bytes: field_end::REORD_SEEN - 1,
        };
        assert_eq!(Sample::from_reading(0, 0, &reading).reord_seen, None);
        reading.len_bytes = field_end::REORD_SEEN;
        let sample = Sample::from_reading(0, 0, &reading);
        assert_eq!(sample.reord_seen, Some(3));
        let csv = to_csv(&[sample]);
        let (header, row) = csv.split_once('\n').unwrap();
        assert!(header.contains(",reord_seen,"), "{header}");
        let column = header.split(',').position(|c| c == "reord_seen").unwrap();
        assert_eq!(row.split(',').nth(column), Some("3"), "{row}");
    }

    #[test]
    fn window_scales_come_from_the_bitfield_snd_first() {
        let reading = TcpInfoReading {
            info: TcpInfo {
                wscale_bits: if cfg!(target_endian = "little") {
                    0x7e
                } else {
                    0xe7
                },
                ..Default::default()
            },
            len_bytes: field_end::BYTES_RETRANS,
        };
        let sample = Sample::from_reading(0, 0, &reading);
        assert_eq!((sample.snd_wscale, sample.rcv_wscale), (Some(14), Some(7)));
        assert_eq!(sample.dsack_dups, None, "the kernel did not fill it");
    }

    #[test]
    fn a_peer_without_the_newer_fields_still_parses() {
        let reading = TcpInfoReading {
            info: Default::default(),
            len_bytes: field_end::DSACK_DUPS,
        };
        let mut json = serde_json::to_value(Sample::from_reading(0, 0, &reading)).unwrap();
        let object = json.as_object_mut().unwrap();
        for field in ["snd_wscale", "rcv_wscale", "dsack_dups", "pmtu_bytes"] {
            object.remove(field);
        }
        let sample: Sample = serde_json::from_value(json).unwrap();
        assert_eq!((sample.snd_wscale, sample.pmtu_bytes), (None, None));
        assert_eq!(sample.advmss_bytes, Some(0));
    }

    #[test]
    fn sampler_keeps_the_interval() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let start = Instant::now();
        let sampler = Sampler::start(vec![(0, client)], start, Duration::from_millis(10));
        thread::sleep(Duration::from_millis(300));
        let history = sampler.finish();
        let n = history.samples.len() as u64 + history.missed_ticks;
        assert!((28..=31).contains(&n), "{n} ticks in 300 ms");
        assert!(history.samples.windows(2).all(|w| w[0].t_ns < w[1].t_ns));
    }
}
