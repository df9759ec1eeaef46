//! Flow-size distributions: piecewise-linear CDFs given as `<bytes> <percent>` lines.

use rand::Rng as _;

/// The built-in distributions, shipped inside the binary.
pub const BUILTIN: &[(&str, &str)] = &[
    ("websearch", include_str!("../../../../data/cdf/websearch.cdf")),
    ("fb_cache", include_str!("../../../../data/cdf/fb_cache.cdf")),
    ("fb_hadoop", include_str!("../../../../data/cdf/fb_hadoop.cdf")),
    ("datamining", include_str!("../../../../data/cdf/datamining.cdf")),
    ("google_rpc", include_str!("../../../../data/cdf/google_rpc.cdf")),
    ("ali_storage", include_str!("../../../../data/cdf/ali_storage.cdf")),
    ("homa_w4", include_str!("../../../../data/cdf/homa_w4.cdf")),
];

/// A flow-size CDF: points (size in bytes, cumulative percent), sizes and percents never
/// decreasing, the last percent exactly 100. Sizes between points are interpolated.
#[derive(Clone, Debug)]
pub struct FlowSizeCdf {
    points: Vec<(f64, f64)>,
}

impl FlowSizeCdf {
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut points: Vec<(f64, f64)> = Vec::new();
        let text = text.strip_prefix('\u{feff}').unwrap_or(text); // a byte-order mark
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            let parsed = match fields.as_slice() {
                [size, percent] => size.parse::<f64>().ok().zip(percent.parse::<f64>().ok()),
                _ => None,
            };
            let (size, percent) =
                parsed.ok_or_else(|| format!("line {}: expected \"<bytes> <percent>\", found {line:?}", n + 1))?;
            if !(size.is_finite() && size >= 0.0) {
                return Err(format!("line {}: size {size} must be a non-negative number", n + 1));
            }
            if size > crate::units::MAX_BYTES as f64 {
                return Err(format!(
                    "line {}: size {size} is too large (accepted: up to {})",
                    n + 1,
                    crate::units::Bytes::MAX
                ));
            }
            if !(0.0..=100.0).contains(&percent) {
                return Err(format!("line {}: percent {percent} is outside 0..100", n + 1));
            }
            if let Some(&(last_size, last_percent)) = points.last() {
                if size < last_size || percent < last_percent {
                    return Err(format!(
                        "line {}: the CDF decreases ({last_size} {last_percent} then {size} {percent})",
                        n + 1
                    ));
                }
            }
            points.push((size, percent));
        }
        match points.last() {
            None => Err("the file has no points (expected lines \"<bytes> <percent>\")".into()),
            Some(&(_, p)) if p != 100.0 => Err(format!("the last percent is {p}, but a CDF must end at 100")),
            Some(&(s, _)) if s < 1.0 => Err("every flow would be empty (the largest size is below 1 byte)".into()),
            _ => Ok(FlowSizeCdf { points }),
        }
    }

    /// The points (size in bytes, cumulative percent) between which sizes are
    /// interpolated linearly.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    pub fn builtin(name: &str) -> Option<Self> {
        BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, text)| Self::parse(text).expect("built-in CDFs are valid"))
    }

    /// Mean flow size in bytes (of the continuous distribution; sampled sizes are rounded).
    pub fn mean(&self) -> f64 {
        let (s0, p0) = self.points[0];
        let mut mean = s0 * p0 / 100.0;
        for w in self.points.windows(2) {
            let ((s1, p1), (s2, p2)) = (w[0], w[1]);
            mean += (p2 - p1) / 100.0 * (s1 + s2) / 2.0;
        }
        mean
    }

    /// Size at cumulative percent `u` in [0, 100).
    pub fn quantile(&self, u: f64) -> f64 {
        let (s0, p0) = self.points[0];
        if u < p0 {
            return s0;
        }
        for w in self.points.windows(2) {
            let ((s1, p1), (s2, p2)) = (w[0], w[1]);
            if u < p2 {
                return s1 + (s2 - s1) * (u - p1) / (p2 - p1);
            }
        }
        self.points[self.points.len() - 1].0
    }

    /// A flow size in bytes, at least 1.
    pub fn sample(&self, rng: &mut crate::sim::Rng) -> u64 {
        let u = rng.gen::<f64>() * 100.0;
        (self.quantile(u).round() as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse_and_match_documented_means() {
        // Means documented in data/cdf/README.md (approximate).
        for (name, mean) in [("websearch", 1.71e6), ("fb_cache", 0.94e6), ("fb_hadoop", 0.12e6), ("datamining", 12.7e6)]
        {
            let cdf = FlowSizeCdf::builtin(name).unwrap();
            let m = cdf.mean();
            assert!((m - mean).abs() / mean < 0.08, "{name}: mean {m} vs documented {mean}");
        }
        for (name, _) in BUILTIN {
            assert!(FlowSizeCdf::builtin(name).is_some());
        }
    }

    /// The BFC harness's FB_Hadoop (Homa's W4, `mix/w4.txt`) as its generator reads it:
    /// no flow of 100 B or less, and the mean it prints as "Avg flow size" for that file
    /// (121,849.23 B, the trapezoid sum over its points; lossless-facts §4.2).
    #[test]
    fn homa_w4_is_the_bfc_harness_distribution() {
        let cdf = FlowSizeCdf::builtin("homa_w4").unwrap();
        assert!((cdf.mean() - 121_849.23).abs() < 0.01, "mean {}", cdf.mean());
        let mut rng = crate::sim::stream(1, "test.homa_w4", 0);
        assert!((0..100_000).all(|_| cdf.sample(&mut rng) >= 100));
    }

    #[test]
    fn rejects_bad_files() {
        assert!(FlowSizeCdf::parse("").is_err());
        assert!(FlowSizeCdf::parse("100 50\n50 100\n").is_err());
        assert!(FlowSizeCdf::parse("100 50\n200 40\n300 100\n").is_err());
        assert!(FlowSizeCdf::parse("100 0\n200 90\n").is_err());
        assert!(FlowSizeCdf::parse("100 zero\n").is_err());
        assert!(FlowSizeCdf::parse("100 0\n200 100\n").is_ok());
    }

    #[test]
    fn sample_mean_matches_analytic_mean() {
        let cdf = FlowSizeCdf::builtin("websearch").unwrap();
        let mut rng = crate::sim::stream(7, "test", 0);
        let n = 200_000;
        let total: f64 = (0..n).map(|_| cdf.sample(&mut rng) as f64).sum();
        let m = total / n as f64;
        assert!((m - cdf.mean()).abs() / cdf.mean() < 0.03, "{m} vs {}", cdf.mean());
    }
}
