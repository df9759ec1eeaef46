use super::RdmaCcFacts;
use super::{CongestionControl, Feedback, RdmaCcEnv, SendState};
use crate::registry::keyless_scheme;

/// No congestion control: an RDMA connection sends at its line rate whatever happens.
pub struct LineRate;

keyless_scheme!(LineRate, env RdmaCcEnv);

impl RdmaCcFacts for LineRate {}

impl CongestionControl for LineRate {
    fn on_ack(&mut self, _s: &mut SendState, _f: &Feedback) {}
}
