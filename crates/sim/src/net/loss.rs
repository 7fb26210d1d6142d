//! Random loss on a link. Each loss process owns its seeded stream, so adding a flow or a link
//! never shifts the random numbers another process sees.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Independent (Bernoulli) per-packet loss with probability `p`.
#[derive(Debug, Clone)]
pub struct BernoulliLoss {
    p: f64,
    rng: Xoshiro256PlusPlus,
}

impl BernoulliLoss {
    pub fn new(p: f64, seed: u64) -> Self {
        Self {
            p,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }

    /// Whether the next packet is lost. Draws nothing when `p` is zero, so a lossless link
    /// costs no random numbers.
    pub fn drop_next(&mut self) -> bool {
        self.p > 0.0 && self.rng.random::<f64>() < self.p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_rate_matches_p_and_is_repeatable() {
        let count = |seed| {
            let mut l = BernoulliLoss::new(0.01, seed);
            (0..200_000).filter(|_| l.drop_next()).count()
        };
        let n = count(7);
        // 2000 expected, standard deviation ≈ 44.5: 4 sigma.
        assert!((1822..=2178).contains(&n), "{n}");
        assert_eq!(n, count(7));
        assert_ne!(n, count(8));
    }

    #[test]
    fn zero_loss_never_drops() {
        let mut l = BernoulliLoss::new(0.0, 1);
        assert!((0..10_000).all(|_| !l.drop_next()));
    }
}
