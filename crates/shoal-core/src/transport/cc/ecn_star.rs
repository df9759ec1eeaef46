use super::{CongestionControl, Feedback, SendState, TcpCcFacts};
use crate::registry::keyless_scheme;

/// Classic ECN (RFC 3168) reaction: halve the window on an ECN echo, at most once per
/// window of data.
pub struct EcnStar {
    /// No further reduction until snd_una passes this segment.
    cwr_until: u32,
}

keyless_scheme!(EcnStar, env(), EcnStar { cwr_until: 0 });

impl TcpCcFacts for EcnStar {
    fn ecn_lambda(_: &crate::registry::NoKeys) -> Option<f64> {
        Some(1.0)
    }
}

impl CongestionControl for EcnStar {
    fn on_ack(&mut self, s: &mut SendState, f: &Feedback) {
        if f.ece && f.snd_una > self.cwr_until {
            s.ssthresh = (s.cwnd / 2.0).max(2.0 * s.mss);
            s.cwnd = s.ssthresh;
            self.cwr_until = f.snd_nxt;
        } else if f.snd_una > self.cwr_until {
            // The window does not grow until the reduced window is acknowledged (CWR).
            s.reno_increase(f.acked_bytes);
        }
    }

    fn on_timeout(&mut self) {
        self.cwr_until = 0;
    }

    fn on_new_flow(&mut self) {
        self.cwr_until = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::ack;
    use super::*;

    #[test]
    fn ecn_star_halves_once_per_window() {
        let mut e = EcnStar { cwr_until: 0 };
        let mut w = SendState::window(64_000.0, f64::INFINITY, 1000.0);
        e.on_ack(&mut w, &ack(1000, true, 1, 64));
        assert_eq!(w.cwnd, 32_000.0);
        e.on_ack(&mut w, &ack(1000, true, 2, 64));
        assert_eq!(w.cwnd, 32_000.0);
        e.on_ack(&mut w, &ack(1000, true, 65, 96));
        assert_eq!(w.cwnd, 16_000.0);
    }
}
