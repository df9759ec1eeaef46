//! The `[run]` section: how long, what is measured and written.

use crate::config::ScenarioError;
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
    /// The flows whose congestion state is recorded over time (`series.parquet`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<SeriesConfig>,
    /// The packets written to a capture file (`trace.pcap`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pcap: Option<PcapConfig>,
    /// How many threads the run may use. Results do not depend on it, so it is not part
    /// of the resolved scenario a run writes.
    #[serde(skip_serializing)]
    pub threads: Threads,
}

/// `[run.series]`: the flows whose congestion state is recorded over time, one row each
/// time it changes (`series.parquet`). A flow is chosen when it is among `flows` (if
/// given) and its size is within `min_bytes` and `max_bytes` (if given); with `sample`,
/// that many of the flows so chosen, drawn at random with the run's seed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub struct SeriesConfig {
    /// Flows by id (the flow table's `id`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_bytes: Option<Bytes>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<Bytes>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample: Option<u64>,
    /// At most one row per flow per interval (default: every change).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<Time>,
}

/// The most flows `run.series` may record: each may take a row per packet.
pub const MAX_SERIES_FLOWS: u64 = 100_000;

impl SeriesConfig {
    fn validate(&self) -> Result<(), ScenarioError> {
        let key = |k: &str| format!("run.series.{k}");
        if self.flows.is_empty() && self.min_bytes.is_none() && self.max_bytes.is_none() && self.sample.is_none() {
            return Err(ScenarioError::new(
                "run.series",
                "chooses no flow (accepted: flows = [ids], min_bytes, max_bytes and/or sample = N)",
            ));
        }
        if let (Some(lo), Some(hi)) = (self.min_bytes, self.max_bytes) {
            if lo > hi {
                return Err(ScenarioError::new(
                    key("max_bytes"),
                    format!("{hi} is below run.series.min_bytes = {lo} (accepted: at least min_bytes)"),
                ));
            }
        }
        if let Some(n) = self.sample.filter(|&n| n == 0 || n > MAX_SERIES_FLOWS) {
            return Err(ScenarioError::not_accepted(
                "run.series",
                "sample",
                n,
                &format!("1 to {MAX_SERIES_FLOWS} flows"),
            ));
        }
        if self.flows.len() as u64 > MAX_SERIES_FLOWS {
            return Err(ScenarioError::new(
                key("flows"),
                format!("lists {} flows (accepted: at most {MAX_SERIES_FLOWS})", self.flows.len()),
            ));
        }
        Ok(())
    }
}

/// `[run.pcap]`: packets written to `trace.pcap` as they arrive at the end of a link:
/// every packet of `flows` (by id) as it reaches its host (data at the receiver, replies
/// at the sender), and every frame over the cables `links` (by their ends' node ids), in
/// both directions; at most `max_packets`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PcapConfig {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<[u32; 2]>,
    pub max_packets: u64,
}

impl Default for PcapConfig {
    fn default() -> Self {
        PcapConfig { flows: Vec::new(), links: Vec::new(), max_packets: 100_000 }
    }
}

/// The threads of one run (`run.threads`): a count, or `"auto"`, the cores available.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    Count(u32),
    Auto,
}

impl Default for Threads {
    fn default() -> Self {
        Threads::Count(1)
    }
}

/// The most threads `run.threads` accepts.
const MAX_THREADS: u64 = 1024;

impl<'de> Deserialize<'de> for Threads {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) if s == "auto" => Ok(Threads::Auto),
            serde_json::Value::Number(n) if n.as_u64().is_some_and(|n| (1..=MAX_THREADS).contains(&n)) => {
                Ok(Threads::Count(n.as_u64().unwrap_or(1) as u32))
            }
            other => Err(serde::de::Error::custom(format!(
                "{other} is not accepted (accepted: a number of threads from 1 to {MAX_THREADS}, or \"auto\": \
                 the cores available)"
            ))),
        }
    }
}

impl Threads {
    /// The number of threads: the count, or the cores this process may use.
    pub fn count(self) -> usize {
        match self {
            Threads::Count(n) => n as usize,
            Threads::Auto => std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
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
            series: None,
            pcap: None,
            threads: Threads::default(),
        }
    }
}

impl RunConfig {
    /// Checks the section; `endless` says whether some workload never stops by itself
    /// (long-lived flows, or UDP without `workload.stop`), which needs a stop time.
    pub fn validate(&self, endless: bool) -> Result<(), ScenarioError> {
        let err = |path: &str, msg: String| Err(ScenarioError::new(path, msg));
        if self.stop_time == Some(Time(0)) {
            return err("run.stop_time", "must be positive".into());
        }
        if let Some(interval) = self.sample_interval.filter(|i| i.0 < 1_000) {
            return err("run.sample_interval", format!("{interval} is too short (accepted: 1ns or more)"));
        }
        if let Some(until) = self.occupancy_until {
            if !self.occupancy_cdf {
                return err(
                    "run.occupancy_until",
                    format!("{until} is set but run.occupancy_cdf is not (accepted: with occupancy_cdf = true)"),
                );
            }
            if until.0 == 0 {
                return err("run.occupancy_until", "must be positive (accepted: a time above 0, e.g. \"1ms\")".into());
            }
        }
        if self.size_buckets.len() != 2 || self.size_buckets[0] >= self.size_buckets[1] {
            return err("run.size_buckets", "must be two increasing sizes, e.g. [\"100KB\", \"10MB\"]".into());
        }
        if let Some(series) = &self.series {
            series.validate()?;
        }
        if let Some(pcap) = &self.pcap {
            if pcap.flows.is_empty() && pcap.links.is_empty() {
                return err("run.pcap", "captures nothing (accepted: flows = [ids] and/or links = [[a, b]])".into());
            }
            if pcap.max_packets == 0 {
                return err("run.pcap.max_packets", "0 is not accepted (accepted: 1 packet or more)".into());
            }
        }
        if endless && self.stop_time.is_none() {
            return err("run.stop_time", "is required with long_lived traffic or udp without workload.stop".into());
        }
        Ok(())
    }
}
