//! The `[host]` section: the hosts' NICs.

use crate::units::Bytes;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    pub nic_buffer: Bytes,
    pub tsq: Bytes,
    pub ecn_k: Bytes,
    pub nic_order: NicOrder,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig { nic_buffer: Bytes(10_000_000), tsq: Bytes(0), ecn_k: Bytes(0), nic_order: NicOrder::Creation }
    }
}

/// The round-robin order in which a NIC serves its paced flows (RDMA queue pairs, or UDP
/// with `pacing = "nic"`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NicOrder {
    /// In the order the flows started, from the one after the last served, wrapping
    /// around: a new flow waits for the end of the round (ns3-datacenter's queue-pair
    /// array, `qbb-net-device.cc:105-150`).
    Creation,
    /// The flow served moves to the back, a flow with a new packet joins the back.
    Rotate,
}
