use super::{check_red, red_marks, MarkContext, MarkRule, Marker, MarkerFacts, PoolEnv};
use crate::check_env::CheckEnv;
use crate::config::{Probability, ScenarioError, Warnings};
use crate::registry::Scheme;
use crate::sim::Rng;
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// Shared-buffer RED (BCC): RED on the pool's instantaneous shared occupancy, for every
/// packet of the pool whatever its port or queue. `kmin == kmax` is a cut-off.
pub struct SharedBufferRed {
    pub kmin: u64,
    pub kmax: u64,
    pub pmax: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SharedRedConfig {
    /// Shared bytes of the pool below which nothing is marked.
    pub kmin: Bytes,
    /// Shared bytes at and above which every packet is marked.
    pub kmax: Bytes,
    /// The marking probability just below `kmax`.
    pub pmax: Probability,
}

impl Default for SharedRedConfig {
    fn default() -> Self {
        SharedRedConfig { kmin: Bytes(1_000_000), kmax: Bytes(2_000_000), pmax: Probability::new(0.1) }
    }
}

impl Scheme for SharedBufferRed {
    type Config = SharedRedConfig;
    type Env = PoolEnv;

    fn build(cfg: &SharedRedConfig, _: &PoolEnv) -> Self {
        SharedBufferRed { kmin: cfg.kmin.0, kmax: cfg.kmax.0, pmax: cfg.pmax.get() }
    }

    fn validate(cfg: &SharedRedConfig, path: &str, _: &CheckEnv, _: &mut Warnings) -> Result<(), ScenarioError> {
        check_red(path, cfg.kmin.0, cfg.kmax.0)
    }
}

impl MarkerFacts for SharedBufferRed {
    fn scope(_: &SharedRedConfig) -> MarkRule {
        MarkRule::SharedBuffer
    }
}

impl Marker for SharedBufferRed {
    #[inline]
    fn marks(&mut self, ctx: &MarkContext, rng: &mut Rng) -> bool {
        red_marks(ctx.pool_shared, self.kmin, self.kmax, self.pmax, rng)
    }
}
