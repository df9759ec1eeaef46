//! The memory a run will need, estimated before anything big is built, so that a
//! scenario too large for the machine is refused with the estimate and the key to change
//! instead of ending in an allocation abort.
//!
//! The per-item costs are measured on this build (peak RSS over a few sizes of star,
//! fat-tree and all-to-all runs, Nov 2026) and rounded up: a run's per-item state is a
//! few small structs whose sizes change rarely; the Python tests compare the estimate
//! with a measured run.

use crate::net::{NetworkSpec, NodeId};
use crate::scenario::{Scenario, ScenarioError};
use crate::sim::PS_PER_S;

/// A switch port with its link, its share of the host behind it and its statistics.
const PORT_BYTES: u64 = 1_600;
/// One egress queue of a switch port (accounting, occupancy statistics).
const QUEUE_BYTES: u64 = 160;
/// One flow: its spec, packet templates, transport state while active, and its row in
/// the results. Measured at scale, where the flows dominate: 1.08 KB a flow on a k = 16
/// fat tree with 400,000 flows, 1.02 KB in BFC's Fig. 5 runs with 8.25 M RDMA flows.
const FLOW_BYTES: u64 = 1_100;
/// One queue sample: the sample and its row in the results table.
const SAMPLE_BYTES: u64 = 120;
/// The process without a network (the interpreter, libraries, buffers).
const BASE_BYTES: u64 = 50 << 20;

/// One part of the estimate: what it is for, the key that sizes it and its bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub what: &'static str,
    pub key: &'static str,
    pub bytes: u64,
}

/// The memory a run needs, by part.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryEstimate {
    pub parts: Vec<Part>,
}

impl MemoryEstimate {
    /// Estimates the memory of `sc` on the network `net` with `flows` flows.
    pub fn new(sc: &Scenario, net: &NetworkSpec, flows: u64) -> MemoryEstimate {
        // Switch ports, those facing another switch, and the edge switches (with hosts).
        let (mut ports, mut switch_facing) = (0u64, 0u64);
        let mut edge = vec![false; net.switches as usize];
        for l in &net.links {
            if let NodeId::Switch(s) = l.from {
                ports += 1;
                match l.to {
                    NodeId::Switch(_) => switch_facing += 1,
                    NodeId::Host(_) => edge[s as usize] = true,
                }
            }
        }
        let queues = sc.switch.queues as u64;
        let edges = edge.iter().filter(|&&e| e).count() as u64;
        // Per (switch, edge switch): a span of 8 bytes, and at most every switch-facing
        // port as an equal-cost next hop, 2 bytes each.
        let routes = net.switches as u64 * edges * 8 + switch_facing * edges * 2;
        let mut parts = vec![
            Part { what: "the process", key: "", bytes: BASE_BYTES },
            Part {
                what: "switch ports and queues",
                key: "topology",
                bytes: ports * (PORT_BYTES + queues * QUEUE_BYTES),
            },
            Part { what: "routes", key: "topology", bytes: routes },
            Part { what: "flows", key: "workload", bytes: flows * FLOW_BYTES },
        ];
        if let Some(interval) = sc.run.sample_interval {
            let classes = if sc.switch.scheduler.single_queue() { 1 } else { queues };
            let end = sc.run.stop_time.map_or(PS_PER_S, |t| t.0); // unknown: 1 s, say
            let samples = (end / interval.0.max(1)).saturating_add(1);
            let rows = samples.saturating_mul(ports * classes);
            parts.push(Part {
                what: "queue samples",
                key: "run.sample_interval",
                bytes: rows.saturating_mul(SAMPLE_BYTES),
            });
        }
        MemoryEstimate { parts }
    }

    /// The estimate for the (resolved) scenario `sc` on its network `net`, its flows
    /// counted without generating them.
    pub fn of(sc: &Scenario, net: &NetworkSpec) -> Result<MemoryEstimate, ScenarioError> {
        Ok(MemoryEstimate::new(sc, net, crate::workload::planned_flows(sc, net)?))
    }

    pub fn total(&self) -> u64 {
        self.parts.iter().fold(0u64, |a, p| a.saturating_add(p.bytes))
    }

    /// Refuses the run when it needs more than `available` bytes, naming the largest
    /// part and its key.
    pub fn check(&self, available: u64) -> Result<(), ScenarioError> {
        if self.total() <= available {
            return Ok(());
        }
        let largest = self.parts.iter().max_by_key(|p| p.bytes).expect("the estimate has parts");
        let parts: Vec<String> =
            self.parts.iter().filter(|p| p.bytes > 0).map(|p| format!("{} {}", p.what, gb(p.bytes))).collect();
        Err(ScenarioError::new(
            largest.key,
            format!(
                "this run needs about {} of memory ({}) but {} is available; reduce the {} (the largest part)",
                gb(self.total()),
                parts.join(", "),
                gb(available),
                largest.what
            ),
        ))
    }
}

fn gb(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / 1e9)
}

/// Memory the system can still give this process: Linux's MemAvailable (None where it
/// cannot be read; the check is then skipped). `SHOAL_MEMORY_LIMIT` (bytes) overrides it.
pub fn available_memory() -> Option<u64> {
    if let Some(limit) = std::env::var("SHOAL_MEMORY_LIMIT").ok().and_then(|v| v.trim().parse().ok()) {
        return Some(limit);
    }
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate(toml: &str, flows: u64) -> MemoryEstimate {
        let sc = Scenario::from_toml(toml).unwrap();
        MemoryEstimate::new(&sc, &crate::net::build(&sc.topology).unwrap(), flows)
    }

    fn part(e: &MemoryEstimate, what: &str) -> u64 {
        e.parts.iter().find(|p| p.what == what).map_or(0, |p| p.bytes)
    }

    #[test]
    fn parts_grow_with_what_sizes_them() {
        // A k = 64 fat tree: 5,120 switches of 64 ports; 2,048 edge switches, whose 32
        // uplinks (and the aggregation switches' 32) are the equal-cost next hops.
        let e = estimate("[topology]\nkind = \"fat_tree\"\nk = 64\n", 1000);
        assert_eq!(part(&e, "switch ports and queues"), 5_120 * 64 * (PORT_BYTES + 8 * QUEUE_BYTES));
        let switch_facing = 2_048 * 32 + 2_048 * 64 + 1_024 * 64;
        assert_eq!(part(&e, "routes"), 5_120 * 2_048 * 8 + switch_facing * 2_048 * 2);
        assert_eq!(part(&e, "flows"), 1000 * FLOW_BYTES);
        assert_eq!(part(&e, "queue samples"), 0);
        // One sample of every port's queue each picosecond for a millisecond.
        let e = estimate("[run]\nsample_interval = \"1ps\"\nstop_time = \"1ms\"\n", 1000);
        assert_eq!(part(&e, "queue samples"), (1_000_000_000 + 1) * 32 * SAMPLE_BYTES);
    }

    #[test]
    fn too_much_is_refused_naming_the_largest_part() {
        let e = estimate("[topology]\nkind = \"fat_tree\"\nk = 64\n", 1000);
        let err = e.check(1 << 30).unwrap_err();
        assert_eq!(err.path, "topology");
        assert!(
            err.message.contains("switch ports and queues") && err.message.contains("1.1 GB is available"),
            "{err}"
        );
        assert!(e.check(e.total()).is_ok());
        let err = estimate("", 10_000_000).check(4 << 30).unwrap_err();
        assert_eq!(err.path, "workload");
        let err = estimate("[run]\nsample_interval = \"1ps\"\nstop_time = \"1ms\"\n", 10).check(4 << 30).unwrap_err();
        assert_eq!(err.path, "run.sample_interval");
    }
}
