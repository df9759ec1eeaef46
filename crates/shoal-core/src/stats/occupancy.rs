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
}

impl TimeWeighted {
    /// A tracker with a histogram of `buckets` buckets covering `0..=capacity`.
    pub fn with_histogram(capacity: u64, buckets: u64) -> Self {
        let bucket_bytes = (capacity / buckets.max(1)).max(1);
        TimeWeighted { histogram: vec![0; (capacity / bucket_bytes + 2) as usize], bucket_bytes, ..Default::default() }
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
}
