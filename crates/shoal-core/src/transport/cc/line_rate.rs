use super::{CongestionControl, Feedback, SendState};
use crate::registry::{NoKeys, Scheme};

/// No congestion control: an RDMA connection sends at its line rate whatever happens.
pub struct LineRate;

impl Scheme for LineRate {
    type Config = NoKeys;
    type Env = ();

    fn build(_: &NoKeys, _: &()) -> Self {
        LineRate
    }
}

impl CongestionControl for LineRate {
    fn on_ack(&mut self, _s: &mut SendState, _f: &Feedback) {}
}
