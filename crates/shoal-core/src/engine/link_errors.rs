//! Random corruption on links (`topology.error_rate`, and each link's own rate): each
//! packet or frame that crosses a corrupting link is lost at the receiving end with the
//! link's chance, independently of every other, as ns3-datacenter's receive error model
//! drops it (`ERROR_UNIT_PACKET`, before the device looks at it, so control frames too).
//! The packet has used the link; the receiver never sees it.
//!
//! The draw is a hash of the run's seed, the link and the arrival's time, not a stream:
//! a link delivers at most one packet per picosecond, so each arrival has its own draw,
//! the same in any partition of a parallel run, and a run without corrupting links draws
//! nothing.

use crate::sim::{mix64, Ps};

/// Mixed into the run's seed for each link's draws.
const SALT: u64 = 0x1e55_7a1e;

/// The bound below which a uniform 64-bit draw means "corrupted", for chance `p` (in 0
/// to 1): 0 never corrupts.
pub(super) fn threshold(p: f64) -> u64 {
    debug_assert!((0.0..=1.0).contains(&p), "error rates are checked when the scenario is read");
    // 2^64 p, saturating at 1 (where one draw in 2^64 would pass: never, in practice).
    (p * 18_446_744_073_709_551_616.0) as u64
}

/// Whether the packet reaching the end of link `link` at `at` is corrupted, on a link
/// whose `threshold` is as above.
#[inline]
pub(super) fn corrupted(seed: u64, link: u32, at: Ps, threshold: u64) -> bool {
    let key = mix64(seed ^ mix64(SALT ^ link as u64));
    mix64(key ^ at) < threshold
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_span_never_to_always() {
        assert_eq!(threshold(0.0), 0);
        assert_eq!(threshold(1.0), u64::MAX);
        assert_eq!(threshold(0.5), 1 << 63);
        assert!(!(0..1000).any(|t| corrupted(7, 3, t, 0)));
    }

    /// Over arrivals a serialization apart (1,000 B at 100 Gbps), the share corrupted is
    /// the chance within 4.5 standard deviations of the binomial, for several chances,
    /// links and seeds; and consecutive draws are not correlated (runs of corruptions
    /// are as long as independence makes them).
    #[test]
    fn the_share_corrupted_is_the_chance() {
        let n: u64 = 400_000;
        for (p, seed, link) in [(1e-3, 1, 0), (0.01, 2, 7), (0.1, 3, 1_000), (0.5, 4, 12)] {
            let t = threshold(p);
            let lost: Vec<bool> = (0..n).map(|k| corrupted(seed, link, 5_000 + k * 80_000, t)).collect();
            let count = lost.iter().filter(|&&c| c).count() as f64;
            let sd = (n as f64 * p * (1.0 - p)).sqrt();
            assert!((count - n as f64 * p).abs() < 4.5 * sd, "p {p}: {count} of {n}");
            let pairs = lost.windows(2).filter(|w| w[0] && w[1]).count() as f64;
            let expected = (n - 1) as f64 * p * p;
            assert!((pairs - expected).abs() < 4.5 * expected.sqrt() + 3.0, "p {p}: {pairs} pairs, {expected}");
        }
    }
}
