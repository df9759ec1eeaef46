//! HPCC (`[rdma.cc] kind = "hpcc"`; Li et al., SIGCOMM 2019) as the public code runs it:
//! ns3-datacenter 6ddb4a4's cc_mode 3 (`HandleAckHp`, `UpdateRateHp`, `FastReactHp`,
//! `rdma-hw.cc:777-969`, the HPCC repository's `rdma-hw.cc:744-918` unchanged), with one
//! rate for the connection (`MULTI_RATE 0`). The data packets of its connections carry a
//! telemetry stack that every switch egress stamps; the ACKs echo it.
//!
//! The code is rate-based: its additive increase is a rate and the window only caps bytes
//! in flight (the reference's HPCC runs scale it with the rate: `[rdma] window =
//! "max_bdp"`, `window_scales_with_rate = true`), where the paper's Algorithm 1 computes a
//! window. The paper's maxStage is 5; the HPCC repository's configuration and run script
//! use 0 (`mix/config.txt`, `run.py --mi 0`), ns3-datacenter's example configurations 5
//! (`MI_THRESH 5`, `examples/PowerTCP/config-burst.txt:37`). Both are `max_stage`.

use super::hop_records::{check_target, TelemetryLoop};
use super::RdmaCcFacts;
use super::{CongestionControl, Feedback, Probe, RdmaCcEnv, SendState};
use crate::check_env::CheckEnv;
use crate::config::{ScenarioError, Warnings};
use crate::net::IntHop;
use crate::registry::Scheme;
use crate::sim::{Ps, PS_PER_S};
use crate::units::Rate;
use serde::{Deserialize, Serialize};

/// HPCC's sender. On every ACK or NACK carrying a stack of at most 5 records:
///
/// - the first only stores the records and sets `last_update_seq` to the next packet to
///   send;
/// - otherwise, for each hop i against the record stored for it: tau = the time between
///   the two records, u_i = (tx bytes between them) x 8 / tau / B_i + min(q_i, q_i,prev) /
///   (B_i x T), with B_i the hop's rate and T = W / line rate the window's time (the base
///   RTT when the window is one BDP); U = max u_i and dt = the tau of that hop, at most the
///   base RTT T_b; u <- (u (T_b - dt) + U dt) / T_b (u starts at 1);
/// - max_c = u / eta; R = R_c / max_c + rate_ai if max_c >= 1 or the increase stage has
///   reached `max_stage` (the stage goes back to 0), else R = R_c + rate_ai (a stage
///   more); R is clamped to [min_rate, line rate] and applied at once;
/// - R_c and the stage take the new values only at a full update: an ACK beyond
///   `last_update_seq`, which then moves to the next packet to send. The ACKs in between
///   are the fast reaction (`FAST_REACT 1`): rate from R_c, nothing committed.
///
/// A hop whose two records are at the same instant (an ACK echoing a stack already seen)
/// is left out, where the reference would divide by zero.
pub struct Hpcc {
    cfg: HpccConfig,
    /// Bytes of the connection's window (0: none; then one BDP of the base RTT).
    window: u64,
    /// Consecutive additive increases since the last multiplicative step.
    inc_stage: u32,
    /// Its base RTT is T_b, the EWMA's period; its u the smoothed utilization.
    telemetry: TelemetryLoop,
}

/// HPCC's keys. The defaults are the public code's: `rdma-hw.cc` attributes as the
/// reference's configurations set them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HpccConfig {
    /// Target utilization eta (`U_TARGET` 0.95, `config-burst.txt:36`).
    pub eta: f64,
    /// Additive increases in a row before a multiplicative step (`MI_THRESH`): 0, the HPCC
    /// repository's (`mix/config.txt`, `run.py --mi 0`): every full update is multiplicative.
    /// The paper's maxStage and ns3-datacenter's configurations say 5.
    pub max_stage: u32,
    /// Additive increase (`RATE_AI` 50 Mbps, `config-burst.txt:22`; the HPCC repository's
    /// `run.py` uses 10 x bw / 25 Mbps, 40 Mbps at 100 Gbps).
    pub rate_ai: Rate,
    /// The lowest rate (`MIN_RATE` 100 Mbps, `config-burst.txt:24`).
    pub min_rate: Rate,
    /// Whether ACKs between full updates move the rate (`FAST_REACT 1`).
    pub fast_react: bool,
}

impl Default for HpccConfig {
    fn default() -> Self {
        HpccConfig { eta: 0.95, max_stage: 0, rate_ai: Rate(50_000_000), min_rate: Rate(100_000_000), fast_react: true }
    }
}

impl Scheme for Hpcc {
    type Config = HpccConfig;
    type Env = RdmaCcEnv;

    fn build(cfg: &HpccConfig, env: &RdmaCcEnv) -> Self {
        Hpcc {
            cfg: cfg.clone(),
            window: env.window,
            inc_stage: 0,
            telemetry: TelemetryLoop::new(env.base_rtt, env.int_format, cfg.fast_react, false),
        }
    }

    fn validate(cfg: &HpccConfig, path: &str, _: &CheckEnv, _: &mut Warnings) -> Result<(), ScenarioError> {
        check_target(path, cfg.eta, cfg.min_rate)
    }
}

impl RdmaCcFacts for Hpcc {
    fn shifts_pending_packet(_: &HpccConfig) -> bool {
        true
    }

    fn wants_telemetry(_: &HpccConfig) -> bool {
        true
    }

    fn needs_base_rtt(_: &HpccConfig) -> bool {
        true
    }
}

impl Hpcc {
    /// The time the window lasts at line rate, T = W / line rate, in ps: what turns a
    /// queue into a utilization (`qlen x m_max_rate / B / m_win`, `rdma-hw.cc:845`).
    fn window_time(&self, line_rate_bps: f64) -> f64 {
        if self.window == 0 {
            self.telemetry.base_rtt as f64
        } else {
            self.window as f64 * 8.0 * PS_PER_S as f64 / line_rate_bps
        }
    }
}

impl CongestionControl for Hpcc {
    fn probe(&self, p: &mut Probe) {
        p.utilization = self.telemetry.u;
    }

    /// Per hop, u_i = tx rate / B_i + min(q_i, previous q_i) / (B_i T); the rate is
    /// R_c / (u / eta) + rate_ai if u >= eta or `max_stage` increases in a row were made,
    /// else R_c + rate_ai (one more increase, counted at a full update).
    fn on_ack(&mut self, s: &mut SendState, f: &Feedback) {
        let window_time = self.window_time(s.line_rate_bps);
        let format = self.telemetry.hops.format();
        let utilization = |stored: &IntHop, hop: &IntHop, tau: Ps| {
            let rate = hop.rate_bps as f64;
            let sent = format.bytes_between(stored, hop);
            let tx_bps = sent as f64 * 8.0 * PS_PER_S as f64 / tau as f64;
            let queue = hop.queue_bytes.min(stored.queue_bytes) as f64;
            tx_bps / rate + queue * 8.0 * PS_PER_S as f64 / (rate * window_time)
        };
        let (cfg, inc_stage) = (&self.cfg, &mut self.inc_stage);
        let rate = |u: f64, committed_bps: f64, full: bool| {
            let max_c = u / cfg.eta;
            let ai = cfg.rate_ai.0 as f64;
            let (rate, stage) = if max_c >= 1.0 || *inc_stage >= cfg.max_stage {
                (committed_bps / max_c + ai, 0)
            } else {
                (committed_bps + ai, *inc_stage + 1)
            };
            if full {
                *inc_stage = stage;
            }
            rate
        };
        self.telemetry.on_ack(s, f, cfg.min_rate, utilization, rate);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Ps = 1_000_000;

    /// A record of hop 0 (100 Gbps) or hop 1 (40 Gbps) taken at `us` microseconds.
    fn hop(i: usize, us: u64, tx_bytes: u64, queue_bytes: u64) -> IntHop {
        let rate_bps = [100_000_000_000, 40_000_000_000][i];
        IntHop { queue_bytes, tx_bytes, rx_bytes: 0, timestamp: us * US, rate_bps }
    }

    /// A hand-computed sequence at 100 Gbps, base RTT 10 us, window 125,000 B (one BDP, so
    /// T = 10 us and a queue q adds q / 125,000 at 100 Gbps, q x 2.5 / 125,000 at 40 Gbps);
    /// rates in Gbps, rate_ai 0.05:
    ///
    /// 1. t = 100 us (una 1, nxt 10): stored; R_c = 100; full updates beyond 10.
    /// 2. (2, 11), fast: hop 0 over 2 us sent 20,000 B: 80 Gbps, u_0 = 0.8; hop 1 over 3 us
    ///    sent 12,000 B: 32/40 = 0.8, + min(20,000, 10,000) x 2.5 / 125,000 = 0.2: u_1 =
    ///    1.0. U = 1.0, dt = 3: u = (1 x 7 + 1 x 3)/10 = 1; max_c = 1/0.95; R = 100 x 0.95
    ///    + 0.05 = 95.05. R_c stays 100.
    /// 3. (11, 20), full: hop 0: 25,000 B in 2 us = 1.0; hop 1: 20,000 B in 4 us = 1.0, +
    ///    min(5,000, 20,000) x 2.5 / 125,000 = 0.1: 1.1 = U, dt = 4: u = (1 x 6 + 1.1 x
    ///    4)/10 = 1.04; max_c = 1.0947368; R = 100/1.0947368 + 0.05 = 91.3961538 = R_c.
    /// 4. (21, 30), full: hop 0: 40,000 B in 16 us = 0.2; hop 1: 20,000 B in 16 us = 0.25
    ///    = U, dt = min(16, 10) = 10: u = 0.25; max_c = 0.2631579 < 1. maxStage 0: R =
    ///    91.3961538/0.2631579 + 0.05 = 347.4, clamped to 100 = R_c. maxStage 5 (stage 0
    ///    < 5): R = 91.3961538 + 0.05 = 91.4461538 = R_c, stage 1.
    #[test]
    fn the_rate_follows_the_hand_computed_sequence() {
        let ack = |snd_una, snd_nxt, stack| Feedback {
            now: 0,
            acked_bytes: 1000,
            ece: false,
            snd_una,
            snd_nxt,
            rtt: None,
            telemetry: Some(stack),
        };
        let s1 = [hop(0, 90, 0, 0), hop(1, 91, 0, 10_000)];
        let s2 = [hop(0, 92, 20_000, 0), hop(1, 94, 12_000, 20_000)];
        let s3 = [hop(0, 94, 45_000, 0), hop(1, 98, 32_000, 5_000)];
        let s4 = [hop(0, 110, 85_000, 0), hop(1, 114, 52_000, 0)];
        for (max_stage, last_gbps, last_stage) in [(0, 100.0, 0), (5, 91.446_153_8, 1)] {
            let cfg = HpccConfig { max_stage, ..HpccConfig::default() };
            let mut h = Hpcc::build(&cfg, &RdmaCcEnv { base_rtt: 10 * US, window: 125_000, ..RdmaCcEnv::default() });
            let mut s = SendState { cwnd: 0.0, ssthresh: 0.0, rate_bps: 100e9, line_rate_bps: 100e9, mss: 1000.0 };
            let steps = [
                (ack(1, 10, &s1), 100.0, 1.0, 100.0),
                (ack(2, 11, &s2), 95.05, 1.0, 100.0),
                (ack(11, 20, &s3), 91.396_153_8, 1.04, 91.396_153_8),
                (ack(21, 30, &s4), last_gbps, 0.25, last_gbps),
            ];
            for (i, (f, gbps, u, committed)) in steps.into_iter().enumerate() {
                h.on_ack(&mut s, &f);
                let step = i + 1;
                assert!((s.rate_bps / 1e9 - gbps).abs() < 1e-6, "{max_stage}, step {step}: {} Gbps", s.rate_bps / 1e9);
                assert!((h.telemetry.u - u).abs() < 1e-9, "{max_stage}, step {step}: u {} vs {u}", h.telemetry.u);
                assert!((h.telemetry.committed_bps / 1e9 - committed).abs() < 1e-6, "{max_stage}, step {step}: R_c");
            }
            assert_eq!(h.inc_stage, last_stage);
            assert_eq!(h.telemetry.last_update_seq, Some(30));
        }
    }
}
