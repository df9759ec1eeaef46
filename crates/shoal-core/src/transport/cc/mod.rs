//! The congestion-control decision point of a sender. The sender owns loss detection
//! and recovery; a `CongestionControl` decides how the window (or rate) grows on new
//! ACKs, how it reacts to ECN echoes, congestion notifications and per-hop telemetry,
//! and what ssthresh becomes on a loss. One file per controller; `registry!` below lists
//! them.

mod dcqcn;
mod dctcp;
mod ecn_star;
mod hop_records;
mod hpcc;
mod line_rate;
mod newreno;
mod powertcp;
mod rdma_dctcp;
mod theta_powertcp;
mod timely;

pub use dcqcn::{Dcqcn, DcqcnConfig, MellanoxConfig, PaperConfig};
pub use dctcp::{Dctcp, DctcpConfig};
pub use ecn_star::EcnStar;
pub use hpcc::{Hpcc, HpccConfig};
pub use line_rate::LineRate;
pub use newreno::NewReno;
pub use powertcp::{PowerTcp, PowerTcpConfig, PowerTcpRevision};
pub use rdma_dctcp::{RdmaDctcp, RdmaDctcpConfig};
pub use theta_powertcp::{ThetaPowerTcp, ThetaPowerTcpConfig};
pub use timely::{Timely, TimelyConfig};

use crate::check_env::CheckEnv;
use crate::config::Warnings;
use crate::net::{IntFormat, IntHop};
use crate::registry::{registry, Scheme};
use crate::sim::Ps;
use crate::units::Rate;
use serde::Deserialize;

/// What a controller adjusts. Window-based senders pace nothing: their `rate_bps` and
/// `line_rate_bps` are 0.
#[derive(Clone, Copy, Debug)]
pub struct SendState {
    /// Congestion window, bytes.
    pub cwnd: f64,
    /// Slow-start threshold, bytes.
    pub ssthresh: f64,
    /// Sending rate of a paced sender, bits per second.
    pub rate_bps: f64,
    /// The sender's link rate, bits per second (the most `rate_bps` may be).
    pub line_rate_bps: f64,
    /// Payload bytes per segment.
    pub mss: f64,
}

impl SendState {
    /// The state of a window-based sender.
    pub fn window(cwnd: f64, ssthresh: f64, mss: f64) -> Self {
        SendState { cwnd, ssthresh, rate_bps: 0.0, line_rate_bps: 0.0, mss }
    }

    /// `rate` held at `min_rate` or more and at the line rate or less. A floor above the
    /// line rate (which validation warns of) leaves the line rate: no sender is paced
    /// faster than its link, and `f64::clamp` would panic on the inverted bounds.
    pub fn bounded_rate(&self, rate: f64, min_rate: Rate) -> f64 {
        rate.max(min_rate.0 as f64).min(self.line_rate_bps)
    }

    /// Reno growth for `acked` new bytes: slow start up to ssthresh, and what is left of
    /// `acked` grows the window by one MSS per window of data. Slow start stops at ssthresh
    /// as Linux's `tcp_slow_start` and ns-3's `TcpLinuxReno::SlowStart` (the base of the
    /// `TcpDctcp` Shoal is checked against) stop it: a stretch ACK, such as the one that
    /// covers what the receiver held after a timeout's go-back-N, would otherwise lift the
    /// window past ssthresh by every byte it covers, and the sender would flood its NIC.
    pub fn reno_increase(&mut self, acked: u64) {
        let mut acked = acked as f64;
        if self.cwnd < self.ssthresh {
            let room = self.ssthresh - self.cwnd;
            if acked <= room {
                self.cwnd += acked;
                return;
            }
            self.cwnd = self.ssthresh;
            acked -= room;
        }
        self.cwnd += self.mss * acked / self.cwnd;
    }

    /// Reno's ssthresh after a loss (RFC 5681, eq. 4): half the data in flight, at
    /// least two segments.
    pub fn reno_ssthresh(&self, flight_bytes: f64) -> f64 {
        (flight_bytes / 2.0).max(2.0 * self.mss)
    }
}

/// What a sender knows of its congestion state now; NaN where its transport or its
/// controller has no such value.
#[derive(Clone, Copy, Debug)]
pub struct Probe {
    /// The congestion window (TCP) or the cap on bytes in flight (RDMA with a window).
    pub cwnd_bytes: f64,
    /// The rate of a paced sender (RDMA), bits per second.
    pub rate_bps: f64,
    /// DCQCN's or DCTCP's alpha: the estimate of the fraction of marked packets.
    pub alpha: f64,
    /// DCQCN's target rate, bits per second.
    pub target_rate_bps: f64,
    /// HPCC's smoothed utilization, or PowerTCP's smoothed normalized power.
    pub utilization: f64,
}

impl Probe {
    pub const EMPTY: Probe = Probe {
        cwnd_bytes: f64::NAN,
        rate_bps: f64::NAN,
        alpha: f64::NAN,
        target_rate_bps: f64::NAN,
        utilization: f64::NAN,
    };

    pub(crate) fn bits(&self) -> [u64; 5] {
        [self.cwnd_bytes, self.rate_bps, self.alpha, self.target_rate_bps, self.utilization].map(f64::to_bits)
    }
}

/// An ACK as a controller sees it. TCP passes the ACKs that acknowledge new data outside
/// loss recovery; RDMA passes every ACK and NACK (the reference's `RdmaHw::ReceiveAck`
/// runs its controller on both, after moving the sequence state), `acked_bytes` then
/// being the payload bytes newly acknowledged, possibly 0.
pub struct Feedback<'a> {
    pub now: Ps,
    pub acked_bytes: u64,
    /// The ACK echoes a congestion mark.
    pub ece: bool,
    /// Sequence state after the ACK, in segments.
    pub snd_una: u32,
    pub snd_nxt: u32,
    /// The round trip this ACK measured, if it measured one (RDMA: now minus the send
    /// time the ACK echoes; a NACK measures none).
    pub rtt: Option<Ps>,
    /// The per-hop records the acknowledged packet collected, when the network stamps
    /// them.
    pub telemetry: Option<&'a [IntHop]>,
}

pub trait CongestionControl: Send {
    fn on_ack(&mut self, s: &mut SendState, f: &Feedback);
    /// A loss was detected; returns the new ssthresh.
    fn on_loss(&mut self, s: &SendState, flight_bytes: f64) -> f64 {
        s.reno_ssthresh(flight_bytes)
    }
    /// The retransmission timer fired: the window restarts from one segment in slow
    /// start, so any hold from an earlier reduction ends.
    fn on_timeout(&mut self) {}
    /// The connection starts carrying a new flow, whose segments count from 0 again:
    /// forget every position in the old sequence, keep what was learned.
    fn on_new_flow(&mut self) {}
    /// A congestion notification packet arrived (rate-based controllers).
    fn on_cnp(&mut self, _s: &mut SendState, _now: Ps) {}
    /// A packet of `bytes` wire bytes left (paced senders: for a byte counter).
    fn on_send(&mut self, _s: &mut SendState, _bytes: u64, _now: Ps) {}
    /// When the controller wants `on_timer` called next, if at all.
    fn next_timer(&self) -> Option<Ps> {
        None
    }
    /// The time `next_timer` asked for has come.
    fn on_timer(&mut self, _s: &mut SendState, _now: Ps) {}
    /// For a window that scales with the rate (RDMA `window_scales_with_rate`), the round
    /// trip the controller sizes it by itself, if it does: the window is then the rate
    /// times this RTT instead of the configured window times rate / line rate. The
    /// reference's PowerTCP does this (`powerEnabled` with `VAR_WIN`: m_rate x m_baseRtt
    /// / 8, ns3-datacenter 6ddb4a4 `rdma-queue-pair.cc:126-129`), with the queue pair's
    /// base RTT, which theta-PowerTCP lowers to the least RTT it measures
    /// (`rdma-hw.cc:990-991`).
    fn window_rtt(&self) -> Option<Ps> {
        None
    }
    /// Fills in what the controller keeps of its state (`run.series`): its alpha, target
    /// rate or measured utilization.
    fn probe(&self, _p: &mut Probe) {}
}

/// What the rest of Shoal must know of a TCP congestion controller beyond its
/// `CongestionControl` methods, answered in its own file.
pub trait TcpCcFacts: Scheme {
    /// For a controller that reacts to ECN marks, the lambda of the marking threshold it
    /// needs, K = lambda x C x RTT (BCC paper, section II-C); None for one that ignores
    /// marks.
    fn ecn_lambda(_: &Self::Config) -> Option<f64> {
        None
    }
}

/// What the rest of Shoal must know of an RDMA congestion controller beyond its
/// `CongestionControl` methods. Each controller answers in its own file; the defaults
/// hold for a controller that reads ACKs and their echoed marks alone.
pub trait RdmaCcFacts: Scheme {
    /// How the receivers of connections with this controller notify congestion.
    fn notification(_: &Self::Config) -> Notification {
        Notification::EchoInAcks
    }

    /// Whether a rate change also moves the pending packet's send time by the change in
    /// its packet time, as the reference's `ChangeRate` does for the controllers that call
    /// it (HPCC and PowerTCP, `rdma-hw.cc:636-647`); otherwise a new rate applies from the
    /// next packet's gap on.
    fn shifts_pending_packet(_: &Self::Config) -> bool {
        false
    }

    /// Whether it reads per-hop telemetry (`Feedback::telemetry`): the connections' data
    /// packets then carry a stack for the switches to stamp.
    fn wants_telemetry(_: &Self::Config) -> bool {
        false
    }

    /// Whether it steers by ECN marks (echoed in ACKs or as CNPs): without a marking rule
    /// it never slows down.
    fn reacts_to_marks(_: &Self::Config) -> bool {
        false
    }

    /// Whether it needs the connection's base RTT (`RdmaCcEnv::base_rtt`).
    fn needs_base_rtt(_: &Self::Config) -> bool {
        false
    }
}

/// A registry of congestion controllers: `registry!` with the `CongestionControl`
/// methods forwarded. TCP and RDMA each have one, since each takes controllers the other
/// cannot run.
macro_rules! cc_registry {
    ($($schemes:tt)*) => {
        registry! {
            $($schemes)*
            forward {
                mut fn on_ack(s: &mut SendState, f: &Feedback);
                mut fn on_loss(s: &SendState, flight_bytes: f64) -> f64;
                mut fn on_timeout();
                mut fn on_new_flow();
                mut fn on_cnp(s: &mut SendState, now: Ps);
                mut fn on_send(s: &mut SendState, bytes: u64, now: Ps);
                ref fn next_timer() -> Option<Ps>;
                mut fn on_timer(s: &mut SendState, now: Ps);
                ref fn window_rtt() -> Option<Ps>;
                ref fn probe(p: &mut Probe);
            }
        }
    };
}

cc_registry! {
    /// The congestion controller of TCP flows (`transport.cc`).
    pub enum CcConfig => AnyCc: CongestionControl, env ();
    "dctcp" => Dctcp(Dctcp),
    "newreno" => NewReno(NewReno),
    "ecn_star" => EcnStar(EcnStar),
    facts TcpCcFacts {
        /// The lambda of the marking threshold K = lambda x C x RTT it needs; None for a
        /// controller that ignores marks.
        fn ecn_lambda -> Option<f64>;
    }
}

cc_registry! {
    /// The congestion control of RDMA connections (`rdma.cc`). DCQCN comes first: it is
    /// the default, also of a table without `kind`.
    pub enum RdmaCcConfig => AnyRdmaCc: CongestionControl, env RdmaCcEnv;
    "dcqcn" => Dcqcn(Dcqcn),
    "none" => LineRate(LineRate),
    "timely" => Timely(Timely),
    "dctcp" => RdmaDctcp(RdmaDctcp),
    "theta_powertcp" => ThetaPowerTcp(ThetaPowerTcp),
    "hpcc" => Hpcc(Hpcc),
    "powertcp" => PowerTcp(PowerTcp),
    facts RdmaCcFacts {
        /// How the receivers of connections with this controller notify congestion.
        fn notification -> Notification;
        /// Whether a rate change also moves the pending packet's send time.
        fn shifts_pending_packet -> bool;
        /// Whether its connections' data packets carry a telemetry stack.
        fn wants_telemetry -> bool;
        /// Whether it steers by ECN marks.
        fn reacts_to_marks -> bool;
        /// Whether it needs the connection's base RTT.
        fn needs_base_rtt -> bool;
    }
}

/// What an RDMA connection's controller is built from besides its keys.
#[derive(Clone, Copy, Debug, Default)]
pub struct RdmaCcEnv {
    /// The connection's base RTT as the reference computes it for its window (twice the
    /// propagation delay plus one payload serialization per link; its path's, or the
    /// longest path's: see `RdmaSettings`).
    pub base_rtt: Ps,
    /// The connection's window, bytes (0: none), as sized when it opens.
    pub window: u64,
    /// How the switches write telemetry records (for the differences of two).
    pub int_format: IntFormat,
}

/// How an RDMA receiver tells its sender that packets arrived marked (CE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notification {
    /// Each ACK and NACK echoes the mark of the packet it answers (DCQCN's Mellanox
    /// model; ns3-datacenter 6ddb4a4, `rdma-hw.cc:340-341`).
    EchoInAcks,
    /// A congestion notification packet at a marked packet, at most one per `interval`
    /// per connection (the DCQCN paper's notification point).
    Cnp { interval: Ps },
}

impl RdmaCcConfig {
    /// Warns of each rate key (`min_rate`, `rate_ai`, `rate_hai`) above the line rate of
    /// the fastest host link, `section` being the controller's (`rdma.cc`): a floor there
    /// holds every connection at its line rate, as if it had no congestion control, and
    /// one step of such an increase takes a connection back to its line rate.
    pub fn line_rate_warnings(&self, section: &str, env: &CheckEnv, warnings: &mut Warnings) {
        let Ok(line) = env.topology.host_rate() else { return };
        let keys = self.keys_value();
        for (key, effect) in [
            ("min_rate", "no cut takes a connection below its line rate, as if it had no congestion control"),
            ("rate_ai", "one increase takes a connection back to its line rate"),
            ("rate_hai", "one increase takes a connection back to its line rate"),
        ] {
            let Some(rate) = keys.get(key).and_then(|v| Rate::deserialize(v).ok()) else { continue };
            if rate > line {
                warnings.push(format!(
                    "{section}.{key}: {rate} is above the line rate ({line}, the fastest host link): {effect}"
                ));
            }
        }
    }
}

/// The congestion controller a TCP flow of this configuration runs.
pub fn build(cfg: &CcConfig) -> AnyCc {
    cfg.build(&())
}

#[cfg(test)]
pub(super) mod tests {
    use super::{Feedback, SendState};

    const MSS: f64 = 1000.0;

    #[test]
    fn slow_start_grows_by_what_is_acked_below_ssthresh() {
        let mut s = SendState::window(2.0 * MSS, 10.0 * MSS, MSS);
        s.reno_increase(MSS as u64);
        assert_eq!(s.cwnd, 3.0 * MSS);
    }

    /// RFC 5681 / Linux: a stretch ACK of 100 segments at cwnd 1, ssthresh 10 ends slow
    /// start at 10 segments; the other 91 grow the window by 91/10 segments, as 91 ACKs
    /// of one segment each would (to first order) in congestion avoidance.
    #[test]
    fn a_stretch_ack_stops_slow_start_at_ssthresh() {
        let mut s = SendState::window(MSS, 10.0 * MSS, MSS);
        s.reno_increase(100 * MSS as u64);
        assert!((s.cwnd - 19.1 * MSS).abs() < 1e-6, "cwnd = {}", s.cwnd / MSS);
    }

    #[test]
    fn congestion_avoidance_adds_one_mss_per_window() {
        let mut s = SendState::window(10.0 * MSS, 5.0 * MSS, MSS);
        for _ in 0..10 {
            s.reno_increase(MSS as u64);
        }
        assert!((s.cwnd - 11.0 * MSS).abs() < 0.1 * MSS, "cwnd = {}", s.cwnd / MSS);
    }

    /// An ACK of `acked_bytes` at t = 0 without an RTT sample or telemetry.
    pub fn ack(acked_bytes: u64, ece: bool, snd_una: u32, snd_nxt: u32) -> Feedback<'static> {
        Feedback { now: 0, acked_bytes, ece, snd_una, snd_nxt, rtt: None, telemetry: None }
    }
}
