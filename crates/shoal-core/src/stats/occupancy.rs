use crate::sim::Ps;

/// A quantity that changes at discrete instants (a queue's or pool's occupancy in bytes),
/// with its time integral, its maximum and, optionally, a time-weighted histogram.
#[derive(Clone, Debug, Default)]
pub struct TimeWeighted {
    value: u64,
    since: Ps,
    integral: u128,
    max: u64,
    /// Time spent at exactly zero (index 0) and in each bucket of `bucket_bytes` above
    /// it (index i covers (i-1)*bucket_bytes+1 ..= i*bucket_bytes); empty when no
    /// histogram is kept.
    histogram: Vec<Ps>,
    bucket_bytes: u64,
    /// The finer, opt-in distribution (`run.occupancy_cdf`); `None` costs one branch.
    distribution: Option<Box<OccupancyDistribution>>,
}

impl TimeWeighted {
    /// A tracker with a histogram of `buckets` buckets covering `0..=capacity`.
    pub fn with_histogram(capacity: u64, buckets: u64) -> Self {
        let bucket_bytes = (capacity / buckets.max(1)).max(1);
        TimeWeighted { histogram: vec![0; (capacity / bucket_bytes + 2) as usize], bucket_bytes, ..Default::default() }
    }

    /// Also keep the time-weighted distribution of the value over `[0, until]` (the whole
    /// run with `None`) on log-linear buckets (`OccupancyDistribution`), from the value
    /// held since the last change on. The integral, maximum and histogram are unchanged.
    pub fn keep_distribution(&mut self, until: Option<Ps>) {
        self.distribution = Some(Box::new(OccupancyDistribution::new(until)));
    }

    /// The distribution kept since `keep_distribution`, up to the last change (call
    /// `close(now)` first for one up to `now`).
    pub fn distribution(&self) -> Option<&OccupancyDistribution> {
        self.distribution.as_deref()
    }

    /// Accounts the time up to `now` at the current value (as a change to the same value).
    pub fn close(&mut self, now: Ps) {
        self.set(now, self.value);
    }

    #[inline]
    pub fn value(&self) -> u64 {
        self.value
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    #[inline]
    pub fn set(&mut self, now: Ps, value: u64) {
        let dt = now - self.since;
        if dt > 0 {
            if let Some(distribution) = &mut self.distribution {
                distribution.add(self.value, self.since, now);
            }
            self.integral += self.value as u128 * dt as u128;
            if !self.histogram.is_empty() {
                let b = match self.value {
                    0 => 0,
                    v => (1 + (v - 1) / self.bucket_bytes) as usize,
                }
                .min(self.histogram.len() - 1);
                self.histogram[b] += dt;
            }
            self.since = now;
        }
        self.value = value;
        self.max = self.max.max(value);
    }

    /// Time average over [0, now].
    pub fn mean(&mut self, now: Ps) -> f64 {
        self.set(now, self.value);
        if now == 0 {
            return self.value as f64;
        }
        self.integral as f64 / now as f64
    }

    /// The `q`-quantile (0..=1) of the time-weighted distribution, to bucket precision
    /// (upper edge of the bucket).
    pub fn quantile(&mut self, now: Ps, q: f64) -> Option<u64> {
        self.set(now, self.value);
        let total: u128 = self.histogram.iter().map(|&t| t as u128).sum();
        if total == 0 {
            return None;
        }
        let target = (q * total as f64).ceil() as u128;
        let mut seen = 0u128;
        for (i, &t) in self.histogram.iter().enumerate() {
            seen += t as u128;
            if seen >= target.max(1) {
                return Some((i as u64 * self.bucket_bytes).min(self.max));
            }
        }
        Some(self.max)
    }
}

/// How many buckets split each power of two in `OccupancyDistribution` (2^6 = 64): a
/// bucket is at most 1/64 of its lower edge wide, and one byte wide below 128 B.
const SUB_BUCKET_BITS: u32 = 6;
const SUB_BUCKETS: u64 = 1 << SUB_BUCKET_BITS;

/// The time a byte count spent in each of a fixed set of log-linear buckets over a window
/// `[0, until]`: every value below 2 x 64 B has its own bucket, and above that each power
/// of two `[2^e, 2^(e+1))` is split into 64 equal buckets, so a bucket's width is at most
/// 1/64 (1.6%) of its lower edge, whatever the buffer's size. The buckets are the same
/// for every run, so distributions of different switches and runs add up bucket by bucket.
///
/// Invariant: `time[i]` is the time within the window that the value spent in bucket
/// `i` (`bucket_bounds(i)`), and the sum of `time` is the part of the window accounted so
/// far. So the CDF at a bucket's upper edge, `P(value <= hi)`, is exact (no interpolation):
/// every value counted in an earlier bucket is at most `hi`, every later one above it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OccupancyDistribution {
    time: Vec<Ps>,
    until: Option<Ps>,
}

impl OccupancyDistribution {
    /// An empty distribution over `[0, until]` (unbounded with `None`).
    pub fn new(until: Option<Ps>) -> Self {
        OccupancyDistribution { time: Vec::new(), until }
    }

    /// The bucket of `value`.
    pub fn bucket_of(value: u64) -> usize {
        if value < 2 * SUB_BUCKETS {
            return value as usize;
        }
        let exponent = 63 - value.leading_zeros(); // >= SUB_BUCKET_BITS + 1
        let shift = exponent - SUB_BUCKET_BITS;
        let mantissa = (value >> shift) - SUB_BUCKETS; // 0..SUB_BUCKETS
        ((shift as u64 + 1) * SUB_BUCKETS + mantissa) as usize
    }

    /// The smallest and largest value (inclusive) of bucket `index`.
    pub fn bucket_bounds(index: usize) -> (u64, u64) {
        let index = index as u64;
        if index < 2 * SUB_BUCKETS {
            return (index, index);
        }
        let shift = index / SUB_BUCKETS - 1;
        let low = (SUB_BUCKETS + index % SUB_BUCKETS) << shift;
        (low, low + ((1u64 << shift) - 1))
    }

    /// The value held `value` over `[from, to)`; only the part inside the window counts.
    /// Out of line: `TimeWeighted::set` runs on every switch packet, and only runs with
    /// `run.occupancy_cdf` call this.
    #[inline(never)]
    pub fn add(&mut self, value: u64, from: Ps, to: Ps) {
        let to = self.until.map_or(to, |until| to.min(until));
        if to <= from {
            return;
        }
        let bucket = Self::bucket_of(value);
        if bucket >= self.time.len() {
            self.time.resize(bucket + 1, 0);
        }
        self.time[bucket] += to - from;
    }

    /// The window's end (`None`: unbounded).
    pub fn until(&self) -> Option<Ps> {
        self.until
    }

    /// The time accounted so far: the window's length once the run has passed it.
    pub fn total(&self) -> Ps {
        self.time.iter().sum()
    }

    /// The non-empty buckets in increasing order: (smallest value, largest value, time).
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, Ps)> + '_ {
        self.time.iter().enumerate().filter(|(_, &t)| t > 0).map(|(i, &t)| {
            let (low, high) = Self::bucket_bounds(i);
            (low, high, t)
        })
    }
}

/// A quantity that changes at discrete instants (a queue's bytes), with its time integral
/// and maximum: `TimeWeighted` without a histogram, in 32 bytes, so that it shares a cache
/// line with what it measures.
///
/// Instead of the time of the last change it keeps the moment `sum(dv * t)` of the changes
/// `dv` made at times `t`: the integral up to `now` is then `value * now - moment`, the
/// same integer that `TimeWeighted` accumulates piece by piece (so the means agree to the
/// bit), and an update touches no timestamp.
#[derive(Clone, Debug, Default)]
pub struct TimeIntegral {
    value: u64,
    max: u64,
    moment: i128,
}

impl TimeIntegral {
    #[inline]
    pub fn value(&self) -> u64 {
        self.value
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    /// The value becomes `value` at `now` (never earlier than a previous change).
    #[inline]
    pub fn set(&mut self, now: Ps, value: u64) {
        self.moment += (value as i128 - self.value as i128) * now as i128;
        self.value = value;
        self.max = self.max.max(value);
    }

    /// The integral of the value over [0, now].
    pub fn integral(&self, now: Ps) -> u128 {
        (self.value as i128 * now as i128 - self.moment) as u128
    }

    /// Time average over [0, now].
    pub fn mean(&self, now: Ps) -> f64 {
        if now == 0 {
            return self.value as f64;
        }
        self.integral(now) as f64 / now as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_average_and_quantiles() {
        let mut t = TimeWeighted::with_histogram(1000, 100);
        t.set(0, 100);
        t.set(10, 500); // 100 for 10 ps
        t.set(40, 0); //   500 for 30 ps
                      // 0 for 60 ps
        assert!((t.mean(100) - (100.0 * 10.0 + 500.0 * 30.0) / 100.0).abs() < 1e-9);
        assert_eq!(t.max(), 500);
        assert_eq!(t.quantile(100, 0.5), Some(0)); // 60% of the time at 0
        assert_eq!(t.quantile(100, 0.65), Some(100));
        assert_eq!(t.quantile(100, 0.99), Some(500));
    }

    /// The moment form gives the integral that `TimeWeighted` accumulates, exactly.
    #[test]
    fn time_integral_agrees_with_time_weighted() {
        let (mut weighted, mut integral) = (TimeWeighted::default(), TimeIntegral::default());
        let mut now = 0;
        for step in 0..10_000u64 {
            now += (step * 7919) % 13; // ties included
            let value = (step * 104_729) % 3_000_000;
            weighted.set(now, value);
            integral.set(now, value);
            assert_eq!(integral.value(), weighted.value());
        }
        for later in [now, now + 1, now + 1_000_000_007] {
            assert_eq!(integral.mean(later).to_bits(), weighted.mean(later).to_bits());
            assert_eq!(integral.max(), weighted.max());
        }
        assert_eq!(TimeIntegral::default().mean(0), 0.0);
    }

    /// The buckets tile the values: each value lies in its bucket's bounds, consecutive
    /// buckets meet without a gap, and a bucket is at most 1/64 of its lower edge wide
    /// (one byte below 128 B).
    #[test]
    fn buckets_tile_the_values_with_bounded_relative_width() {
        let last = OccupancyDistribution::bucket_of(u64::MAX);
        assert_eq!(OccupancyDistribution::bucket_bounds(0), (0, 0));
        assert_eq!(OccupancyDistribution::bucket_bounds(last).1, u64::MAX);
        for i in 0..last {
            let (low, high) = OccupancyDistribution::bucket_bounds(i);
            assert_eq!(OccupancyDistribution::bucket_bounds(i + 1).0, high + 1, "gap after bucket {i}");
            assert!(low <= high);
            assert!(if low < 128 { high == low } else { (high - low + 1) * 64 <= low }, "bucket {i}: {low}..={high}");
            for v in [low, high, low + (high - low) / 2] {
                assert_eq!(OccupancyDistribution::bucket_of(v), i, "value {v}");
            }
        }
    }

    /// A staircase that holds each value 0, 1, ..., n-1 for one unit of time spends the
    /// time uniformly: the CDF at a bucket's upper edge `h` is exactly (h + 1) / n, and a
    /// bucket holds as much time as it holds values. With a window, only its part counts.
    #[test]
    fn a_uniform_staircase_gives_the_uniform_cdf_exactly() {
        let n = 100_000u64;
        let unit: Ps = 3;
        for until in [None, Some(n / 2 * unit)] {
            let mut t = TimeWeighted::with_histogram(n, 1000);
            t.keep_distribution(until);
            for v in 0..n {
                t.set(v * unit, v);
            }
            t.close(n * unit);
            let d = t.distribution().unwrap();
            let counted = until.map_or(n, |u| u / unit); // values held inside the window
            assert_eq!(d.total(), counted * unit);
            let mut below = 0;
            for (low, high, time) in d.buckets() {
                below += time;
                assert_eq!(time, (high.min(counted - 1) - low + 1) * unit);
                assert_eq!(below, (high.min(counted - 1) + 1) * unit); // CDF (h + 1) / n
            }
            assert!(d.buckets().last().unwrap().1 >= counted - 1);
        }
    }

    /// Keeping the distribution changes nothing the summary reads.
    #[test]
    fn the_distribution_leaves_mean_quantiles_and_max_alone() {
        let (mut plain, mut kept) =
            (TimeWeighted::with_histogram(1 << 20, 1000), TimeWeighted::with_histogram(1 << 20, 1000));
        kept.keep_distribution(Some(500));
        let mut now = 0;
        for step in 0..5_000u64 {
            now += (step * 7919) % 13;
            let value = (step * 104_729) % (1 << 20);
            plain.set(now, value);
            kept.set(now, value);
        }
        assert_eq!(plain.mean(now + 9).to_bits(), kept.mean(now + 9).to_bits());
        for q in [0.5, 0.9, 0.99] {
            assert_eq!(plain.quantile(now + 9, q), kept.quantile(now + 9, q));
        }
        assert_eq!(plain.max(), kept.max());
        assert_eq!(kept.distribution().unwrap().total(), 500);
    }
}
