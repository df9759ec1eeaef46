//! The loss-recovery decision point of an RDMA sender: what it sends again after a NACK
//! or a timeout, and how long it waits before it times out. The connection keeps its
//! sequence state (first unacknowledged packet, next new packet) and its pacing; a scheme
//! keeps what it knows beyond that.

mod go_back_n;
mod irn;

pub use go_back_n::GoBackN;
pub use irn::{Irn, IrnConfig, IrnResend};

use crate::net::Packet;
use crate::registry::{registry, Scheme};
use crate::sim::Ps;

/// A scheme learns of progress from the `snd_una` each call carries (it is asked only
/// after a NACK or a timeout, so the ACKs of a connection without losses cost nothing).
pub trait LossRecovery {
    /// The packet to send again ahead of any new one, if one is due (`snd_una`: the first
    /// unacknowledged packet). It counts as sent from then on.
    fn resend(&mut self, snd_una: u32) -> Option<u32>;
    /// Whether `resend` would give a packet.
    fn resends(&self, snd_una: u32) -> bool;
    /// A NACK arrived: the receiver misses packets. Its cumulative part has moved
    /// `snd_una` already; `snd_nxt` is the next new packet of a `packets`-packet message.
    /// Returns whether the scheme may now have packets to `resend`.
    fn on_nack(&mut self, nack: &Packet, snd_una: u32, snd_nxt: &mut u32, packets: u32) -> bool;
    /// The retransmission timer expired with `snd_una..snd_nxt` unacknowledged. Returns
    /// whether the scheme may now have packets to `resend`.
    fn on_timeout(&mut self, snd_una: u32, snd_nxt: &mut u32) -> bool;
    /// How long the sender waits for progress with `in_flight` packets unacknowledged
    /// before it times out (`fixed`: `rdma.rto`), if it ever does.
    fn timeout(&self, in_flight: u32, fixed: Option<Ps>) -> Option<Ps>;
}

/// What the rest of Shoal must know of a scheme, answered in its own file.
pub trait LossRecoveryFacts: Scheme {
    /// Whether the receiver keeps packets that arrive beyond a gap (selective repeat)
    /// rather than dropping them (go-back-N).
    fn keeps_out_of_order(cfg: &Self::Config) -> bool;
    /// Whether senders time out on their own, whatever `rdma.rto` says.
    fn times_out(cfg: &Self::Config) -> bool;
}

registry! {
    /// How RDMA connections recover lost packets (`[rdma.loss_recovery]`).
    pub enum LossRecoveryConfig => AnyLossRecovery: LossRecovery, env ();
    "go_back_n" => GoBackN(GoBackN),
    "irn" => Irn(Irn),
    facts LossRecoveryFacts {
        fn keeps_out_of_order -> bool;
        fn times_out -> bool;
    }
    forward {
        mut fn resend(snd_una: u32) -> Option<u32>;
        ref fn resends(snd_una: u32) -> bool;
        mut fn on_nack(nack: &Packet, snd_una: u32, snd_nxt: &mut u32, packets: u32) -> bool;
        mut fn on_timeout(snd_una: u32, snd_nxt: &mut u32) -> bool;
        ref fn timeout(in_flight: u32, fixed: Option<Ps>) -> Option<Ps>;
    }
}

impl LossRecoveryConfig {
    /// Go-back-N, the default, which a resolved scenario leaves out.
    pub fn is_go_back_n(&self) -> bool {
        matches!(self, LossRecoveryConfig::GoBackN(_))
    }
}
