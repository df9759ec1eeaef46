use super::{CongestionControl, Feedback, SendState};
use crate::registry::Scheme;
use serde::{Deserialize, Serialize};

/// TCP NewReno (RFC 5681 / 6582): ignores ECN echoes.
pub struct NewReno;

/// No keys.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewRenoConfig {}

impl Scheme for NewReno {
    type Config = NewRenoConfig;
    type Env = ();

    fn build(_: &NewRenoConfig, _: &()) -> Self {
        NewReno
    }
}

impl CongestionControl for NewReno {
    fn on_ack(&mut self, s: &mut SendState, f: &Feedback) {
        s.reno_increase(f.acked_bytes);
    }
}
