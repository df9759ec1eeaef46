//! The headline metrics of a run (`summary.json`), computed from the flow table and the
//! core's counters. This is the only implementation: the Python package reads it through
//! the binding.
//!
//! Definitions (as the papers report them):
//!
//! * **FCT** (flow completion time) = the time the receiver holds every byte of the flow
//!   minus the flow's start time. Unfinished flows have no FCT; they are counted and
//!   reported (a warning), never dropped silently.
//! * **Slowdown** = FCT / ideal FCT (see `Simulation::ideal_fct`).
//! * Size buckets come from `run.size_buckets` `[b0, b1]` (bytes): `small`: size <= b0,
//!   `medium`: b0 < size <= b1, `large`: size > b1; `all` covers every finished flow.
//!   FCT statistics use finished TCP and RDMA flows only (UDP flows have no completion).
//! * Means use pairwise summation and percentiles linear interpolation between order
//!   statistics (Hyndman & Fan's method 7), NumPy's defaults for `np.mean` and
//!   `np.percentile`, with its exact arithmetic, so that a summary keeps its bytes from
//!   release to release. A statistic of no values, or one that is not finite, is null.
//! * **Queries**: a query (one incast round, `query >= 0`) completes when its last flow
//!   does; QCT = that finish minus the earliest start of its flows. Queries with an
//!   unfinished flow are counted but have no QCT.
//! * **Packet loss rate** = dropped packets / sent packets (all packets, data and control).
//! * **ECN mark rate** = ECN-marked packets / data packets sent.

use super::counters::{ByName, LinkCounters, MeanMax, PacketCounts, PoolStats, RunCounters};
use super::FlowTable;
use crate::observe::PortClass;
use crate::scenario::Scenario;
use crate::sim::Ps;
use crate::workload::collective::{CollectiveJob, IterationRecord};
use crate::workload::{FlowKind, ENDLESS};
use schemars::JsonSchema;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;

/// The content of `summary.json`, in its key order.
#[derive(Serialize, JsonSchema, Debug)]
pub struct Summary<'a> {
    pub shoal_version: String,
    pub seed: u64,
    pub flows: FlowCounts,
    pub size_buckets_bytes: Vec<u64>,
    #[schemars(with = "BTreeMap<String, BucketStats>")]
    pub fct: Buckets,
    pub queries: QueryStats,
    /// Each collective job's headline, when a workload runs one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collectives: Option<Vec<CollectiveSummary>>,
    pub packets: PacketCounts,
    pub loss_rate: Option<f64>,
    /// Switch drops per packet arriving at a switch queue, each hop counted: the loss rate
    /// of ns-2's per-queue counters summed over switches.
    pub switch_drop_rate: Option<f64>,
    pub drops: ByName,
    pub bytes_dropped: u64,
    pub timeouts: u64,
    pub retransmits: u64,
    /// Congestion notifications RDMA senders received (`transport::Outcome::cnps`).
    pub cnps: u64,
    pub ecn_marks: u64,
    pub ecn_mark_rate: Option<f64>,
    /// PFC's headline, when a class is lossless.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pfc: Option<PfcSummary>,
    pub pools: Vec<PoolStats>,
    pub links: LinkCounters,
    pub link_utilization: LinkUtilization,
    pub duration_ps: Ps,
    pub events: u64,
    pub wall_time_s: Option<f64>,
    pub events_per_s: Option<f64>,
    pub warnings: Vec<String>,
    /// The core's counters, whole.
    pub counters: RunCounters,
    /// The resolved scenario.
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub scenario: &'a Scenario,
}

/// PFC's headline: frames, paused time and the lossless promise.
#[derive(Serialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct PfcSummary {
    pub pause_frames_sent: u64,
    pub resume_frames_sent: u64,
    pub pause_frames_received: u64,
    pub resume_frames_received: u64,
    /// (node, port, class) triples whose egress queues were ever paused.
    pub paused_queues: usize,
    /// Paused time summed over those triples, and the most of one (the most paused
    /// port class: the sum of its pauses, not one pause).
    pub paused_ns: f64,
    pub max_paused_ns: f64,
    /// The longest single pause of any of them (from a PAUSE to its RESUME or expiry).
    pub longest_pause_ns: f64,
    /// Packets of lossless classes dropped, for any reason (0 is PFC's promise).
    pub lossless_drops: u64,
    /// Frames that waited behind another frame on their link (`Counters::frames_queued_behind`).
    pub frames_queued_behind: u64,
    /// Cycles of paused queues found (`observe::DeadlockDetector`), in the order found.
    pub deadlocks: Vec<DeadlockSummary>,
}

/// How a run ended, for the warning about its unfinished flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RunEnd {
    /// At its stop time (or a deadlock it was asked to stop at) with events left.
    Stopped,
    /// With nothing left to happen: unfinished flows stalled for good.
    AtRest,
    /// At rest, holding the packets of a deadlock it reported.
    Deadlocked,
    /// At a pause that nothing holds (its ending frame lost), with senders' timers still
    /// set: what it paused stays paused for good.
    Frozen,
}

/// A deadlock: when its last pause began, when it was found, and its cycle of waiting
/// (switch, port, class), each waiting for the next. `frozen`: found where the network
/// was at rest or nothing in it could move, whatever `deadlock_after` says.
#[derive(Serialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct DeadlockSummary {
    pub onset_ns: f64,
    pub detected_ns: f64,
    pub cycle: Vec<PortClass>,
    pub frozen: bool,
    /// Frozen with no cycle of pauses to hold it: a pause's ending frame was lost
    /// (corrupted on a lossy link). `cycle` lists the paused queues that wait for no
    /// other, `held_nics` counts the host NICs held.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub without_cycle: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_nics: Option<usize>,
    /// The warning that names the cycle's nodes as the topology numbers them.
    #[serde(skip)]
    pub(crate) warning: String,
}

#[derive(Serialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct FlowCounts {
    pub total: usize,
    pub finished: usize,
    pub unfinished: usize,
    /// Each transport that has flows, by its name (the flow table's `kind`).
    pub by_transport: BTreeMap<&'static str, TransportFlows>,
    pub bytes: u64,
    pub delivered_bytes: u64,
}

/// The flows of one transport, and how many of them finished.
#[derive(Serialize, JsonSchema, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TransportFlows {
    pub flows: usize,
    pub finished: usize,
}

/// FCT statistics of one size bucket (or of all finished flows).
#[derive(Serialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct BucketStats {
    pub count: usize,
    pub mean_fct_ns: Option<f64>,
    pub p50_fct_ns: Option<f64>,
    pub p99_fct_ns: Option<f64>,
    pub mean_slowdown: Option<f64>,
    pub p50_slowdown: Option<f64>,
    pub p99_slowdown: Option<f64>,
    /// The bucket's sizes (absent for `all`).
    #[serde(flatten)]
    pub range: Option<SizeRange>,
}

#[derive(Serialize, JsonSchema, Debug, Clone, Copy, PartialEq)]
pub struct SizeRange {
    pub min_bytes_exclusive: Option<u64>,
    pub max_bytes_inclusive: Option<u64>,
}

/// The size buckets in order (`small`, `medium`, `large`), then `all`.
#[derive(Debug, Clone, PartialEq)]
pub struct Buckets(pub Vec<(String, BucketStats)>);

impl Buckets {
    pub fn get(&self, label: &str) -> Option<&BucketStats> {
        self.0.iter().find(|(l, _)| l == label).map(|(_, s)| s)
    }
}

impl Serialize for Buckets {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (label, stats) in &self.0 {
            map.serialize_entry(label, stats)?;
        }
        map.end()
    }
}

#[derive(Serialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct QueryStats {
    pub count: usize,
    pub finished: usize,
    /// Present when at least one query finished.
    #[serde(flatten)]
    pub qct: Option<QctStats>,
}

#[derive(Serialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct QctStats {
    pub mean_qct_ns: Option<f64>,
    pub p50_qct_ns: Option<f64>,
    pub p99_qct_ns: Option<f64>,
}

/// A collective job's headline (`summary.json`'s `collectives`, in job order).
#[derive(Serialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct CollectiveSummary {
    /// The key path of its workload.
    pub workload: String,
    /// `ring_all_reduce`, `all_to_all` or `parameter_server`.
    pub collective: String,
    /// Its hosts, a parameter server's server among them.
    pub hosts: usize,
    /// `workload.size`.
    pub bytes: u64,
    pub iterations: u32,
    /// Iterations whose every message arrived.
    pub finished: usize,
    /// The time of a finished iteration: from its first message's start to its last one's
    /// arrival.
    pub mean_time_ns: Option<f64>,
    pub p50_time_ns: Option<f64>,
    pub p99_time_ns: Option<f64>,
    pub max_time_ns: Option<f64>,
    /// From an iteration's start to the next one's (compute gap included), over the
    /// iterations that have a next.
    pub mean_iteration_ns: Option<f64>,
    /// NCCL's bus bandwidth at the mean time: `bytes` x 8 x the bus factor (2(n - 1)/n for
    /// a ring all-reduce, (n - 1)/n for all-to-all) / the mean time; at most the host
    /// links' rate. Null for a parameter server.
    pub bus_bandwidth_gbps: Option<f64>,
}

impl CollectiveSummary {
    /// The headline of `job` from its `iterations`.
    pub fn of(job: &CollectiveJob, iterations: &[IterationRecord]) -> CollectiveSummary {
        let times: Vec<f64> =
            iterations.iter().filter_map(|r| Some(r.end? as f64 / 1e3 - r.start? as f64 / 1e3)).collect();
        let starts: Vec<f64> = iterations.iter().map_while(|r| r.start.map(|s| s as f64 / 1e3)).collect();
        let gaps: Vec<f64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
        let stat = |values: &[f64], f: fn(&[f64]) -> f64| (!values.is_empty()).then(|| f(values)).and_then(finite);
        let mean_time = stat(&times, mean);
        CollectiveSummary {
            workload: job.workload.clone(),
            collective: serde_json::to_value(job.kind)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            hosts: job.hosts.len() + usize::from(job.server.is_some()),
            bytes: job.bytes,
            iterations: job.iterations,
            finished: times.len(),
            mean_time_ns: mean_time,
            p50_time_ns: stat(&times, |v| percentile(v, 50.0)),
            p99_time_ns: stat(&times, |v| percentile(v, 99.0)),
            max_time_ns: stat(&times, |v| v.iter().copied().fold(f64::NAN, f64::max)),
            mean_iteration_ns: stat(&gaps, mean),
            bus_bandwidth_gbps: job.bus_factor().zip(mean_time).map(|(f, t)| job.bytes as f64 * 8.0 * f / t),
        }
    }
}

/// Mean and maximum utilization of the host downlinks (`mean`, `max`) and of the core
/// links (`core_mean`, `core_max`).
#[derive(Serialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct LinkUtilization {
    pub mean: Option<f64>,
    pub max: Option<f64>,
    pub core_mean: Option<f64>,
    pub core_max: Option<f64>,
}

/// Names of the size buckets for `n` boundaries.
pub fn bucket_labels(n: usize) -> Vec<String> {
    match n {
        2 => vec!["small".into(), "medium".into(), "large".into()],
        1 => vec!["small".into(), "large".into()],
        _ => (0..=n).map(|i| format!("bucket{i}")).collect(),
    }
}

impl<'a> Summary<'a> {
    /// `summary.json`'s text.
    pub fn to_json(&self) -> String {
        super::json::to_python_json(self)
    }

    /// The summary of a run from its flow columns and its counters.
    /// The unfinished-flows warning is appended to `warnings`, saying how the run ended.
    pub(crate) fn new(
        flows: &FlowTable,
        counters: RunCounters,
        scenario: &'a Scenario,
        version: &str,
        mut warnings: Vec<String>,
        wall_time_s: Option<f64>,
        ended: RunEnd,
    ) -> Summary<'a> {
        let n = flows.len();
        let bounds: Vec<u64> = scenario.run.size_buckets.iter().map(|b| b.0).collect();
        let labels = bucket_labels(bounds.len());

        // Finished TCP and RDMA flows, in flow order, by size bucket: the number of bounds below
        // the size (size <= b0 -> 0), as np.searchsorted(bounds, size, "left").
        // Gathered one bucket at a time, so that a run of millions of flows holds the FCTs
        // and slowdowns of one bucket at once.
        let bucket_of = |i: usize| bounds.partition_point(|&b| (b as f64) < flows.bytes[i] as f64);
        let stats_of = |in_bucket: &dyn Fn(usize) -> bool, range| {
            let finished = (0..n).filter(|&i| flows.finished(i) && !flows.datagram[i] && in_bucket(i));
            let (fct, slowdown) = finished.map(|i| (flows.fct_ns(i), flows.slowdown(i))).unzip();
            bucket_stats(fct, slowdown, range)
        };
        let mut fct: Vec<(String, BucketStats)> = labels
            .into_iter()
            .enumerate()
            .map(|(b, label)| {
                let range = SizeRange {
                    min_bytes_exclusive: b.checked_sub(1).map(|j| bounds[j]),
                    max_bytes_inclusive: bounds.get(b).copied(),
                };
                (label, stats_of(&|i| bucket_of(i) == b, Some(range)))
            })
            .collect();
        fct.push(("all".into(), stats_of(&|_| true, None)));

        let finished = (0..n).filter(|&i| flows.finished(i)).count();
        let mut by_transport: BTreeMap<&'static str, TransportFlows> = BTreeMap::new();
        for (i, &kind) in flows.kind.iter().enumerate() {
            let counts = by_transport.entry(kind).or_default();
            counts.flows += 1;
            counts.finished += usize::from(flows.finished(i));
        }
        let reliable = n - flows.datagram.iter().filter(|&&d| d).count();
        if n == 0 {
            warnings.push(
                "the workload generated no flows; check workload.flows, workload.duration and the senders".into(),
            );
        }
        let unfinished = (0..n).filter(|&i| !flows.finished(i) && !flows.datagram[i]).count();
        if unfinished > 0 {
            // The transports whose flows complete, as the transports are listed.
            let which: Vec<String> = FlowKind::TRANSPORTS
                .iter()
                .filter(|&&(name, completes)| completes && by_transport.contains_key(name))
                .map(|(name, _)| name.to_uppercase())
                .collect();
            let which = which.join(" and ");
            warnings.push(if ended == RunEnd::Frozen {
                format!(
                    "{unfinished} of {reliable} {which} flows did not finish: the run ended at the frozen fabric \
                     reported above, behind which they would have waited for good; they are excluded from FCT \
                     statistics"
                )
            } else if ended != RunEnd::Stopped {
                let lost_frames = counters.frames_corrupted.unwrap_or(0);
                let no_timeout = if ended == RunEnd::Deadlocked {
                    ", behind the deadlock reported above"
                } else if lost_frames > 0 && scenario.switch.flow_control.pauses_end_by_frame() {
                    " (control frames were corrupted on lossy links, and a pause whose ending frame is lost \
                     holds what it paused for good)"
                } else if by_transport.contains_key("rdma") && scenario.rdma.rto == crate::transport::config::Rto::None
                {
                    " (an RDMA connection has no retransmission timeout unless rdma.rto is set, so one that \
                     loses its last packets waits for good)"
                } else {
                    ""
                };
                format!(
                    "{unfinished} of {reliable} {which} flows did not finish: they stalled, the network having come \
                     to rest with no packet moving and no timer left{no_timeout}; they are excluded from FCT \
                     statistics"
                )
            } else {
                format!(
                    "{unfinished} of {reliable} {which} flows did not finish before the run stopped; \
                     they are excluded from FCT statistics"
                )
            });
        }
        // Endless flows (long-lived TCP, UDP) have no size: their bytes do not count.
        let finite = |v: &[u64]| {
            v.iter().zip(&flows.bytes).filter(|(_, &b)| b != ENDLESS).fold(0u64, |a, (&x, _)| a.saturating_add(x))
        };
        let sum32 = |v: &[u32]| v.iter().map(|&x| x as u64).sum::<u64>();

        Summary {
            shoal_version: version.to_string(),
            seed: scenario.run.seed,
            flows: FlowCounts {
                total: n,
                finished,
                unfinished: n - finished,
                by_transport,
                bytes: finite(&flows.bytes),
                delivered_bytes: flows.delivered_bytes.iter().fold(0u64, |a, &x| a.saturating_add(x)),
            },
            size_buckets_bytes: bounds.clone(),
            fct: Buckets(fct),
            queries: query_stats(flows),
            collectives: None,
            loss_rate: rate(counters.packets.dropped as f64, counters.packets.sent as f64),
            switch_drop_rate: rate(counters.packets.switch_dropped as f64, counters.packets.switch_arrivals as f64),
            packets: counters.packets,
            drops: counters.drops.clone(),
            bytes_dropped: counters.bytes_dropped,
            timeouts: sum32(&flows.timeouts),
            retransmits: sum32(&flows.retransmits),
            cnps: counters.cnps,
            ecn_marks: counters.ecn_marks,
            ecn_mark_rate: rate(counters.ecn_marks as f64, counters.data_packets_sent as f64),
            pfc: None,
            pools: counters.pools.clone(),
            links: counters.links.clone(),
            link_utilization: link_utilization(&counters.links),
            duration_ps: counters.duration_ps,
            events_per_s: wall_time_s.filter(|w| w.is_finite()).and_then(|wall| rate(counters.events as f64, wall)),
            events: counters.events,
            wall_time_s: wall_time_s.filter(|w| w.is_finite()),
            warnings,
            counters,
            scenario,
        }
    }
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// `num / den` when `den > 0`.
fn rate(num: f64, den: f64) -> Option<f64> {
    if den > 0.0 {
        finite(num / den)
    } else {
        None
    }
}

/// The statistics of a bucket's FCTs and slowdowns, in flow order (the means add them
/// in that order); they are sorted in place for the percentiles.
fn bucket_stats(mut fct: Vec<f64>, mut slowdown: Vec<f64>, range: Option<SizeRange>) -> BucketStats {
    let empty = fct.is_empty();
    let stat = |x: f64| if empty { None } else { finite(x) };
    let (mean_fct, mean_slowdown) = (mean(&fct), mean(&slowdown));
    let [p50_fct, p99_fct] = percentiles(&mut fct, [50.0, 99.0]);
    let [p50_slowdown, p99_slowdown] = percentiles(&mut slowdown, [50.0, 99.0]);
    BucketStats {
        count: fct.len(),
        mean_fct_ns: stat(mean_fct),
        p50_fct_ns: stat(p50_fct),
        p99_fct_ns: stat(p99_fct),
        mean_slowdown: stat(mean_slowdown),
        p50_slowdown: stat(p50_slowdown),
        p99_slowdown: stat(p99_slowdown),
        range,
    }
}

fn query_stats(flows: &FlowTable) -> QueryStats {
    // query -> (every flow finished, latest finish, earliest start); NaN finishes (of
    // unfinished flows) are skipped, as pandas' max does.
    let mut rounds: BTreeMap<i64, (bool, f64, f64)> = BTreeMap::new();
    for (i, &q) in flows.query.iter().enumerate().filter(|(_, &q)| q >= 0) {
        let (finish, start) = (flows.finish_ns(i), flows.start_ns(i));
        let entry = rounds.entry(q).or_insert((true, f64::NAN, f64::NAN));
        entry.0 &= flows.finished(i);
        entry.1 = entry.1.max(finish);
        entry.2 = entry.2.min(start);
    }
    let qct: Vec<f64> = rounds.values().filter(|r| r.0).map(|&(_, finish, start)| finish - start).collect();
    QueryStats {
        count: rounds.len(),
        finished: qct.len(),
        qct: (!qct.is_empty()).then(|| QctStats {
            mean_qct_ns: finite(mean(&qct)),
            p50_qct_ns: finite(percentile(&qct, 50.0)),
            p99_qct_ns: finite(percentile(&qct, 99.0)),
        }),
    }
}

fn link_utilization(links: &LinkCounters) -> LinkUtilization {
    let stat = |g: Option<MeanMax>, of: fn(MeanMax) -> f64| g.map(of).map(f64::abs).and_then(finite);
    let (access, core) = (links.host_downlinks, links.core);
    LinkUtilization {
        mean: stat(access, |g| g.mean),
        max: stat(access, |g| g.max),
        core_mean: stat(core, |g| g.mean),
        core_max: stat(core, |g| g.max),
    }
}

/// The sum of `values` by pairwise summation in blocks of at most 128 with 8
/// accumulators, added to 0: the arithmetic of NumPy's `np.add.reduce`.
fn pairwise_sum(values: &[f64]) -> f64 {
    fn pairwise(a: &[f64]) -> f64 {
        let n = a.len();
        if n < 8 {
            let mut res = 0.0;
            for &x in a {
                res += x;
            }
            res
        } else if n <= 128 {
            let mut r = [a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]];
            let mut i = 8;
            while i < n - n % 8 {
                for (j, acc) in r.iter_mut().enumerate() {
                    *acc += a[i + j];
                }
                i += 8;
            }
            let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
            for &x in &a[i..] {
                res += x;
            }
            res
        } else {
            let mut half = n / 2;
            half -= half % 8;
            pairwise(&a[..half]) + pairwise(&a[half..])
        }
    }
    0.0 + pairwise(values)
}

/// The mean, by [`pairwise_sum`] (NaN for no values).
fn mean(values: &[f64]) -> f64 {
    pairwise_sum(values) / values.len() as f64
}

/// The `p`th percentile by linear interpolation (NumPy's default method): the order
/// statistics at `(n - 1) * p / 100`, interpolated as NumPy's `_lerp` does. NaN if any
/// value is NaN (or there are none).
fn percentile(values: &[f64], p: f64) -> f64 {
    let [value] = percentiles(&mut values.to_vec(), [p]);
    value
}

/// `percentile` of `values` at each of `ps`, sorting `values` in place.
fn percentiles<const N: usize>(values: &mut [f64], ps: [f64; N]) -> [f64; N] {
    if values.is_empty() || values.iter().any(|x| x.is_nan()) {
        return [f64::NAN; N];
    }
    values.sort_unstable_by(f64::total_cmp);
    ps.map(|p| percentile_of_sorted(values, p))
}

fn percentile_of_sorted(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    let index = (n - 1) as f64 * (p / 100.0);
    let (below, above, t) = if index >= (n - 1) as f64 {
        // NumPy takes the last element (with a weight past 1 that does not matter).
        (sorted[n - 1], sorted[n - 1], index + 1.0)
    } else {
        let lo = index.floor();
        (sorted[lo as usize], sorted[lo as usize + 1], index - lo)
    };
    let diff = above - below;
    if t >= 0.5 {
        above - diff * (1.0 - t)
    } else {
        below + diff * t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate_linearly() {
        // np.percentile([1, 2, 3, 4], [50, 99]) == [2.5, 3.97]
        let v = [4.0, 1.0, 3.0, 2.0];
        assert_eq!(percentile(&v, 50.0), 2.5);
        assert_eq!(percentile(&v, 99.0), 3.9699999999999998);
        assert_eq!(percentile(&[7.0], 99.0), 7.0);
        assert!(percentile(&[1.0, f64::NAN], 50.0).is_nan());
    }

    #[test]
    fn sums_are_pairwise_as_numpy() {
        // The pairwise sum and mean of these 20 values (left-to-right summation gives
        // 37110067.34586348 instead).
        let v = [
            3088638.8329302664,
            60809.83962086729,
            96311.46975406929,
            30740297.98546021,
            887063.6696033002,
            1490.2935652640044,
            20953.57261913208,
            13755.675714323246,
            14007.800215810812,
            18.305408208693567,
            213419.39976086753,
            3261.008064532959,
            35988.48817679293,
            14641.012848662094,
            300524.972015599,
            9068.606828553218,
            2025.791601813812,
            108800.08995302273,
            1490551.96334336,
            8438.568378820017,
        ];
        assert_eq!(pairwise_sum(&v), 37110067.345863484);
        assert_eq!(mean(&v), 1855503.3672931741);
        assert!(mean(&[]).is_nan());
    }
}
