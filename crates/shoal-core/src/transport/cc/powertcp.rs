//! PowerTCP (`[rdma.cc] kind = "powertcp"`; Addanki et al., NSDI 2022) with in-band
//! telemetry, as ns3-datacenter runs it: cc_mode 3 with `--wien=true --delayWien=false`
//! (`UpdateRatePower`, `FastReactPower`, called from `HandleAckHp`, `rdma-hw.cc:779-793`).
//! Like HPCC, its data packets carry a telemetry stack that every switch egress stamps;
//! PowerTCP reads each port's received bytes where HPCC reads its sent bytes.
//!
//! ns3-datacenter's commit f542a97 (2025-03-30) changed two things in it: the first ACK no
//! longer only stores the records but updates against a zeroed record, and the arrival
//! rate is floored at half the link rate. The published code is the version before it
//! (ed1dfa8, the default here); `revision = "f542a97"` runs the later one. There the
//! reference's "zeroed" records are in fact never initialized (`hp.hop[]`,
//! `rdma-queue-pair.h:60`; the constructor zeroes `hp.keep[]` instead), so its first
//! update reads stale heap contents; zeroes are what a fresh allocation holds and what
//! the change evidently means (validation/README.md, "HPCC and PowerTCP with INT").

use super::hop_records::{check_target, TelemetryLoop};
use super::RdmaCcFacts;
use super::{CongestionControl, Feedback, Probe, RdmaCcEnv, SendState};
use crate::check_env::CheckEnv;
use crate::config::{Probability, ScenarioError, Warnings};
use crate::net::IntHop;
use crate::registry::Scheme;
use crate::sim::{Ps, PS_PER_S};
use crate::units::Rate;
use serde::{Deserialize, Serialize};

/// PowerTCP's sender. On every ACK or NACK carrying a stack of at most 5 records, with T
/// the connection's base RTT:
///
/// - published revision: the first ACK only stores the records and sets
///   `last_update_seq` to the next packet to send; f542a97: the first ACK is a full
///   update against all-zero records;
/// - otherwise, for each hop i against the record stored for it: tau = the time between
///   the two records, A_i = (bytes received between them) x 8 / tau (f542a97: at least
///   B_i / 2), Gamma_i = A_i (q_i x 8 + B_i T) / (B_i^2 T) with q_i the queue now, the
///   normalized power; U = max Gamma_i and dt = that hop's tau, at most T;
///   u <- (u (T - dt) + U dt) / T (u starts at 1);
/// - R = gamma (R_c / (u / eta) + rate_ai) + (1 - gamma) R_c, clamped to [min_rate, line
///   rate] and applied at once;
/// - R_c (starting at line rate) takes R only at a full update: an ACK beyond
///   `last_update_seq`, which then moves to the next packet to send. The ACKs in between
///   are the fast reaction (`FAST_REACT 1`).
///
/// A hop whose two records are at the same instant is left out, where the reference
/// would divide by zero.
pub struct PowerTcp {
    cfg: PowerTcpConfig,
    /// Its base RTT is T, the EWMA's period and the power's normalization; its u the
    /// smoothed normalized power.
    telemetry: TelemetryLoop,
}

/// Which of ns3-datacenter's versions of PowerTCP runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PowerTcpRevision {
    /// Before f542a97 (ed1dfa8 and earlier, the code the paper was evaluated with): the
    /// first ACK stores the telemetry, no floor on the arrival rate.
    #[default]
    Published,
    /// f542a97 (2025-03-30) and later: the first ACK updates against zeroed records, and
    /// the arrival rate is at least half the link rate (`rdma-hw.cc:1019-1022`).
    F542a97,
}

/// PowerTCP's keys. The defaults are ns3-datacenter's: constants hard-coded in
/// `UpdateRatePower` and the values its configurations set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PowerTcpConfig {
    /// Weight of the new rate against the reference rate (0.9, `rdma-hw.cc:1065`).
    pub gamma: Probability,
    /// Additive increase (150 Mbps, `rdma-hw.cc:1065`).
    pub rate_ai: Rate,
    /// Target utilization eta (`U_TARGET` 0.95, `config-burst.txt:36`).
    pub eta: f64,
    /// The lowest rate (`MIN_RATE` 100 Mbps, `config-burst.txt:24`).
    pub min_rate: Rate,
    /// Whether ACKs between full updates move the rate (`FAST_REACT 1`).
    pub fast_react: bool,
    /// The code version: "published" or "f542a97".
    pub revision: PowerTcpRevision,
}

impl Default for PowerTcpConfig {
    fn default() -> Self {
        PowerTcpConfig {
            gamma: Probability::new(0.9),
            rate_ai: Rate(150_000_000),
            eta: 0.95,
            min_rate: Rate(100_000_000),
            fast_react: true,
            revision: PowerTcpRevision::Published,
        }
    }
}

impl Scheme for PowerTcp {
    type Config = PowerTcpConfig;
    type Env = RdmaCcEnv;

    fn build(cfg: &PowerTcpConfig, env: &RdmaCcEnv) -> Self {
        let first_update_due = cfg.revision == PowerTcpRevision::F542a97;
        PowerTcp {
            cfg: cfg.clone(),
            telemetry: TelemetryLoop::new(env.base_rtt, env.int_format, cfg.fast_react, first_update_due),
        }
    }

    fn validate(cfg: &PowerTcpConfig, path: &str, _: &CheckEnv, _: &mut Warnings) -> Result<(), ScenarioError> {
        if cfg.gamma.get() == 0.0 {
            return Err(ScenarioError::not_accepted(path, "gamma", "0", "0 < gamma <= 1"));
        }
        check_target(path, cfg.eta, cfg.min_rate)
    }
}

impl RdmaCcFacts for PowerTcp {
    fn shifts_pending_packet(_: &PowerTcpConfig) -> bool {
        true
    }

    fn wants_telemetry(_: &PowerTcpConfig) -> bool {
        true
    }

    fn needs_base_rtt(_: &PowerTcpConfig) -> bool {
        true
    }
}

impl CongestionControl for PowerTcp {
    fn probe(&self, p: &mut Probe) {
        p.utilization = self.telemetry.u;
    }

    /// Per hop, Gamma_i = A_i (q_i + B_i T) / (B_i^2 T), A_i the arrival rate since the
    /// stored record; the rate is gamma (R_c / (u / eta) + rate_ai) + (1 - gamma) R_c.
    fn on_ack(&mut self, s: &mut SendState, f: &Feedback) {
        let base_rtt_s = self.telemetry.base_rtt as f64 / PS_PER_S as f64;
        let floor = match self.cfg.revision {
            PowerTcpRevision::Published => 0.0,
            PowerTcpRevision::F542a97 => 0.5,
        };
        let format = self.telemetry.hops.format();
        let power = |stored: &IntHop, hop: &IntHop, tau: Ps| {
            let rate = hop.rate_bps as f64;
            let received = format.received_between(stored, hop);
            let arrival = (received as f64 * 8.0 * PS_PER_S as f64 / tau as f64).max(floor * rate);
            arrival * (hop.queue_bytes as f64 * 8.0 + rate * base_rtt_s) / (rate * rate * base_rtt_s)
        };
        let cfg = &self.cfg;
        let rate = |u: f64, committed_bps: f64, _full: bool| {
            let gamma = cfg.gamma.get();
            let max_c = u / cfg.eta;
            gamma * (committed_bps / max_c + cfg.rate_ai.0 as f64) + (1.0 - gamma) * committed_bps
        };
        self.telemetry.on_ack(s, f, cfg.min_rate, power, rate);
    }

    /// The reference sizes PowerTCP's window that scales with the rate as rate x the base
    /// RTT (`rdma-queue-pair.cc:126-129`).
    fn window_rtt(&self) -> Option<Ps> {
        Some(self.telemetry.base_rtt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Ps = 1_000_000;

    /// A record of hop 0 (100 Gbps) or hop 1 (25 Gbps) taken at `us` microseconds.
    fn hop(i: usize, us: u64, rx_bytes: u64, queue_bytes: u64) -> IntHop {
        let rate_bps = [100_000_000_000, 25_000_000_000][i];
        IntHop { queue_bytes, tx_bytes: 0, rx_bytes, timestamp: us * US, rate_bps }
    }

    fn ack(snd_una: u32, snd_nxt: u32, stack: &[IntHop]) -> Feedback<'_> {
        Feedback { now: 0, acked_bytes: 1000, ece: false, snd_una, snd_nxt, rtt: None, telemetry: Some(stack) }
    }

    /// A hand-computed sequence at 100 Gbps, base RTT T = 10 us (B T = 125,000 B at 100
    /// Gbps, 31,250 B at 25 Gbps: Gamma = A/B x (1 + q / (B T))); rates in Gbps:
    ///
    /// 1. (una 1, nxt 10): published: stored, R_c = 100, full updates beyond 10.
    /// 2. (2, 11), fast: hop 0 received 25,000 B in 2 us: A = 100, q = 0: Gamma = 1; hop 1
    ///    received 6,250 B in 2 us: A = 25, q = 31,250: Gamma = 1 x 2 = 2 = U, dt = 2:
    ///    u = (1 x 8 + 2 x 2)/10 = 1.2; max_c = 1.2/0.95 = 1.2631579; R = 0.9 (100 /
    ///    1.2631579 + 0.15) + 0.1 x 100 = 0.9 x 79.3166667 + 10 = 81.385; R_c stays.
    /// 3. (11, 20), full: hop 0: 5,000 B in 4 us = 10 Gbps, q 0: 0.1; hop 1: 2,500 B in
    ///    4 us = 5 Gbps, q 0: 0.2 = U, dt = 4: u = (1.2 x 6 + 0.2 x 4)/10 = 0.8; max_c =
    ///    0.8421053; R = 0.9 (118.75 + 0.15) + 10 = 117.01, clamped to 100 = R_c.
    /// 4. (21, 30), full, after 20 us: hop 0 received 0 B: A = 0, Gamma 0; hop 1: 0 B, A
    ///    = 0, Gamma = 0: U = 0, dt 0 (the reference's `u > U` never holds): u stays 0.8,
    ///    R = 100.
    ///
    /// f542a97, the same ACKs: step 1 is a full update against zeroed records: hop 0 at
    /// 90 us received 0 B: A = max(0, 50) = 50, Gamma = 0.5; hop 1 at 90 us received
    /// 0 B, q 31,250: A = 12.5, Gamma = 0.5 x 2 = 1.0 = U, dt = min(90, 10) = 10: u = 1.0;
    /// max_c = 1/0.95; R = 0.9 (95 + 0.15) + 10 = 95.635 = R_c; next beyond 10. Step 2
    /// (fast): hop 0 A = 100: Gamma 1; hop 1 A = 25, q: Gamma 2 = U, dt 2: u = 1.2 as
    /// above; R = 0.9 (95.635/1.2631579 + 0.15) + 9.5635 = 0.9 x 75.8610417 + 9.5635 =
    /// 77.8384375.
    #[test]
    fn the_rate_follows_the_hand_computed_sequences() {
        let s1 = [hop(0, 90, 0, 0), hop(1, 90, 0, 31_250)];
        let s2 = [hop(0, 92, 25_000, 0), hop(1, 92, 6_250, 31_250)];
        let s3 = [hop(0, 96, 30_000, 0), hop(1, 96, 8_750, 0)];
        let s4 = [hop(0, 116, 30_000, 0), hop(1, 116, 8_750, 0)];
        let published: [(_, f64, f64, f64); 4] = [
            (ack(1, 10, &s1), 100.0, 1.0, 100.0),
            (ack(2, 11, &s2), 81.385, 1.2, 100.0),
            (ack(11, 20, &s3), 100.0, 0.8, 100.0),
            (ack(21, 30, &s4), 100.0, 0.8, 100.0),
        ];
        let later: [(_, f64, f64, f64); 2] =
            [(ack(1, 10, &s1), 95.635, 1.0, 95.635), (ack(2, 11, &s2), 77.838_437_5, 1.2, 95.635)];
        for (revision, steps) in [(PowerTcpRevision::Published, &published[..]), (PowerTcpRevision::F542a97, &later)] {
            let cfg = PowerTcpConfig { revision, ..PowerTcpConfig::default() };
            let mut p = PowerTcp::build(&cfg, &RdmaCcEnv { base_rtt: 10 * US, ..RdmaCcEnv::default() });
            let mut s = SendState { cwnd: 0.0, ssthresh: 0.0, rate_bps: 100e9, line_rate_bps: 100e9, mss: 1000.0 };
            for (i, (f, gbps, u, committed)) in steps.iter().enumerate() {
                p.on_ack(&mut s, f);
                let step = i + 1;
                assert!((s.rate_bps / 1e9 - gbps).abs() < 1e-6, "{revision:?} {step}: {} Gbps", s.rate_bps / 1e9);
                assert!((p.telemetry.u - u).abs() < 1e-9, "{revision:?} {step}: u {} vs {u}", p.telemetry.u);
                assert!((p.telemetry.committed_bps / 1e9 - committed).abs() < 1e-6, "{revision:?} {step}: R_c");
            }
        }
    }
}
