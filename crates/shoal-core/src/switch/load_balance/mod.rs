//! The load-balancing decision point: which of several equal-cost next hops a packet
//! leaves a switch by. A switch asks only where routing offers two or more; one next hop
//! is taken without asking. Each balancer decides at its own switch from what that switch
//! knows (its packets, its clock, its egress queues): none sees beyond its switch.

mod drill;
mod ecmp;
mod letflow;
mod spray;

pub use drill::Drill;
pub use ecmp::Ecmp;
pub use letflow::LetFlow;
pub use spray::Spray;

use crate::net::{Hops, Packet};
use crate::registry::{registry, Scheme};
use crate::sim::{mix64, Ps};

/// What a balancer may read of its switch: the bytes waiting at each egress port, and the
/// switch's salt (so that switches in a row choose independently of each other).
pub struct Egress<'a> {
    pub salt: u64,
    /// Bytes queued at a port, every queue of it.
    queued: &'a dyn Fn(u16) -> u64,
}

impl<'a> Egress<'a> {
    pub fn new(salt: u64, queued: &'a dyn Fn(u16) -> u64) -> Self {
        Egress { salt, queued }
    }

    /// Bytes queued at `port`, every queue of it.
    #[inline]
    pub fn queued_bytes(&self, port: u16) -> u64 {
        (self.queued)(port)
    }

    /// The `i`-th draw of this switch for `pkt` at `now`: a hash, so that the same run
    /// draws the same on any number of threads and a run without random balancing draws
    /// nothing. A flow sends at most one packet a picosecond in a direction, and its
    /// packets' sequence numbers and direction (in `hash`) tell apart the rest.
    #[inline]
    pub fn draw(&self, pkt: &Packet, now: Ps, i: u64) -> u64 {
        let packet = ((pkt.hash as u64) << 32) | pkt.seq as u64;
        mix64(mix64(self.salt ^ now) ^ mix64(packet ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
    }
}

pub trait LoadBalancer: Send {
    /// The port among `hops` (two or more) that `pkt` leaves by at `now`.
    fn pick(&mut self, hops: Hops, pkt: &Packet, now: Ps, egress: &Egress) -> u16;
}

/// What the rest of Shoal must know of a balancer, answered in its own file.
pub trait LoadBalancerFacts: Scheme {
    /// Whether the packets of one flow may take different paths, so that they may arrive
    /// out of order (the run then counts those that do).
    fn splits_flows(cfg: &Self::Config) -> bool;
}

registry! {
    /// How a switch chooses among equal-cost next hops (`[switch.load_balancing]`).
    pub enum LoadBalancingConfig => AnyLoadBalancer: LoadBalancer, env ();
    "ecmp" => Ecmp(Ecmp),
    "spray" => Spray(Spray),
    "letflow" => LetFlow(LetFlow),
    "drill" => Drill(Drill),
    facts LoadBalancerFacts {
        fn splits_flows -> bool;
    }
    forward {
        mut fn pick(hops: Hops, pkt: &Packet, now: Ps, egress: &Egress) -> u16;
    }
}

impl LoadBalancingConfig {
    /// ECMP, the default, which a resolved scenario leaves out.
    pub fn is_ecmp(&self) -> bool {
        matches!(self, LoadBalancingConfig::Ecmp(_))
    }
}
