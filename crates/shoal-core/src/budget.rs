//! The memory a run will need, estimated before anything big is built, so that a
//! scenario too large for the machine is refused with the estimate and the key to change
//! instead of ending in an allocation abort.
//!
//! The per-item costs are measured on this build (peak RSS over a few sizes of star,
//! fat-tree and all-to-all runs, Nov 2026) and rounded up: a run's per-item state is a
//! few small structs whose sizes change rarely; the Python tests compare the estimate
//! with a measured run.

use crate::config::ScenarioError;
use crate::net::{NetworkSpec, NodeId};
use crate::scenario::Scenario;
use crate::sim::PS_PER_S;
use crate::switch::flow_control::FlowControlConfig;
use crate::workload::config::Pattern;

/// A switch port with its link, its share of the host behind it and its statistics.
const PORT_BYTES: u64 = 1_600;
/// One egress queue of a switch port (accounting, occupancy statistics).
const QUEUE_BYTES: u64 = 160;
/// One flow of the run, held to the end: its row of the flow table (90 B), its slot
/// index, and what writing the results adds for it. Measured where the flows dominate,
/// with `shoal run` writing its results: 105 B a flow with 2 M and with 10 M flows of a
/// 4-host star (268 MB and 1.10 GB at the peak).
const FLOW_BYTES: u64 = 112;
/// One flow in flight (started, not yet released): its spec, transport state and slot.
/// Measured with every flow kept: 1.08 KB a flow on a k = 16 fat tree with 400,000 flows.
const ACTIVE_FLOW_BYTES: u64 = 1_100;
/// Flows in flight at once, by host, for the estimate (it cannot know the flows' times);
/// beside them, up to twice the engine's release batch of finished flows wait.
const ACTIVE_FLOWS_PER_HOST: u64 = 16;
const WAITING_FLOWS: u64 = 2 * RELEASE_BATCH as u64;
/// Finished flows are looked for in the network, to be released, once this many wait
/// (the engine's batch). A look walks every queue and wire: its cost over a batch this
/// size is small beside the flows' own.
pub(crate) const RELEASE_BATCH: usize = 4096;
/// One queue sample: the sample and its row in the results table.
const SAMPLE_BYTES: u64 = 120;
/// One flow of `shoal trace`, which generates the flows without simulating them: its
/// spec while generated and sorted, its row of columns and of the CSV writer. Measured
/// 209 B a flow between 1 M and 3 M flows on a k = 16 fat tree (184 B without writing
/// the CSV).
const TRACE_FLOW_BYTES: u64 = 220;
/// One row of a trace a run reads (`workload.pattern = "trace"`), held whole: the row
/// (40 B) and, while the file is read, its id and line for the check of repeated ids.
/// Measured 56 B a row at the peak with a 2 M-row trace.
const TRACE_ROW_BYTES: u64 = 56;
/// The process without a network (the interpreter, libraries, buffers).
const BASE_BYTES: u64 = 50 << 20;

/// One part of the estimate: what it is for, the key that sizes it and its bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub what: &'static str,
    pub key: String,
    pub bytes: u64,
}

impl Part {
    fn new(what: &'static str, key: impl Into<String>, bytes: u64) -> Part {
        Part { what, key: key.into(), bytes }
    }
}

/// The memory a run needs, by part.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryEstimate {
    /// What needs the memory, for messages: "this run", "this trace".
    pub of: &'static str,
    pub parts: Vec<Part>,
}

impl MemoryEstimate {
    /// Estimates the memory of `sc` on the network `net` with `flows` flows.
    pub fn new(sc: &Scenario, net: &NetworkSpec, flows: u64) -> MemoryEstimate {
        // Switch ports, those facing another switch, and the edge switches (with hosts).
        let (mut ports, mut switch_facing) = (0u64, 0u64);
        let mut edge = vec![false; net.switches as usize];
        let mut ports_of_switch = vec![0u64; net.switches as usize];
        for l in &net.links {
            if let NodeId::Switch(s) = l.from {
                ports += 1;
                ports_of_switch[s as usize] += 1;
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
            Part::new("the process", "", BASE_BYTES),
            Part::new("switch ports and queues", "topology", ports * (PORT_BYTES + queues * QUEUE_BYTES)),
            Part::new("routes", "topology", routes),
            Part::new("flows", "workload", flows_bytes(flows, net.hosts as u64)),
        ];
        if let FlowControlConfig::Bfc(bfc) = &sc.switch.flow_control {
            // Every switch has its own flow table and filters, whatever its traffic.
            let mut by_key = [("", 0u64); 3];
            for &p in &ports_of_switch {
                for (total, (key, bytes)) in by_key.iter_mut().zip(bfc.switch_bytes(p, queues)) {
                    *total = (key, total.1.saturating_add(bytes));
                }
            }
            let bytes = by_key.iter().fold(0u64, |a, (_, b)| a.saturating_add(*b));
            let (largest, _) = by_key.iter().max_by_key(|(_, b)| *b).expect("three parts");
            parts.push(Part::new("BFC's flow tables and filters", format!("switch.flow_control.{largest}"), bytes));
        }
        if let Some(interval) = sc.run.sample_interval {
            let classes = if sc.switch.scheduler.single_queue() { 1 } else { queues };
            let end = sc.run.stop_time.map_or(PS_PER_S, |t| t.0); // unknown: 1 s, say
            let samples = (end / interval.0.max(1)).saturating_add(1);
            let rows = samples.saturating_mul(ports * classes);
            parts.push(Part::new("queue samples", "run.sample_interval", rows.saturating_mul(SAMPLE_BYTES)));
        }
        MemoryEstimate { of: "this run", parts }
    }

    /// The estimate for the (resolved) scenario `sc` on its network `net`, its flows
    /// counted without generating them; the flows' key is what sets their count.
    pub fn of(sc: &Scenario, net: &NetworkSpec) -> Result<MemoryEstimate, ScenarioError> {
        // Counted once: a trace's count is a pass over its file.
        let counts = crate::workload::planned_flows_by_workload(&sc.workload, net)?;
        let (key, flows) = planned_flows(&counts);
        let mut estimate = MemoryEstimate::new(sc, net, flows);
        estimate.parts.iter_mut().filter(|p| p.what == "flows").for_each(|p| p.key = key.clone());
        let traces = sc.workload_paths().zip(counts).filter(|((_, w), _)| w.pattern == Pattern::Trace);
        let rows = traces.map(|(_, (key, rows))| (key, rows as u64)).reduce(|a, b| (a.0, a.1 + b.1));
        if let Some((key, rows)) = rows {
            estimate.parts.push(Part::new("trace rows", key, rows.saturating_mul(TRACE_ROW_BYTES)));
        }
        Ok(estimate)
    }

    /// The estimate for writing out the flows of `sc`'s workload without simulating them
    /// (`shoal trace`): the network and the flows as generated, sorted and handed over
    /// as columns.
    pub fn of_trace(sc: &Scenario, net: &NetworkSpec) -> Result<MemoryEstimate, ScenarioError> {
        let (key, flows) = planned_flows(&crate::workload::planned_flows_by_workload(&sc.workload, net)?);
        let network = (net.links.len() as u64).saturating_mul(PORT_BYTES);
        Ok(MemoryEstimate {
            of: "this trace",
            parts: vec![
                Part::new("the process", "", BASE_BYTES),
                Part::new("the network", "topology", network),
                Part::new("flows", key, flows.saturating_mul(TRACE_FLOW_BYTES)),
            ],
        })
    }

    pub fn total(&self) -> u64 {
        self.parts.iter().fold(0u64, |a, p| a.saturating_add(p.bytes))
    }

    /// Refuses the run when it needs more than `available` bytes, naming the largest
    /// part and its key.
    pub fn check(&self, available: &Available) -> Result<(), ScenarioError> {
        if self.total() <= available.bytes {
            return Ok(());
        }
        let largest = self.parts.iter().max_by_key(|p| p.bytes).expect("the estimate has parts");
        let parts: Vec<String> =
            self.parts.iter().filter(|p| p.bytes > 0).map(|p| format!("{} {}", p.what, gb(p.bytes))).collect();
        Err(ScenarioError::new(
            largest.key.clone(),
            format!(
                "{} needs about {} of memory ({}) but {} is available ({}); reduce the {} (the largest part)",
                self.of,
                gb(self.total()),
                parts.join(", "),
                gb(available.bytes),
                available.limit,
                largest.what
            ),
        ))
    }
}

/// The memory of `flows` flows on a network of `hosts` hosts: every flow's row, and the
/// state of those in flight.
fn flows_bytes(flows: u64, hosts: u64) -> u64 {
    let active = flows.min(WAITING_FLOWS + ACTIVE_FLOWS_PER_HOST * hosts);
    flows.saturating_mul(FLOW_BYTES).saturating_add(active * ACTIVE_FLOW_BYTES)
}

/// The total of the workloads' planned flow `counts` (`planned_flows_by_workload`) and
/// the key that sets the count of the workload with the most.
fn planned_flows(counts: &[(String, f64)]) -> (String, u64) {
    let key = counts.iter().max_by(|a, b| a.1.total_cmp(&b.1)).map_or("workload".to_string(), |(k, _)| k.clone());
    (key, counts.iter().map(|(_, flows)| flows).sum::<f64>().round() as u64)
}

fn gb(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / 1e9)
}

/// The memory this process may still take, and the limit that sets it.
#[derive(Debug, Clone, PartialEq)]
pub struct Available {
    pub bytes: u64,
    /// What limits it, for messages: "MemAvailable", "the address-space limit ...".
    pub limit: String,
}

/// Memory this process may still take: the tightest of Linux's MemAvailable, the
/// address-space limit (RLIMIT_AS, `ulimit -v`) less what the process maps, and the
/// memory limit of its cgroup and of each cgroup above it (v2 `memory.max`, v1
/// `memory.limit_in_bytes`) less their usage. None where none can be read (the check is
/// then skipped). `SHOAL_MEMORY_LIMIT` (bytes) overrides them all.
pub fn available_memory() -> Option<Available> {
    if let Some(limit) = std::env::var("SHOAL_MEMORY_LIMIT").ok().and_then(|v| v.trim().parse().ok()) {
        return Some(Available { bytes: limit, limit: "SHOAL_MEMORY_LIMIT".into() });
    }
    MemoryLimits::read(&|path| std::fs::read_to_string(path).ok(), address_space_limit()).tightest()
}

/// The soft RLIMIT_AS, None when unlimited.
fn address_space_limit() -> Option<u64> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one rlimit through a valid pointer.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } == 0;
    #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every target
    (ok && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur as u64)
}

/// The limits on the memory a process may still take, each None where it does not apply
/// or cannot be read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoryLimits {
    /// `/proc/meminfo`'s MemAvailable.
    pub mem_available: Option<u64>,
    /// RLIMIT_AS less the process's mapped address space (VmSize).
    pub address_space: Option<u64>,
    /// The least, over the process's cgroup and those above it, of the memory limit less
    /// the memory in use (less the inactive file cache, which the kernel reclaims before
    /// the limit is hit).
    pub cgroup: Option<u64>,
}

impl MemoryLimits {
    /// Reads the limits through `read` (a file's text by absolute path, None if it
    /// cannot be read), with the soft RLIMIT_AS `address_space_limit`.
    pub fn read(read: &dyn Fn(&str) -> Option<String>, address_space_limit: Option<u64>) -> MemoryLimits {
        let mem_available = read("/proc/meminfo").and_then(|info| kib_field(&info, "MemAvailable:"));
        let address_space = address_space_limit.map(|limit| {
            let mapped = read("/proc/self/status").and_then(|status| kib_field(&status, "VmSize:")).unwrap_or(0);
            limit.saturating_sub(mapped)
        });
        MemoryLimits { mem_available, address_space, cgroup: cgroup_headroom(read) }
    }

    /// The tightest limit, and which it is.
    pub fn tightest(&self) -> Option<Available> {
        [
            (self.mem_available, "MemAvailable"),
            (self.address_space, "the address-space limit, RLIMIT_AS or ulimit -v, less what the process maps"),
            (self.cgroup, "the cgroup's memory limit less its usage"),
        ]
        .into_iter()
        .filter_map(|(bytes, limit)| Some(Available { bytes: bytes?, limit: limit.to_string() }))
        .min_by_key(|a| a.bytes)
    }
}

/// The value of the `/proc` line starting with `field`, given in kB, in bytes.
fn kib_field(text: &str, field: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line[field.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// A cgroup hierarchy this process is in, with memory accounting: where it is mounted
/// and the process's cgroup in it.
struct MemoryHierarchy {
    /// The mount point, and the path within the hierarchy that is mounted there.
    mount_point: String,
    mount_root: String,
    /// The process's cgroup, as `/proc/self/cgroup` names it (from the hierarchy's root).
    cgroup: String,
    /// v2 (`memory.max`, `memory.current`) or v1 (`memory.limit_in_bytes`, ...).
    v2: bool,
}

/// The memory the process's cgroups leave it: the least over its cgroup and those above
/// it (each limit holds for its whole subtree) of limit less usage, in each memory
/// hierarchy (a hybrid system may account in v1 and v2 both).
fn cgroup_headroom(read: &dyn Fn(&str) -> Option<String>) -> Option<u64> {
    let membership = read("/proc/self/cgroup")?;
    let mounts = read("/proc/self/mountinfo")?;
    memory_hierarchies(&membership, &mounts)
        .iter()
        .flat_map(|h| h.cgroup_dirs().into_iter().filter_map(|dir| headroom_of(read, &dir, h.v2)))
        .min()
}

/// The memory hierarchies of `/proc/self/cgroup` (`membership`) that `/proc/self/mountinfo`
/// (`mounts`) shows mounted.
fn memory_hierarchies(membership: &str, mounts: &str) -> Vec<MemoryHierarchy> {
    // mountinfo: id parent major:minor root mount_point options [optional...] - fstype
    // source super_options.
    let mounted: Vec<(&str, &str, &str, &str)> = mounts
        .lines()
        .filter_map(|line| {
            let (before, after) = line.split_once(" - ")?;
            let fields: Vec<&str> = before.split(' ').collect();
            let after: Vec<&str> = after.split(' ').collect();
            Some((*fields.get(3)?, *fields.get(4)?, *after.first()?, *after.get(2)?))
        })
        .collect();
    let mut found = Vec::new();
    for line in membership.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(cgroup)) = (fields.next(), fields.next(), fields.next()) else {
            continue;
        };
        let v2 = controllers.is_empty();
        let mount = mounted.iter().find(|&&(_, _, fstype, options)| {
            if v2 {
                fstype == "cgroup2"
            } else {
                fstype == "cgroup" && options.split(',').any(|o| o == "memory")
            }
        });
        let accounts_memory = v2 || controllers.split(',').any(|c| c == "memory");
        if let Some(&(root, mount_point, _, _)) = mount.filter(|_| accounts_memory) {
            found.push(MemoryHierarchy {
                mount_point: unescape_mount_path(mount_point),
                mount_root: unescape_mount_path(root),
                cgroup: cgroup.to_string(),
                v2,
            });
        }
    }
    found
}

/// A path of mountinfo, whose spaces, tabs, newlines and backslashes are octal escapes.
fn unescape_mount_path(path: &str) -> String {
    path.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")
}

impl MemoryHierarchy {
    /// The directories of the process's cgroup and of those above it, up to the mount
    /// point. A cgroup outside the mounted subtree (a cgroup namespace or a container
    /// that mounts its own cgroup as the root) is read at the mount point.
    fn cgroup_dirs(&self) -> Vec<String> {
        let root = self.mount_root.trim_end_matches('/');
        let within = match self.cgroup.strip_prefix(root) {
            Some(rest) if root.is_empty() || rest.is_empty() || rest.starts_with('/') => rest,
            _ => "",
        };
        let mut dirs = vec![self.mount_point.clone()];
        let mut dir = self.mount_point.trim_end_matches('/').to_string();
        for part in within.split('/').filter(|p| !p.is_empty()) {
            dir = format!("{dir}/{part}");
            dirs.push(dir.clone());
        }
        dirs
    }
}

/// The memory limit less the usage of the cgroup at `dir` (None without a limit, or where
/// its files cannot be read).
fn headroom_of(read: &dyn Fn(&str) -> Option<String>, dir: &str, v2: bool) -> Option<u64> {
    let number = |file: &str| read(&format!("{dir}/{file}")).and_then(|t| t.trim().parse::<u64>().ok());
    let (limit, usage, inactive_file) = if v2 {
        // "max" (no limit) does not parse.
        (number("memory.max")?, number("memory.current")?, "inactive_file ")
    } else {
        (number("memory.limit_in_bytes")?, number("memory.usage_in_bytes")?, "total_inactive_file ")
    };
    let reclaimable = read(&format!("{dir}/memory.stat"))
        .and_then(|stat| stat.lines().find_map(|l| l.strip_prefix(inactive_file)?.trim().parse::<u64>().ok()))
        .unwrap_or(0);
    Some(limit.saturating_sub(usage.saturating_sub(reclaimable)))
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
        assert_eq!(part(&e, "flows"), 1000 * (FLOW_BYTES + ACTIVE_FLOW_BYTES));
        // Beyond the flows in flight (16 a host, and the finished ones waiting for their
        // release), a flow costs its row only.
        let flows = 10_000_000;
        let e = estimate("[topology]\nkind = \"fat_tree\"\nk = 16\n", flows);
        let active = WAITING_FLOWS + 16 * 1024;
        assert_eq!(part(&e, "flows"), flows * FLOW_BYTES + active * ACTIVE_FLOW_BYTES);
        assert_eq!(part(&e, "queue samples"), 0);
        // One sample of every port's queue each picosecond for a millisecond.
        let e = estimate("[run]\nsample_interval = \"1ps\"\nstop_time = \"1ms\"\n", 1000);
        assert_eq!(part(&e, "queue samples"), (1_000_000_000 + 1) * 32 * SAMPLE_BYTES);
    }

    fn available(bytes: u64) -> Available {
        Available { bytes, limit: "a test's limit".into() }
    }

    #[test]
    fn too_much_is_refused_naming_the_largest_part() {
        let e = estimate("[topology]\nkind = \"fat_tree\"\nk = 64\n", 1000);
        let err = e.check(&available(1 << 30)).unwrap_err();
        assert_eq!(err.path, "topology");
        assert!(
            err.message.contains("switch ports and queues")
                && err.message.contains("1.1 GB is available (a test's limit)"),
            "{err}"
        );
        assert!(e.check(&available(e.total())).is_ok());
        let err = estimate("", 100_000_000).check(&available(4 << 30)).unwrap_err();
        assert_eq!(err.path, "workload");
        let err = estimate("[run]\nsample_interval = \"1ps\"\nstop_time = \"1ms\"\n", 10)
            .check(&available(4 << 30))
            .unwrap_err();
        assert_eq!(err.path, "run.sample_interval");
    }

    /// The estimate of `toml` as a run plans it (its flows counted, their key set).
    fn planned(toml: &str) -> MemoryEstimate {
        let sc = Scenario::from_toml(toml).unwrap().resolved().unwrap();
        MemoryEstimate::of(&sc, &crate::net::build(&sc.topology).unwrap()).unwrap()
    }

    #[test]
    fn the_flows_are_named_by_the_key_that_sets_their_count() {
        let key = |toml: &str| planned(toml).parts.into_iter().find(|p| p.what == "flows").unwrap().key;
        let fan_in = "[topology]\nkind = \"leaf_spine\"\n[workload]\npattern = \"fan_in\"\nflows = 1000\n";
        assert_eq!(key(&format!("{fan_in}fan_in = 100000000\n")), "workload.fan_in");
        assert_eq!(key(&format!("{fan_in}fan_in = 2\nfan_in_max = 100000000\n")), "workload.fan_in_max");
        assert_eq!(key(&format!("{fan_in}fan_in = 10\n")), "workload.flows");
        assert_eq!(key("[workload]\nflows = 10000000\n"), "workload.flows");
        assert_eq!(key("[workload]\nduration = \"10ms\"\n"), "workload.duration");
        assert_eq!(key("[workload]\npattern = \"incast\"\nrepeats = 5\n"), "workload.repeats");
        // With several workloads, the one with the most flows.
        assert_eq!(
            key("[workload]\nflows = 10\n[[workload.extra]]\npattern = \"all_to_all\"\nflows = 100000\n"),
            "workload.extra[0].flows"
        );
        let e = planned(&format!("{fan_in}fan_in = 100000000\n"));
        let err = e.check(&available(4_000_000_000)).unwrap_err();
        assert_eq!(err.path, "workload.fan_in", "{err}");
    }

    #[test]
    fn a_trace_counts_its_flows_as_generated_and_handed_over() {
        let sc = Scenario::from_toml("[workload]\nflows = 100000000\n").unwrap().resolved().unwrap();
        let e = MemoryEstimate::of_trace(&sc, &crate::net::build(&sc.topology).unwrap()).unwrap();
        assert_eq!(part(&e, "flows"), 100_000_000 * TRACE_FLOW_BYTES);
        let err = e.check(&available(4_000_000_000)).unwrap_err();
        assert_eq!(err.path, "workload.flows");
        assert!(err.message.starts_with("this trace needs about 22.1 GB"), "{err}");
    }

    /// A run reads its trace whole: its rows are counted beside the flows, under the key
    /// that names the file; a run without a trace has no such part.
    #[test]
    fn a_run_from_a_trace_counts_its_rows() {
        let path = std::env::temp_dir().join(format!("shoal-budget-{}.csv", std::process::id()));
        let rows: String = (0..1000).map(|i| format!("{i},0,1,100,{i}\n")).collect();
        std::fs::write(&path, format!("id,src,dst,bytes,start_ns\n{rows}")).unwrap();
        let e = planned(&format!("[workload]\npattern = \"trace\"\ntrace = {:?}\n", path.to_str().unwrap()));
        std::fs::remove_file(&path).unwrap();
        assert_eq!(part(&e, "trace rows"), 1000 * TRACE_ROW_BYTES);
        assert_eq!(e.parts.iter().find(|p| p.what == "trace rows").unwrap().key, "workload.trace");
        assert_eq!(part(&planned("[workload]\nflows = 1000\n"), "trace rows"), 0);
    }

    #[test]
    fn bfc_flow_tables_are_counted_at_every_switch() {
        // The case: a k = 8 fat tree (80 switches of 8 ports) with the largest
        // tables passed a 3.5 GB limit and reached 10 GB.
        let toml = "[topology]\nkind = \"fat_tree\"\nk = 8\n[switch]\nqueues = 35\n\
                    scheduler = { kind = \"dwrr\", strict_queues = 2 }\n\
                    [switch.flow_control]\nkind = \"bfc\"\nvfids = 1048576\noverflow_cache = 1048576\n";
        let e = estimate(toml, 1000);
        let tables = e.parts.iter().find(|p| p.what == "BFC's flow tables and filters").expect("a part for BFC");
        assert_eq!(tables.key, "switch.flow_control.vfids");
        let one = crate::switch::flow_control::bfc::FlowTable::bytes(1 << 20, 1 << 20);
        assert!(one >= (1 << 20) * 4 * 16, "{one} B a table");
        assert!(tables.bytes >= 80 * one && tables.bytes < 80 * one + (80 << 20), "{}", tables.bytes);
        assert!(e.check(&available(3_500_000_000)).unwrap_err().path == "switch.flow_control.vfids");
        // A large cache with the fewest VFIDs names the cache.
        let e = estimate(&toml.replace("vfids = 1048576", "vfids = 1"), 1000);
        assert_eq!(
            e.parts.iter().find(|p| p.what == "BFC's flow tables and filters").unwrap().key,
            "switch.flow_control.overflow_cache"
        );
        // The largest filters with the smallest table: the filters' counters (4 B a bit
        // of a 4,096 B filter, 128 KiB a port) are the bulk, named by filter_bytes.
        let e = estimate(
            &toml.replace(
                "vfids = 1048576\noverflow_cache = 1048576",
                "vfids = 1\noverflow_cache = 0\nfilter_bytes = 4096",
            ),
            1000,
        );
        let filters = e.parts.iter().find(|p| p.what == "BFC's flow tables and filters").unwrap();
        assert_eq!(filters.key, "switch.flow_control.filter_bytes");
        assert!(filters.bytes >= 80 * 8 * 4096 * 8 * 4, "{}", filters.bytes);
        // Without BFC, no such part.
        assert!(estimate("", 1000).parts.iter().all(|p| p.what != "BFC's flow tables and filters"));
    }

    /// `MemoryLimits::read` over fake files, by absolute path.
    fn limits(files: &[(&str, &str)], address_space_limit: Option<u64>) -> MemoryLimits {
        let files: std::collections::HashMap<String, String> =
            files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect();
        MemoryLimits::read(&|path| files.get(path).cloned(), address_space_limit)
    }

    const MEMINFO: &str = "MemTotal:       24000000 kB\nMemFree:        20000000 kB\nMemAvailable:   23000000 kB\n";
    const STATUS: &str = "Name:\tpython3\nVmPeak:\t 1200000 kB\nVmSize:\t 1000000 kB\nVmRSS:\t 100000 kB\n";
    /// A pure cgroup v2 system: the process in /user.slice/job.scope.
    const V2_CGROUP: &str = "0::/user.slice/job.scope\n";
    const V2_MOUNTS: &str = "22 1 0:21 / /proc rw,nosuid - proc proc rw\n\
                             31 23 0:28 / /sys/fs/cgroup rw,nosuid,nodev - cgroup2 cgroup2 rw,nsdelegate\n";
    /// A cgroup v1 system, as this machine's: memory in its own hierarchy.
    const V1_CGROUP: &str = "9:name=systemd:/\n5:devices:/\n4:memory:/batch/job7\n1:cpu:/\n0::/\n";
    const V1_MOUNTS: &str = "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n\
                             32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n\
                             35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
                             41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

    #[test]
    fn mem_available_alone() {
        let l = limits(&[("/proc/meminfo", MEMINFO), ("/proc/self/status", STATUS)], None);
        assert_eq!(l, MemoryLimits { mem_available: Some(23_000_000 * 1024), address_space: None, cgroup: None });
        assert_eq!(l.tightest().unwrap().limit, "MemAvailable");
        assert_eq!(limits(&[], None).tightest(), None);
    }

    #[test]
    fn the_address_space_limit_counts_what_the_process_maps() {
        let files = [("/proc/meminfo", MEMINFO), ("/proc/self/status", STATUS)];
        let l = limits(&files, Some(12_000_000_000));
        assert_eq!(l.address_space, Some(12_000_000_000 - 1_000_000 * 1024));
        let tightest = l.tightest().unwrap();
        assert_eq!(tightest.bytes, 12_000_000_000 - 1_024_000_000);
        assert!(tightest.limit.contains("ulimit -v"), "{}", tightest.limit);
        // Already beyond its limit: nothing is left.
        assert_eq!(limits(&files, Some(1 << 20)).address_space, Some(0));
    }

    #[test]
    fn a_cgroup_v2_limit_holds_at_its_cgroup_and_every_one_above() {
        let mut files = vec![
            ("/proc/meminfo", MEMINFO),
            ("/proc/self/cgroup", V2_CGROUP),
            ("/proc/self/mountinfo", V2_MOUNTS),
            ("/sys/fs/cgroup/memory.max", "max\n"),
            ("/sys/fs/cgroup/memory.current", "9000000000\n"),
            ("/sys/fs/cgroup/user.slice/memory.max", "max\n"),
            ("/sys/fs/cgroup/user.slice/memory.current", "5000000000\n"),
            ("/sys/fs/cgroup/user.slice/job.scope/memory.max", "4000000000\n"),
            ("/sys/fs/cgroup/user.slice/job.scope/memory.current", "1000000000\n"),
            (
                "/sys/fs/cgroup/user.slice/job.scope/memory.stat",
                "anon 700000000\nfile 300000000\ninactive_file 200000000\n",
            ),
        ];
        // 4 GB less 1 GB in use, 0.2 GB of it reclaimable file cache.
        let l = limits(&files, None);
        assert_eq!(l.cgroup, Some(3_200_000_000));
        let tightest = l.tightest().unwrap();
        assert_eq!((tightest.bytes, tightest.limit.contains("cgroup")), (3_200_000_000, true));
        // A parent's tighter limit holds for its children.
        files.push(("/sys/fs/cgroup/user.slice/memory.max", "6000000000\n"));
        assert_eq!(limits(&files, None).cgroup, Some(1_000_000_000));
        // Without a limit anywhere: MemAvailable.
        let unlimited: Vec<_> =
            files.iter().map(|&(p, t)| if p.ends_with("memory.max") { (p, "max\n") } else { (p, t) }).collect();
        assert_eq!(limits(&unlimited, None).cgroup, None);
        assert_eq!(limits(&unlimited, None).tightest().unwrap().limit, "MemAvailable");
    }

    #[test]
    fn a_cgroup_v1_memory_limit_is_read_in_its_own_hierarchy() {
        let files = [
            ("/proc/meminfo", MEMINFO),
            ("/proc/self/cgroup", V1_CGROUP),
            ("/proc/self/mountinfo", V1_MOUNTS),
            // No limit at the root: the kernel's "unlimited".
            ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n"),
            ("/sys/fs/cgroup/memory/memory.usage_in_bytes", "1909731328\n"),
            ("/sys/fs/cgroup/memory/batch/job7/memory.limit_in_bytes", "2147483648\n"),
            ("/sys/fs/cgroup/memory/batch/job7/memory.usage_in_bytes", "147483648\n"),
            (
                "/sys/fs/cgroup/memory/batch/job7/memory.stat",
                "cache 100\ninactive_file 5\ntotal_inactive_file 47483648\n",
            ),
        ];
        let l = limits(&files, None);
        assert_eq!(l.cgroup, Some(2_147_483_648 - 100_000_000));
        assert!(l.tightest().unwrap().limit.contains("cgroup"));
    }

    #[test]
    fn a_container_that_mounts_its_own_cgroup_as_the_root_is_read_at_the_mount() {
        // Without a cgroup namespace, /proc/self/cgroup names the cgroup from the host's
        // root, but the container mounts just that cgroup at /sys/fs/cgroup.
        let files = [
            ("/proc/self/cgroup", "0::/kubepods/pod42/abc\n"),
            ("/proc/self/mountinfo", "31 23 0:28 /kubepods/pod42/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n"),
            ("/sys/fs/cgroup/memory.max", "3000000000\n"),
            ("/sys/fs/cgroup/memory.current", "1000000000\n"),
        ];
        assert_eq!(limits(&files, None).cgroup, Some(2_000_000_000));
        // A namespace: the cgroup is "/" and the mount its root.
        let files = [
            ("/proc/self/cgroup", "0::/\n"),
            ("/proc/self/mountinfo", "31 23 0:28 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"),
            ("/sys/fs/cgroup/memory.max", "3000000000\n"),
            ("/sys/fs/cgroup/memory.current", "500000000\n"),
        ];
        assert_eq!(limits(&files, None).cgroup, Some(2_500_000_000));
    }

    #[test]
    fn the_tightest_of_the_three_limits_wins() {
        let files = [
            ("/proc/meminfo", MEMINFO),
            ("/proc/self/status", STATUS),
            ("/proc/self/cgroup", V2_CGROUP),
            ("/proc/self/mountinfo", V2_MOUNTS),
            ("/sys/fs/cgroup/user.slice/job.scope/memory.max", "5000000000\n"),
            ("/sys/fs/cgroup/user.slice/job.scope/memory.current", "0\n"),
        ];
        assert_eq!(limits(&files, None).tightest().unwrap().bytes, 5_000_000_000);
        assert_eq!(limits(&files, Some(3_000_000_000)).tightest().unwrap().bytes, 3_000_000_000 - 1_024_000_000);
        assert_eq!(limits(&files, Some(100_000_000_000)).tightest().unwrap().bytes, 5_000_000_000);
    }
}
