use super::{check_red, red_marks, MarkContext, MarkRule, Marker, MarkerFacts, PoolEnv};
use crate::check_env::CheckEnv;
use crate::config::{Probability, ScenarioError, Warnings};
use crate::registry::Scheme;
use crate::sim::Rng;
use crate::units::{Bytes, Rate};
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
    /// The link rate `kmin` and `kmax` are given for; unset: every port uses them as
    /// they are. Set, each port scales them by its own rate / `reference_rate`, as
    /// ns3-datacenter's KMIN_MAP / KMAX_MAP do (25, 50, 100 Gbps: 100, 200, 400 KB
    /// and 400, 800, 1600 KB in its config-burst.txt).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference_rate: Option<Rate>,
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig { kmin: Bytes(100_000), kmax: Bytes(400_000), pmax: Probability::new(0.1), reference_rate: None }
    }
}

impl RedConfig {
    /// `k` for a port of `port_rate_bps` (0: unknown, `k` as given).
    fn at_rate(&self, k: Bytes, port_rate_bps: u64) -> u64 {
        match self.reference_rate {
            Some(Rate(reference)) if port_rate_bps > 0 => {
                (k.0 as u128 * port_rate_bps as u128 / reference as u128) as u64
            }
            _ => k.0,
        }
    }
}

impl Scheme for QueueRed {
    type Config = RedConfig;
    type Env = PoolEnv;

    fn build(cfg: &RedConfig, env: &PoolEnv) -> Self {
        QueueRed {
            kmin: cfg.at_rate(cfg.kmin, env.port_rate_bps),
            kmax: cfg.at_rate(cfg.kmax, env.port_rate_bps),
            pmax: cfg.pmax.get(),
        }
    }

    fn validate(cfg: &RedConfig, path: &str, env: &CheckEnv, warnings: &mut Warnings) -> Result<(), ScenarioError> {
        check_red(path, cfg.kmin.0, cfg.kmax.0)?;
        if cfg.reference_rate == Some(Rate(0)) {
            return Err(ScenarioError::new(
                format!("{path}.reference_rate"),
                "0bps cannot scale thresholds (accepted: a rate above 0, e.g. \"100Gbps\", or leave it unset)",
            ));
        }
        super::warn_unreachable(&format!("{path}.kmin"), cfg.kmin, env, warnings);
        Ok(())
    }
}

impl MarkerFacts for QueueRed {
    fn scope(_: &RedConfig) -> MarkRule {
        MarkRule::Queue
    }
}

impl Marker for QueueRed {
    #[inline]
    fn marks(&mut self, ctx: &MarkContext, rng: &mut Rng) -> bool {
        red_marks(ctx.queue_bytes, self.kmin, self.kmax, self.pmax, rng)
    }
}
