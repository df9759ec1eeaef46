//! The run's counters (`summary.json`'s `counters`, whose parts the summary's headline
//! repeats): packets, drops and marks by kind, buffer and queue occupancy, link
//! utilization, and each flow-control scheme's own section. Keys are written in
//! alphabetical order, the scheme sections among them.

use crate::sim::Ps;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;

/// Counts by a name (a drop reason, a marking rule, a scheme's counter).
pub type ByName = BTreeMap<&'static str, u64>;

#[derive(Serialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct RunCounters {
    /// Each flow-control scheme's counters, by its section name (`FlowControlReport::add_counters`).
    #[serde(flatten)]
    pub schemes: BTreeMap<&'static str, ByName>,
    pub bytes_dropped: u64,
    /// Congestion notifications RDMA senders received.
    pub cnps: u64,
    pub data_packets_sent: u64,
    /// Dropped packets by reason (`DropReason::name`), every reason listed (`link_error`
    /// only where a link can corrupt packets, `link_down` only where links go down).
    pub drops: ByName,
    pub duration_ps: Ps,
    pub ecn_marks: u64,
    pub events: u64,
    /// Control frames (PFC, BFC) lost to corruption, where a link can corrupt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames_corrupted: Option<u64>,
    /// Control frames lost on a link that was down, where links go down.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames_lost_to_outages: Option<u64>,
    pub links: LinkCounters,
    /// ECN marks by the rule that made them (`MarkRule::name`), every rule listed.
    pub marks_by_rule: ByName,
    pub packets: PacketCounts,
    /// Every buffer pool of every switch, switch by switch.
    pub pools: Vec<PoolStats>,
    /// Every switch queue that ever held a packet.
    pub queues: Vec<QueueStats>,
    pub switch_data_dropped: u64,
    pub timeouts: u64,
}

/// Packets of every kind (data, ACKs, control frames).
#[derive(Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketCounts {
    pub delivered: u64,
    pub dropped: u64,
    /// In queues or on wires when the counters were read.
    pub in_network: u64,
    pub sent: u64,
    /// Data packets that reached their destination after a packet their flow sent later,
    /// where the switches may split flows (`switch.load_balancing`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reordered: Option<u64>,
    /// Arrivals at switch queues, each hop counted.
    pub switch_arrivals: u64,
    pub switch_dropped: u64,
}

/// Occupancy of a buffer pool over the run, bytes (time-weighted).
#[derive(Serialize, JsonSchema, Debug, Clone, Copy, PartialEq)]
pub struct PoolStats {
    pub drops: u64,
    pub max: u64,
    pub mean: f64,
    /// The bytes held when the counters were read.
    pub now: u64,
    pub p50: Option<u64>,
    pub p99: Option<u64>,
    pub pool: usize,
    pub size: u64,
    pub switch: usize,
}

/// Occupancy of a switch queue over the run, bytes (time-weighted).
#[derive(Serialize, JsonSchema, Debug, Clone, Copy, PartialEq)]
pub struct QueueStats {
    pub max: u64,
    pub mean: f64,
    pub now: u64,
    pub port: usize,
    pub queue: usize,
    pub switch: usize,
}

/// Utilization (bits sent / (rate x duration)) of the host downlinks and of the core links.
#[derive(Serialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct LinkCounters {
    /// None without core links.
    pub core: Option<MeanMax>,
    pub core_links: Vec<CoreLink>,
    pub host_downlinks: Option<MeanMax>,
}

#[derive(Serialize, JsonSchema, Debug, Clone, Copy, PartialEq)]
pub struct MeanMax {
    pub max: f64,
    pub mean: f64,
}

impl MeanMax {
    /// The mean and maximum of `values`; None for none.
    pub fn of(values: &[f64]) -> Option<MeanMax> {
        (!values.is_empty()).then(|| MeanMax {
            max: values.iter().copied().fold(0.0, f64::max),
            mean: values.iter().sum::<f64>() / values.len() as f64,
        })
    }
}

/// A link between two switches (by their switch numbers).
#[derive(Serialize, JsonSchema, Debug, Clone, Copy, PartialEq)]
pub struct CoreLink {
    pub from_switch: usize,
    pub to_switch: usize,
    pub utilization: f64,
}
