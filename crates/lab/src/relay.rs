//! The I/O loop: one busy-polling thread relays frames between the two interfaces through the
//! two sans-IO links.
//!
//! Clock: CLOCK_REALTIME throughout, because the kernel's SO_TIMESTAMPNS receive stamps are
//! realtime; arrivals are stamped by the kernel, transmissions by reading the clock right
//! before the `sendmmsg` that hands the frames over. The loop never sleeps: precision
//! matters more than the core it spins on (the other CPU does the kernel's packet work).

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::config::Config;
use crate::delay::InFlight;
use crate::error::{LabError, Result};
use crate::frame::{self, EndpointTable, Received};
use crate::induced::InducedDrops;
use crate::link::{Link, Offer, Pkt};
use crate::pool::Pool;
use crate::samples::{Row, Samples};
use crate::stats::{Report, Stop};
use crate::sys::{self, RxBatch, TxBatch, BATCH};
use tcpeval_netem::hist::Histogram;

/// Tries of a send the kernel refuses for lack of room (EAGAIN, ENOBUFS) before the frame is
/// counted as a `tx_error`; each try is a system call, about a microsecond.
const MAX_TX_RETRIES: u32 = 1000;
/// Socket buffers: room for tens of milliseconds at 1 Gb/s should the loop stall.
const SOCKET_BUFFER_BYTES: i32 = 32 << 20;
/// A kernel stamp further than this from our clock is not trusted.
const MAX_STAMP_AGE_NS: u64 = 1_000_000_000;
const MAX_STAMP_AHEAD_NS: u64 = 1_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dir {
    Forward,
    Reverse,
}

pub fn now_ns() -> u64 {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    d.as_nanos() as u64
}

pub struct Relay {
    config: Config,
    pool: Pool,
    /// Buffers that receive (and discard) frames when the pool is exhausted.
    scratch: Pool,
    left: OwnedFd,
    right: OwnedFd,
    forward: Link,
    reverse: Link,
    endpoints: EndpointTable,
    rx: Box<RxBatch>,
    tx: Box<TxBatch>,
    ids: Vec<u32>,
    ptrs: Vec<*mut u8>,
    frames: Vec<(*const u8, usize)>,
    due: Vec<InFlight>,
    samples: Samples,
    loop_gaps: Histogram,
}

fn open(field: &str, name: &str) -> Result<OwnedFd> {
    let index = sys::if_index(name)
        .map_err(|e| LabError::invalid(field, name, format!("interface not found: {e}")))?;
    sys::packet_socket(index, SOCKET_BUFFER_BYTES)
        .map_err(|e| LabError::io(format!("packet socket on {field} '{name}'"), e))
}

impl Relay {
    /// Binds both sockets and preallocates everything the loop uses.
    pub fn new(config: Config) -> Result<Self> {
        let left = open("left", &config.left)?;
        let right = open("right", &config.right)?;
        let capacity = Pool::size_for(&config);
        let buf_bytes = Pool::buf_bytes(&config);
        let fwd_delays: Vec<u64> = config
            .endpoints
            .iter()
            .map(|e| e.forward_delay_ns)
            .collect();
        let rev_delays: Vec<u64> = config
            .endpoints
            .iter()
            .map(|e| e.reverse_delay_ns)
            .collect();
        Ok(Self {
            pool: Pool::new(capacity, buf_bytes),
            scratch: Pool::new(BATCH, buf_bytes),
            left,
            right,
            forward: Link::new(&config.forward, &fwd_delays, capacity),
            reverse: Link::new(&config.reverse, &rev_delays, capacity),
            endpoints: EndpointTable::new(&config.endpoints),
            rx: RxBatch::new(),
            tx: TxBatch::new(),
            ids: Vec::with_capacity(BATCH),
            ptrs: Vec::with_capacity(BATCH),
            frames: Vec::with_capacity(BATCH),
            due: Vec::with_capacity(BATCH),
            samples: Samples::new(config.max_duration_ns, config.sample_interval_ns),
            loop_gaps: Histogram::new(),
            config,
        })
    }

    /// Relay until `stop` is set, `max_duration_ns` has passed or an interface goes down;
    /// `ready` is called with the start (realtime ns: what times in the outputs and the
    /// endpoints' `drop_at_ns` count from) once the loop is about to run.
    pub fn run(&mut self, stop: &AtomicBool, ready: impl FnOnce(u64)) -> Result<Report> {
        let start_ns = now_ns();
        self.forward
            .induce(InducedDrops::new(&self.config.endpoints, start_ns));
        let deadline_ns = start_ns + self.config.max_duration_ns;
        let interval_ns = self.config.sample_interval_ns;
        let mut next_sample_ns = start_ns;
        let mut last_ns = start_ns;
        ready(start_ns);
        let why = loop {
            if stop.load(Ordering::Relaxed) {
                break Stop::Signal;
            }
            if let Err(e) = self
                .receive(Dir::Forward)
                .and_then(|_| self.receive(Dir::Reverse))
            {
                match interface_down(&e) {
                    true => break Stop::InterfaceDown,
                    false => return Err(e),
                }
            }
            let now = now_ns();
            self.loop_gaps.record(now.saturating_sub(last_ns));
            last_ns = now;
            self.transmit(Dir::Forward, now);
            self.transmit(Dir::Reverse, now);
            if now >= next_sample_ns {
                self.sample(next_sample_ns - start_ns)?;
                next_sample_ns += interval_ns;
            }
            if now >= deadline_ns {
                break Stop::MaxDuration;
            }
        };
        self.take_ring_drops()?;
        let end_ns = now_ns();
        let (f, r) = (&self.forward, &self.reverse);
        Ok(Report {
            start_realtime_ns: start_ns,
            end_realtime_ns: end_ns,
            clock: "realtime",
            stopped_by: why,
            pool_pkts: self.pool.capacity(),
            loop_gap_ns: self.loop_gaps.summary(),
            forward: f.report(&self.config.endpoints, true),
            reverse: r.report(&self.config.endpoints, false),
        })
    }

    pub fn samples(&self) -> &Samples {
        &self.samples
    }

    fn rx_fd(&self, dir: Dir) -> BorrowedFd<'_> {
        match dir {
            Dir::Forward => self.left.as_fd(),
            Dir::Reverse => self.right.as_fd(),
        }
    }

    fn link(&mut self, dir: Dir) -> &mut Link {
        match dir {
            Dir::Forward => &mut self.forward,
            Dir::Reverse => &mut self.reverse,
        }
    }

    /// Read what is waiting on `dir`'s interface into pool buffers and offer it to the link.
    fn receive(&mut self, dir: Dir) -> Result<()> {
        let want = BATCH.min(self.pool.free_count());
        if want == 0 {
            return self.discard(dir);
        }
        self.ids.clear();
        self.ptrs.clear();
        for _ in 0..want {
            let id = self.pool.alloc().expect("counted free");
            self.ids.push(id);
            self.ptrs.push(self.pool.ptr(id));
        }
        let fd = match dir {
            Dir::Forward => self.left.as_fd(),
            Dir::Reverse => self.right.as_fd(),
        };
        let got = self.rx.recv(fd, &self.ptrs, self.pool.stride_bytes());
        let read_ns = now_ns();
        let n = *got.as_ref().unwrap_or(&0);
        for i in 0..n {
            self.accept(dir, i, self.ids[i], read_ns);
        }
        for i in n..self.ids.len() {
            self.pool.release(self.ids[i]);
        }
        got.map(drop)
            .map_err(|e| LabError::io(format!("receiving on {}", self.ifname(dir)), e))
    }

    /// The pool is exhausted: receive into scratch buffers and count the frames as lost.
    fn discard(&mut self, dir: Dir) -> Result<()> {
        self.ptrs.clear();
        for id in 0..BATCH as u32 {
            self.ptrs.push(self.scratch.ptr(id));
        }
        let fd = match dir {
            Dir::Forward => self.left.as_fd(),
            Dir::Reverse => self.right.as_fd(),
        };
        let got = self
            .rx
            .recv(fd, &self.ptrs, self.scratch.stride_bytes())
            .map_err(|e| LabError::io(format!("receiving on {}", self.ifname(dir)), e))?;
        let lost = (0..got).filter(|&i| !self.rx.outgoing(i)).count() as u64;
        self.link(dir).stats.counters.pool_drops += lost;
        Ok(())
    }

    fn ifname(&self, dir: Dir) -> &str {
        match dir {
            Dir::Forward => &self.config.left,
            Dir::Reverse => &self.config.right,
        }
    }

    /// Frame `i` of the last batch, in buffer `id`: stamp it and offer it to the link.
    fn accept(&mut self, dir: Dir, i: usize, id: u32, read_ns: u64) {
        if self.rx.outgoing(i) {
            self.pool.release(id);
            return;
        }
        let len = self.rx.len(i).min(self.pool.stride_bytes());
        self.pool.set_len(id, len);
        let frame = Received(self.pool.bytes(id));
        let (gso, size_bytes) = (frame.is_gso(), frame.size_bytes());
        let (ecn, flow_key, tcp_data) = (frame.ecn(), frame.flow_key(), frame.carries_tcp_data());
        let ip = match dir {
            Dir::Forward => frame.ipv4_src(),
            Dir::Reverse => frame.ipv4_dst(),
        };
        let endpoint = self.endpoints.find(ip);
        let stamp = self
            .rx
            .stamp_ns(i)
            .filter(|&t| t <= read_ns + MAX_STAMP_AHEAD_NS && t + MAX_STAMP_AGE_NS >= read_ns);
        let truncated = self.rx.truncated(i);
        let link = match dir {
            Dir::Forward => &mut self.forward,
            Dir::Reverse => &mut self.reverse,
        };
        let c = &mut link.stats.counters;
        c.gso_frames += u64::from(gso);
        c.stamp_fallbacks += u64::from(stamp.is_none());
        if truncated {
            c.oversize_drops += 1;
            self.pool.release(id);
            return;
        }
        let pkt = Pkt {
            id,
            size_bytes,
            endpoint,
            ecn,
            flow_key,
            tcp_data,
        };
        if let Offer::Dropped(_) = link.offer(stamp.unwrap_or(read_ns), pkt) {
            self.pool.release(id);
        }
    }

    /// Send every frame of `dir` due by `now`, in batches.
    fn transmit(&mut self, dir: Dir, now: u64) {
        let link = match dir {
            Dir::Forward => &mut self.forward,
            Dir::Reverse => &mut self.reverse,
        };
        link.advance(now);
        while let Some(id) = link.pop_freed() {
            self.pool.release(id);
        }
        loop {
            self.due.clear();
            let link = match dir {
                Dir::Forward => &mut self.forward,
                Dir::Reverse => &mut self.reverse,
            };
            while self.due.len() < BATCH {
                match link.pop_due(now) {
                    Some(p) => {
                        // The AQM's mark, onto the real header; before any buffer's address
                        // is taken for the send.
                        if p.ce {
                            frame::set_ce(self.pool.bytes_mut(p.id));
                        }
                        self.due.push(p);
                    }
                    None => break,
                }
            }
            let full = self.due.len() == BATCH;
            if self.due.is_empty() {
                return;
            }
            self.send_due(dir);
            if !full {
                return;
            }
        }
    }

    /// Send `self.due` on the far interface, retrying a full socket a bounded number of times.
    fn send_due(&mut self, dir: Dir) {
        let (mut next, mut retries) = (0, 0);
        while next < self.due.len() {
            self.frames.clear();
            for p in &self.due[next..] {
                let len = self.pool.len(p.id);
                self.frames.push((self.pool.ptr(p.id).cast_const(), len));
            }
            let out = match dir {
                Dir::Forward => self.right.as_fd(),
                Dir::Reverse => self.left.as_fd(),
            };
            let t = now_ns();
            let link = match dir {
                Dir::Forward => &mut self.forward,
                Dir::Reverse => &mut self.reverse,
            };
            match self.tx.send(out, &self.frames) {
                Ok(k) => {
                    for p in &self.due[next..next + k] {
                        link.record_sent(p, t);
                        self.pool.release(p.id);
                    }
                    next += k;
                    retries = 0;
                }
                Err(e) if retryable(&e) && retries < MAX_TX_RETRIES => retries += 1,
                Err(_) => {
                    link.record_tx_error();
                    self.pool.release(self.due[next].id);
                    next += 1;
                    retries = 0;
                }
            }
        }
    }

    /// One LINKS.csv row per direction, and the kernel's drop counts so far.
    fn sample(&mut self, t_ns: u64) -> Result<()> {
        self.take_ring_drops()?;
        for (dir, forward) in [(Dir::Forward, true), (Dir::Reverse, false)] {
            let link = self.link(dir);
            let (queue_pkts, queue_bytes) = link.queue();
            let c = link.stats.counters;
            self.samples.push(Row {
                t_ns,
                forward,
                queue_pkts,
                queue_bytes,
                drops: c.drops(),
                sent_bytes: c.sent_bytes,
            });
        }
        Ok(())
    }

    fn take_ring_drops(&mut self) -> Result<()> {
        for dir in [Dir::Forward, Dir::Reverse] {
            let drops = sys::take_drops(self.rx_fd(dir)).map_err(|e| {
                LabError::io(format!("PACKET_STATISTICS on {}", self.ifname(dir)), e)
            })?;
            self.link(dir).stats.counters.ring_drops += drops;
        }
        Ok(())
    }
}

fn retryable(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::ENOBUFS))
}

fn interface_down(e: &LabError) -> bool {
    match e {
        LabError::Io { source, .. } => {
            matches!(
                source.raw_os_error(),
                Some(libc::ENETDOWN | libc::ENODEV | libc::ENXIO)
            )
        }
        _ => false,
    }
}
