//! The network a scenario builds, told as facts for tools that reason about it without
//! running it (the advisor, `shoal advise check`): its hosts, each switch's ports, the
//! hosts its traffic goes to, and its longest route with that route's base round trip,
//! all as the core builds and computes them (a topology file and failed links included).

use super::Scenario;
use crate::config::ScenarioError;
use crate::net::{self, NodeId};
use crate::units::{Rate, Time};
use serde::Serialize;

/// The node at the far end of a switch port: a host's index among the hosts, a switch's
/// among the switches. A port serializes it as its key `"host"` or `"switch"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Peer {
    Host(u32),
    Switch(u32),
}

/// One port of a switch: the link out of it. The link back (the cable's other direction)
/// has the same rate and delay.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Port {
    #[serde(flatten)]
    pub to: Peer,
    pub rate_bps: u64,
    /// One-way propagation delay, in picoseconds.
    pub delay_ps: u64,
    /// Whether a queue can build at the port: it leads to a switch, or to one of
    /// `NetworkFacts::receivers`.
    pub congestible: bool,
}

/// One link of a route.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Hop {
    pub rate_bps: u64,
    /// One-way propagation delay, in picoseconds.
    pub delay_ps: u64,
}

/// The facts of a scenario's network (`Scenario::network_facts`).
///
/// Invariants: every `Peer` names a host below `hosts` or a switch below
/// `switches.len()`; `receivers` is sorted and distinct, each below `hosts`;
/// `longest_path` runs from a host to another (at least two links), and
/// `base_round_trip_ps` is the sum over it of 2 x delay + the serialization of one TCP
/// segment and one ACK (each link's rounded up to a whole picosecond, as a run times
/// them).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NetworkFacts {
    pub hosts: u32,
    /// Each switch's ports, in port order: a pool is a run of `switch.ports_per_pool`
    /// consecutive ports. A failed link is no port.
    pub switches: Vec<Vec<Port>>,
    /// The hosts some workload's flows can go to (`Workload::receiver_hosts`; every
    /// host for a trace).
    pub receivers: Vec<u32>,
    /// The C of the rules that scale with the host link rate: the fastest host link
    /// (`Topology::host_rate`).
    pub host_rate_bps: u64,
    /// The links of the longest host-to-host route (`Topology::longest_path`), in order.
    pub longest_path: Vec<Hop>,
    pub base_round_trip_ps: u64,
}

impl Scenario {
    /// The facts of the scenario's network. The scenario must be valid (`validate`):
    /// the builders assume checked keys.
    pub fn network_facts(&self) -> Result<NetworkFacts, ScenarioError> {
        let net = net::build(&self.topology)?;
        let receivers = self.receiver_hosts(net.hosts)?;
        let mut receives = vec![false; net.hosts as usize];
        for &h in &receivers {
            receives[h as usize] = true;
        }
        let mut switches = vec![Vec::new(); net.switches as usize];
        for l in &net.links {
            let NodeId::Switch(s) = l.from else { continue };
            let (to, congestible) = match l.to {
                NodeId::Host(h) => (Peer::Host(h), receives[h as usize]),
                NodeId::Switch(n) => (Peer::Switch(n), true),
            };
            switches[s as usize].push(Port { to, rate_bps: l.rate_bps, delay_ps: l.delay, congestible });
        }
        let (longest_path, base_round_trip_ps) = self.tcp_round_trip_path()?;
        Ok(NetworkFacts {
            hosts: net.hosts,
            switches,
            receivers,
            host_rate_bps: self.topology.host_rate()?.0,
            longest_path: longest_path.iter().map(|&(r, d)| Hop { rate_bps: r.0, delay_ps: d.0 }).collect(),
            base_round_trip_ps,
        })
    }

    /// The longest path and its base round trip (`Topology::round_trip_path`) for one TCP
    /// segment (`transport.mss + transport.header`) and its ACK (`transport.ack_size`):
    /// the RTT of the derived ECN cut-off and of the advisor.
    pub(super) fn tcp_round_trip_path(&self) -> Result<(Vec<(Rate, Time)>, u64), ScenarioError> {
        let tr = &self.transport;
        self.topology.round_trip_path(tr.mss as u64 + tr.header as u64, tr.ack_size as u64)
    }

    /// The hosts some workload's flows can go to, sorted and distinct; those of a
    /// `receiver` out of range left out (no port leads there).
    fn receiver_hosts(&self, hosts: u32) -> Result<Vec<u32>, ScenarioError> {
        let mut out = Vec::new();
        for (path, w) in self.workload_paths() {
            match w.receiver_hosts(hosts, &path)? {
                Some(set) => out.extend(set.into_iter().filter(|&h| h < hosts)),
                None => return Ok((0..hosts).collect()),
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A leaf-spine of `leaves` leaves, 2 spines and 2 hosts per leaf: host links of 100
    /// Gbps and 1 us, uplinks of 40 Gbps and 2 us; TCP's default segment and ACK (1,514 B
    /// and 64 B); hosts 1 and 2 receive.
    fn leaf_spine(leaves: u32, failed_links: &str) -> NetworkFacts {
        let toml = format!(
            "[topology]\nkind = \"leaf_spine\"\nleaves = {leaves}\nspines = 2\nhosts_per_leaf = 2\n\
             link_rate = \"100Gbps\"\nlink_delay = \"1us\"\nuplink_rate = \"40Gbps\"\nuplink_delay = \"2us\"\n\
             failed_links = {failed_links}\n\
             [workload]\npattern = \"many_to_few\"\nsenders = \"0,3\"\nreceivers = \"1-2\"\nflows = 10\n"
        );
        let sc = Scenario::from_toml(&toml).unwrap();
        sc.validate().unwrap();
        sc.resolved().unwrap().network_facts().unwrap()
    }

    fn port(to: Peer, congestible: bool) -> Port {
        match to {
            Peer::Host(_) => Port { to, rate_bps: 100_000_000_000, delay_ps: 1_000_000, congestible },
            Peer::Switch(_) => Port { to, rate_bps: 40_000_000_000, delay_ps: 2_000_000, congestible },
        }
    }

    /// A host link's share of the round trip: 2 x 1 us + 1,578 B x 8 / 100 Gbps; an
    /// uplink's: 2 x 2 us + 1,578 B x 8 / 40 Gbps.
    const HOST_LINK_PS: u64 = 2_000_000 + 126_240;
    const UPLINK_PS: u64 = 4_000_000 + 315_600;
    const HOST: Hop = Hop { rate_bps: 100_000_000_000, delay_ps: 1_000_000 };
    const UP: Hop = Hop { rate_bps: 40_000_000_000, delay_ps: 2_000_000 };

    #[test]
    fn a_leaf_spine_as_worked_out_by_hand() {
        let facts = leaf_spine(2, "[]");
        use Peer::{Host, Switch};
        assert_eq!(facts.hosts, 4);
        assert_eq!(facts.receivers, [1, 2]);
        assert_eq!(facts.host_rate_bps, 100_000_000_000);
        // Leaves 0 and 1, then spines 2 and 3; a leaf's hosts come before its uplinks.
        // Host ports congest where their host receives; switch ports always may.
        assert_eq!(
            facts.switches,
            [
                vec![port(Host(0), false), port(Host(1), true), port(Switch(2), true), port(Switch(3), true)],
                vec![port(Host(2), true), port(Host(3), false), port(Switch(2), true), port(Switch(3), true)],
                vec![port(Switch(0), true), port(Switch(1), true)],
                vec![port(Switch(0), true), port(Switch(1), true)],
            ]
        );
        // Host, leaf, spine, leaf, host.
        assert_eq!(facts.longest_path, [HOST, UP, UP, HOST]);
        assert_eq!(facts.base_round_trip_ps, 2 * HOST_LINK_PS + 2 * UPLINK_PS);
        assert_eq!(facts.base_round_trip_ps, 12_883_680);
    }

    /// A port names its far end by a key of its own: `{"host": 3, "rate_bps": ...}`.
    #[test]
    fn a_port_serializes_flat() {
        let port = serde_json::to_value(port(Peer::Switch(2), true)).unwrap();
        assert_eq!(
            port,
            serde_json::json!({"switch": 2, "rate_bps": 40_000_000_000u64, "delay_ps": 2_000_000, "congestible": true})
        );
    }

    /// Three leaves, leaf 0 cut off spine 0 and leaf 1 off spine 1 (node ids: hosts 0-5,
    /// leaves 6-8, spines 9-10): leaves 0 and 1 lose a port, and a packet from leaf 0 to
    /// leaf 1 goes by spine 1, leaf 2 and spine 0, two uplinks more.
    #[test]
    fn failed_links_take_ports_away_and_lengthen_the_longest_path() {
        use Peer::{Host, Switch};
        let whole = leaf_spine(3, "[]");
        assert_eq!(whole.longest_path, [HOST, UP, UP, HOST]);
        let cut = leaf_spine(3, "[[6, 9], [7, 10]]");
        assert_eq!(cut.switches[0], [port(Host(0), false), port(Host(1), true), port(Switch(4), true)]);
        assert_eq!(cut.switches[1], [port(Host(2), true), port(Host(3), false), port(Switch(3), true)]);
        assert_eq!(cut.switches[2], whole.switches[2]);
        assert_eq!(cut.switches[3], [port(Switch(1), true), port(Switch(2), true)]);
        assert_eq!(cut.switches[4], [port(Switch(0), true), port(Switch(2), true)]);
        assert_eq!(cut.longest_path, [HOST, UP, UP, UP, UP, HOST]);
        assert_eq!(cut.base_round_trip_ps, 2 * HOST_LINK_PS + 4 * UPLINK_PS);
    }

    /// The receivers are those the workload generator draws from: an incast's `receiver`
    /// unless `receivers` is set, joined over the extra workloads.
    #[test]
    fn receivers_follow_the_patterns() {
        let receivers = |workload: &str| {
            let sc = Scenario::from_toml(&format!("[topology]\nhosts = 8\n{workload}")).unwrap();
            sc.validate().unwrap();
            sc.network_facts().unwrap().receivers
        };
        assert_eq!(receivers("[workload]\npattern = \"incast\"\nreceiver = 5\n"), [5]);
        assert_eq!(receivers("[workload]\npattern = \"incast\"\nreceivers = \"2-3\"\n"), [2, 3]);
        let two = "[workload]\npattern = \"incast\"\nreceiver = 6\n\
                   [[workload.extra]]\npattern = \"many_to_few\"\nreceivers = [1, \"3-4\"]\nflows = 5\n";
        assert_eq!(receivers(two), [1, 3, 4, 6]);
        assert_eq!(receivers("[workload]\nflows = 5\n"), (0..8).collect::<Vec<u32>>());
    }
}
