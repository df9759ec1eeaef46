//! DCTCP over the RoCE-style transport (`[rdma.cc] kind = "dctcp"`): DCTCP's reaction to
//! marks, turned into a rate, as ns3-datacenter runs it (cc_mode 8,
//! `rdma-hw.cc:1179-1231`, the same as the HPCC code base's). TCP's DCTCP is `dctcp.rs`.

use super::RdmaCcFacts;
use super::{CongestionControl, Feedback, Probe, RdmaCcEnv, SendState};
use crate::check_env::CheckEnv;
use crate::config::{ScenarioError, Warnings};
use crate::registry::Scheme;
use crate::units::Rate;
use serde::{Deserialize, Serialize};

/// Alpha before the first update (`rdma-queue-pair.cc:64`), so that a young connection
/// halves its rate at its first mark.
const ALPHA_INIT: f64 = 1.0;

/// The rate form of DCTCP. Each ACK (or NACK) that echoes a mark is counted. A window
/// ends at the first ACK beyond the packet that was next to send when it began; then
/// alpha <- (1 - g) alpha + g min(1, marked / batch), where batch is the packets then in
/// flight plus one, and a new window begins (the first window, from the first ACK, only
/// sets the batch and keeps its count). A marked ACK outside a reduction cuts the rate to
/// max(min_rate, R (1 - alpha / 2)) and starts a reduction, which ends at the first ACK
/// beyond the packet next to send at the cut; so at most one cut per window. Outside a
/// reduction, each new window adds `rate_ai`, up to the line rate.
///
/// The batch is the reference's: in flight at the window's start plus one
/// (`rdma-hw.cc:1193,1199`), not the ACKs the window brought, so the fraction never
/// reaches 1 unless more marks than that arrive.
pub struct RdmaDctcp {
    cfg: RdmaDctcpConfig,
    alpha: f64,
    /// Marked ACKs counted toward the next alpha update.
    marked: u32,
    /// The divisor of the marked fraction at the next update.
    batch: u32,
    /// The current window ends at the first ACK beyond this packet (None: before the
    /// first ACK).
    window_end: Option<u32>,
    /// A reduction lasts until an ACK beyond this packet (None: not reducing).
    reducing_until: Option<u32>,
}

/// The keys of DCTCP over RDMA. Defaults: ns3-datacenter 6ddb4a4's burst example
/// (`examples/PowerTCP/config-burst.txt`), whose EWMA_GAIN DCTCP shares with DCQCN.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RdmaDctcpConfig {
    /// EWMA gain of alpha (`EWMA_GAIN` 1/256, `config-burst.txt:20`; the HPCC
    /// repository's `run.py` sets 1/16).
    pub g: f64,
    /// Additive increase per window (`DCTCP_RATE_AI` 1000 Mbps, `config-burst.txt:25`, also
    /// the `DctcpRateAI` attribute default, `rdma-hw.cc:168-172`; `run.py`: 615 Mbps).
    pub rate_ai: Rate,
    /// The lowest rate (`MIN_RATE` 100 Mbps, `config-burst.txt:24`).
    pub min_rate: Rate,
}

impl Default for RdmaDctcpConfig {
    fn default() -> Self {
        RdmaDctcpConfig { g: 1.0 / 256.0, rate_ai: Rate(1_000_000_000), min_rate: Rate(100_000_000) }
    }
}

impl Scheme for RdmaDctcp {
    type Config = RdmaDctcpConfig;
    type Env = RdmaCcEnv;

    fn build(cfg: &RdmaDctcpConfig, _: &RdmaCcEnv) -> Self {
        RdmaDctcp { cfg: cfg.clone(), alpha: ALPHA_INIT, marked: 0, batch: 0, window_end: None, reducing_until: None }
    }

    fn validate(cfg: &RdmaDctcpConfig, path: &str, _: &CheckEnv, _: &mut Warnings) -> Result<(), ScenarioError> {
        if !(cfg.g > 0.0 && cfg.g <= 1.0) {
            return Err(ScenarioError::new(
                format!("{path}.g"),
                format!("{} is not accepted (accepted: 0 < g <= 1)", cfg.g),
            ));
        }
        if cfg.min_rate.0 == 0 {
            return Err(ScenarioError::new(
                format!("{path}.min_rate"),
                "0 is not accepted (accepted: a positive rate)",
            ));
        }
        Ok(())
    }
}

impl RdmaCcFacts for RdmaDctcp {
    fn reacts_to_marks(_: &RdmaDctcpConfig) -> bool {
        true
    }
}

impl CongestionControl for RdmaDctcp {
    fn probe(&self, p: &mut Probe) {
        p.alpha = self.alpha;
    }

    fn on_ack(&mut self, s: &mut SendState, f: &Feedback) {
        self.marked += f.ece as u32;
        let new_window = self.window_end.is_none_or(|end| f.snd_una > end);
        if new_window {
            if self.window_end.is_some() {
                let fraction = (self.marked as f64 / self.batch as f64).min(1.0);
                self.alpha = (1.0 - self.cfg.g) * self.alpha + self.cfg.g * fraction;
                self.marked = 0;
                self.batch = f.snd_nxt - f.snd_una + 1;
            } else {
                self.batch = f.snd_nxt + 1;
            }
            self.window_end = Some(f.snd_nxt);
        }
        if self.reducing_until.is_some_and(|until| f.snd_una > until) {
            self.reducing_until = None;
        }
        if f.ece && self.reducing_until.is_none() {
            s.rate_bps = s.bounded_rate(s.rate_bps * (1.0 - self.alpha / 2.0), self.cfg.min_rate);
            self.reducing_until = Some(f.snd_nxt);
        }
        if self.reducing_until.is_none() && new_window {
            s.rate_bps = (s.rate_bps + self.cfg.rate_ai.0 as f64).min(s.line_rate_bps);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::tests::ack;

    /// A hand-computed sequence at 100 Gbps with g = 1/16 (to make alpha move), ACKs as
    /// (snd_una, snd_nxt, marked):
    ///
    /// 1. (1, 10, no): the first window begins, batch 10 + 1 = 11, ends beyond 10; not
    ///    reducing, so + 1 G: min(100, 101) = 100 Gbps.
    /// 2. (2, 11, yes): within the window; marked 1; not reducing: cut with alpha 1:
    ///    R = 50 Gbps; reducing until beyond 11.
    /// 3. (5, 14, yes): marked 2; reducing: no cut.
    /// 4. (11, 20, no): window ends (11 > 10): alpha = 15/16 + (1/16) x 2/11 =
    ///    0.9375 + 0.0113636 = 0.9488636; batch 20 - 11 + 1 = 10; window to 20; still
    ///    reducing (11 is not beyond 11): no increase. R = 50 G.
    /// 5. (12, 21, no): reduction ends (12 > 11); no new window: R = 50 G.
    /// 6. (13, 22, yes): cut: 50 x (1 - 0.9488636/2) = 26.278409 Gbps; reducing to 22.
    /// 7. (21, 30, no): window ends: alpha = 15/16 x 0.9488636 + (1/16)(1/10) =
    ///    0.8895597 + 0.00625 = 0.8958097; batch 10; reducing (21 <= 22): R stays.
    /// 8. (31, 40, no): window ends (31 > 30): alpha = 15/16 x 0.8958097 = 0.8398216;
    ///    reduction ends (31 > 22): + 1 G = 27.278409 Gbps.
    #[test]
    fn the_rate_follows_the_hand_computed_sequence() {
        let cfg = RdmaDctcpConfig { g: 1.0 / 16.0, ..RdmaDctcpConfig::default() };
        let mut d = RdmaDctcp::build(&cfg, &RdmaCcEnv::default());
        let mut s = SendState { cwnd: 0.0, ssthresh: 0.0, rate_bps: 100e9, line_rate_bps: 100e9, mss: 1000.0 };
        let steps = [
            ((1, 10, false), 100.0, 1.0),
            ((2, 11, true), 50.0, 1.0),
            ((5, 14, true), 50.0, 1.0),
            ((11, 20, false), 50.0, 0.948_863_6),
            ((12, 21, false), 50.0, 0.948_863_6),
            ((13, 22, true), 26.278_409, 0.948_863_6),
            ((21, 30, false), 26.278_409, 0.895_809_7),
            ((31, 40, false), 27.278_409, 0.839_821_6),
        ];
        for (i, ((una, nxt, ece), gbps, alpha)) in steps.into_iter().enumerate() {
            d.on_ack(&mut s, &ack(1000, ece, una, nxt));
            assert!((s.rate_bps / 1e9 - gbps).abs() < 1e-6, "step {}: {} Gbps vs {gbps}", i + 1, s.rate_bps / 1e9);
            assert!((d.alpha - alpha).abs() < 1e-7, "step {}: alpha {} vs {alpha}", i + 1, d.alpha);
        }
    }

    /// Cuts stop at min_rate.
    #[test]
    fn cuts_stop_at_the_minimum() {
        let mut d = RdmaDctcp::build(&RdmaDctcpConfig::default(), &RdmaCcEnv::default());
        let mut s = SendState { cwnd: 0.0, ssthresh: 0.0, rate_bps: 100e9, line_rate_bps: 100e9, mss: 1000.0 };
        for k in 0..100 {
            d.on_ack(&mut s, &ack(1000, true, 10 * k + 1, 10 * k + 10));
        }
        assert_eq!(s.rate_bps, 100e6);
    }
}
