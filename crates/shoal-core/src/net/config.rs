//! The `[topology]` section: which network, its links and their rates and delays.

use crate::config::{ScenarioError, Warnings};
use crate::units::{Rate, Time};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TopologyKind {
    Star,
    LeafSpine,
    FatTree,
    Dumbbell,
    /// Read from `path`, a topology file of the HPCC / ns3-datacenter format
    /// (`net::topology_file`), with each link's own rate and delay.
    File,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Topology {
    pub kind: TopologyKind,
    pub hosts: u32,
    pub hosts_right: u32,
    pub leaves: u32,
    pub spines: u32,
    pub hosts_per_leaf: u32,
    pub k: u32,
    pub link_rate: Rate,
    pub uplink_rate: Rate,
    pub link_delay: Time,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uplink_delay: Option<Time>,
    /// The topology file of `kind = "file"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Links that are down, each named by the node ids at its two ends (see
    /// `net::NodeIds`): they are not built, and routing goes around them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed_links: Vec<[u32; 2]>,
    /// The chance that a packet (or frame) crossing a link is corrupted, and dropped by
    /// the receiving end: every link's, unless `lossy_links` or a topology file's line
    /// gives the link its own.
    #[serde(skip_serializing_if = "is_zero")]
    pub error_rate: f64,
    /// Links with an error rate of their own (both directions of each).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lossy_links: Vec<LossyLink>,
    /// Links and switches out of service for a while during the run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outages: Vec<Outage>,
    /// How long after a link goes down or comes back the switches route by the change
    /// (until then they send into the down link, and keep off the restored one).
    #[serde(skip_serializing_if = "is_no_time")]
    pub reconvergence: Time,
}

/// A link or a switch out of service from `at` until `until` (for good if unset):
/// `topology.outages`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Outage {
    /// The cable between these node ids (as `failed_links` names one)...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<[u32; 2]>,
    /// ...or every cable of this switch (its node id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switch: Option<u32>,
    pub at: Time,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Time>,
}

/// A link with an error rate of its own: `topology.lossy_links`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LossyLink {
    /// The node ids at its two ends, as `failed_links` names a link.
    pub ends: [u32; 2],
    pub error_rate: f64,
}

fn is_zero(value: &f64) -> bool {
    *value == 0.0
}

fn is_no_time(value: &Time) -> bool {
    value.0 == 0
}

/// Whether `p` is a probability (`error_rate`'s accepted values).
pub fn is_probability(p: f64) -> bool {
    (0.0..=1.0).contains(&p)
}

impl Default for Topology {
    fn default() -> Self {
        Topology {
            kind: TopologyKind::Star,
            hosts: 32,
            hosts_right: 8,
            leaves: 8,
            spines: 8,
            hosts_per_leaf: 16,
            k: 4,
            link_rate: Rate(100_000_000_000),
            uplink_rate: Rate(100_000_000_000),
            link_delay: Time(1_000_000),
            uplink_delay: None,
            path: None,
            failed_links: Vec::new(),
            error_rate: 0.0,
            lossy_links: Vec::new(),
            outages: Vec::new(),
            reconvergence: Time(0),
        }
    }
}

/// The most ports one switch may have: a port index is 16 bits wide.
pub const MAX_SWITCH_PORTS: u64 = u16::MAX as u64;

/// The most hosts a network may have.
pub const MAX_HOSTS: u64 = 1_000_000;

impl Topology {
    /// Refuses a topology whose longest route one `packet` (the largest any transport
    /// sends) and its ACK cannot cross and come back within Shoal's time limit (no flow
    /// could finish: a run would only reach the limit, hours later), and warns of one
    /// whose round trip is a second or more (datacenter round trips are microseconds: a
    /// unit mistake). The key named is the
    /// one that adds the most. A built-in kind's longest route is known without building
    /// the network (so a million hosts are refused at once); a file's links are judged
    /// one by one (a route's sum would need the routes).
    pub fn check_round_trip(&self, packet: u64, warnings: &mut Warnings) -> Result<(), ScenarioError> {
        const SECOND: u128 = crate::sim::PS_PER_S as u128;
        let link_round_trip =
            |rate: u64, delay: u64| 2 * (delay as u128 + crate::sim::serialization(packet, rate) as u128);
        let t = self;
        let (key, value, round_trip, what) = if t.kind == TopologyKind::File {
            let (net, ids) = crate::net::build_with_ids(t)?;
            let Some(slowest) = net.links.iter().max_by_key(|l| link_round_trip(l.rate_bps, l.delay)) else {
                return Ok(());
            };
            // The lower node id first, as a file line may give it.
            let mut ends = [slowest.from, slowest.to];
            ends.sort_by_key(|&n| ids.id(n));
            let value = format!(
                "{}: the link between {} and {} ({}, {})",
                t.path.as_deref().unwrap_or_default(),
                ids.describe(ends[0]),
                ids.describe(ends[1]),
                Rate(slowest.rate_bps),
                Time(slowest.delay)
            );
            ("topology.path".to_string(), value, link_round_trip(slowest.rate_bps, slowest.delay), "over it alone")
        } else {
            // The route as if no link had failed: failures only lengthen it.
            let whole = Topology { failed_links: Vec::new(), ..t.clone() };
            let route = whole.longest_path(|rate, delay| (link_round_trip(rate.0, delay.0) / 2) as u64)?;
            let uplinks = route.len().saturating_sub(2) as u128;
            let ser = |rate: Rate| crate::sim::serialization(packet, rate.0) as u128;
            // Each key's part of the round trip: 2 ways over the route's links of it (the
            // uplinks take link_delay unless uplink_delay is set).
            let (host_delay_links, uplink_delay) = match t.uplink_delay {
                Some(d) => (2, d),
                None => (2 + uplinks, Time(0)),
            };
            let parts = [
                ("topology.link_delay", t.link_delay.to_string(), 2 * host_delay_links * t.link_delay.0 as u128),
                ("topology.link_rate", t.link_rate.to_string(), 4 * ser(t.link_rate)),
                ("topology.uplink_delay", uplink_delay.to_string(), 2 * uplinks * uplink_delay.0 as u128),
                ("topology.uplink_rate", t.uplink_rate.to_string(), 2 * uplinks * ser(t.uplink_rate)),
            ];
            let round_trip = parts.iter().map(|p| p.2).sum();
            let (key, value, _) = parts.into_iter().max_by_key(|p| p.2).expect("four parts");
            (key.to_string(), value, round_trip, "over the longest route")
        };
        let seconds = round_trip as f64 / SECOND as f64;
        let journey = format!("a round trip of {seconds:.3} s {what} for one {packet} B packet and its answer");
        if round_trip > crate::sim::TIME_LIMIT as u128 {
            return Err(ScenarioError::new(
                key,
                format!(
                    "{value} makes {journey}, beyond Shoal's time limit of {} s: no flow could finish (accepted: \
                     links whose round trips fit the limit; datacenter links take nanoseconds to microseconds)",
                    crate::sim::TIME_LIMIT / crate::sim::PS_PER_S
                ),
            ));
        }
        if round_trip >= SECOND {
            warnings.push(format!(
                "{key}: {value} makes {journey}; every flow takes at least that, where datacenter round trips \
                 take microseconds (check the units: a plain rate is bits per second)"
            ));
        }
        Ok(())
    }

    /// The key that makes some link corrupt packets (`error_rate`, `lossy_links` or a
    /// file's lines), if one does.
    pub fn corrupting_key(&self) -> Result<Option<&'static str>, ScenarioError> {
        let own = self.lossy_links.iter().any(|l| l.error_rate > 0.0);
        if self.error_rate == 0.0 && !own && self.kind != TopologyKind::File {
            return Ok(None);
        }
        let net = crate::net::build(self)?;
        Ok(net.links.iter().any(|l| l.error_rate > 0.0).then_some(match () {
            _ if own => "topology.lossy_links",
            _ if self.error_rate > 0.0 => "topology.error_rate",
            _ => "topology.path",
        }))
    }

    /// The port count of the largest switch of a built-in kind (None for a file: the
    /// reader checks its switches).
    pub fn max_switch_ports(&self) -> Option<u64> {
        let (hosts, right) = (self.hosts as u64, self.hosts_right as u64);
        Some(match self.kind {
            TopologyKind::Star => hosts,
            TopologyKind::Dumbbell => hosts.max(right) + 1,
            TopologyKind::LeafSpine => (self.hosts_per_leaf as u64 + self.spines as u64).max(self.leaves as u64),
            TopologyKind::FatTree => self.k as u64,
            TopologyKind::File => return None,
        })
    }

    /// The keys that set the largest switch's port count.
    fn port_keys(&self) -> &'static str {
        match self.kind {
            TopologyKind::Star => "lower topology.hosts",
            TopologyKind::Dumbbell => "lower topology.hosts or topology.hosts_right",
            TopologyKind::LeafSpine => "lower topology.hosts_per_leaf, topology.spines or topology.leaves",
            TopologyKind::FatTree => "lower topology.k",
            TopologyKind::File => "fewer links per switch in topology.path",
        }
    }

    /// (rate, one-way delay) of each link on the topology's longest host-to-host route:
    /// for a built-in kind, the route of most hops (which costs the most by any `cost`
    /// that grows with the delay and falls with the rate); for a network with failed
    /// links or read from a file, the shortest route (as routing takes them) that costs
    /// the most by `cost`.
    pub fn longest_path(&self, cost: impl Fn(Rate, Time) -> u64) -> Result<Vec<(Rate, Time)>, ScenarioError> {
        let host = (self.link_rate, self.link_delay);
        let up = (self.uplink_rate, self.uplink_delay.unwrap_or(self.link_delay));
        let known = match self.kind {
            _ if !self.failed_links.is_empty() => None,
            TopologyKind::Star => Some(vec![host, host]),
            TopologyKind::Dumbbell => Some(vec![host, up, host]),
            TopologyKind::LeafSpine if self.leaves > 1 => Some(vec![host, up, up, host]),
            TopologyKind::LeafSpine => Some(vec![host, host]),
            TopologyKind::FatTree => Some(vec![host, up, up, up, up, host]),
            TopologyKind::File => None,
        };
        if let Some(path) = known {
            return Ok(path);
        }
        let net = crate::net::build(self)?;
        let link = |l: u32| {
            let spec = &net.links[l as usize];
            (Rate(spec.rate_bps), Time(spec.delay))
        };
        let route = crate::net::costliest_route(&net, |l| {
            let (rate, delay) = link(l);
            cost(rate, delay)
        });
        Ok(route.into_iter().map(link).collect())
    }

    /// The base round trip of the longest path: one packet of `data` bytes out and one of
    /// `ack` bytes back over every link, each serialized at the link's rate, nothing
    /// queued.
    pub fn base_round_trip(&self, data: u64, ack: u64) -> Result<u64, ScenarioError> {
        Ok(self.round_trip_path(data, ack)?.1)
    }

    /// The longest path by that round trip (`longest_path`) and its base round trip
    /// (`base_round_trip`), the second the sum of the first's links.
    pub fn round_trip_path(&self, data: u64, ack: u64) -> Result<(Vec<(Rate, Time)>, u64), ScenarioError> {
        let round_trip = |rate: Rate, delay: Time| 2 * delay.0 + crate::sim::serialization(data + ack, rate.0);
        let path = self.longest_path(round_trip)?;
        let total = path.iter().map(|&(rate, delay)| round_trip(rate, delay)).sum();
        Ok((path, total))
    }

    /// The rate of the fastest link of a host (the C of rules that scale with the host
    /// link rate).
    pub fn host_rate(&self) -> Result<Rate, ScenarioError> {
        self.fastest(|l| !l.core, self.link_rate)
    }

    /// The rate of the fastest link.
    pub fn fastest_rate(&self) -> Result<Rate, ScenarioError> {
        self.fastest(|_| true, self.link_rate.max(self.uplink_rate))
    }

    /// The fastest rate of the links `which` selects: `built_in` unless the network is
    /// read from a file.
    fn fastest(&self, which: impl Fn(&crate::net::LinkSpec) -> bool, built_in: Rate) -> Result<Rate, ScenarioError> {
        if self.kind != TopologyKind::File {
            return Ok(built_in);
        }
        let net = crate::net::build(self)?;
        Ok(Rate(net.links.iter().filter(|l| which(l)).map(|l| l.rate_bps).max().unwrap_or(0)))
    }

    /// Number of hosts a built-in kind builds (None for a file: its network says).
    pub fn host_count(&self) -> Option<u64> {
        Some(match self.kind {
            TopologyKind::Star => self.hosts as u64,
            TopologyKind::Dumbbell => self.hosts as u64 + self.hosts_right as u64,
            TopologyKind::LeafSpine => self.leaves as u64 * self.hosts_per_leaf as u64,
            TopologyKind::FatTree => (self.k as u64).pow(3) / 4,
            TopologyKind::File => return None,
        })
    }

    /// Checks the topology's keys, and its network where only building it tells (a
    /// file, failed links); returns the number of hosts.
    pub(crate) fn check(&self) -> Result<u64, ScenarioError> {
        let err = |path: &str, msg: String| Err(ScenarioError::new(path, msg));
        let t = self;
        match t.kind {
            TopologyKind::Star if t.hosts < 2 => {
                return err("topology.hosts", format!("{} is too few (accepted: 2 or more hosts)", t.hosts))
            }
            TopologyKind::Dumbbell if t.hosts < 1 || t.hosts_right < 1 => {
                return err(
                    if t.hosts < 1 { "topology.hosts" } else { "topology.hosts_right" },
                    "must be at least 1 for a dumbbell".into(),
                )
            }
            TopologyKind::LeafSpine if t.leaves < 1 || t.spines < 1 || t.hosts_per_leaf < 1 => {
                let key = if t.leaves < 1 {
                    "topology.leaves"
                } else if t.spines < 1 {
                    "topology.spines"
                } else {
                    "topology.hosts_per_leaf"
                };
                return err(key, "must be at least 1 (accepted: 1 or more)".into());
            }
            TopologyKind::LeafSpine if (t.leaves as u64) * (t.hosts_per_leaf as u64) < 2 => {
                return err("topology.hosts_per_leaf", "the fabric needs at least 2 hosts".into())
            }
            TopologyKind::FatTree if t.k < 2 || t.k % 2 == 1 || t.k > 64 => {
                return err("topology.k", format!("{} is not accepted (accepted: an even number from 2 to 64)", t.k))
            }
            TopologyKind::File if t.path.as_deref().is_none_or(str::is_empty) => {
                return err(
                    "topology.path",
                    "kind = \"file\" needs a topology file (accepted: path = \"topology.txt\", in the HPCC / ns3-datacenter format)".into(),
                )
            }
            _ => {}
        }
        if let Some(ports) = t.max_switch_ports().filter(|&p| p > MAX_SWITCH_PORTS) {
            return err(
                "topology",
                format!(
                    "a switch would have {ports} ports (accepted: at most {MAX_SWITCH_PORTS} per switch; {})",
                    t.port_keys()
                ),
            );
        }
        if let Some(hosts) = t.host_count().filter(|&h| h > MAX_HOSTS) {
            return err("topology", format!("{hosts} hosts is too many (accepted: at most 1,000,000)"));
        }
        if t.kind != TopologyKind::File {
            for (key, rate) in [("topology.link_rate", t.link_rate), ("topology.uplink_rate", t.uplink_rate)] {
                if rate.0 == 0 {
                    return err(key, "must be positive (for example \"100Gbps\")".into());
                }
            }
        }
        if !is_probability(t.error_rate) {
            return err(
                "topology.error_rate",
                format!("{} is not accepted (accepted: a probability from 0 to 1, such as 1e-5)", t.error_rate),
            );
        }
        if !t.outages.is_empty() {
            let (net, ids) = crate::net::build_with_ids(t)?;
            crate::net::outages(&net, &ids, t)?;
        }
        match t.host_count() {
            Some(hosts) if t.failed_links.is_empty() && t.lossy_links.is_empty() && t.outages.is_empty() => Ok(hosts),
            _ => Ok(crate::net::build(t)?.hosts as u64),
        }
    }
}
