//! TIMELY (`[rdma.cc] kind = "timely"`; Mittal et al., SIGCOMM 2015) as ns3-datacenter
//! runs it over its RoCE-style transport (cc_mode 7, `rdma-hw.cc:1103-1175`, the same as
//! the HPCC code base's). Rate-based and driven by RTT samples alone: each ACK echoes
//! the time its data packet left the sender (the reference's 8-byte INT timestamp).

use super::RdmaCcFacts;
use super::{CongestionControl, Feedback, RdmaCcEnv, SendState};
use crate::check_env::CheckEnv;
use crate::config::{ScenarioError, Warnings};
use crate::registry::Scheme;
use crate::sim::Ps;
use crate::units::{Rate, Time};
use serde::{Deserialize, Serialize};

/// TIMELY's sender. Once per round trip (the first ACK beyond the packet that was next
/// to send at the last update) it takes the ACK's RTT sample and moves the rate R:
///
/// - rtt_diff <- (1 - alpha) rtt_diff + alpha (rtt - previous update's rtt); gradient =
///   rtt_diff / min_rtt;
/// - rtt < t_low: R + rate_ai (+ rate_hai once `hai_after` increases in a row have
///   happened);
/// - rtt > t_high: R (1 - beta (1 - t_high / rtt));
/// - gradient <= 0: increase as above; otherwise R max(0, 1 - beta gradient);
///
/// then clamps R to [min_rate, line rate]. A decrease resets the run of increases. The
/// first round trip only records its sample. ACKs in between change nothing (the
/// reference's fast reaction for TIMELY is empty, `rdma-hw.cc:1174-1175`).
pub struct Timely {
    cfg: TimelyConfig,
    /// The next-to-send packet at the last update: the next update waits for an ACK
    /// beyond it (None: no update yet, the first round trip).
    last_update_seq: Option<u32>,
    /// Increases in a row since the last decrease.
    increases: u32,
    /// The RTT sample of the last update.
    last_rtt: Ps,
    /// The smoothed RTT difference, ps.
    rtt_diff: f64,
}

/// TIMELY's keys. The defaults are ns3-datacenter 6ddb4a4's (`RdmaHw` attributes, and
/// the burst example's configuration `examples/PowerTCP/config-burst.txt`, whose RATE_AI
/// and RATE_HAI DCQCN shares with TIMELY).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimelyConfig {
    /// EWMA weight of the newest RTT difference (`TimelyAlpha` 0.875, `rdma-hw.cc:143-147`).
    pub alpha: f64,
    /// Multiplicative decrease factor (`TimelyBeta` 0.8, `rdma-hw.cc:148-152`).
    pub beta: f64,
    /// Below this RTT the rate always increases (`TimelyTLow` 50 us, `rdma-hw.cc:153-157`).
    pub t_low: Time,
    /// Above this RTT the rate always decreases (`TimelyTHigh` 500 us, `rdma-hw.cc:158-162`).
    pub t_high: Time,
    /// The RTT the gradient is normalized by (`TimelyMinRtt` 20 us, `rdma-hw.cc:163-167`).
    pub min_rtt: Time,
    /// Additive increase (`RATE_AI` 50 Mbps, `config-burst.txt:22`; the HPCC repository's
    /// `run.py` passes bw Mbps, 100 Mbps at 100 Gbps).
    pub rate_ai: Rate,
    /// Hyper increase (`RATE_HAI` 100 Mbps, `config-burst.txt:23`; `run.py`: 5 bw Mbps).
    pub rate_hai: Rate,
    /// Increases in a row after which each increase is `rate_hai` (5, hard-coded at
    /// `rdma-hw.cc:1140`).
    pub hai_after: u32,
    /// The lowest rate (`MIN_RATE` 100 Mbps, `config-burst.txt:24`).
    pub min_rate: Rate,
}

impl Default for TimelyConfig {
    fn default() -> Self {
        TimelyConfig {
            alpha: 0.875,
            beta: 0.8,
            t_low: Time(50_000_000),
            t_high: Time(500_000_000),
            min_rtt: Time(20_000_000),
            rate_ai: Rate(50_000_000),
            rate_hai: Rate(100_000_000),
            hai_after: 5,
            min_rate: Rate(100_000_000),
        }
    }
}

impl Scheme for Timely {
    type Config = TimelyConfig;
    type Env = RdmaCcEnv;

    fn build(cfg: &TimelyConfig, _: &RdmaCcEnv) -> Self {
        Timely { cfg: cfg.clone(), last_update_seq: None, increases: 0, last_rtt: 0, rtt_diff: 0.0 }
    }

    fn validate(cfg: &TimelyConfig, path: &str, _: &CheckEnv, _: &mut Warnings) -> Result<(), ScenarioError> {
        if !(cfg.alpha > 0.0 && cfg.alpha <= 1.0) {
            return Err(ScenarioError::not_accepted(path, "alpha", cfg.alpha.to_string(), "0 < alpha <= 1"));
        }
        if !(cfg.beta > 0.0 && cfg.beta <= 1.0) {
            return Err(ScenarioError::not_accepted(path, "beta", cfg.beta.to_string(), "0 < beta <= 1"));
        }
        if cfg.min_rtt.0 == 0 {
            return Err(ScenarioError::not_accepted(path, "min_rtt", "0", "a positive time"));
        }
        if cfg.t_high.0 == 0 || cfg.t_high.0 < cfg.t_low.0 {
            return Err(ScenarioError::not_accepted(
                path,
                "t_high",
                format!("{} ps", cfg.t_high.0),
                "a positive time, at least t_low",
            ));
        }
        if cfg.min_rate.0 == 0 {
            return Err(ScenarioError::not_accepted(path, "min_rate", "0", "a positive rate"));
        }
        Ok(())
    }
}

impl RdmaCcFacts for Timely {}

impl Timely {
    /// The rate after one update at RTT sample `rtt` from rate `rate`, and whether it is
    /// an increase.
    fn next_rate(&self, rate: f64, rtt: Ps, gradient: f64) -> (f64, bool) {
        let cfg = &self.cfg;
        let increase = if self.increases < cfg.hai_after { cfg.rate_ai.0 } else { cfg.rate_hai.0 } as f64;
        if rtt < cfg.t_low.0 {
            (rate + increase, true)
        } else if rtt > cfg.t_high.0 {
            (rate * (1.0 - cfg.beta * (1.0 - cfg.t_high.0 as f64 / rtt as f64)), false)
        } else if gradient <= 0.0 {
            (rate + increase, true)
        } else {
            (rate * (1.0 - cfg.beta * gradient).max(0.0), false)
        }
    }
}

impl CongestionControl for Timely {
    fn on_ack(&mut self, s: &mut SendState, f: &Feedback) {
        let Some(rtt) = f.rtt else { return };
        if self.last_update_seq.is_some_and(|seq| f.snd_una <= seq) {
            return;
        }
        if self.last_update_seq.is_some() {
            let diff = rtt as f64 - self.last_rtt as f64;
            self.rtt_diff = (1.0 - self.cfg.alpha) * self.rtt_diff + self.cfg.alpha * diff;
            let gradient = self.rtt_diff / self.cfg.min_rtt.0 as f64;
            let (rate, increased) = self.next_rate(s.rate_bps, rtt, gradient);
            // The reference caps an increase at line rate and a decrease at the minimum
            // (`rdma-hw.cc:1144-1150`); neither can cross the other bound.
            s.rate_bps = if increased { rate.min(s.line_rate_bps) } else { s.bounded_rate(rate, self.cfg.min_rate) };
            self.increases = if increased { self.increases + 1 } else { 0 };
        }
        self.last_update_seq = Some(f.snd_nxt);
        self.last_rtt = rtt;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Ps = 1_000_000;

    fn ack(now: Ps, snd_una: u32, snd_nxt: u32, rtt: Ps) -> Feedback<'static> {
        Feedback { now, acked_bytes: 1000, ece: false, snd_una, snd_nxt, rtt: Some(rtt), telemetry: None }
    }

    /// A hand-computed sequence at 100 Gbps, one update per round trip (each ACK passes
    /// the snd_nxt of the update before; an ACK that does not, in between, changes
    /// nothing). alpha = 0.875, beta = 0.8, min_rtt = 20 us:
    ///
    /// 1. rtt 10 us: the first round trip only records it. R = 100 G.
    /// 2. rtt 60 us: diff = 0.875 x 50 = 43.75 us, gradient 2.1875 > 0, so
    ///    R x max(0, 1 - 0.8 x 2.1875) = 0: the minimum, 100 Mbps.
    /// 3. rtt 40 us < t_low: R + 50 M = 150 Mbps (increase 1).
    /// 4. rtt 45 us < t_low: 200 Mbps (2). 5.-7. rtt 45 us: 250, 300, 350 Mbps (3-5).
    /// 8. rtt 45 us, five increases in a row: hyper, + 100 M = 450 Mbps.
    /// 9. rtt 1000 us > t_high: 450 M x (1 - 0.8 (1 - 500/1000)) = 450 x 0.6 = 270 Mbps.
    /// 10. rtt 100 us: diff = 0.125 x rtt_diff(9) + 0.875 x (100 - 1000) where
    ///     rtt_diff(9) = 0.125 d8 + 0.875 x 955; the run d3..d8 is
    ///     d2 = 43.75, d3 = 0.125 x 43.75 + 0.875 x (-20) = -12.03125, then with the
    ///     45 us samples (diff 5 at 4, then 0): d4 = -1.50390625 + 4.375 = 2.87109375,
    ///     d5 = 0.35888671875, d6 = 0.04486083984375, d7 = 0.00560760498046875,
    ///     d8 = 0.00070095062255859375, d9 = 0.0000876188278198 + 835.625 = 835.6250876,
    ///     d10 = 104.4531360 - 787.5 = -683.0468640 < 0: increase, and the run restarted
    ///     at 9, so + 50 M = 320 Mbps.
    /// 11. rtt 120 us: d11 = 0.125 x -683.0468640 + 0.875 x 20 = -85.3808580 + 17.5 =
    ///     -67.8808580 < 0: + 50 M = 370 Mbps.
    #[test]
    fn the_rate_follows_the_hand_computed_sequence() {
        let mut t = Timely::build(&TimelyConfig::default(), &RdmaCcEnv::default());
        let mut s = SendState { cwnd: 0.0, ssthresh: 0.0, rate_bps: 100e9, line_rate_bps: 100e9, mss: 1000.0 };
        let rtts = [10, 60, 40, 45, 45, 45, 45, 45, 1000, 100, 120];
        let expected_mbps = [100_000.0, 100.0, 150.0, 200.0, 250.0, 300.0, 350.0, 450.0, 270.0, 320.0, 370.0];
        for (i, (&rtt, &want)) in rtts.iter().zip(&expected_mbps).enumerate() {
            let i = i as u32;
            // An ACK within the round trip: nothing happens.
            if i > 0 {
                let before = (s.rate_bps, t.rtt_diff);
                t.on_ack(&mut s, &ack(i as Ps * 2000 * US, 10 * i, 10 * i + 5, 7 * US));
                assert_eq!((s.rate_bps, t.rtt_diff), before, "step {}: an ACK within the round trip", i + 1);
            }
            t.on_ack(&mut s, &ack(i as Ps * 2000 * US + US, 10 * i + 1, 10 * i + 10, rtt * US));
            assert!((s.rate_bps / 1e6 - want).abs() < 1e-6, "step {}: {} Mbps vs {want}", i + 1, s.rate_bps / 1e6);
        }
        assert!((t.rtt_diff / US as f64 + 67.880_858).abs() < 1e-5, "rtt_diff {}", t.rtt_diff / US as f64);
    }

    /// Increases stop at line rate; an ACK without an RTT sample (a NACK) is ignored.
    #[test]
    fn increases_stop_at_line_rate() {
        let mut t = Timely::build(&TimelyConfig::default(), &RdmaCcEnv::default());
        let mut s = SendState { cwnd: 0.0, ssthresh: 0.0, rate_bps: 99.99e9, line_rate_bps: 100e9, mss: 1000.0 };
        t.on_ack(&mut s, &ack(0, 1, 10, 10 * US));
        t.on_ack(&mut s, &Feedback { rtt: None, ..ack(US, 11, 20, 0) });
        assert_eq!(t.last_update_seq, Some(10), "a NACK's feedback does not update");
        t.on_ack(&mut s, &ack(2 * US, 11, 20, 10 * US));
        assert_eq!(s.rate_bps, 100e9);
    }
}
