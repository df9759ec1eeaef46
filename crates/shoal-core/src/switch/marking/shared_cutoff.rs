use super::{MarkContext, MarkRule, Marker, MarkerFacts, PoolEnv, SharedBufferRed};
use crate::registry::Scheme;
use crate::sim::Rng;
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// Shared-buffer cut-off: mark every packet of the pool while the pool's shared
/// occupancy is at least `k` (shared-buffer RED with `kmin == kmax`).
pub struct SharedCutoff(SharedBufferRed);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SharedCutoffConfig {
    /// Shared bytes of the pool at which its packets are marked.
    pub k: Bytes,
}

impl Default for SharedCutoffConfig {
    fn default() -> Self {
        SharedCutoffConfig { k: Bytes(1_000_000) }
    }
}

impl Scheme for SharedCutoff {
    type Config = SharedCutoffConfig;
    type Env = PoolEnv;

    fn build(cfg: &SharedCutoffConfig, _: &PoolEnv) -> Self {
        SharedCutoff(SharedBufferRed { kmin: cfg.k.0, kmax: cfg.k.0, pmax: 1.0 })
    }
}

impl MarkerFacts for SharedCutoff {
    fn scope(_: &SharedCutoffConfig) -> MarkRule {
        MarkRule::SharedBuffer
    }
}

impl Marker for SharedCutoff {
    #[inline]
    fn marks(&mut self, ctx: &MarkContext, rng: &mut Rng) -> bool {
        self.0.marks(ctx, rng)
    }
}
