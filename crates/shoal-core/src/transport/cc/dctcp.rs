use super::{CongestionControl, Feedback, Probe, SendState, TcpCcFacts};
use crate::check_env::CheckEnv;
use crate::config::{Probability, ScenarioError, Warnings};
use crate::registry::Scheme;
use serde::{Deserialize, Serialize};

/// DCTCP (Alizadeh et al., RFC 8257): alpha, the EWMA (gain g) of the fraction of
/// marked bytes, is updated once per window of data (the first window starts with the
/// first ACK); on an echo ssthresh and the window become cwnd * (1 - alpha/2), at most
/// once per window, and the window does not grow until the reduced window is
/// acknowledged. A loss halves the window as it would Reno's, or takes the echo's cut
/// (`loss_response`).
pub struct Dctcp {
    pub alpha: f64,
    g: f64,
    loss_response: LossResponse,
    acked: u64,
    marked: u64,
    /// The current observation window ends when snd_una passes this segment.
    window_end: Option<u32>,
    cwr_until: u32,
}

impl Dctcp {
    pub fn new(g: f64, alpha: f64, loss_response: LossResponse) -> Self {
        Dctcp { alpha, g, loss_response, acked: 0, marked: 0, window_end: None, cwr_until: 0 }
    }
}

/// How DCTCP's window answers a loss (fast retransmit or timeout).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossResponse {
    /// ssthresh = flight / 2, as a conventional TCP: RFC 8257, section 3.4 ("MUST react
    /// to loss episodes in the same way as conventional TCP"), Linux since 5.1
    /// (`dctcp_react_to_loss`) and the ns-2 DCTCP patch (`CLOSE_SSTHRESH_HALF`).
    Halve,
    /// ssthresh = cwnd * (1 - alpha/2), the echo's cut: ns-3's `TcpDctcp::GetSsThresh`
    /// and Linux before 5.1. With few marks alpha is near 0 and a loss barely cuts.
    Alpha,
}

/// DCTCP's keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpConfig {
    /// EWMA gain of alpha (0 < g <= 1).
    pub g: f64,
    /// Alpha at flow start (RFC 8257, Linux and ns-3: 1; ns-2 scripts often set 0, so
    /// young flows barely cut their window).
    pub alpha_init: Probability,
    /// The window's answer to a loss.
    pub loss_response: LossResponse,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig { g: 0.0625, alpha_init: Probability::new(1.0), loss_response: LossResponse::Halve }
    }
}

impl Scheme for Dctcp {
    type Config = DctcpConfig;
    type Env = ();

    fn build(cfg: &DctcpConfig, _: &()) -> Self {
        Dctcp::new(cfg.g, cfg.alpha_init.get(), cfg.loss_response)
    }

    fn validate(cfg: &DctcpConfig, path: &str, _: &CheckEnv, _: &mut Warnings) -> Result<(), ScenarioError> {
        if !(cfg.g > 0.0 && cfg.g <= 1.0) {
            return Err(ScenarioError::new(
                format!("{path}.g"),
                format!("{} is not accepted (accepted: 0 < g <= 1)", cfg.g),
            ));
        }
        Ok(())
    }
}

impl TcpCcFacts for Dctcp {
    fn ecn_lambda(_: &DctcpConfig) -> Option<f64> {
        Some(0.72)
    }
}

impl CongestionControl for Dctcp {
    fn probe(&self, p: &mut Probe) {
        p.alpha = self.alpha;
    }

    fn on_ack(&mut self, s: &mut SendState, f: &Feedback) {
        self.acked += f.acked_bytes;
        if f.ece {
            self.marked += f.acked_bytes;
        }
        let window_end = *self.window_end.get_or_insert(f.snd_nxt);
        if f.snd_una > window_end {
            let fraction = if self.acked > 0 { self.marked as f64 / self.acked as f64 } else { 0.0 };
            self.alpha = (1.0 - self.g) * self.alpha + self.g * fraction;
            self.acked = 0;
            self.marked = 0;
            self.window_end = Some(f.snd_nxt);
        }
        if f.ece && f.snd_una > self.cwr_until {
            s.ssthresh = self.reduced(s);
            s.cwnd = s.ssthresh;
            self.cwr_until = f.snd_nxt;
        } else if f.snd_una > self.cwr_until {
            s.reno_increase(f.acked_bytes);
        }
    }

    fn on_loss(&mut self, s: &SendState, flight_bytes: f64) -> f64 {
        match self.loss_response {
            LossResponse::Halve => s.reno_ssthresh(flight_bytes),
            LossResponse::Alpha => self.reduced(s),
        }
    }

    fn on_timeout(&mut self) {
        self.cwr_until = 0;
    }

    /// Alpha carries over; the observation window and the hold start afresh.
    fn on_new_flow(&mut self) {
        self.acked = 0;
        self.marked = 0;
        self.window_end = None;
        self.cwr_until = 0;
    }
}

impl Dctcp {
    fn reduced(&self, s: &SendState) -> f64 {
        (s.cwnd * (1.0 - self.alpha / 2.0)).max(2.0 * s.mss)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::ack;
    use super::*;

    /// With no marks alpha decays towards 0, and the echo's cut with it: a loss then
    /// halves the data in flight (RFC 8257, 3.4) unless the ns-3 behaviour is asked for.
    #[test]
    fn a_loss_halves_the_window_whatever_alpha() {
        let w = SendState::window(40_000.0, f64::INFINITY, 1000.0);
        let flight = 36_000.0;
        let mut halve = Dctcp::new(1.0 / 16.0, 0.02, LossResponse::Halve);
        let mut alpha = Dctcp::new(1.0 / 16.0, 0.02, LossResponse::Alpha);
        assert_eq!(halve.on_loss(&w, flight), 18_000.0);
        assert_eq!(alpha.on_loss(&w, flight), 40_000.0 * 0.99);
        let tiny = SendState::window(1_500.0, f64::INFINITY, 1000.0);
        assert_eq!(halve.on_loss(&tiny, 1_000.0), 2_000.0, "at least two segments");
    }

    #[test]
    fn dctcp_alpha_converges_to_mark_fraction() {
        // Every ACK marked: alpha -> 1 as 1 - (1-g)^n over n windows.
        let mut d = Dctcp::new(1.0 / 16.0, 0.0, LossResponse::Halve);
        let mut w = SendState::window(10.0 * 1000.0, f64::INFINITY, 1000.0);
        // The first ACK opens the first observation window.
        d.on_ack(&mut w, &ack(1000, true, 1, 1));
        assert_eq!(d.alpha, 0.0);
        d.acked = 0;
        d.marked = 0;
        for i in 2..=21u32 {
            // One ACK per window closes the window (snd_una passes window_end).
            d.on_ack(&mut w, &ack(1000, true, i, i));
        }
        let expected = 1.0 - (15.0f64 / 16.0).powi(20);
        assert!((d.alpha - expected).abs() < 1e-12, "{} vs {expected}", d.alpha);
    }

    #[test]
    fn a_timeout_ends_the_hold_after_a_reduction() {
        let mut d = Dctcp::new(1.0 / 16.0, 1.0, LossResponse::Halve);
        let mut w = SendState::window(64_000.0, f64::INFINITY, 1000.0);
        d.on_ack(&mut w, &ack(1000, true, 1, 64));
        assert_eq!(w.cwnd, 32_000.0);
        // Held: an unmarked ACK inside the reduced window does not grow it.
        d.on_ack(&mut w, &ack(1000, false, 2, 64));
        assert_eq!(w.cwnd, 32_000.0);
        // After a timeout the sender restarts at one segment in slow start.
        d.on_timeout();
        w.cwnd = 1000.0;
        d.on_ack(&mut w, &ack(1000, false, 3, 4));
        assert_eq!(w.cwnd, 2000.0);
    }

    /// A new flow on the connection keeps alpha (the reduction on its first echo is
    /// alpha / 2, not a halving) but not the old flow's hold: its segment numbers start
    /// again below the old `cwr_until`.
    #[test]
    fn a_new_flow_keeps_alpha_and_drops_the_hold() {
        let mut d = Dctcp::new(1.0 / 16.0, 0.25, LossResponse::Halve);
        let mut w = SendState::window(64_000.0, f64::INFINITY, 1000.0);
        d.on_ack(&mut w, &ack(1000, true, 900, 1000));
        let alpha = d.alpha;
        d.on_new_flow();
        w.cwnd = 40_000.0;
        d.on_ack(&mut w, &ack(1000, true, 1, 40));
        assert_eq!(d.alpha, alpha);
        assert_eq!(w.cwnd, 40_000.0 * (1.0 - alpha / 2.0));
    }
}
