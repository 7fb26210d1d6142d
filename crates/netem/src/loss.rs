//! Random loss on a link. Each loss process owns its seeded stream, so adding a flow or a link
//! never shifts the random numbers another process sees.
//!
//! Models (docs/contract.md, "Conditions", `loss`): none; Bernoulli (independent per-packet loss);
//! Gilbert–Elliott, a two-state Markov chain stepped once per packet whose bad state produces
//! loss bursts (mean loss `p/(p+r)·loss_bad + r/(p+r)·loss_good`, mean bad-state run `1/r`).

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Model {
    None,
    Bernoulli {
        p: f64,
    },
    GilbertElliott {
        /// Probability of moving good → bad at a packet.
        p: f64,
        /// Probability of moving bad → good at a packet.
        r: f64,
        loss_good: f64,
        loss_bad: f64,
        bad: bool,
    },
}

/// A per-packet loss process.
#[derive(Debug, Clone)]
pub struct LossModel {
    model: Model,
    rng: Xoshiro256PlusPlus,
}

impl LossModel {
    /// Never drops and never draws a random number.
    pub fn none() -> Self {
        Self::with(Model::None, 0)
    }

    /// Independent loss with probability `p`; `p == 0` behaves as `none`.
    pub fn bernoulli(p: f64, seed: u64) -> Self {
        if p > 0.0 {
            Self::with(Model::Bernoulli { p }, seed)
        } else {
            Self::none()
        }
    }

    /// Gilbert–Elliott: good → bad with probability `p`, bad → good with probability `r` per
    /// packet; a packet is lost with `loss_good` or `loss_bad` in the state it meets. The
    /// chain starts in the good state.
    pub fn gilbert_elliott(p: f64, r: f64, loss_good: f64, loss_bad: f64, seed: u64) -> Self {
        let model = Model::GilbertElliott {
            p,
            r,
            loss_good,
            loss_bad,
            bad: false,
        };
        Self::with(model, seed)
    }

    fn with(model: Model, seed: u64) -> Self {
        Self {
            model,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }

    /// Whether the next packet is lost.
    pub fn drop_next(&mut self) -> bool {
        match &mut self.model {
            Model::None => false,
            Model::Bernoulli { p } => self.rng.random::<f64>() < *p,
            Model::GilbertElliott {
                p,
                r,
                loss_good,
                loss_bad,
                bad,
            } => {
                // Step the chain first, then let the state the packet meets decide.
                let leave = if *bad { *r } else { *p };
                if self.rng.random::<f64>() < leave {
                    *bad = !*bad;
                }
                let loss = if *bad { *loss_bad } else { *loss_good };
                // A certain or impossible outcome costs no draw.
                match loss {
                    l if l <= 0.0 => false,
                    l if l >= 1.0 => true,
                    l => self.rng.random::<f64>() < l,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn losses(model: &mut LossModel, n: usize) -> Vec<bool> {
        (0..n).map(|_| model.drop_next()).collect()
    }

    #[test]
    fn bernoulli_loss_rate_matches_p_and_is_repeatable() {
        let count = |seed| {
            let mut l = LossModel::bernoulli(0.01, seed);
            (0..200_000).filter(|_| l.drop_next()).count()
        };
        let n = count(7);
        // 2000 expected, standard deviation ≈ 44.5: 4 sigma.
        assert!((1822..=2178).contains(&n), "{n}");
        assert_eq!(n, count(7));
        assert_ne!(n, count(8));
    }

    #[test]
    fn none_and_zero_bernoulli_never_drop() {
        let mut a = LossModel::none();
        let mut b = LossModel::bernoulli(0.0, 1);
        assert!((0..10_000).all(|_| !a.drop_next() && !b.drop_next()));
    }

    #[test]
    fn gilbert_elliott_mean_loss_is_the_stationary_bad_share() {
        // p/(p+r)·loss_bad + r/(p+r)·loss_good = 0.01/0.31·0.8 + 0.3/0.31·0.01 = 0.03548.
        let mut l = LossModel::gilbert_elliott(0.01, 0.3, 0.01, 0.8, 3);
        let n = 1_000_000;
        let rate = losses(&mut l, n).iter().filter(|&&x| x).count() as f64 / n as f64;
        let expected = 0.01 / 0.31 * 0.8 + 0.3 / 0.31 * 0.01;
        assert!((rate / expected - 1.0).abs() < 0.1, "{rate} vs {expected}");
    }

    #[test]
    fn gilbert_elliott_bursts_last_one_over_r() {
        // loss_bad = 1, loss_good = 0: a loss burst is exactly a bad-state run, mean 1/r = 4.
        let mut l = LossModel::gilbert_elliott(0.02, 0.25, 0.0, 1.0, 11);
        let seq = losses(&mut l, 1_000_000);
        let bursts = seq.windows(2).filter(|w| w[0] && !w[1]).count();
        let lost = seq.iter().filter(|&&x| x).count();
        let mean_burst = lost as f64 / bursts as f64;
        assert!((mean_burst / 4.0 - 1.0).abs() < 0.1, "{mean_burst}");
        // And the loss rate is p/(p+r) = 0.0741.
        let rate = lost as f64 / seq.len() as f64;
        assert!((rate / (0.02 / 0.27) - 1.0).abs() < 0.1, "{rate}");
    }

    #[test]
    fn gilbert_elliott_is_repeatable_by_seed() {
        let run = |seed| {
            losses(
                &mut LossModel::gilbert_elliott(0.05, 0.5, 0.0, 1.0, seed),
                5000,
            )
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }
}
