use super::{CongestionControl, Feedback, SendState};
use crate::registry::{NoKeys, Scheme};

/// TCP NewReno (RFC 5681 / 6582): ignores ECN echoes.
pub struct NewReno;

impl Scheme for NewReno {
    type Config = NoKeys;
    type Env = ();

    fn build(_: &NoKeys, _: &()) -> Self {
        NewReno
    }
}

impl CongestionControl for NewReno {
    fn on_ack(&mut self, s: &mut SendState, f: &Feedback) {
        s.reno_increase(f.acked_bytes);
    }
}
