//! The marking decision point: ECN marking rules. A packet is marked when any rule of
//! `[switch.marking]` marks it. Per-queue rules (`cutoff`, `red`) see the packet's queue
//! (or port, by `switch.ecn.scope`); shared-buffer rules (`shared_cutoff`, `shared_red`,
//! `bcc`) see its pool, and are built per pool.

mod bcc;
mod cutoff;
mod red;
mod shared_cutoff;
mod shared_red;

pub use bcc::{Bcc, BccConfig, BccThresholds};
pub use cutoff::{CutoffConfig, QueueCutoff};
pub use red::{QueueRed, RedConfig};
pub use shared_cutoff::{SharedCutoff, SharedCutoffConfig};
pub use shared_red::{SharedBufferRed, SharedRedConfig};

use crate::check_env::CheckEnv;
use crate::config::keys::nested;
use crate::config::{ScenarioError, Warnings};
use crate::registry::{registry, Scheme};
use crate::sim::Rng;
pub use crate::stats::MarkRule;
use rand::Rng as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What a marking rule sees when it decides.
pub struct MarkContext {
    /// Bytes in the packet's queue (or, with per-port scope, in all the queues of its
    /// port): ahead of it at enqueue, behind it at dequeue.
    pub queue_bytes: u64,
    /// Shared bytes in use in the packet's pool.
    pub pool_shared: u64,
}

pub trait Marker: Send {
    fn marks(&mut self, ctx: &MarkContext, rng: &mut Rng) -> bool;
}

/// What a marking rule judges, stated in its own file: its packet's queue (or port,
/// `MarkRule::Queue`) or its pool (`MarkRule::SharedBuffer`). The switch builds a rule of
/// the first kind for every port and one of the second for every pool.
pub trait MarkerFacts: Scheme {
    fn scope(cfg: &Self::Config) -> MarkRule;
}

/// What a marking rule is built for: the buffer pool whose packets it judges, and for a
/// per-queue rule (built once per port) the port.
pub struct PoolEnv {
    /// Ports sharing the pool.
    pub ports: usize,
    /// The fastest of their rates, bits per second.
    pub max_rate_bps: u64,
    /// The rate of the port a per-queue rule is built for, bits per second; 0 for a
    /// shared-buffer rule.
    pub port_rate_bps: u64,
    /// Shared bytes of the pool (`switch.pool_size`).
    pub pool_size: u64,
    /// Bytes reserved per queue (`switch.reserved`).
    pub reserved: u64,
    /// The smallest dynamic-threshold alpha of the queues.
    pub alpha_min: f64,
}

registry! {
    /// One ECN marking rule (an entry of `[switch.marking]`, keyed by its kind).
    pub enum MarkerConfig => AnyMarker: Marker, env PoolEnv;
    "cutoff" => Cutoff(QueueCutoff),
    "red" => Red(QueueRed),
    "shared_cutoff" => SharedCutoff(SharedCutoff),
    "shared_red" => SharedRed(SharedBufferRed),
    "bcc" => Bcc(Bcc),
    facts MarkerFacts {
        /// What the rule judges: its queue (port) or its pool.
        fn scope -> MarkRule;
    }
    forward {
        mut fn marks(ctx: &MarkContext, rng: &mut Rng) -> bool;
    }
}

/// The marking rules of a switch (`[switch.marking]`): a table from kind to that rule's
/// keys, e.g. `cutoff = { k = "100KB" }`.
///
/// Invariant: at most one rule per kind, in `MarkerConfig::KINDS` order (the order the
/// rules are asked in, which fixes the random draws of RED rules).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MarkingConfig(Vec<MarkerConfig>);

impl MarkingConfig {
    pub fn new(mut rules: Vec<MarkerConfig>) -> Self {
        rules.sort_by_key(|r| MarkerConfig::KINDS.iter().position(|k| *k == r.kind()));
        rules.dedup_by_key(|r| r.kind());
        MarkingConfig(rules)
    }

    pub fn rules(&self) -> &[MarkerConfig] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds `rule`, replacing a rule of the same kind.
    pub fn set(&mut self, rule: MarkerConfig) {
        self.0.retain(|r| r.kind() != rule.kind());
        self.0.push(rule);
        *self = MarkingConfig::new(std::mem::take(&mut self.0));
    }

    /// Each rule's checks, and at most one rule per scope: the switch asks one per-queue
    /// and one shared-buffer rule.
    pub fn validate(&self, path: &str, env: &CheckEnv, warnings: &mut Warnings) -> Result<(), ScenarioError> {
        for rule in &self.0 {
            rule.validate(&format!("{path}.{}", rule.kind()), env, warnings)?;
        }
        for scope in [MarkRule::Queue, MarkRule::SharedBuffer] {
            let same: Vec<&str> = self.0.iter().filter(|r| r.scope() == scope).map(|r| r.kind()).collect();
            if same.len() > 1 {
                return Err(ScenarioError::new(
                    format!("{path}.{}", same[1]),
                    format!("set either {} or {}, not both: they judge the same occupancy", same[0], same[1]),
                ));
            }
        }
        Ok(())
    }
}

impl Serialize for MarkingConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|r| (r.kind(), r.keys_value())))
    }
}

impl<'de> Deserialize<'de> for MarkingConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let map = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
        let accepted = MarkerConfig::KINDS.join(", ");
        let mut rules = Vec::new();
        for (kind, keys) in map {
            if !MarkerConfig::KINDS.contains(&kind.as_str()) {
                return Err(D::Error::custom(nested(&kind, &format!("unknown marking rule (accepted: {accepted})"))));
            }
            let serde_json::Value::Object(keys) = keys else {
                return Err(D::Error::custom(nested(
                    &kind,
                    &format!("expected a table of the rule's keys, found {keys}"),
                )));
            };
            rules.push(MarkerConfig::from_keys(&kind, keys).map_err(|m| D::Error::custom(nested(&kind, &m)))?);
        }
        Ok(MarkingConfig::new(rules))
    }
}

/// The RED probability of marking at occupancy `q`.
#[inline]
pub fn red_probability(q: u64, kmin: u64, kmax: u64, pmax: f64) -> f64 {
    if q < kmin {
        0.0
    } else if q >= kmax {
        1.0
    } else {
        pmax * (q - kmin) as f64 / (kmax - kmin) as f64
    }
}

#[inline]
fn red_marks(q: u64, kmin: u64, kmax: u64, pmax: f64, rng: &mut Rng) -> bool {
    let p = red_probability(q, kmin, kmax, pmax);
    p >= 1.0 || (p > 0.0 && rng.gen::<f64>() < p)
}

/// Warns when a per-queue threshold `k` at `path` is above what one queue can hold.
fn warn_unreachable(path: &str, k: crate::units::Bytes, env: &CheckEnv, warnings: &mut Warnings) {
    let port_buffer = env.pool_size.0 + env.reserved.0;
    if k.0 > port_buffer {
        warnings.push(format!(
            "{path}: {k} is above the most a queue can hold ({} = switch.pool_size + switch.reserved); it will never mark",
            crate::units::Bytes(port_buffer)
        ));
    }
}

/// RED's thresholds are in order: `kmin <= kmax`.
pub(crate) fn check_red(path: &str, kmin: u64, kmax: u64) -> Result<(), ScenarioError> {
    if kmin > kmax {
        return Err(ScenarioError::new(
            format!("{path}.kmin"),
            format!(
                "{} is above {path}.kmax = {} (accepted: kmin <= kmax)",
                crate::units::Bytes(kmin),
                crate::units::Bytes(kmax)
            ),
        ));
    }
    Ok(())
}
