use super::{CongestionControl, Feedback, SendState, TcpCcFacts};
use crate::registry::keyless_scheme;

/// TCP NewReno (RFC 5681 / 6582): ignores ECN echoes.
pub struct NewReno;

keyless_scheme!(NewReno);

impl TcpCcFacts for NewReno {}

impl CongestionControl for NewReno {
    fn on_ack(&mut self, s: &mut SendState, f: &Feedback) {
        s.reno_increase(f.acked_bytes);
    }
}
