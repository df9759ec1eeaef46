use super::{LossRecovery, LossRecoveryFacts};
use crate::net::Packet;
use crate::registry::{NoKeys, Scheme};
use crate::sim::Ps;

/// Go-back-N, as RoCE NICs run it (ns3-datacenter's `RdmaHw`, after InfiniBand): the
/// receiver drops a packet beyond a gap and NACKs the packet it expects; a NACK, or a
/// timeout where `rdma.rto` sets one, sends the sender back to its first unacknowledged
/// packet, and everything after it is sent again.
pub struct GoBackN;

impl Scheme for GoBackN {
    type Config = NoKeys;
    type Env = ();

    fn build(_: &NoKeys, _: &()) -> Self {
        GoBackN
    }
}

impl LossRecoveryFacts for GoBackN {
    fn keeps_out_of_order(_: &NoKeys) -> bool {
        false
    }

    fn times_out(_: &NoKeys) -> bool {
        false
    }
}

impl LossRecovery for GoBackN {
    #[inline(always)]
    fn resend(&mut self, _: u32) -> Option<u32> {
        None
    }

    #[inline(always)]
    fn resends(&self, _: u32) -> bool {
        false
    }

    fn on_nack(&mut self, _: &Packet, snd_una: u32, snd_nxt: &mut u32, _: u32) -> bool {
        *snd_nxt = snd_una;
        false
    }

    fn on_timeout(&mut self, snd_una: u32, snd_nxt: &mut u32) -> bool {
        *snd_nxt = snd_una;
        false
    }

    #[inline(always)]
    fn timeout(&self, _: u32, fixed: Option<Ps>) -> Option<Ps> {
        fixed
    }
}
