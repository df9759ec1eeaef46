//! The `[workload]` section (and `[[workload.extra]]`): who sends what to whom, when.

use crate::config::{ScenarioError, Warnings};
use crate::net::config::{Topology, TopologyKind};
use crate::units::{Bytes, Rate, Time};
use serde::{Deserialize, Serialize};

/// The transport of a workload's flows (`workload.transport`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FlowTransport {
    #[default]
    Tcp,
    /// Reliable RDMA connections (`[rdma]`): go-back-N, paced by the NIC.
    Rdma,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    AllToAll,
    ManyToFew,
    Incast,
    /// Poisson rounds in which `fan_in` random senders outside the receiver's rack each
    /// send `size` bytes to one random receiver at once (several flows each when
    /// `fan_in` exceeds them).
    FanIn,
    LongLived,
    Udp,
    Trace,
    /// The closed-loop traffic of distributed training (`workload.collective`).
    Collective,
}

/// The collective a `collective` workload runs (`workload.collective`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum CollectiveKind {
    /// Ring all-reduce: n - 1 reduce-scatter steps, then n - 1 all-gather steps, in each
    /// of which every host sends one chunk of `size` / n bytes to the next in the ring.
    #[default]
    RingAllReduce,
    /// Every host sends a block of `size` / n bytes to every other.
    AllToAll,
    /// Every worker sends `size` bytes to the server (`receiver`), which sends `size`
    /// bytes back to each once it has heard from all.
    ParameterServer,
}

/// How a UDP flow keeps its rate (`workload.pacing`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Pacing {
    /// A timer at the sender puts packet k into the NIC queue at start + k x size / rate
    /// (a software pacer): a busy link builds a NIC queue, and a full one drops.
    #[default]
    Host,
    /// The NIC's rate limiter (as RDMA NICs do): the NIC takes the flow's next packet when
    /// its link is free and the flow's time has come, one size / rate after the packet
    /// before; ready flows share the link in round robin, behind the NIC's queues.
    Nic,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LoadOn {
    /// The receivers' access links.
    Access,
    /// The core links leaving the senders' switches, counting only the flows that cross.
    Core,
    /// The same core links, as if every flow crossed them: the senders' access load times
    /// the oversubscription ratio (the convention of the BCC authors' ns-2 scripts).
    CoreNominal,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    Poisson,
    Lognormal,
    /// Every arrival exactly one mean gap after the last (the BFC harness's incasts).
    Periodic,
}

/// What each sender of a fan-in round sends (`workload.fan_in_sizes`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FanInSizes {
    /// `size` bytes, every sender alike.
    #[default]
    Size,
    /// A size drawn from `cdf` for each sender.
    Cdf,
}

/// A set of host indices: "0-23,30" or a list of indices and ranges.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged, expecting = "a set of hosts: a string such as \"0-23,30\", or a list such as [0, \"4-7\"]")]
pub enum HostSet {
    Text(String),
    List(Vec<HostSetItem>),
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum HostSetItem {
    Index(i64),
    Text(String),
}

impl HostSet {
    /// Expands to sorted, distinct host indices, each below `hosts`.
    pub fn resolve(&self, hosts: u64, path: &str) -> Result<Vec<u32>, ScenarioError> {
        let parts: Vec<String> = match self {
            HostSet::Text(t) => t.split(',').map(|s| s.trim().to_string()).collect(),
            HostSet::List(items) => items
                .iter()
                .map(|i| match i {
                    HostSetItem::Index(n) => n.to_string(),
                    HostSetItem::Text(t) => t.trim().to_string(),
                })
                .collect(),
        };
        let bad = |part: &str, why: &str| {
            ScenarioError::new(
                path,
                format!(
                    "{part:?} {why} (accepted: host indices 0..={} as \"a-b,c\" or a list)",
                    hosts.saturating_sub(1)
                ),
            )
        };
        let mut out = Vec::new();
        for part in parts.iter().filter(|p| !p.is_empty()) {
            let (lo, hi) = match part.split_once('-') {
                Some((a, b)) if !a.trim().is_empty() => (a.trim(), b.trim()),
                _ => (part.as_str(), part.as_str()),
            };
            let lo: u64 = lo.parse().map_err(|_| bad(part, "is not a host index or range"))?;
            let hi: u64 = hi.parse().map_err(|_| bad(part, "is not a host index or range"))?;
            if lo > hi {
                return Err(bad(part, "is a decreasing range"));
            }
            if hi >= hosts {
                return Err(bad(part, "is out of range"));
            }
            out.extend(lo as u32..=hi as u32);
        }
        out.sort_unstable();
        out.dedup();
        if out.is_empty() {
            return Err(ScenarioError::new(path, "the host set is empty"));
        }
        Ok(out)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Workload {
    pub pattern: Pattern,
    pub cdf: String,
    pub load: f64,
    pub load_on: LoadOn,
    pub arrival: Arrival,
    pub lognormal_sigma: f64,
    pub flows: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<Time>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub senders: Option<HostSet>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receivers: Option<HostSet>,
    /// Disjoint groups of hosts (data centers, say) that hold every sender and receiver
    /// of an `all_to_all` or `many_to_few` workload, with `remote_fraction`: a flow's
    /// receiver is drawn from the receivers outside its sender's site with probability
    /// `remote_fraction`, else from those in it. Empty: receivers are drawn from all.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sites: Vec<HostSet>,
    /// The probability that a flow's receiver is in another site than its sender
    /// (`sites`), 0 to 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_fraction: Option<f64>,
    pub receiver: i64,
    pub size: Bytes,
    pub start: Time,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period: Option<Time>,
    pub repeats: u32,
    /// Senders per round of a `fan_in` workload. Left out of the resolved scenario at
    /// its default, so that the run keys of the other patterns do not depend on it.
    #[serde(skip_serializing_if = "is_default_fan_in")]
    pub fan_in: u32,
    /// With it, each round's fan-in is drawn uniformly from `fan_in` to this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fan_in_max: Option<u32>,
    #[serde(skip_serializing_if = "is_fixed_size")]
    pub fan_in_sizes: FanInSizes,
    pub rate: Rate,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<Time>,
    pub pacing: Pacing,
    /// The transport of the flows (not of `udp`).
    pub transport: FlowTransport,
    pub priority: u8,
    /// Classes drawn uniformly at random, one per flow, instead of `priority`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub priorities: Vec<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// The collective of a `collective` workload (ring all-reduce when left out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collective: Option<CollectiveKind>,
    /// The compute gap of a `collective` workload: a host starts its next iteration this
    /// long after its part of the last one has arrived (none when left out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compute: Option<Time>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extra: Vec<Workload>,
}

const DEFAULT_FAN_IN: u32 = 16;

fn is_default_fan_in(fan_in: &u32) -> bool {
    *fan_in == DEFAULT_FAN_IN
}

fn is_fixed_size(sizes: &FanInSizes) -> bool {
    *sizes == FanInSizes::Size
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            pattern: Pattern::AllToAll,
            cdf: "websearch".into(),
            load: 0.6,
            load_on: LoadOn::Access,
            arrival: Arrival::Poisson,
            lognormal_sigma: 2.0,
            flows: 1000,
            duration: None,
            senders: None,
            receivers: None,
            sites: Vec::new(),
            remote_fraction: None,
            receiver: 0,
            size: Bytes(64_000),
            start: Time(0),
            period: None,
            repeats: 1,
            fan_in: DEFAULT_FAN_IN,
            fan_in_max: None,
            fan_in_sizes: FanInSizes::Size,
            rate: Rate(10_000_000_000),
            stop: None,
            pacing: Pacing::Host,
            transport: FlowTransport::Tcp,
            priority: 0,
            priorities: Vec::new(),
            trace: None,
            collective: None,
            compute: None,
            extra: Vec::new(),
        }
    }
}

impl Workload {
    /// This workload followed by its extra ones.
    pub fn all(&self) -> impl Iterator<Item = &Workload> {
        std::iter::once(self).chain(self.extra.iter())
    }

    /// The workloads (as `all`) with their key paths: `workload`, then
    /// `workload.extra[0]`, ...
    pub fn with_paths(&self) -> impl Iterator<Item = (String, &Workload)> {
        self.all().enumerate().map(|(i, w)| match i {
            0 => ("workload".to_string(), w),
            _ => (format!("workload.extra[{}]", i - 1), w),
        })
    }

    /// The hosts this workload's flows can go to (it at key path `path`, on a network of
    /// `hosts` hosts): its `receivers`, or else every host (all-to-all, many-to-few,
    /// fan-in) or its `receiver` (incast, long-lived, UDP). `None` for a trace, whose file
    /// names them. A collective's are its hosts (`senders`, and a parameter server's
    /// `receiver`). Sorted and distinct where `receivers` or `senders` is set.
    pub fn receiver_hosts(&self, hosts: u32, path: &str) -> Result<Option<Vec<u32>>, ScenarioError> {
        let default = match self.pattern {
            Pattern::Trace => return Ok(None),
            Pattern::Collective => {
                let mut all = match &self.senders {
                    Some(set) => set.resolve(hosts as u64, &format!("{path}.senders"))?,
                    None => (0..hosts).collect(),
                };
                if self.collective == Some(CollectiveKind::ParameterServer) && !all.contains(&(self.receiver as u32)) {
                    all.push(self.receiver as u32);
                    all.sort_unstable();
                }
                return Ok(Some(all));
            }
            Pattern::AllToAll | Pattern::ManyToFew | Pattern::FanIn => (0..hosts).collect(),
            Pattern::Incast | Pattern::LongLived | Pattern::Udp => vec![self.receiver as u32],
        };
        match &self.receivers {
            Some(set) => set.resolve(hosts as u64, &format!("{path}.receivers")).map(Some),
            None => Ok(Some(default)),
        }
    }

    /// The classes the workload's flows may have: `priorities`, or else `priority`.
    pub fn classes(&self) -> &[u8] {
        match self.priorities.is_empty() {
            true => std::slice::from_ref(&self.priority),
            false => &self.priorities,
        }
    }

    /// `sites` and `remote_fraction`: both or neither, on a pattern of one flow per
    /// arrival; at least two sites, disjoint; a fraction from 0 to 1. Whether the sites
    /// hold the senders and receivers is checked where those are known
    /// (`workload::Sites::new`).
    fn validate_sites(&self, path: &str, hosts: u64) -> Result<(), ScenarioError> {
        let key = |k: &str| format!("{path}.{k}");
        let err = |k: &str, msg: String| Err(ScenarioError::new(key(k), msg));
        let fraction = match (self.sites.is_empty(), self.remote_fraction) {
            (true, None) => return Ok(()),
            (true, Some(_)) => {
                return err(
                    "remote_fraction",
                    format!("needs {} (accepted: with sites = [\"0-63\", \"64-127\"], say)", key("sites")),
                )
            }
            (false, None) => {
                return err("sites", format!("needs {} (accepted: a number from 0 to 1)", key("remote_fraction")))
            }
            (false, Some(f)) => f,
        };
        if !matches!(self.pattern, Pattern::AllToAll | Pattern::ManyToFew) {
            let pattern = serde_json::to_string(&self.pattern).expect("an enum always serializes");
            return err(
                "sites",
                format!("is not accepted with pattern = {pattern} (accepted: all_to_all, many_to_few)"),
            );
        }
        if !(0.0..=1.0).contains(&fraction) {
            return err("remote_fraction", format!("{fraction} is not accepted (accepted: a number from 0 to 1)"));
        }
        if self.sites.len() < 2 {
            return err(
                "sites",
                format!(
                    "has {} site (accepted: at least 2 groups of hosts, for a receiver in another)",
                    self.sites.len()
                ),
            );
        }
        let mut site_of: std::collections::HashMap<u32, usize> = Default::default();
        for (i, site) in self.sites.iter().enumerate() {
            let item = format!("{}[{i}]", key("sites"));
            let members = site.resolve(hosts, &item)?;
            if members.is_empty() {
                return Err(ScenarioError::new(item, "is empty (accepted: at least one host)"));
            }
            for h in members {
                if let Some(first) = site_of.insert(h, i) {
                    return Err(ScenarioError::new(
                        item,
                        format!("host {h} is in {}[{first}] too (accepted: disjoint sites)", key("sites")),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Checks this workload (`[workload]`) and each of its extra ones, on a topology of
    /// `hosts` hosts.
    pub fn validate_all(&self, hosts: u64, topology: &Topology, warnings: &mut Warnings) -> Result<(), ScenarioError> {
        self.validate("workload", hosts, topology, warnings)?;
        for (i, w) in self.extra.iter().enumerate() {
            let path = format!("workload.extra[{i}]");
            if !w.extra.is_empty() {
                return Err(ScenarioError::new(path, "extra workloads cannot nest further extra workloads"));
            }
            w.validate(&path, hosts, topology, warnings)?;
        }
        Ok(())
    }

    fn validate(
        &self,
        path: &str,
        hosts: u64,
        topology: &Topology,
        warnings: &mut Warnings,
    ) -> Result<(), ScenarioError> {
        let key = |k: &str| format!("{path}.{k}");
        let err = |k: &str, msg: String| Err(ScenarioError::new(key(k), msg));
        let senders = self.senders.as_ref().map(|s| s.resolve(hosts, &key("senders"))).transpose()?;
        let receivers = self.receivers.as_ref().map(|r| r.resolve(hosts, &key("receivers"))).transpose()?;
        if let (Pattern::ManyToFew, Some(senders), Some(receivers)) = (self.pattern, &senders, &receivers) {
            let both: Vec<String> = receivers.iter().filter(|r| senders.contains(r)).map(u32::to_string).collect();
            if !both.is_empty() {
                warnings.push(format!(
                    "{}: hosts {} are senders too; many_to_few usually keeps the few receivers apart from the senders",
                    key("receivers"),
                    both.join(", ")
                ));
            }
        }
        if self.priority as u32 >= 64 {
            return err("priority", format!("{} is not accepted (accepted: 0 to 63)", self.priority));
        }
        if let Some(p) = self.priorities.iter().find(|&&p| p >= 64) {
            return Err(ScenarioError::not_accepted(path, "priorities", p, "classes 0 to 63"));
        }
        if !self.priorities.is_empty() && self.priority != 0 {
            return err(
                "priorities",
                format!("is set together with priority = {} (accepted: one of the two)", self.priority),
            );
        }
        if !self.priorities.is_empty() && self.pattern == Pattern::Trace {
            return err(
                "priorities",
                "is not accepted with pattern = \"trace\" (a trace's flows take the class of its priority column, \
                 or workload.priority)"
                    .into(),
            );
        }
        self.validate_sites(path, hosts)?;
        if self.pattern == Pattern::FanIn {
            if self.size.0 == 0 {
                return err("size", "must be positive".into());
            }
            if self.fan_in == 0 {
                return Err(ScenarioError::not_accepted(path, "fan_in", 0, "1 or more senders per round"));
            }
            if let Some(max) = self.fan_in_max {
                if max < self.fan_in {
                    return Err(ScenarioError::not_accepted(
                        path,
                        "fan_in_max",
                        max,
                        &format!("at least fan_in = {}", self.fan_in),
                    ));
                }
            }
        }
        match self.pattern {
            Pattern::AllToAll | Pattern::ManyToFew | Pattern::FanIn => {
                if !(self.load.is_finite() && self.load > 0.0) {
                    return err(
                        "load",
                        format!("{} is not accepted (accepted: a number > 0, usually <= 1)", self.load),
                    );
                }
                if self.load > 1.0 {
                    warnings.push(format!("{}: {} is above 100%; the network cannot carry it", key("load"), self.load));
                }
                match self.duration {
                    Some(Time(0)) => return err("duration", "must be positive".into()),
                    None if self.flows == 0 => return err("flows", "must be at least 1 (or set duration)".into()),
                    _ => {}
                }
                if self.flows > 100_000_000 {
                    return err("flows", format!("{} is too many (accepted: up to 100,000,000)", self.flows));
                }
                if !(self.lognormal_sigma.is_finite() && self.lognormal_sigma > 0.0) {
                    return err(
                        "lognormal_sigma",
                        format!("{} is not accepted (accepted: a number > 0)", self.lognormal_sigma),
                    );
                }
                if self.load_on != LoadOn::Access && topology.kind == TopologyKind::Star {
                    return err(
                        "load_on",
                        format!(
                            "{} needs a topology with core links (leaf_spine, fat_tree or dumbbell)",
                            serde_json::to_string(&self.load_on).expect("an enum always serializes")
                        ),
                    );
                }
            }
            Pattern::Incast => {
                if self.receiver < 0 || self.receiver as u64 >= hosts {
                    return err("receiver", format!("{} is out of range (accepted: 0..={})", self.receiver, hosts - 1));
                }
                if self.size.0 == 0 {
                    return err("size", "must be positive".into());
                }
                if self.repeats == 0 {
                    return err("repeats", "must be at least 1".into());
                }
                if self.repeats > 1 && self.period.is_none_or(|p| p.0 == 0) {
                    return err("period", "a positive period is required when repeats > 1".into());
                }
                let last = self.start.0 as u128 + (self.repeats as u128 - 1) * self.period.map_or(0, |p| p.0 as u128);
                if last > Time::MAX.0 as u128 {
                    return err(
                        "repeats",
                        format!(
                            "the last of {} rounds, {} apart, would start after {} (accepted: every round starts by {})",
                            self.repeats,
                            self.period.unwrap_or_default(),
                            Time::MAX,
                            Time::MAX
                        ),
                    );
                }
            }
            Pattern::Udp => {
                if self.rate.0 == 0 {
                    return err("rate", "must be positive".into());
                }
                if let Some(stop) = self.stop {
                    if stop <= self.start {
                        return err("stop", format!("{stop} is not after workload.start = {}", self.start));
                    }
                }
            }
            // Checked where the hosts are known (`collective::CollectiveJob::of`).
            Pattern::LongLived | Pattern::Collective => {}
            Pattern::Trace => {
                if self.trace.is_none() {
                    return err("trace", "pattern = \"trace\" needs a trace file".into());
                }
            }
        }
        Ok(())
    }
}
