//! Workloads: flow-size distributions, arrival processes, traffic patterns and traces.
//! A run's workloads become one stream of `FlowSpec`s in start order (`FlowStream`),
//! drawn as the run reaches each flow's start.

pub mod cdf;
pub mod collective;
pub mod config;
mod stream;
mod trace;

pub use cdf::FlowSizeCdf;
pub use stream::FlowStream;
pub use trace::{read_trace, TraceRow};

use crate::config::ScenarioError;
use crate::files::read_regular_file;
use crate::net::{LinkSpec, NetworkSpec, NodeId};
use crate::sim::{Ps, Rng, PS_PER_S};
use crate::units::MAX_TIME;
use crate::workload::config::{FanInSizes, FlowTransport, HostSet, LoadOn, Pacing, Pattern, Workload};
use rand::Rng as _;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FlowKind {
    Tcp,
    /// A reliable RDMA connection (`[rdma]`).
    Rdma,
    /// Constant-rate UDP at `rate_bps` until `stop` (or the end of the run), paced by
    /// `pacing`.
    Udp {
        rate_bps: u64,
        stop: Option<Ps>,
        pacing: Pacing,
    },
}

impl FlowKind {
    /// The kind of the reliable flows of workload `w`.
    fn of(w: &Workload) -> FlowKind {
        match w.transport {
            FlowTransport::Tcp => FlowKind::Tcp,
            FlowTransport::Rdma => FlowKind::Rdma,
        }
    }
}

/// A flow to run: who sends how much to whom, and when.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    pub id: u64,
    pub src: u32,
    pub dst: u32,
    /// Payload bytes; `u64::MAX` for an endless flow.
    pub bytes: u64,
    pub start: Ps,
    pub priority: u8,
    pub kind: FlowKind,
    /// The query (one incast round) the flow answers, if any; unique within a run.
    pub query: Option<u64>,
}

/// Bytes of an endless (long-lived) flow.
pub const ENDLESS: u64 = u64::MAX;

/// The most flows a run may have (all workloads together).
pub const MAX_FLOWS: u64 = 100_000_000;

/// The largest CDF file read (a CDF has tens to thousands of points).
const MAX_CDF_FILE: u64 = 16 << 20;

/// Reads the CDF a workload names: a built-in name or a file path.
pub fn load_cdf(name: &str, path: &str) -> Result<FlowSizeCdf, ScenarioError> {
    if let Some(cdf) = FlowSizeCdf::builtin(name) {
        return Ok(cdf);
    }
    let text = read_regular_file(name, MAX_CDF_FILE).map_err(|e| {
        let builtins: Vec<&str> = cdf::BUILTIN.iter().map(|(n, _)| *n).collect();
        ScenarioError::new(
            path,
            format!("{name:?} is neither a built-in CDF ({}) nor a readable file ({e})", builtins.join(", ")),
        )
    })?;
    FlowSizeCdf::parse(&text).map_err(|e| ScenarioError::new(path, format!("{name}: {e}")))
}

fn host_set(
    set: &Option<HostSet>,
    hosts: u64,
    path: &str,
    default: impl FnOnce() -> Vec<u32>,
) -> Result<Vec<u32>, ScenarioError> {
    match set {
        Some(s) => s.resolve(hosts, path),
        None => Ok(default()),
    }
}

/// Each host's link (the link from it).
fn host_links(net: &NetworkSpec) -> Vec<&LinkSpec> {
    crate::net::Wiring::of(net).host_link.iter().map(|&l| &net.links[l as usize]).collect()
}

/// Which switch each host hangs off.
fn host_tor(net: &NetworkSpec) -> Vec<u32> {
    host_links(net)
        .iter()
        .map(|l| match l.to {
            NodeId::Switch(s) => s,
            NodeId::Host(_) => unreachable!("a host's link goes to a switch"),
        })
        .collect()
}

/// Generates every flow of `workload` and its extra workloads with the run's `seed`,
/// sorted by start time, ids assigned: the whole of `FlowStream`, which a run draws from
/// as it goes. Refused for a collective, whose flows start as the run goes.
pub fn generate(workload: &Workload, seed: u64, net: &NetworkSpec) -> Result<Vec<FlowSpec>, ScenarioError> {
    if let Some((path, _)) = workload.with_paths().find(|(_, w)| w.pattern == Pattern::Collective) {
        return Err(ScenarioError::new(
            format!("{path}.pattern"),
            "\"collective\" makes its flows as the run goes (each step when the data it waits for has \
             arrived), so they cannot be listed ahead of a run; a run's flows.parquet lists them",
        ));
    }
    Ok(FlowStream::new(workload, seed, net)?.collect())
}

/// What a load-driven workload will generate, known before generating it.
#[derive(Clone)]
struct Plan {
    senders: Vec<u32>,
    receivers: Vec<u32>,
    /// What one arrival brings.
    arrival: ArrivalFlows,
    /// Arrivals (flows, or `fan_in` rounds) per second.
    arrivals_per_s: f64,
    /// The number of flows (expected, for a duration-limited arrival process).
    flows: f64,
    /// Where receivers are drawn from, with `workload.sites`.
    sites: Option<Sites>,
}

/// The sites of a workload (`workload.sites`) and how its receivers are drawn from them.
///
/// Invariants: every sender and receiver is in exactly one site; a sender's site holds a
/// receiver other than the sender when `remote_fraction < 1`, and another site holds a
/// receiver when `remote_fraction > 0` (so a draw always ends).
#[derive(Clone)]
struct Sites {
    /// Each host's site, `None` for hosts in none (neither senders nor receivers).
    site_of: Vec<Option<usize>>,
    /// The receivers in each site.
    local: Vec<Vec<u32>>,
    /// The receivers outside each site.
    remote: Vec<Vec<u32>>,
    remote_fraction: f64,
}

impl Sites {
    /// The sites of `w` over its `senders` and `receivers`, checked (see the invariants);
    /// `w.sites` resolve and are disjoint (`Workload::validate`).
    fn new(w: &Workload, senders: &[u32], receivers: &[u32], hosts: u32, path: &str) -> Result<Sites, ScenarioError> {
        let key = |k: &str| format!("{path}.{k}");
        let remote_fraction = w.remote_fraction.expect("validated: sites come with remote_fraction");
        let mut site_of = vec![None; hosts as usize];
        for (i, site) in w.sites.iter().enumerate() {
            for h in site.resolve(hosts as u64, &format!("{}[{i}]", key("sites")))? {
                site_of[h as usize] = Some(i);
            }
        }
        let site_of_host = |h: u32, role: &str| {
            site_of[h as usize].ok_or_else(|| {
                ScenarioError::new(
                    key("sites"),
                    format!("{role} {h} is in no site (accepted: sites that hold every sender and receiver)"),
                )
            })
        };
        let n = w.sites.len();
        let mut local: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &r in receivers {
            local[site_of_host(r, "receiver")?].push(r);
        }
        let remote: Vec<Vec<u32>> = (0..n)
            .map(|site| receivers.iter().copied().filter(|&r| site_of[r as usize] != Some(site)).collect())
            .collect();
        for &s in senders {
            let site = site_of_host(s, "sender")?;
            if remote_fraction < 1.0 && !local[site].iter().any(|&r| r != s) {
                return Err(ScenarioError::new(
                    key("sites"),
                    format!(
                        "sender {s} has no receiver in its site ({}[{site}]) but itself, and remote_fraction = \
                         {remote_fraction} keeps some flows there (accepted: another receiver in the site, or \
                         remote_fraction = 1)",
                        key("sites")
                    ),
                ));
            }
            if remote_fraction > 0.0 && remote[site].is_empty() {
                return Err(ScenarioError::new(
                    key("sites"),
                    format!(
                        "sender {s} has no receiver outside its site ({}[{site}]), and remote_fraction = \
                         {remote_fraction} sends some flows there (accepted: receivers in another site, or \
                         remote_fraction = 0)",
                        key("sites")
                    ),
                ));
            }
        }
        Ok(Sites { site_of, local, remote, remote_fraction })
    }

    /// The site of sender `src` (a sender is in one: `new`).
    fn site(&self, src: u32) -> usize {
        self.site_of[src as usize].expect("checked: every sender is in a site")
    }

    /// A receiver for `src`: `remote_draws` says whether it is in another site, `pairs`
    /// which one of the candidates (never `src`).
    fn receiver(&self, src: u32, pairs: &mut Rng, remote_draws: &mut Rng) -> u32 {
        let site = self.site(src);
        let candidates =
            if remote_draws.gen_bool(self.remote_fraction) { &self.remote[site] } else { &self.local[site] };
        loop {
            let d = candidates[pairs.gen_range(0..candidates.len())];
            if d != src {
                return d;
            }
        }
    }

    /// The fraction of `src`'s flows whose receiver hangs off another switch than it.
    fn crossing(&self, src: u32, tor: &[u32]) -> f64 {
        let site = self.site(src);
        let share = |candidates: &[u32]| {
            let others = candidates.iter().filter(|&&r| r != src);
            let (n, crossing) =
                others.fold((0, 0), |(n, c), &r| (n + 1, c + usize::from(tor[r as usize] != tor[src as usize])));
            if n == 0 {
                0.0
            } else {
                crossing as f64 / n as f64
            }
        };
        (1.0 - self.remote_fraction) * share(&self.local[site]) + self.remote_fraction * share(&self.remote[site])
    }
}

/// What one arrival of a load-driven workload brings.
#[derive(Clone)]
enum ArrivalFlows {
    /// One flow between a random sender and receiver, its size drawn from the CDF.
    One(FlowSizeCdf),
    /// A fan-in round: `fan_in` flows (or a number drawn from `fan_in..=fan_in_max`) to
    /// one random receiver, from senders drawn among those outside its rack (`outside[i]`
    /// for `receivers[i]`), each of `size` or, with `sizes`, of a size drawn from it.
    FanIn { outside: Vec<Vec<u32>>, sizes: Option<FlowSizeCdf> },
}

/// The flow count a workload will generate (expected, for a duration), without
/// generating it: what the memory estimate needs before anything big is built.
pub fn planned_flows(workload: &Workload, net: &NetworkSpec) -> Result<u64, ScenarioError> {
    Ok(planned_flows_by_workload(workload, net)?.iter().map(|(_, flows)| flows).sum::<f64>().round() as u64)
}

/// The planned flow count of each workload (as `planned_flows`), with the key that sets
/// it (`flow_count_key`).
pub fn planned_flows_by_workload(workload: &Workload, net: &NetworkSpec) -> Result<Vec<(String, f64)>, ScenarioError> {
    let mut counts = Vec::new();
    for (path, w) in workload.with_paths() {
        let flows = match w.pattern {
            Pattern::AllToAll | Pattern::ManyToFew | Pattern::FanIn => plan_arrivals(net, w, &path)?.flows,
            Pattern::Incast | Pattern::LongLived | Pattern::Udp => {
                let (senders, _) = fixed_pairs(net, w, &path)?;
                fixed_flows(w, senders.len(), &path)? as f64
            }
            Pattern::Trace => {
                let file = w.trace.as_deref().expect("validated: a trace pattern names its file");
                trace::count_rows(file).map_err(|e| ScenarioError::new(format!("{path}.trace"), e))? as f64
            }
            Pattern::Collective => collective::CollectiveJob::of(w, net.hosts, &path)?.messages() as f64,
        };
        counts.push((flow_count_key(w, &path), flows));
    }
    Ok(counts)
}

/// The key to change for fewer flows of workload `w` (at `path`): what sets its count.
pub fn flow_count_key(w: &Workload, path: &str) -> String {
    let key = match w.pattern {
        Pattern::AllToAll | Pattern::ManyToFew | Pattern::FanIn if w.duration.is_some() => "duration",
        // A round brings its whole fan-in, so rounds wider than `flows` set the count.
        Pattern::FanIn if (w.fan_in as u64 + w.fan_in_max.unwrap_or(w.fan_in) as u64) / 2 > w.flows => {
            if w.fan_in_max.is_some() {
                "fan_in_max"
            } else {
                "fan_in"
            }
        }
        Pattern::AllToAll | Pattern::ManyToFew | Pattern::FanIn => "flows",
        Pattern::Incast if w.repeats > 1 => "repeats",
        Pattern::Incast | Pattern::LongLived | Pattern::Udp => "senders",
        Pattern::Trace => "trace",
        Pattern::Collective => "repeats",
    };
    format!("{path}.{key}")
}

/// The senders, receivers, arrival rate and flow count of an all-to-all, many-to-few or
/// fan-in workload, checked: at most `MAX_FLOWS` flows, all starting within `MAX_TIME`.
fn plan_arrivals(net: &NetworkSpec, w: &Workload, path: &str) -> Result<Plan, ScenarioError> {
    let hosts = net.hosts as u64;
    let all = || (0..net.hosts).collect::<Vec<u32>>();
    let key = |k: &str| format!("{path}.{k}");
    let mut senders = host_set(&w.senders, hosts, &key("senders"), all)?;
    let receivers = w.receiver_hosts(net.hosts, path)?.expect("not a trace: all-to-all, many-to-few or fan-in");
    // A flow goes to a receiver other than its sender: the only receiver cannot send.
    if let [only] = receivers[..] {
        senders.retain(|&s| s != only);
    }
    if senders.is_empty() {
        return Err(ScenarioError::new(key("receivers"), "the only receiver is the only sender"));
    }
    let sites = if w.sites.is_empty() { None } else { Some(Sites::new(w, &senders, &receivers, net.hosts, path)?) };
    let fan_in = w.pattern == Pattern::FanIn;
    let (arrival, flows_per_arrival, mean_bits) = if fan_in {
        let tor = host_tor(net);
        let rack = |h: u32| tor[h as usize];
        let outside: Vec<Vec<u32>> =
            receivers.iter().map(|&r| senders.iter().copied().filter(|&s| rack(s) != rack(r)).collect()).collect();
        for (&r, outside) in receivers.iter().zip(&outside) {
            let outside = outside.len();
            if outside == 0 {
                return Err(ScenarioError::new(
                    key("fan_in"),
                    format!(
                        "receiver {r} has no sender outside its rack (a fan-in's senders are in other racks; \
                         accepted: a topology with several racks, leaf_spine, fat_tree or dumbbell, and senders in them)"
                    ),
                ));
            }
        }
        // One round alone may not exceed the run's flows, however short the run.
        let (widest_key, widest) = match w.fan_in_max {
            Some(max) => ("fan_in_max", max),
            None => ("fan_in", w.fan_in),
        };
        if widest as u64 > MAX_FLOWS {
            return Err(ScenarioError::new(
                key(widest_key),
                format!("{widest} senders in one round is too many (accepted: at most {MAX_FLOWS} flows a round)"),
            ));
        }
        // In f64: the two counts may each be near u32::MAX.
        let mean_fan_in = (w.fan_in as f64 + w.fan_in_max.unwrap_or(w.fan_in) as f64) / 2.0;
        let (sizes, mean_size) = match w.fan_in_sizes {
            FanInSizes::Size => (None, w.size.0 as f64),
            FanInSizes::Cdf => {
                let cdf = load_cdf(&w.cdf, &key("cdf"))?;
                let mean = cdf.mean();
                (Some(cdf), mean)
            }
        };
        (ArrivalFlows::FanIn { outside, sizes }, mean_fan_in, mean_fan_in * mean_size * 8.0)
    } else {
        let cdf = load_cdf(&w.cdf, &key("cdf"))?;
        let mean_bits = cdf.mean() * 8.0;
        (ArrivalFlows::One(cdf), 1.0, mean_bits)
    };
    let capacity_bps = match w.load_on {
        LoadOn::Access => {
            let links = host_links(net);
            // Summed exactly: equal rates give receivers x rate, rounded once.
            receivers.iter().map(|&r| links[r as usize].rate_bps as u128).sum::<u128>() as f64
        }
        LoadOn::Core => {
            let tor = host_tor(net);
            // A fan-in round's senders are all outside the receiver's rack.
            let crossing = match &sites {
                _ if fan_in => 1.0,
                Some(sites) => senders.iter().map(|&s| sites.crossing(s, &tor)).sum::<f64>() / senders.len() as f64,
                None => crossing_fraction(&senders, &receivers, &tor),
            };
            if crossing == 0.0 {
                return Err(ScenarioError::new(key("load_on"), "no flow of this pattern crosses the core"));
            }
            core_capacity_bps(net, &senders) / crossing
        }
        LoadOn::CoreNominal => core_capacity_bps(net, &senders),
    };
    let arrivals_per_s = w.load * capacity_bps / mean_bits;
    let mean_gap_s = 1.0 / arrivals_per_s;
    let (expected, last_start_s) = match w.duration {
        Some(d) => (d.0 as f64 / PS_PER_S as f64 * arrivals_per_s * flows_per_arrival, d.0 as f64 / PS_PER_S as f64),
        None => {
            let arrivals = (w.flows as f64 / flows_per_arrival).ceil();
            (arrivals * flows_per_arrival, arrivals * mean_gap_s)
        }
    };
    if expected > MAX_FLOWS as f64 {
        return Err(match w.duration {
            Some(duration) => ScenarioError::new(
                key("duration"),
                format!(
                    "{duration} at this load starts about {expected:.3e} flows (accepted: at most {MAX_FLOWS}); shorten it or lower workload.load"
                ),
            ),
            // `flows` is at most MAX_FLOWS (validated): whole fan-in rounds exceed it.
            None => ScenarioError::new(
                key("fan_in"),
                format!(
                    "{} senders a round{} make {expected:.3e} flows for {} = {} in whole rounds (accepted: at most {MAX_FLOWS} flows; lower {} or {})",
                    w.fan_in,
                    w.fan_in_max.map_or(String::new(), |max| format!(" (up to fan_in_max = {max})")),
                    key("flows"),
                    w.flows,
                    key("fan_in"),
                    key("fan_in_max"),
                ),
            ),
        });
    }
    // The last arrival of a flow count lies near flows x the mean gap; a start beyond
    // the time limit means a unit mistake in the load or the link rate.
    if last_start_s * PS_PER_S as f64 > MAX_TIME as f64 {
        return Err(ScenarioError::new(
            key("load"),
            format!(
                "{} on {:.4e} bit/s of capacity starts one flow every {mean_gap_s:.3e} s, so {} flows would take \
                 about {last_start_s:.3e} s of simulated time (accepted: up to {} s); check workload.load and the \
                 link rates' units (a plain number is bits per second)",
                w.load,
                capacity_bps,
                w.flows,
                MAX_TIME / PS_PER_S
            ),
        ));
    }
    Ok(Plan { senders, receivers, arrival, arrivals_per_s, flows: expected, sites })
}

/// The flow count of an incast, long-lived or UDP workload with `senders` senders: one
/// per sender and round, at most `MAX_FLOWS`.
fn fixed_flows(w: &Workload, senders: usize, path: &str) -> Result<u64, ScenarioError> {
    let rounds = if w.pattern == Pattern::Incast { w.repeats as u64 } else { 1 };
    let flows = senders as u64 * rounds;
    if flows > MAX_FLOWS {
        return Err(ScenarioError::new(
            format!("{path}.repeats"),
            format!("{rounds} rounds of {senders} senders make {flows} flows (accepted: at most {MAX_FLOWS})"),
        ));
    }
    Ok(flows)
}

/// The senders and receivers of an incast, long-lived or UDP workload.
fn fixed_pairs(net: &NetworkSpec, w: &Workload, path: &str) -> Result<(Vec<u32>, Vec<u32>), ScenarioError> {
    let hosts = net.hosts as u64;
    let key = |k: &str| format!("{path}.{k}");
    let receivers = w.receiver_hosts(net.hosts, path)?.expect("not a trace: incast, long-lived or UDP");
    let senders =
        host_set(&w.senders, hosts, &key("senders"), || (0..net.hosts).filter(|h| !receivers.contains(h)).collect())?;
    Ok((senders, receivers))
}

/// Fraction of (src, dst) draws whose endpoints hang off different switches.
fn crossing_fraction(senders: &[u32], receivers: &[u32], tor: &[u32]) -> f64 {
    let mut total = 0.0;
    for &s in senders {
        let candidates = receivers.iter().filter(|&&r| r != s).count();
        let crossing = receivers.iter().filter(|&&r| r != s && tor[r as usize] != tor[s as usize]).count();
        if candidates > 0 {
            total += crossing as f64 / candidates as f64;
        }
    }
    total / senders.len() as f64
}

/// Capacity of the core links that carry the pattern's traffic away from its senders:
/// every link from a host-facing switch with a sender below it to another switch (leaf
/// to spine, edge to aggregation, the sending side of a dumbbell).
fn core_capacity_bps(net: &NetworkSpec, senders: &[u32]) -> f64 {
    use crate::net::NodeId::Switch;
    let tor = host_tor(net);
    let sending: std::collections::HashSet<u32> = senders.iter().map(|&h| tor[h as usize]).collect();
    net.links
        .iter()
        .filter(|l| matches!((l.from, l.to), (Switch(from), Switch(_)) if sending.contains(&from)))
        .map(|l| l.rate_bps as f64)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::config::TopologyKind;
    use crate::scenario::Scenario;

    /// Generates the scenario's flows; returns them with their offered bit rate.
    fn offered(sc: &Scenario) -> (Vec<FlowSpec>, f64) {
        let net = crate::net::build(&sc.topology).unwrap();
        let flows = generate(&sc.workload, sc.run.seed, &net).unwrap();
        let span_s = flows.last().unwrap().start as f64 / PS_PER_S as f64;
        let bits: f64 = flows.iter().map(|f| f.bytes as f64 * 8.0).sum();
        (flows, bits / span_s)
    }

    #[test]
    fn poisson_load_matches_target() {
        let mut sc = Scenario::default();
        sc.workload.flows = 50_000;
        sc.workload.load = 0.5;
        let (flows, bps) = offered(&sc);
        let load = bps / (32.0 * 100e9);
        assert!((load - 0.5).abs() < 0.05, "offered load {load}");
        assert!(flows.iter().all(|f| f.src != f.dst));
        assert!(flows.windows(2).all(|w| w[0].start <= w[1].start));
    }

    /// All-to-all traffic on 4 leaves x 4 hosts with 2 spines (2:1), 40,000 flows.
    fn small_leaf_spine(load_on: LoadOn, load: f64) -> Scenario {
        let mut sc = Scenario::default();
        sc.topology.kind = TopologyKind::LeafSpine;
        sc.topology.leaves = 4;
        sc.topology.spines = 2;
        sc.topology.hosts_per_leaf = 4;
        sc.workload.load_on = load_on;
        sc.workload.load = load;
        sc.workload.flows = 40_000;
        sc
    }

    #[test]
    fn core_load_on_leaf_spine() {
        let (flows, bps) = offered(&small_leaf_spine(LoadOn::Core, 0.5));
        let bits = |crossing: bool| {
            flows.iter().filter(|f| (f.src / 4 != f.dst / 4) == crossing).map(|f| f.bytes as f64).sum::<f64>()
        };
        let crossing_share = bits(true) / (bits(true) + bits(false));
        // 4 leaves x 2 uplinks x 100 Gbps upward.
        let load = bps * crossing_share / (8.0 * 100e9);
        assert!((load - 0.5).abs() < 0.05, "core load {load}");
    }

    /// The BCC authors' runner: access load = core load / oversubscription, whatever
    /// share of the flows stays in its rack.
    #[test]
    fn nominal_core_load_is_access_load_times_oversubscription() {
        let (_, bps) = offered(&small_leaf_spine(LoadOn::CoreNominal, 0.8));
        // 16 hosts x 100 Gbps of access links, 4 hosts per 2 uplinks: 2:1.
        let access_load = bps / (16.0 * 100e9);
        assert!((access_load - 0.8 / 2.0).abs() < 0.04, "access load {access_load}");
    }

    #[test]
    fn core_load_on_a_one_way_dumbbell_is_the_link_load() {
        let mut sc = Scenario::default();
        sc.topology.kind = TopologyKind::Dumbbell;
        sc.topology.hosts = 4;
        sc.topology.hosts_right = 4;
        sc.workload.pattern = Pattern::ManyToFew;
        sc.workload.senders = Some(HostSet::Text("0-3".into()));
        sc.workload.receivers = Some(HostSet::Text("4-7".into()));
        sc.workload.load_on = LoadOn::Core;
        sc.workload.load = 0.6;
        sc.workload.flows = 40_000;
        let (_, bps) = offered(&sc);
        let load = bps / 100e9;
        assert!((load - 0.6).abs() < 0.06, "A-to-B link load {load}");
    }

    /// 16-to-1 fan-in rounds of 64 KB on 4 leaves x 4 hosts, 2,000 rounds.
    fn fan_in(load: f64) -> Scenario {
        let mut sc = small_leaf_spine(LoadOn::Access, load);
        sc.topology.hosts_per_leaf = 8;
        sc.workload.pattern = Pattern::FanIn;
        sc.workload.fan_in = 16;
        sc.workload.flows = 32_000;
        sc
    }

    #[test]
    fn fan_in_rounds_come_from_other_racks_at_the_load() {
        let (flows, bps) = offered(&fan_in(0.4));
        // The last round's flows start at the span's end, so the span holds 1,999 gaps
        // of 2,000 rounds: the offered rate is 2,000/1,999 of the arrival rate.
        let load = bps / (32.0 * 100e9) * 1999.0 / 2000.0;
        assert!((load - 0.4).abs() < 0.02, "access load {load}");
        assert_eq!(flows.len(), 32_000);
        let mut rounds: std::collections::BTreeMap<u64, Vec<&FlowSpec>> = Default::default();
        for f in &flows {
            rounds.entry(f.query.expect("a fan-in flow answers a round")).or_default().push(f);
        }
        assert_eq!(rounds.len(), 2_000);
        let rack = |h: u32| h / 8;
        let mut receivers = std::collections::BTreeSet::new();
        for round in rounds.values() {
            assert_eq!(round.len(), 16);
            let senders: std::collections::BTreeSet<u32> = round.iter().map(|f| f.src).collect();
            assert_eq!(senders.len(), 16, "a round's senders are distinct");
            let dst = round[0].dst;
            receivers.insert(dst);
            assert!(round.iter().all(|f| f.dst == dst && f.start == round[0].start && f.bytes == 64_000));
            assert!(round.iter().all(|f| rack(f.src) != rack(dst)), "a sender in the receiver's rack");
        }
        assert_eq!(receivers.len(), 32, "every host receives some round");
    }

    #[test]
    fn a_fan_in_wider_than_the_senders_outside_the_rack_gives_each_several_flows() {
        let mut sc = fan_in(0.4);
        sc.workload.fan_in = 60; // 24 hosts are outside any rack of 8: 2 or 3 flows each
        sc.workload.flows = 6_000;
        let net = crate::net::build(&sc.topology).unwrap();
        let flows = generate(&sc.workload, sc.run.seed, &net).unwrap();
        let mut rounds: std::collections::BTreeMap<u64, Vec<&FlowSpec>> = Default::default();
        for f in &flows {
            rounds.entry(f.query.unwrap()).or_default().push(f);
        }
        for round in rounds.values() {
            assert_eq!(round.len(), 60);
            let mut per_sender: std::collections::BTreeMap<u32, usize> = Default::default();
            for f in round {
                assert_ne!(f.src / 8, f.dst / 8, "a sender in the receiver's rack");
                *per_sender.entry(f.src).or_default() += 1;
            }
            assert_eq!(per_sender.len(), 24, "every sender outside the rack takes part");
            assert_eq!(per_sender.values().filter(|&&n| n == 3).count(), 12, "60 = 24 x 2 + 12");
            assert!(per_sender.values().all(|&n| n == 2 || n == 3));
        }
    }

    #[test]
    fn fan_in_needs_a_sender_outside_the_rack() {
        // A star is one rack: no sender is ever outside it.
        let mut star = Scenario::default();
        star.workload.pattern = Pattern::FanIn;
        let net = crate::net::build(&star.topology).unwrap();
        let e = generate(&star.workload, star.run.seed, &net).unwrap_err();
        assert!(e.message.contains("no sender outside its rack"), "{}", e.message);
    }

    /// DSH fig12's traffic: rounds of 1 to 15 senders of one leaf (hosts 8-15) to a
    /// receiver of another (0-7), each sending a Hadoop-sized flow.
    #[test]
    fn fan_in_rounds_of_random_size_draw_their_flows_from_the_cdf() {
        let mut sc = fan_in(0.4);
        sc.workload.fan_in = 1;
        sc.workload.fan_in_max = Some(8);
        sc.workload.fan_in_sizes = crate::workload::config::FanInSizes::Cdf;
        sc.workload.cdf = "fb_hadoop".into();
        sc.workload.senders = Some(HostSet::Text("8-15".into()));
        sc.workload.receivers = Some(HostSet::Text("0-7".into()));
        sc.workload.flows = 90_000;
        let (flows, bps) = offered(&sc);
        let load = bps / (8.0 * 100e9);
        assert!((load - 0.4).abs() < 0.04, "access load of the 8 receivers {load}");
        assert!(flows.iter().all(|f| (8..16).contains(&f.src) && f.dst < 8));
        let mut rounds: std::collections::BTreeMap<u64, Vec<&FlowSpec>> = Default::default();
        for f in &flows {
            rounds.entry(f.query.unwrap()).or_default().push(f);
        }
        // Fan-in uniform on 1..=8: each value's share of the rounds is 1/8 within 4
        // sigma of a binomial.
        let n = rounds.len() as f64;
        let sigma = (n * (1.0 / 8.0) * (7.0 / 8.0)).sqrt();
        for k in 1..=8 {
            let count = rounds.values().filter(|r| r.len() == k).count() as f64;
            assert!((count - n / 8.0).abs() < 4.0 * sigma, "fan-in {k}: {count} of {n} rounds");
        }
        for round in rounds.values() {
            let senders: std::collections::BTreeSet<u32> = round.iter().map(|f| f.src).collect();
            assert_eq!(senders.len(), round.len(), "a round's senders are distinct");
        }
        // Sizes from the CDF: their mean is the CDF's (a heavy tail: within 5%).
        let cdf = load_cdf("fb_hadoop", "cdf").unwrap();
        let mean = flows.iter().map(|f| f.bytes as f64).sum::<f64>() / flows.len() as f64;
        assert!((mean / cdf.mean() - 1.0).abs() < 0.05, "mean size {mean}, the CDF's {}", cdf.mean());
    }

    /// The BFC harness's incast: 100 senders x 200 KB at 5% of T1's 64 ToR uplinks
    /// (`core_nominal`), one round every 20 MB / (0.05 x 6.4 Tbps) = 500 us.
    #[test]
    fn periodic_rounds_come_one_mean_gap_apart() {
        let mut sc = Scenario::default();
        sc.topology.kind = TopologyKind::LeafSpine;
        sc.topology.leaves = 8;
        sc.topology.spines = 8;
        sc.topology.hosts_per_leaf = 16;
        sc.topology.link_rate = crate::units::Rate(100_000_000_000);
        sc.topology.uplink_rate = crate::units::Rate(100_000_000_000);
        sc.workload.pattern = Pattern::FanIn;
        sc.workload.fan_in = 100;
        sc.workload.size = crate::units::Bytes(200_000);
        sc.workload.load = 0.05;
        sc.workload.load_on = LoadOn::CoreNominal;
        sc.workload.arrival = crate::workload::config::Arrival::Periodic;
        sc.workload.flows = 1_000;
        let net = crate::net::build(&sc.topology).unwrap();
        let flows = generate(&sc.workload, sc.run.seed, &net).unwrap();
        let mut starts: Vec<Ps> = flows.iter().map(|f| f.start).collect();
        starts.dedup();
        assert_eq!(starts.len(), 10);
        for (k, &t) in starts.iter().enumerate() {
            let expected = (k as Ps + 1) * 500_000_000;
            assert!(t.abs_diff(expected) <= 1, "round {k} at {t} ps, expected {expected}");
        }
    }

    /// Two sites of 64 hosts each (8 leaves of 16), 40,000 all-to-all flows, a fraction
    /// `remote` of them to the other site.
    fn two_sites(remote: f64) -> Scenario {
        let mut sc = small_leaf_spine(LoadOn::CoreNominal, 0.5);
        sc.topology.leaves = 8;
        sc.topology.hosts_per_leaf = 16;
        sc.workload.sites = vec![HostSet::Text("0-63".into()), HostSet::Text("64-127".into())];
        sc.workload.remote_fraction = Some(remote);
        sc
    }

    #[test]
    fn a_fifth_of_the_flows_go_to_the_other_site_within_binomial_error() {
        let sc = two_sites(0.2);
        sc.validate().unwrap();
        let (flows, _) = offered(&sc);
        let site = |h: u32| h / 64;
        let remote: Vec<&FlowSpec> = flows.iter().filter(|f| site(f.src) != site(f.dst)).collect();
        let n = flows.len() as f64;
        let share = remote.len() as f64 / n;
        // 4 sigma of a binomial share of 0.2 over 40,000 flows is 0.008.
        let sigma = (0.2 * 0.8 / n).sqrt();
        assert!((share - 0.2).abs() < 4.0 * sigma, "{share} of the flows cross");
        assert!(flows.iter().all(|f| f.src != f.dst));
        // Remote receivers are every host of the other site, evenly: each of site 1's 64
        // hosts takes about 1/64 of site 0's remote flows (5 sigma of a binomial).
        let from_site_0: Vec<u32> = remote.iter().filter(|f| site(f.src) == 0).map(|f| f.dst).collect();
        let m = from_site_0.len() as f64;
        let sigma = (m / 64.0 * 63.0 / 64.0).sqrt();
        for h in 64..128 {
            let count = from_site_0.iter().filter(|&&d| d == h).count() as f64;
            assert!((count - m / 64.0).abs() < 5.0 * sigma, "host {h}: {count} of {m}");
        }
        // Senders are drawn as before: uniform over all hosts (both sites alike).
        let from_site_1 = flows.iter().filter(|f| site(f.src) == 1).count() as f64;
        assert!((from_site_1 / n - 0.5).abs() < 4.0 * (0.25 / n).sqrt(), "{from_site_1} of {n} from site 1");
        // The bounds: none or all cross.
        let (none, _) = offered(&two_sites(0.0));
        assert!(none.iter().all(|f| site(f.src) == site(f.dst)));
        let (all, _) = offered(&two_sites(1.0));
        assert!(all.iter().all(|f| site(f.src) != site(f.dst)));
    }

    /// With `load_on = "core"`, the arrival rate counts only the flows that cross the
    /// core; with two sites, a flow crosses when remote (always another leaf) or when
    /// local to another of its site's 4 leaves (48 of the 63 other hosts).
    #[test]
    fn core_load_with_sites_counts_the_flows_that_leave_the_rack() {
        let mut sc = two_sites(0.2);
        sc.workload.load_on = LoadOn::Core;
        let (flows, bps) = offered(&sc);
        let crossing = |f: &&FlowSpec| f.src / 16 != f.dst / 16;
        let bits = |pick: &dyn Fn(&&FlowSpec) -> bool| flows.iter().filter(pick).map(|f| f.bytes as f64).sum::<f64>();
        let share = bits(&crossing) / bits(&|_| true);
        // 8 leaves x 2 uplinks x 100 Gbps.
        let load = bps * share / (16.0 * 100e9);
        assert!((load - 0.5).abs() < 0.05, "core load {load}");
        let expected = 0.8 * 48.0 / 63.0 + 0.2;
        let count = flows.iter().filter(crossing).count() as f64 / flows.len() as f64;
        assert!((count - expected).abs() < 0.01, "{count} of the flows cross, expected {expected}");
    }

    #[test]
    fn bad_sites_are_refused_naming_the_key_and_what_is_accepted() {
        let check = |edit: &dyn Fn(&mut Scenario), path: &str, words: &str| {
            let mut sc = two_sites(0.2);
            edit(&mut sc);
            let e = match sc.validate() {
                Err(e) => e,
                Ok(_) => {
                    let net = crate::net::build(&sc.topology).unwrap();
                    generate(&sc.workload, sc.run.seed, &net).unwrap_err()
                }
            };
            assert_eq!(e.path, path, "{e}");
            assert!(e.message.contains(words), "{e}");
        };
        check(&|sc| sc.workload.remote_fraction = None, "workload.sites", "needs workload.remote_fraction");
        check(&|sc| sc.workload.sites.clear(), "workload.remote_fraction", "needs workload.sites");
        check(
            &|sc| sc.workload.remote_fraction = Some(1.5),
            "workload.remote_fraction",
            "1.5 is not accepted (accepted: a number from 0 to 1)",
        );
        check(
            &|sc| sc.workload.remote_fraction = Some(f64::NAN),
            "workload.remote_fraction",
            "accepted: a number from 0 to 1",
        );
        check(&|sc| sc.workload.sites.truncate(1), "workload.sites", "accepted: at least 2 groups of hosts");
        check(
            &|sc| sc.workload.sites[1] = HostSet::Text("60-127".into()),
            "workload.sites[1]",
            "host 60 is in workload.sites[0] too (accepted: disjoint sites)",
        );
        check(&|sc| sc.workload.sites[1] = HostSet::Text("64-200".into()), "workload.sites[1]", "is out of range");
        check(
            &|sc| sc.workload.pattern = Pattern::FanIn,
            "workload.sites",
            "is not accepted with pattern = \"fan_in\" (accepted: all_to_all, many_to_few)",
        );
        check(
            &|sc| sc.workload.sites[1] = HostSet::Text("64-126".into()),
            "workload.sites",
            "receiver 127 is in no site (accepted: sites that hold every sender and receiver)",
        );
        check(
            &|sc| {
                sc.workload.sites = vec![HostSet::Text("0".into()), HostSet::Text("1-127".into())];
            },
            "workload.sites",
            "sender 0 has no receiver in its site (workload.sites[0]) but itself",
        );
        check(
            &|sc| {
                sc.workload.receivers = Some(HostSet::Text("0-63".into()));
            },
            "workload.sites",
            "sender 0 has no receiver outside its site (workload.sites[0])",
        );
    }

    #[test]
    fn priorities_are_drawn_uniformly_from_the_list() {
        let mut sc = Scenario::default();
        sc.workload.flows = 40_000;
        sc.workload.priorities = vec![2, 3, 5, 7];
        let net = crate::net::build(&sc.topology).unwrap();
        let flows = generate(&sc.workload, sc.run.seed, &net).unwrap();
        for class in [2, 3, 5, 7] {
            let share = flows.iter().filter(|f| f.priority == class).count() as f64 / flows.len() as f64;
            // 4 sigma of a binomial share of 1/4 over 40,000 draws is 0.0087.
            assert!((share - 0.25).abs() < 0.0087, "class {class}: {share}");
        }
        assert!(flows.iter().all(|f| [2, 3, 5, 7].contains(&f.priority)));
        // The sizes and arrivals are those of the same scenario without classes.
        sc.workload.priorities.clear();
        let plain = generate(&sc.workload, sc.run.seed, &net).unwrap();
        assert!(plain
            .iter()
            .zip(&flows)
            .all(|(a, b)| (a.src, a.dst, a.bytes, a.start) == (b.src, b.dst, b.bytes, b.start)));
    }
}
