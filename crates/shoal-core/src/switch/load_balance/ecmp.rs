use super::{Egress, LoadBalancer, LoadBalancerFacts};
use crate::net::{Hops, Packet};
use crate::registry::{keyless_scheme, NoKeys};
use crate::sim::{mix64, Ps};

/// ECMP: every packet of a flow (in one direction) takes the next hop that the hash of its
/// 5-tuple, salted by the switch, picks. A flow keeps its path, so its packets arrive in
/// order; two large flows that hash alike share a link while another idles.
pub struct Ecmp;

keyless_scheme!(Ecmp);

impl LoadBalancerFacts for Ecmp {
    fn splits_flows(_: &NoKeys) -> bool {
        false
    }
}

impl Ecmp {
    /// The next hop of `pkt` at a switch salted `salt`.
    #[inline(always)]
    pub fn choose(hops: Hops, pkt: &Packet, salt: u64) -> u16 {
        hops.ecmp(mix64(pkt.hash as u64 ^ salt))
    }
}

impl LoadBalancer for Ecmp {
    fn pick(&mut self, hops: Hops, pkt: &Packet, _now: Ps, egress: &Egress) -> u16 {
        Ecmp::choose(hops, pkt, egress.salt)
    }
}
