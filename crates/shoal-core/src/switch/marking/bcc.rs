use super::{MarkContext, MarkRule, Marker, MarkerFacts, PoolEnv, SharedBufferRed};
use crate::check_env::CheckEnv;
use crate::config::{Probability, ScenarioError, Warnings};
use crate::registry::Scheme;
use crate::sim::Rng;
use crate::units::Time;
use serde::{Deserialize, Serialize};

/// BCC (buffer-aware congestion control): shared-buffer RED whose thresholds each pool
/// derives from its ports' rate and count, its size, reserve and smallest alpha.
pub struct Bcc(SharedBufferRed);

/// Inputs of BCC's parameter rules (section IV-C/D of the BCC paper).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct BccConfig {
    /// Base round-trip time.
    pub rtt: Time,
    /// The transport's characteristic constant (0.72 for DCTCP).
    pub lambda: f64,
    /// Headroom time of the RED range: Kmax - Kmin = C x N x h.
    pub h: Time,
    /// The marking probability just below Kmax (0..=1).
    pub pmax: Probability,
}

impl Default for BccConfig {
    fn default() -> Self {
        BccConfig { rtt: Time(80_000_000), lambda: 0.72, h: Time(8_000_000), pmax: Probability::new(0.1) }
    }
}

/// The BCC thresholds of one pool.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BccThresholds {
    /// B_R = C x RTT x (1 + lambda) - S_min
    pub b_r: f64,
    /// Kmax = B - B_R / alpha_min
    pub kmax: f64,
    /// Kmin = Kmax - C x N x h
    pub kmin: f64,
}

impl BccConfig {
    /// BCC's rules for a pool of `ports` ports at `rate_bps` with shared size `pool`,
    /// smallest alpha `alpha_min` and per-queue reserve `reserved`.
    pub fn thresholds(&self, rate_bps: u64, ports: usize, pool: u64, alpha_min: f64, reserved: u64) -> BccThresholds {
        let c = rate_bps as f64 / 8.0; // bytes per second
        let b_r = c * self.rtt.0 as f64 / 1e12 * (1.0 + self.lambda) - reserved as f64;
        let kmax = pool as f64 - b_r / alpha_min;
        let kmin = kmax - c * ports as f64 * self.h.0 as f64 / 1e12;
        BccThresholds { b_r, kmax, kmin }
    }
}

impl Scheme for Bcc {
    type Config = BccConfig;
    type Env = PoolEnv;

    fn build(cfg: &BccConfig, env: &PoolEnv) -> Self {
        let th = cfg.thresholds(env.max_rate_bps, env.ports, env.pool_size, env.alpha_min, env.reserved);
        let kmax = th.kmax.max(0.0) as u64;
        let kmin = (th.kmin.max(0.0) as u64).min(kmax);
        Bcc(SharedBufferRed { kmin, kmax, pmax: cfg.pmax.get() })
    }

    /// Checks the thresholds of a full pool at the topology's fastest rate: the switches'
    /// real pools can only have fewer ports or slower ones.
    fn validate(cfg: &BccConfig, path: &str, env: &CheckEnv, _: &mut Warnings) -> Result<(), ScenarioError> {
        let err = |key: &str, msg: String| Err(ScenarioError::new(format!("{path}{key}"), msg));
        if !(cfg.lambda.is_finite() && cfg.lambda >= 0.0) {
            return err(".lambda", format!("{} is not accepted (accepted: a number >= 0)", cfg.lambda));
        }
        if cfg.rtt.0 == 0 {
            return err(".rtt", "must be positive".into());
        }
        let rate = env.topology.fastest_rate()?.0;
        let th = cfg.thresholds(rate, env.ports_per_pool as usize, env.pool_size.0, env.alpha_min, env.reserved.0);
        if th.kmin < 0.0 {
            return err(
                "",
                format!(
                    "the BCC rules give Kmin = {:.0} B < 0 for this pool (Kmax = {:.0} B, B_R = {:.0} B); the pool is too small for this rtt, lambda and h",
                    th.kmin, th.kmax, th.b_r
                ),
            );
        }
        Ok(())
    }
}

impl MarkerFacts for Bcc {
    fn scope(_: &BccConfig) -> MarkRule {
        MarkRule::SharedBuffer
    }
}

impl Marker for Bcc {
    #[inline]
    fn marks(&mut self, ctx: &MarkContext, rng: &mut Rng) -> bool {
        self.0.marks(ctx, rng)
    }
}
