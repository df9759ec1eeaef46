//! The congestion-control decision point of a TCP sender. The sender owns loss detection
//! and recovery (NewReno); a `CongestionControl` decides how the window grows on new
//! ACKs, how it reacts to ECN echoes, and what ssthresh becomes on a loss.

use super::TcpConfig;
use crate::scenario::CcKind;

/// The window a congestion controller adjusts, in bytes.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub cwnd: f64,
    pub ssthresh: f64,
    pub mss: f64,
}

impl Window {
    /// Reno growth for `acked` new bytes: slow start below ssthresh, then one MSS per
    /// window of data.
    pub fn reno_increase(&mut self, acked: u64) {
        let acked = acked as f64;
        if self.cwnd < self.ssthresh {
            self.cwnd += acked;
        } else {
            self.cwnd += self.mss * acked / self.cwnd;
        }
    }
}

/// An ACK that acknowledged new data outside loss recovery.
pub struct AckInfo {
    pub acked_bytes: u64,
    pub ece: bool,
    /// Sequence state after the ACK, in segments.
    pub snd_una: u32,
    pub snd_nxt: u32,
}

pub trait CongestionControl: Send {
    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo);
    /// A loss was detected; returns the new ssthresh.
    fn on_loss(&mut self, w: &Window, flight_bytes: f64) -> f64 {
        (flight_bytes / 2.0).max(2.0 * w.mss)
    }
    /// The retransmission timer fired: the window restarts from one segment in slow
    /// start, so any hold from an earlier reduction ends.
    fn on_timeout(&mut self) {}
    /// The connection starts carrying a new flow, whose segments count from 0 again:
    /// forget every position in the old sequence, keep what was learned.
    fn on_new_flow(&mut self) {}
}

/// The congestion controller a flow of this configuration runs.
pub fn build(cfg: &TcpConfig) -> Box<dyn CongestionControl> {
    match cfg.cc {
        CcKind::Newreno => Box::new(NewReno),
        CcKind::EcnStar => Box::new(EcnStar { cwr_until: 0 }),
        CcKind::Dctcp => Box::new(Dctcp::new(cfg.dctcp_g, cfg.dctcp_alpha_init)),
    }
}

/// TCP NewReno (RFC 5681 / 6582): ignores ECN echoes.
pub struct NewReno;

impl CongestionControl for NewReno {
    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        w.reno_increase(ack.acked_bytes);
    }
}

/// Classic ECN (RFC 3168) reaction: halve the window on an ECN echo, at most once per
/// window of data.
pub struct EcnStar {
    /// No further reduction until snd_una passes this segment.
    cwr_until: u32,
}

impl CongestionControl for EcnStar {
    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        if ack.ece && ack.snd_una > self.cwr_until {
            w.ssthresh = (w.cwnd / 2.0).max(2.0 * w.mss);
            w.cwnd = w.ssthresh;
            self.cwr_until = ack.snd_nxt;
        } else if ack.snd_una > self.cwr_until {
            // The window does not grow until the reduced window is acknowledged (CWR).
            w.reno_increase(ack.acked_bytes);
        }
    }

    fn on_timeout(&mut self) {
        self.cwr_until = 0;
    }

    fn on_new_flow(&mut self) {
        self.cwr_until = 0;
    }
}

/// DCTCP (Alizadeh et al., RFC 8257): alpha, the EWMA (gain g) of the fraction of
/// marked bytes, is updated once per window of data (the first window starts with the
/// first ACK); on an echo, or a loss, ssthresh and the window become cwnd * (1 - alpha/2),
/// at most once per window, and the window does not grow until the reduced window is
/// acknowledged.
pub struct Dctcp {
    pub alpha: f64,
    g: f64,
    acked: u64,
    marked: u64,
    /// The current observation window ends when snd_una passes this segment.
    window_end: Option<u32>,
    cwr_until: u32,
}

impl Dctcp {
    pub fn new(g: f64, alpha: f64) -> Self {
        Dctcp { alpha, g, acked: 0, marked: 0, window_end: None, cwr_until: 0 }
    }
}

impl CongestionControl for Dctcp {
    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        self.acked += ack.acked_bytes;
        if ack.ece {
            self.marked += ack.acked_bytes;
        }
        let window_end = *self.window_end.get_or_insert(ack.snd_nxt);
        if ack.snd_una > window_end {
            let fraction = if self.acked > 0 { self.marked as f64 / self.acked as f64 } else { 0.0 };
            self.alpha = (1.0 - self.g) * self.alpha + self.g * fraction;
            self.acked = 0;
            self.marked = 0;
            self.window_end = Some(ack.snd_nxt);
        }
        if ack.ece && ack.snd_una > self.cwr_until {
            w.ssthresh = self.reduced(w);
            w.cwnd = w.ssthresh;
            self.cwr_until = ack.snd_nxt;
        } else if ack.snd_una > self.cwr_until {
            w.reno_increase(ack.acked_bytes);
        }
    }

    fn on_loss(&mut self, w: &Window, _flight_bytes: f64) -> f64 {
        self.reduced(w)
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
    fn reduced(&self, w: &Window) -> f64 {
        (w.cwnd * (1.0 - self.alpha / 2.0)).max(2.0 * w.mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dctcp_alpha_converges_to_mark_fraction() {
        // Every ACK marked: alpha -> 1 as 1 - (1-g)^n over n windows.
        let mut d = Dctcp::new(1.0 / 16.0, 0.0);
        let mut w = Window { cwnd: 10.0 * 1000.0, ssthresh: f64::INFINITY, mss: 1000.0 };
        // The first ACK opens the first observation window.
        d.on_ack(&mut w, &AckInfo { acked_bytes: 1000, ece: true, snd_una: 1, snd_nxt: 1 });
        assert_eq!(d.alpha, 0.0);
        d.acked = 0;
        d.marked = 0;
        for i in 2..=21u32 {
            // One ACK per window closes the window (snd_una passes window_end).
            d.on_ack(&mut w, &AckInfo { acked_bytes: 1000, ece: true, snd_una: i, snd_nxt: i });
        }
        let expected = 1.0 - (15.0f64 / 16.0).powi(20);
        assert!((d.alpha - expected).abs() < 1e-12, "{} vs {expected}", d.alpha);
    }

    #[test]
    fn a_timeout_ends_the_hold_after_a_reduction() {
        let mut d = Dctcp::new(1.0 / 16.0, 1.0);
        let mut w = Window { cwnd: 64_000.0, ssthresh: f64::INFINITY, mss: 1000.0 };
        d.on_ack(&mut w, &AckInfo { acked_bytes: 1000, ece: true, snd_una: 1, snd_nxt: 64 });
        assert_eq!(w.cwnd, 32_000.0);
        // Held: an unmarked ACK inside the reduced window does not grow it.
        d.on_ack(&mut w, &AckInfo { acked_bytes: 1000, ece: false, snd_una: 2, snd_nxt: 64 });
        assert_eq!(w.cwnd, 32_000.0);
        // After a timeout the sender restarts at one segment in slow start.
        d.on_timeout();
        w.cwnd = 1000.0;
        d.on_ack(&mut w, &AckInfo { acked_bytes: 1000, ece: false, snd_una: 3, snd_nxt: 4 });
        assert_eq!(w.cwnd, 2000.0);
    }

    /// A new flow on the connection keeps alpha (the reduction on its first echo is
    /// alpha / 2, not a halving) but not the old flow's hold: its segment numbers start
    /// again below the old `cwr_until`.
    #[test]
    fn a_new_flow_keeps_alpha_and_drops_the_hold() {
        let mut d = Dctcp::new(1.0 / 16.0, 0.25);
        let mut w = Window { cwnd: 64_000.0, ssthresh: f64::INFINITY, mss: 1000.0 };
        d.on_ack(&mut w, &AckInfo { acked_bytes: 1000, ece: true, snd_una: 900, snd_nxt: 1000 });
        let alpha = d.alpha;
        d.on_new_flow();
        w.cwnd = 40_000.0;
        d.on_ack(&mut w, &AckInfo { acked_bytes: 1000, ece: true, snd_una: 1, snd_nxt: 40 });
        assert_eq!(d.alpha, alpha);
        assert_eq!(w.cwnd, 40_000.0 * (1.0 - alpha / 2.0));
    }

    #[test]
    fn ecn_star_halves_once_per_window() {
        let mut e = EcnStar { cwr_until: 0 };
        let mut w = Window { cwnd: 64_000.0, ssthresh: f64::INFINITY, mss: 1000.0 };
        e.on_ack(&mut w, &AckInfo { acked_bytes: 1000, ece: true, snd_una: 1, snd_nxt: 64 });
        assert_eq!(w.cwnd, 32_000.0);
        e.on_ack(&mut w, &AckInfo { acked_bytes: 1000, ece: true, snd_una: 2, snd_nxt: 64 });
        assert_eq!(w.cwnd, 32_000.0);
        e.on_ack(&mut w, &AckInfo { acked_bytes: 1000, ece: true, snd_una: 65, snd_nxt: 96 });
        assert_eq!(w.cwnd, 16_000.0);
    }
}
