//! Reordering without loss: each packet leaving a link is, with probability `share`, held back
//! a fixed extra time, so that packets sent after it overtake it. Nothing is lost; only the
//! order of arrival changes, which is what RACK's reordering window (RFC 8985 §6.2) and
//! DupThresh (RFC 5681 §3.2) see differently. The process owns its seeded stream, as the loss
//! processes do.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

#[derive(Debug, Clone)]
pub struct Reorder {
    share: f64,
    rng: Xoshiro256PlusPlus,
}

impl Reorder {
    pub fn new(share: f64, seed: u64) -> Self {
        Self {
            share,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }

    /// Whether the next packet is held back.
    pub fn holds_next(&mut self) -> bool {
        self.rng.random::<f64>() < self.share
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_held_back_matches_and_repeats() {
        let held = |seed| {
            let mut r = Reorder::new(0.01, seed);
            (0..100_000).filter(|_| r.holds_next()).count()
        };
        // 1% of 100,000: 1,000 ± 3σ (σ = √(n·p·(1 − p)) ≈ 31.5).
        assert!((905..=1095).contains(&held(7)), "{}", held(7));
        assert_eq!(held(7), held(7));
    }
}
