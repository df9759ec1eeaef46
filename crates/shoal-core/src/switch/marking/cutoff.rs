use super::{MarkContext, MarkRule, Marker, MarkerFacts, PoolEnv};
use crate::check_env::CheckEnv;
use crate::config::{ScenarioError, Warnings};
use crate::registry::Scheme;
use crate::sim::Rng;
use crate::units::{Bytes, Rate};
use serde::{Deserialize, Serialize};

/// Per-queue cut-off: mark when the queue holds at least `k` bytes (DCTCP's rule).
pub struct QueueCutoff {
    pub k: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CutoffConfig {
    /// The threshold: bytes in the queue (or port) at which packets are marked.
    pub k: Bytes,
}

impl Default for CutoffConfig {
    fn default() -> Self {
        CutoffConfig { k: Bytes(100_000) }
    }
}

impl CutoffConfig {
    /// The cut-off an ECN transport needs where nothing else marks: K = lambda x C x RTT
    /// (BCC paper, section II-C; lambda is the transport's, `TcpCcFacts::ecn_lambda`:
    /// 0.72 for DCTCP, 1 for ECN*), for hosts whose links run at `host_rate` and a base
    /// round trip of `round_trip_ps`. Without it DCTCP would never see a mark and behave
    /// as loss-based TCP filling the buffer.
    pub fn lambda_bdp(lambda: f64, host_rate: Rate, round_trip_ps: u64) -> CutoffConfig {
        let bdp = host_rate.0 as f64 / 8.0 * round_trip_ps as f64 / crate::sim::PS_PER_S as f64;
        CutoffConfig { k: Bytes((lambda * bdp).round().max(1.0) as u64) }
    }
}

impl Scheme for QueueCutoff {
    type Config = CutoffConfig;
    type Env = PoolEnv;

    fn build(cfg: &CutoffConfig, _: &PoolEnv) -> Self {
        QueueCutoff { k: cfg.k.0 }
    }

    fn validate(cfg: &CutoffConfig, path: &str, env: &CheckEnv, warnings: &mut Warnings) -> Result<(), ScenarioError> {
        super::warn_unreachable(&format!("{path}.k"), cfg.k, env, warnings);
        Ok(())
    }
}

impl MarkerFacts for QueueCutoff {
    fn scope(_: &CutoffConfig) -> MarkRule {
        MarkRule::Queue
    }
}

impl Marker for QueueCutoff {
    #[inline]
    fn marks(&mut self, ctx: &MarkContext, _: &mut Rng) -> bool {
        ctx.queue_bytes >= self.k
    }
}
