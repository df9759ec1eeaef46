//! theta-PowerTCP (`[rdma.cc] kind = "theta_powertcp"`; Addanki et al., NSDI 2022): the
//! delay-only PowerTCP, as ns3-datacenter runs it (cc_mode 3 with `--wien=true
//! --delayWien=true`; `UpdateRatePower`, `rdma-hw.cc:981-1084`, called from
//! `HandleAckHp`, `rdma-hw.cc:779-793`). It needs no telemetry: only the RTT of each ACK.
//!
//! ns3-datacenter's commit f542a97 (2025-03-30) changed PowerTCP's first-RTT handling and
//! added a floor on its arrival rate, both only for the INT version (the first-RTT branch
//! it removed was already skipped when `PowerTCPdelay` is set): theta-PowerTCP is the
//! same before and after it.

use super::hop_records::ewma;
use super::RdmaCcFacts;
use super::{CongestionControl, Feedback, Probe, RdmaCcEnv, SendState};
use crate::check_env::CheckEnv;
use crate::config::{Probability, ScenarioError, Warnings};
use crate::registry::Scheme;
use crate::sim::Ps;
use crate::units::Rate;
use serde::{Deserialize, Serialize};

/// theta-PowerTCP's sender. On every ACK, with the RTT sample `rtt` (the ACK's echoed
/// send time; an ACK without one, a NACK, takes the base RTT as its sample, as the
/// reference does when it finds no send time for the acknowledged sequence):
///
/// - base_rtt <- min(base_rtt, rtt), starting from the connection's base RTT;
/// - A = max(min_gradient, (rtt - previous rtt) / (now - previous ACK) + 1), the RTT
///   gradient plus one;
/// - Gamma = A rtt / (base_rtt_factor x base_rtt), the normalized power;
/// - u <- (u (base_rtt - dt) + Gamma dt) / base_rtt with dt = min(now - previous ACK,
///   base_rtt) (u starts at 1);
/// - R = gamma (R_c / u + rate_ai) + (1 - gamma) R_c, clamped to [min_rate, line rate],
///   applied at once;
///
/// where R_c, the reference rate (starting at line rate), becomes R only at the first ACK
/// beyond the packet that was next to send at the last such commit: once per round trip.
pub struct ThetaPowerTcp {
    cfg: ThetaPowerTcpConfig,
    base_rtt: Ps,
    /// The smoothed normalized power.
    u: f64,
    /// The reference rate R_c.
    committed_bps: f64,
    /// R_c is next committed at an ACK beyond this packet (None: at the first ACK).
    commit_after: Option<u32>,
    /// The RTT sample and time of the previous ACK.
    previous: Option<(Ps, Ps)>,
}

/// theta-PowerTCP's keys. The defaults are ns3-datacenter 6ddb4a4's constants, hard-coded
/// in `UpdateRatePower`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ThetaPowerTcpConfig {
    /// Weight of the new rate against the reference rate (0.7, `rdma-hw.cc:1070`; the INT
    /// version uses 0.9).
    pub gamma: Probability,
    /// Additive increase (150 Mbps, `rdma-hw.cc:1070`).
    pub rate_ai: Rate,
    /// The RTT the power is normalized by, in base RTTs (1.05, `rdma-hw.cc:1035`).
    pub base_rtt_factor: f64,
    /// The lowest value of the gradient term A (0.5, `rdma-hw.cc:1032-1033`).
    pub min_gradient: f64,
    /// The lowest rate (`MIN_RATE` 100 Mbps, `config-burst.txt:24`).
    pub min_rate: Rate,
}

impl Default for ThetaPowerTcpConfig {
    fn default() -> Self {
        ThetaPowerTcpConfig {
            gamma: Probability::new(0.7),
            rate_ai: Rate(150_000_000),
            base_rtt_factor: 1.05,
            min_gradient: 0.5,
            min_rate: Rate(100_000_000),
        }
    }
}

impl Scheme for ThetaPowerTcp {
    type Config = ThetaPowerTcpConfig;
    type Env = RdmaCcEnv;

    fn build(cfg: &ThetaPowerTcpConfig, env: &RdmaCcEnv) -> Self {
        ThetaPowerTcp {
            cfg: cfg.clone(),
            base_rtt: env.base_rtt,
            u: 1.0,
            committed_bps: 0.0,
            commit_after: None,
            previous: None,
        }
    }

    fn validate(cfg: &ThetaPowerTcpConfig, path: &str, _: &CheckEnv, _: &mut Warnings) -> Result<(), ScenarioError> {
        if cfg.gamma.get() == 0.0 {
            return Err(ScenarioError::not_accepted(path, "gamma", "0", "0 < gamma <= 1"));
        }
        if !(cfg.base_rtt_factor > 0.0 && cfg.base_rtt_factor.is_finite()) {
            return Err(ScenarioError::not_accepted(
                path,
                "base_rtt_factor",
                cfg.base_rtt_factor.to_string(),
                "a positive number",
            ));
        }
        if !(cfg.min_gradient > 0.0 && cfg.min_gradient.is_finite()) {
            return Err(ScenarioError::not_accepted(
                path,
                "min_gradient",
                cfg.min_gradient.to_string(),
                "a positive number",
            ));
        }
        if cfg.min_rate.0 == 0 {
            return Err(ScenarioError::not_accepted(path, "min_rate", "0", "a positive rate"));
        }
        Ok(())
    }
}

impl RdmaCcFacts for ThetaPowerTcp {
    fn shifts_pending_packet(_: &ThetaPowerTcpConfig) -> bool {
        true
    }

    fn needs_base_rtt(_: &ThetaPowerTcpConfig) -> bool {
        true
    }
}

impl ThetaPowerTcp {
    /// The normalized power of sample `rtt` at `now`, and the time since the previous
    /// ACK it is weighted by. The first ACK has no previous one: no gradient (A = 1) and
    /// full weight. (The reference leaves the previous sample and time uninitialized,
    /// `rdma-queue-pair.h:37-38`; zero there gives about the same, as its flows start
    /// seconds into the run.)
    fn power(&self, rtt: Ps, now: Ps) -> (f64, Ps) {
        let (gradient, dt) = match self.previous {
            Some((previous_rtt, at)) if now > at => {
                ((rtt as f64 - previous_rtt as f64) / (now - at) as f64, (now - at).min(self.base_rtt))
            }
            // Two ACKs at the same instant: the second has no weight.
            Some(_) => (0.0, 0),
            None => (0.0, self.base_rtt),
        };
        let a = (gradient + 1.0).max(self.cfg.min_gradient);
        (a * rtt as f64 / (self.cfg.base_rtt_factor * self.base_rtt as f64), dt)
    }
}

impl CongestionControl for ThetaPowerTcp {
    fn probe(&self, p: &mut Probe) {
        p.utilization = self.u;
    }

    fn on_ack(&mut self, s: &mut SendState, f: &Feedback) {
        if self.commit_after.is_none() {
            self.committed_bps = s.line_rate_bps;
        }
        let rtt = match f.rtt {
            Some(rtt) => {
                self.base_rtt = self.base_rtt.min(rtt);
                rtt
            }
            None => self.base_rtt,
        };
        let (power, dt) = self.power(rtt, f.now);
        self.u = ewma(self.u, power, dt, self.base_rtt);
        let gamma = self.cfg.gamma.get();
        let rate =
            gamma * (self.committed_bps / self.u + self.cfg.rate_ai.0 as f64) + (1.0 - gamma) * self.committed_bps;
        s.rate_bps = s.bounded_rate(rate, self.cfg.min_rate);
        if self.commit_after.is_none_or(|seq| f.snd_una > seq) {
            self.committed_bps = s.rate_bps;
            self.commit_after = Some(f.snd_nxt.max(self.commit_after.unwrap_or(0)));
        }
        self.previous = Some((rtt, f.now));
    }

    /// PowerTCP's window that scales with the rate is rate x the base RTT, which this one
    /// lowers to the least RTT measured (`rdma-queue-pair.cc:126-129`, `rdma-hw.cc:990-991`).
    fn window_rtt(&self) -> Option<Ps> {
        Some(self.base_rtt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Ps = 1_000_000;

    fn ack(now: Ps, snd_una: u32, snd_nxt: u32, rtt: Option<Ps>) -> Feedback<'static> {
        Feedback { now, acked_bytes: 1000, ece: false, snd_una, snd_nxt, rtt, telemetry: None }
    }

    /// A hand-computed sequence at 100 Gbps, base RTT 10 us; rates in Gbps; factor
    /// 1.05 x 10 = 10.5 us:
    ///
    /// 1. t = 100 us, (una 1, nxt 10), rtt 10.5 us: A = 1, Gamma = 10.5/10.5 = 1, dt =
    ///    base: u = 1. R = 0.7 (100/1 + 0.15) + 0.3 x 100 = 100.105, clamped to 100;
    ///    committed (first ACK), R_c = 100; commits again beyond 10.
    /// 2. t = 102 us, (2, 11), rtt 21 us: A = (21 - 10.5)/2 + 1 = 6.25; Gamma =
    ///    6.25 x 21/10.5 = 12.5; dt = 2: u = (1 x 8 + 12.5 x 2)/10 = 3.3.
    ///    R = 0.7 (100/3.3 + 0.15) + 30 = 0.7 x 30.4530303 + 30 = 51.3171212; not committed.
    /// 3. t = 104 us, (11, 20), rtt 21 us: A = 1, Gamma = 2; u = (3.3 x 8 + 2 x 2)/10 =
    ///    3.04; R = 0.7 (100/3.04 + 0.15) + 30 = 0.7 x 33.0447368 + 30 = 53.1313158;
    ///    committed (11 > 10): R_c = 53.1313158, next beyond 20.
    /// 4. t = 124 us, (21, 30), rtt 5 us: the base becomes 5 us (5.25 us normalized); A =
    ///    (5 - 21)/20 + 1 = 0.2, floored at 0.5; Gamma = 0.5 x 5/5.25 = 0.4761905; dt =
    ///    min(20, 5) = 5 = base: u = Gamma. R = 0.7 (53.1313158/0.4761905 + 0.15) +
    ///    0.3 x 53.1313158 = 0.7 x 111.7257632 + 15.9393947 = 94.1474289; committed.
    /// 5. t = 125 us, a NACK (no sample: the base, 5 us): A = (5 - 5)/1 + 1 = 1, Gamma =
    ///    5/5.25 = 0.9523810; dt = 1: u = (0.4761905 x 4 + 0.9523810)/5 = 0.5714286;
    ///    R = 0.7 (94.1474289/0.5714286 + 0.15) + 0.3 x 94.1474289 = 0.7 x 164.9080005 +
    ///    28.2442287 = 143.6798290, clamped to 100; (30 <= 30) not committed.
    #[test]
    fn the_rate_follows_the_hand_computed_sequence() {
        let mut p = ThetaPowerTcp::build(
            &ThetaPowerTcpConfig::default(),
            &RdmaCcEnv { base_rtt: 10 * US, ..RdmaCcEnv::default() },
        );
        let mut s = SendState { cwnd: 0.0, ssthresh: 0.0, rate_bps: 100e9, line_rate_bps: 100e9, mss: 1000.0 };
        let steps = [
            (ack(100 * US, 1, 10, Some(10_500_000)), 100.0, 1.0, 100.0),
            (ack(102 * US, 2, 11, Some(21 * US)), 51.317_121_2, 3.3, 100.0),
            (ack(104 * US, 11, 20, Some(21 * US)), 53.131_315_8, 3.04, 53.131_315_8),
            (ack(124 * US, 21, 30, Some(5 * US)), 94.147_428_9, 0.476_190_5, 94.147_428_9),
            (ack(125 * US, 30, 30, None), 100.0, 0.571_428_6, 94.147_428_9),
        ];
        for (i, (f, gbps, u, committed)) in steps.into_iter().enumerate() {
            p.on_ack(&mut s, &f);
            assert!((s.rate_bps / 1e9 - gbps).abs() < 1e-6, "step {}: {} Gbps vs {gbps}", i + 1, s.rate_bps / 1e9);
            assert!((p.u - u).abs() < 1e-7, "step {}: u {} vs {u}", i + 1, p.u);
            assert!((p.committed_bps / 1e9 - committed).abs() < 1e-6, "step {}: R_c {}", i + 1, p.committed_bps / 1e9);
        }
        assert_eq!(p.base_rtt, 5 * US);
    }

    /// The window's RTT is the base RTT: the connection's until a sample is lower (30 us,
    /// then 12 us), never raised by a higher one (20 us).
    #[test]
    fn the_window_rtt_is_the_least_rtt_measured() {
        let mut p = ThetaPowerTcp::build(
            &ThetaPowerTcpConfig::default(),
            &RdmaCcEnv { base_rtt: 30 * US, ..RdmaCcEnv::default() },
        );
        let mut s = SendState { cwnd: 0.0, ssthresh: 0.0, rate_bps: 25e9, line_rate_bps: 25e9, mss: 1000.0 };
        assert_eq!(p.window_rtt(), Some(30 * US));
        p.on_ack(&mut s, &ack(100 * US, 1, 10, Some(12 * US)));
        assert_eq!(p.window_rtt(), Some(12 * US));
        p.on_ack(&mut s, &ack(101 * US, 2, 10, Some(20 * US)));
        assert_eq!(p.window_rtt(), Some(12 * US));
    }
}
