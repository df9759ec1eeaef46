//! The `[run]` section: how long, what is measured and written.

use crate::units::{Bytes, Time};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    pub seed: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_time: Option<Time>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample_interval: Option<Time>,
    pub size_buckets: Vec<Bytes>,
    pub fct_until: FctUntil,
    /// Writes each switch pool's time-weighted occupancy distribution
    /// (`occupancy.parquet`). Off by default and then absent from the resolved scenario,
    /// so runs that do not ask for it keep their bytes.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub occupancy_cdf: bool,
    /// The end of the window `[0, occupancy_until]` of `occupancy_cdf` (default: the
    /// whole run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occupancy_until: Option<Time>,
}

/// Where a TCP flow's completion time ends.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FctUntil {
    /// The receiver holds every byte.
    Delivered,
    /// The sender holds an acknowledgment for every byte: one ACK trip later, and a
    /// timeout later still when the last ACKs are lost. ns-2's traffic generator of the
    /// BCC, PIAS and LossPass papers ends flows here (`done_data`).
    Acked,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            seed: 1,
            stop_time: None,
            sample_interval: None,
            size_buckets: vec![Bytes(100_000), Bytes(10_000_000)],
            fct_until: FctUntil::Delivered,
            occupancy_cdf: false,
            occupancy_until: None,
        }
    }
}
