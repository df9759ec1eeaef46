use super::{check_red, red_marks, MarkContext, MarkRule, Marker, PoolEnv};
use crate::registry::Scheme;
use crate::scenario::{Probability, Scenario, ScenarioError, Warnings};
use crate::sim::Rng;
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// Per-queue RED on the instantaneous queue: no marks below `kmin`, probability rising
/// linearly to `pmax` at `kmax`, every packet at or above `kmax`.
pub struct QueueRed {
    pub kmin: u64,
    pub kmax: u64,
    pub pmax: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RedConfig {
    /// Bytes in the queue (or port) below which nothing is marked.
    pub kmin: Bytes,
    /// Bytes at and above which every packet is marked.
    pub kmax: Bytes,
    /// The marking probability just below `kmax`.
    pub pmax: Probability,
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig { kmin: Bytes(100_000), kmax: Bytes(400_000), pmax: Probability::new(0.1) }
    }
}

impl Scheme for QueueRed {
    type Config = RedConfig;
    type Env = PoolEnv;

    fn build(cfg: &RedConfig, _: &PoolEnv) -> Self {
        QueueRed { kmin: cfg.kmin.0, kmax: cfg.kmax.0, pmax: cfg.pmax.get() }
    }

    fn validate(cfg: &RedConfig, path: &str, sc: &Scenario, warnings: &mut Warnings) -> Result<(), ScenarioError> {
        check_red(path, cfg.kmin.0, cfg.kmax.0)?;
        super::warn_unreachable(&format!("{path}.kmin"), cfg.kmin, sc, warnings);
        Ok(())
    }
}

impl Marker for QueueRed {
    #[inline]
    fn marks(&mut self, ctx: &MarkContext, rng: &mut Rng) -> bool {
        red_marks(ctx.queue_bytes, self.kmin, self.kmax, self.pmax, rng)
    }

    fn rule(&self) -> MarkRule {
        MarkRule::Queue
    }
}
