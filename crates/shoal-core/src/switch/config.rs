//! The `[switch]` section: the buffer, its pools and reserve, the queues, and how ECN
//! rules apply (`[switch.ecn]`).

use crate::config::{PerQueue, ScenarioError};
use crate::switch::admission::AdmissionConfig;
use crate::switch::classify::ClassifierConfig;
use crate::switch::flow_control::FlowControlConfig;
use crate::switch::load_balance::LoadBalancingConfig;
use crate::switch::marking::MarkingConfig;
pub use crate::switch::mmu::ReservePer;
use crate::switch::scheduler::SchedulerConfig;
use crate::units::Bytes;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The most queues a switch port may have. Packets reach queues 0 to 255 by priority;
/// more queues serve schemes that spread flows over them.
pub const MAX_QUEUES: u32 = 1024;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchConfig {
    pub queues: u32,
    pub ports_per_pool: u32,
    pub pool_size: Bytes,
    /// The whole buffer of each pool, when set: the pool's shared size is what its
    /// reserves and its ports' headroom (PFC, DSH) leave of it, and `pool_size` is not
    /// read. A chip's buffer compares schemes that reserve differently.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer: Option<Bytes>,
    /// Switches whose buffer is not `buffer`: by node id (as `topology.failed_links` names
    /// nodes: a built-in kind's hosts first, then its switches; a file's own ids), the
    /// whole buffer of each pool of that switch, read as `buffer` is (the reserves and
    /// headroom come out of it). Set on a switch, it applies whether or not `buffer` is
    /// set. Every key names a switch of the network (`engine::switch_buffers` checks).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub buffer_of_node: BTreeMap<String, Bytes>,
    pub reserved: Bytes,
    pub reserve_per: ReservePer,
    pub alpha: PerQueue,
    pub admission: AdmissionConfig,
    pub scheduler: SchedulerConfig,
    /// Unset: `SwitchConfig::classifier()` derives it from the scheduler.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classifier: Option<ClassifierConfig>,
    pub flow_control: FlowControlConfig,
    pub ecn: EcnConfig,
    pub marking: MarkingConfig,
    /// Left out of a resolved scenario when it is ECMP, the default, so that results
    /// written before it existed read the same.
    #[serde(skip_serializing_if = "LoadBalancingConfig::is_ecmp")]
    pub load_balancing: LoadBalancingConfig,
}

impl SwitchConfig {
    /// Checks the queue count, `ports_per_pool` and the alphas (one, or one per queue).
    pub fn check_queues(&self) -> Result<(), ScenarioError> {
        let err = |path: &str, msg: String| Err(ScenarioError::new(path, msg));
        if self.queues == 0 || self.queues > MAX_QUEUES {
            return err("switch.queues", format!("{} is not accepted (accepted: 1 to {MAX_QUEUES})", self.queues));
        }
        if self.ports_per_pool == 0 {
            return err("switch.ports_per_pool", "must be at least 1".into());
        }
        let alphas = self.alpha.values();
        if alphas.is_empty() {
            return err("switch.alpha", "the list is empty (accepted: a number > 0 or one per queue)".into());
        }
        for a in &alphas {
            if !(a.is_finite() && *a > 0.0) {
                return err("switch.alpha", format!("{a} is not accepted (accepted: a number > 0)"));
            }
        }
        if alphas.len() > 1 && alphas.len() != self.queues as usize {
            return err(
                "switch.alpha",
                format!(
                    "has {} values but switch.queues = {} (accepted: one value, or one per queue)",
                    alphas.len(),
                    self.queues
                ),
            );
        }
        Ok(())
    }

    /// Checks that every buffer (`buffer_of_node`'s, or without `buffer` the pool and its
    /// reserve) holds one `packet`, the largest the workloads send (sized by `sent_keys`):
    /// one that cannot drops every such packet, and the run could never finish.
    pub fn check_buffers(&self, packet: Bytes, sent_keys: &str) -> Result<(), ScenarioError> {
        let err = |path: &str, msg: String| Err(ScenarioError::new(path, msg));
        for (node, buffer) in &self.buffer_of_node {
            // A key TOML could write bare is named bare, another in quotes.
            let bare = !node.is_empty() && node.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            let key =
                if bare { format!("switch.buffer_of_node.{node}") } else { format!("switch.buffer_of_node.{node:?}") };
            if node.parse::<u32>().is_err() {
                return err(
                    &key,
                    format!("{node:?} is not a node id (accepted: a whole number, the id of a switch as topology.failed_links names nodes)"),
                );
            }
            if *buffer < packet {
                return err(
                    &key,
                    format!("{buffer} cannot hold one packet of {packet} ({sent_keys}); accepted: at least {packet}"),
                );
            }
        }
        if self.buffer.is_none() && Bytes(self.pool_size.0 + self.reserved.0) < packet {
            return err(
                "switch.pool_size",
                format!(
                    "{} plus switch.reserved = {} cannot hold one packet of {packet} ({sent_keys}); accepted: \
                     together at least {packet}",
                    self.pool_size, self.reserved
                ),
            );
        }
        Ok(())
    }

    /// The classifier in effect: as set, else one queue under `fifo` and a queue per
    /// priority under every other scheduler.
    pub fn classifier(&self) -> ClassifierConfig {
        self.classifier.clone().unwrap_or_else(|| {
            let kind = if self.scheduler.single_queue() { "single_queue" } else { "by_priority" };
            ClassifierConfig::of_kind(kind).expect("a registered classifier")
        })
    }
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            queues: 8,
            ports_per_pool: 8,
            pool_size: Bytes(3_000_000),
            buffer: None,
            buffer_of_node: BTreeMap::new(),
            reserved: Bytes(128_000),
            reserve_per: ReservePer::Queue,
            alpha: PerQueue::All(4.0),
            admission: AdmissionConfig::default(),
            scheduler: SchedulerConfig::default(),
            classifier: None,
            flow_control: FlowControlConfig::default(),
            ecn: EcnConfig::default(),
            marking: MarkingConfig::default(),
            load_balancing: LoadBalancingConfig::default(),
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MarkPoint {
    Enqueue,
    Dequeue,
}

/// What the per-queue rules of `[switch.marking]` measure.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EcnScope {
    /// The packet's own queue.
    Queue,
    /// Every queue of the packet's egress port together (PIAS's per-port ECN).
    Port,
}

/// How a switch applies its marking rules (`[switch.ecn]`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct EcnConfig {
    /// When ECN-capable packets are marked.
    pub at: MarkPoint,
    /// What per-queue rules measure.
    pub scope: EcnScope,
    /// What happens to packets that are not ECN-capable where a rule fires.
    pub non_ect: NonEct,
}

impl Default for EcnConfig {
    fn default() -> Self {
        EcnConfig { at: MarkPoint::Dequeue, scope: EcnScope::Queue, non_ect: NonEct::Drop }
    }
}

/// What marking rules do to packets that are not ECN-capable.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NonEct {
    /// Dropped at enqueue where a rule would mark (WRED with ECN).
    Drop,
    /// Left alone: only tail drop limits them (an ECN-only marking profile).
    Pass,
}
