//! Traffic generators: who talks to whom (the data-centre traffic matrices
//! of seed 000 §4), when short flows arrive (Poisson) and how large they
//! are. Everything draws from a stream the caller seeds, so a scenario and
//! a seed give the same flows every time.

use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use braid_proto::{Duration, Instant};

/// A traffic matrix over `n` hosts (seed 000 §4, NSDI 2011 §4.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Matrix {
    /// TP1: a random permutation; every host sends to one other host and
    /// receives from one.
    Permutation,
    /// TP2: every host sends to `destinations` distinct random hosts (the
    /// paper's 12, a distributed file system writing replicas).
    Random { destinations: usize },
    /// TP3: a random `fraction` of the hosts (the paper's 30%) each send to
    /// one other host, destinations distinct (sparse traffic).
    Sparse { fraction: f64 },
}

impl Matrix {
    /// The (source, destination) pairs among `hosts` (indices into a host
    /// list), sources in increasing order.
    pub fn pairs(&self, hosts: &[usize], rng: &mut ChaCha8Rng) -> Vec<(usize, usize)> {
        let n = hosts.len();
        if n < 2 {
            return Vec::new();
        }
        let mut out = match *self {
            Matrix::Permutation => derangement(n, rng).into_iter().enumerate().collect::<Vec<_>>(),
            Matrix::Random { destinations } => {
                let mut out = Vec::new();
                for s in 0..n {
                    let mut others: Vec<usize> = (0..n).filter(|&d| d != s).collect();
                    let (chosen, _) = others.partial_shuffle(rng, destinations.min(n - 1));
                    let mut chosen = chosen.to_vec();
                    chosen.sort_unstable();
                    out.extend(chosen.into_iter().map(|d| (s, d)));
                }
                out
            }
            Matrix::Sparse { fraction } => {
                let perm = derangement(n, rng);
                let mut senders: Vec<usize> = (0..n).collect();
                senders.shuffle(rng);
                senders.truncate(((fraction * n as f64).round() as usize).clamp(1, n));
                senders.sort_unstable();
                senders.into_iter().map(|s| (s, perm[s])).collect()
            }
        };
        for p in &mut out {
            *p = (hosts[p.0], hosts[p.1]);
        }
        out
    }
}

/// A random permutation of `0..n` with no fixed point: a shuffle whose
/// fixed points are swapped with their successor (each swap removes one
/// and creates none).
fn derangement(n: usize, rng: &mut ChaCha8Rng) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    p.shuffle(rng);
    for i in 0..n {
        if p[i] == i {
            p.swap(i, (i + 1) % n);
        }
    }
    p
}

/// Sizes of generated flows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeDist {
    Fixed(u64),
    /// Exponential with this mean (bytes).
    Exponential {
        mean: f64,
    },
    /// Pareto with this mean and shape (> 1), the heavy tail of data-centre
    /// flow sizes.
    Pareto {
        mean: f64,
        shape: f64,
    },
    /// Uniform between the bounds, inclusive.
    Uniform {
        min: u64,
        max: u64,
    },
}

impl SizeDist {
    /// One size, at least one byte.
    pub fn sample(&self, rng: &mut ChaCha8Rng) -> u64 {
        let mut u = || -> f64 { 1.0 - rng.gen::<f64>() }; // (0, 1]
        let bytes = match *self {
            SizeDist::Fixed(b) => b as f64,
            SizeDist::Exponential { mean } => -mean * u().ln(),
            SizeDist::Pareto { mean, shape } => {
                let scale = mean * (shape - 1.0) / shape;
                scale / u().powf(1.0 / shape)
            }
            SizeDist::Uniform { min, max } => return ChaCha8Rng::gen_range(rng, min..=max).max(1),
        };
        (bytes.round() as u64).max(1)
    }

    pub fn mean(&self) -> f64 {
        match *self {
            SizeDist::Fixed(b) => b as f64,
            SizeDist::Exponential { mean } | SizeDist::Pareto { mean, .. } => mean,
            SizeDist::Uniform { min, max } => (min as f64 + max as f64) / 2.0,
        }
    }
}

/// Arrival times of a Poisson process of `per_second` arrivals a second,
/// from `from` to before `until`.
pub fn poisson_arrivals(per_second: f64, from: Instant, until: Instant, rng: &mut ChaCha8Rng) -> Vec<Instant> {
    let mut out = Vec::new();
    if per_second <= 0.0 {
        return out;
    }
    let mut t = from.as_nanos() as f64;
    loop {
        t += -(1.0 - rng.gen::<f64>()).ln() / per_second * 1e9;
        if t >= until.as_nanos() as f64 {
            return out;
        }
        out.push(Instant::from_nanos(t as u64));
    }
}

/// `count` start times spread evenly over `spread` from `start`.
pub fn spread_starts(start: Instant, spread: Duration, count: usize) -> Vec<Instant> {
    let step = |i: usize| (u128::from(spread.as_nanos()) * i as u128 / count.max(1) as u128) as u64;
    (0..count).map(|i| start + Duration::from_nanos(step(i))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn rng(seed: u64) -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(seed)
    }

    #[test]
    fn matrices_have_their_shapes() {
        let hosts: Vec<usize> = (100..228).collect();
        for seed in 0..20 {
            let p = Matrix::Permutation.pairs(&hosts, &mut rng(seed));
            assert_eq!(p.len(), 128);
            assert!(p.iter().all(|(s, d)| s != d));
            let mut dst: Vec<usize> = p.iter().map(|x| x.1).collect();
            dst.sort_unstable();
            assert_eq!(dst, hosts, "every host receives once");
            let r = Matrix::Random { destinations: 12 }.pairs(&hosts, &mut rng(seed));
            assert_eq!(r.len(), 128 * 12);
            for s in &hosts {
                let mut d: Vec<usize> = r.iter().filter(|x| x.0 == *s).map(|x| x.1).collect();
                d.dedup();
                assert_eq!(d.len(), 12);
                assert!(!d.contains(s));
            }
            let sp = Matrix::Sparse { fraction: 0.3 }.pairs(&hosts, &mut rng(seed));
            assert_eq!(sp.len(), 38);
            let mut d: Vec<usize> = sp.iter().map(|x| x.1).collect();
            d.sort_unstable();
            d.dedup();
            assert_eq!(d.len(), 38, "distinct destinations");
        }
        assert_ne!(Matrix::Permutation.pairs(&hosts, &mut rng(1)), Matrix::Permutation.pairs(&hosts, &mut rng(2)));
    }

    #[test]
    fn sizes_and_arrivals_have_their_means() {
        for dist in [
            SizeDist::Exponential { mean: 70_000.0 },
            SizeDist::Pareto { mean: 70_000.0, shape: 2.5 },
            SizeDist::Uniform { min: 1000, max: 139_000 },
        ] {
            let mut r = rng(3);
            let n = 200_000;
            let mean = (0..n).map(|_| dist.sample(&mut r) as f64).sum::<f64>() / n as f64;
            assert!((mean / dist.mean() - 1.0).abs() < 0.03, "{dist:?}: {mean}");
        }
        assert_eq!(SizeDist::Fixed(70_000).sample(&mut rng(1)), 70_000);
        let a = poisson_arrivals(50.0, Instant::ZERO, Instant::from_nanos(200_000_000_000), &mut rng(4));
        assert!((a.len() as f64 / 10_000.0 - 1.0).abs() < 0.03, "{} arrivals in 200 s at 50/s", a.len());
        assert!(a.windows(2).all(|w| w[0] <= w[1]));
        let s = spread_starts(Instant::ZERO, Duration::from_secs(1), 4);
        assert_eq!(s[3], Instant::from_nanos(750_000_000));
    }
}
