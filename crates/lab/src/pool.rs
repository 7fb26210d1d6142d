//! The preallocated frame buffers: one contiguous allocation, a free list, no allocation per
//! frame. A frame lives in one buffer from the moment the kernel writes it (recvmmsg) until
//! it is sent (sendmmsg) or dropped.

use crate::config::Config;
use crate::sys::{BATCH, VNET_HDR_BYTES};

const ETH_HDR_BYTES: usize = 14;
/// Buffers are cache-line aligned in the slab.
const ALIGN_BYTES: usize = 64;
/// A sane cap: 65 536 buffers of ~1.5 KB is ~100 MB.
pub const MAX_POOL_PKTS: usize = 1 << 16;
const MIN_POOL_PKTS: usize = 1024;
/// An assumed rate to size for when neither direction has one.
const UNLIMITED_SIZING_RATE_BPS: u64 = 10_000_000_000;
/// The smallest IP packet a byte limit is sized for (a bare TCP ACK is 52 bytes).
const SMALL_PKT_BYTES: u64 = 64;

pub struct Pool {
    slab: Vec<u8>,
    /// The slab's start, taken once: every buffer pointer handed to the kernel derives from
    /// it, so taking one never re-borrows (and invalidates) the others.
    base: *mut u8,
    stride_bytes: usize,
    /// Bytes received into each buffer (virtio-net header included).
    lens: Vec<u32>,
    free: Vec<u32>,
}

impl Pool {
    pub fn new(buffers: usize, buf_bytes: usize) -> Self {
        let stride_bytes = buf_bytes.next_multiple_of(ALIGN_BYTES);
        let mut slab = vec![0u8; buffers * stride_bytes];
        // Touch every page now, so the busy loop never takes a first-use page fault.
        for b in slab.iter_mut().step_by(4096) {
            *b = 1;
        }
        let base = slab.as_mut_ptr();
        Self {
            slab,
            base,
            stride_bytes,
            lens: vec![0; buffers],
            free: (0..buffers as u32).rev().collect(),
        }
    }

    /// The buffer size a config needs: its MTU plus the Ethernet and virtio-net headers.
    pub fn buf_bytes(config: &Config) -> usize {
        VNET_HDR_BYTES + ETH_HDR_BYTES + config.mtu_bytes as usize
    }

    /// How many buffers a config needs: both queues full plus what the delay lines hold at
    /// the bottleneck rate over the largest delay, with a quarter spare; capped.
    pub fn size_for(config: &Config) -> usize {
        let mtu = u64::from(config.mtu_bytes);
        let sizing_rate = |own: Option<u64>, other: Option<u64>| {
            // An unlimited direction carries at most about the other's packet rate (ACKs).
            own.or(other).unwrap_or(UNLIMITED_SIZING_RATE_BPS)
        };
        let (f, r) = (&config.forward, &config.reverse);
        let in_flight = |rate_bps: u64, delay_ns: u64| {
            (u128::from(rate_bps) * u128::from(delay_ns) / 8 / 1_000_000_000 / u128::from(mtu))
                as u64
        };
        let fwd = in_flight(
            sizing_rate(f.rate_bps, r.rate_bps),
            config.max_delay_ns(true),
        );
        let rev = in_flight(
            sizing_rate(r.rate_bps, f.rate_bps),
            config.max_delay_ns(false),
        );
        let queues = f.limit_pkts(SMALL_PKT_BYTES) + r.limit_pkts(SMALL_PKT_BYTES);
        let need = (fwd + rev).saturating_add(queues).saturating_mul(5) / 4 + 4 * BATCH as u64;
        (need as usize).clamp(MIN_POOL_PKTS, MAX_POOL_PKTS)
    }

    pub fn capacity(&self) -> usize {
        self.lens.len()
    }

    pub fn stride_bytes(&self) -> usize {
        self.stride_bytes
    }

    pub fn free_count(&self) -> usize {
        self.free.len()
    }

    pub fn alloc(&mut self) -> Option<u32> {
        self.free.pop()
    }

    pub fn release(&mut self, id: u32) {
        debug_assert!(self.free.len() < self.lens.len());
        self.free.push(id);
    }

    /// Where the kernel may write buffer `id` (`stride_bytes` bytes).
    pub fn ptr(&mut self, id: u32) -> *mut u8 {
        assert!((id as usize) < self.lens.len());
        self.base.wrapping_add(id as usize * self.stride_bytes)
    }

    pub fn set_len(&mut self, id: u32, len_bytes: usize) {
        self.lens[id as usize] = len_bytes as u32;
    }

    /// Bytes received into buffer `id`.
    pub fn len(&self, id: u32) -> usize {
        self.lens[id as usize] as usize
    }

    /// The received bytes of buffer `id`.
    pub fn bytes(&self, id: u32) -> &[u8] {
        let offset = id as usize * self.stride_bytes;
        &self.slab[offset..offset + self.lens[id as usize] as usize]
    }

    /// The received bytes of buffer `id`, to change before it is sent. Take it only while no
    /// pointer from `ptr` is in use: it borrows the whole slab.
    pub fn bytes_mut(&mut self, id: u32) -> &mut [u8] {
        let offset = id as usize * self.stride_bytes;
        &mut self.slab[offset..offset + self.lens[id as usize] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::EXAMPLE;

    #[test]
    fn the_pool_covers_queues_and_delay_lines() {
        let c = Config::parse(EXAMPLE).unwrap();
        // Forward: 100 Mb/s × 30 ms / 1500 B = 250; reverse (unlimited, sized at the forward
        // rate) 250; queues 100 + 150 000/64 = 2344; ×1.25 + 256.
        assert_eq!(Pool::size_for(&c), (250 + 250 + 100 + 2344) * 5 / 4 + 256);
        assert_eq!(Pool::buf_bytes(&c), 1524);
    }

    #[test]
    fn buffers_are_handed_out_and_returned() {
        let mut p = Pool::new(4, 100);
        assert_eq!(p.stride_bytes(), 128);
        let a = p.alloc().unwrap();
        p.set_len(a, 3);
        assert_eq!(p.bytes(a).len(), 3);
        let ids: Vec<u32> = (0..3).filter_map(|_| p.alloc()).collect();
        assert_eq!(ids.len(), 3);
        assert_eq!(p.alloc(), None);
        p.release(a);
        assert_eq!(p.free_count(), 1);
    }
}
