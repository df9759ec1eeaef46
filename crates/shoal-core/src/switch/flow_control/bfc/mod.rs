//! BFC, backpressure flow control (Goyal et al., 2019 preprint, §3; lossless-facts §4.1):
//! per-hop, per-flow pauses carried upstream as bloom filters. This module holds the
//! scheme's arithmetic, which every switch of a network must compute alike: the virtual
//! flow id of a packet, the pause threshold, the filters, and the flow table.

pub mod decide;
mod scheme;
pub mod table;

pub use crate::net::bloom::{BloomFilter, BloomShape, CountingBloom};
pub use crate::net::pause::{is_filter_frame, vfid};
pub use scheme::{Bfc, BfcConfig};
pub use table::{FlowState, FlowTable, Slot};

use crate::sim::{Ps, PS_PER_S};

/// The pause threshold of a physical queue in bytes (§3.4): the bytes it drains, at its
/// fair share of the link, during one pause round trip (`hop_rtt`) plus one interval
/// between filters (`interval`): Th = (HRTT + tau) x mu / N_active, where `active` is the
/// number of unpaused physical queues with data (at least 1).
pub fn pause_threshold(hop_rtt: Ps, interval: Ps, rate_bps: u64, active: usize) -> u64 {
    let bits = (hop_rtt + interval) as u128 * rate_bps as u128 / PS_PER_S as u128;
    (bits / 8 / active.max(1) as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pause_threshold_is_37_5_kb_over_the_active_queues_at_100_gbps() {
        // lossless-facts §4.1: HRTT 2 us, tau = HRTT / 2, mu 100 Gbps.
        let (hrtt, tau) = (2_000_000, 1_000_000);
        for (active, expected) in [(1, 37_500), (2, 18_750), (4, 9_375), (8, 4_687), (32, 1_171)] {
            assert_eq!(pause_threshold(hrtt, tau, 100_000_000_000, active), expected, "{active} active queues");
        }
        assert_eq!(pause_threshold(hrtt, tau, 100_000_000_000, 0), 37_500, "no active queue counts as one");
    }

    #[test]
    fn vfids_are_spread_evenly_and_the_same_for_a_flow() {
        let vfids = 1024;
        let mut count = vec![0u32; vfids as usize];
        for h in 0..1_024_000u32 {
            let v = vfid(h.wrapping_mul(2_654_435_761), vfids);
            assert_eq!(v, vfid(h.wrapping_mul(2_654_435_761), vfids));
            count[v as usize] += 1;
        }
        // 1,000 per id, binomial sigma 31.6: within 5 sigma.
        let (lo, hi) = (count.iter().min().unwrap(), count.iter().max().unwrap());
        assert!(*lo >= 842 && *hi <= 1158, "ids hold {lo} to {hi} of 1,000 expected");
    }
}
