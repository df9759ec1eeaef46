//! Shortest-path routing with every equal-cost next hop kept for ECMP.
//!
//! Hosts hang off one switch each (their edge switch), so every host behind the same
//! edge switch is reached the same way until that switch: routes are kept per (switch,
//! edge switch), and the last hop is the host's own port. Memory and work grow with
//! switches x edge switches, not switches x hosts (a k = 64 fat tree: 5,120 x 2,048).
//!
//! Every topology wires a switch's equal-cost ports next to each other (host ports
//! first, then uplinks), so the next hops are a run of consecutive ports, four bytes in
//! the table. A fat tree's runs follow from the switch and host numbers alone: when the
//! network is wired as `net::build` wires a fat tree (checked against the table, entry by
//! entry), they are computed and no table is read per packet.

use super::topology::{NetworkSpec, NodeId};
use std::collections::VecDeque;

/// The next hops of a switch toward a host: `count` consecutive ports from `first`, in
/// port order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hops {
    pub first: u16,
    pub count: u16,
}

impl Hops {
    /// The `i`-th next hop (`i < count`).
    #[inline]
    pub fn port(self, i: usize) -> u16 {
        debug_assert!(i < self.count as usize);
        self.first + i as u16
    }

    /// The next hops, in port order.
    pub fn ports(self) -> impl Iterator<Item = u16> {
        self.first..self.first + self.count
    }

    fn one(port: u16) -> Hops {
        Hops { first: port, count: 1 }
    }
}

/// For each switch and destination host, the switch ports on a shortest path.
pub struct Routes {
    lookup: Lookup,
}

enum Lookup {
    Table {
        /// The edge switch of each host, and its index among the edge switches.
        host_edge: Vec<(u32, u32)>,
        /// Each host's port at its edge switch.
        host_port: Vec<u16>,
        edges: usize,
        /// Indexed by switch * edges + edge index; empty for a switch's own edge index
        /// (the host port is the next hop there).
        spans: Vec<Hops>,
    },
    /// A fat tree as `net::build` wires it, with `half` = k / 2 (see `fat_tree_hops`).
    FatTree { half: u32 },
}

impl Routes {
    /// `switch_ports[s]` lists the link ids of switch s's ports in port order (at most
    /// 65,535: the scenario refuses larger switches); `host_link[h]` is host h's link.
    ///
    /// Panics if some switch's next hops toward a host are not consecutive ports (no
    /// topology builder wires them so).
    pub fn compute(net: &NetworkSpec, switch_ports: &[Vec<u32>], host_link: &[u32]) -> Routes {
        let table = Self::table(net, switch_ports, host_link);
        let lookup = match fat_tree_half(net) {
            Some(half) if table.agrees_with(net, |s, dst| fat_tree_hops(half, s, dst)) => Lookup::FatTree { half },
            _ => table.lookup,
        };
        Routes { lookup }
    }

    /// The routes read from a table, computed by breadth-first search from each edge switch.
    fn table(net: &NetworkSpec, switch_ports: &[Vec<u32>], host_link: &[u32]) -> Routes {
        let switches = net.switches as usize;
        // Neighbours of each switch: (port index, peer switch).
        let peers: Vec<Vec<(u16, u32)>> = switch_ports
            .iter()
            .map(|links| {
                debug_assert!(links.len() <= u16::MAX as usize, "validated: a port index fits 16 bits");
                links
                    .iter()
                    .enumerate()
                    .filter_map(|(p, &l)| match net.links[l as usize].to {
                        NodeId::Switch(n) => Some((p as u16, n)),
                        NodeId::Host(_) => None,
                    })
                    .collect()
            })
            .collect();
        let mut edge_index = vec![u32::MAX; switches];
        let mut edge_switches = Vec::new();
        let mut host_edge = Vec::with_capacity(host_link.len());
        let mut host_port = vec![0u16; host_link.len()];
        for &link in host_link {
            let NodeId::Switch(edge) = net.links[link as usize].to else {
                unreachable!("a host's link goes to a switch")
            };
            if edge_index[edge as usize] == u32::MAX {
                edge_index[edge as usize] = edge_switches.len() as u32;
                edge_switches.push(edge);
            }
            host_edge.push((edge, edge_index[edge as usize]));
        }
        for (s, links) in switch_ports.iter().enumerate() {
            for (p, &l) in links.iter().enumerate() {
                if let NodeId::Host(h) = net.links[l as usize].to {
                    debug_assert_eq!(host_edge[h as usize].0 as usize, s);
                    host_port[h as usize] = p as u16;
                }
            }
        }
        let edges = edge_switches.len();
        let mut spans = vec![Hops::default(); switches * edges];
        let mut dist = vec![u32::MAX; switches];
        let mut frontier = VecDeque::new();
        for (e, &edge) in edge_switches.iter().enumerate() {
            dist.fill(u32::MAX);
            dist[edge as usize] = 0;
            frontier.push_back(edge as usize);
            while let Some(s) = frontier.pop_front() {
                for &(_, n) in &peers[s] {
                    if dist[n as usize] == u32::MAX {
                        dist[n as usize] = dist[s] + 1;
                        frontier.push_back(n as usize);
                    }
                }
            }
            for s in (0..switches).filter(|&s| dist[s] != 0 && dist[s] != u32::MAX) {
                let mut hops = peers[s].iter().filter(|&&(_, n)| dist[n as usize] + 1 == dist[s]).map(|&(p, _)| p);
                let first = hops.next().expect("a reachable switch has a next hop");
                let count = 1 + hops
                    .enumerate()
                    .inspect(|&(i, p)| {
                        assert_eq!(
                            p as usize,
                            first as usize + 1 + i,
                            "switch {s}: next hops are not consecutive ports"
                        );
                    })
                    .count();
                spans[s * edges + e] = Hops { first, count: count as u16 };
            }
        }
        Routes { lookup: Lookup::Table { host_edge, host_port, edges, spans } }
    }

    /// Whether `hops` gives the next hops of this (table) routing for every switch and host.
    fn agrees_with(&self, net: &NetworkSpec, hops: impl Fn(u32, u32) -> Hops) -> bool {
        (0..net.switches).all(|s| (0..net.hosts).all(|dst| self.next_hops(s, dst) == hops(s, dst)))
    }

    /// Candidate egress ports at `switch` toward host `dst`.
    #[inline]
    pub fn next_hops(&self, switch: u32, dst: u32) -> Hops {
        match &self.lookup {
            Lookup::FatTree { half } => fat_tree_hops(*half, switch, dst),
            Lookup::Table { host_edge, host_port, edges, spans } => {
                let (edge, e) = host_edge[dst as usize];
                if edge == switch {
                    return Hops::one(host_port[dst as usize]);
                }
                spans[switch as usize * edges + e as usize]
            }
        }
    }
}

/// k / 2 when the network has a k-ary fat tree's numbers of hosts and switches.
fn fat_tree_half(net: &NetworkSpec) -> Option<u32> {
    let half = (1..=u16::MAX as u32).find(|&h| 5 * h * h >= net.switches)?;
    (5 * half * half == net.switches && 2 * half * half * half == net.hosts).then_some(half)
}

/// The next hops in a fat tree with `half` = k / 2, numbered as `net::build` numbers it:
/// host h under edge switch h / half (port h % half); edge switches 0..k*half (pod = s /
/// half), aggregation switches next (pod = (s - k*half) / half), then the cores. Edge and
/// aggregation switches have their down ports first (hosts, or the pod's edges in order)
/// and their `half` uplinks after them; a core's port p goes to pod p.
#[inline]
fn fat_tree_hops(half: u32, switch: u32, dst: u32) -> Hops {
    let pods_start = 2 * half; // k
    let edge_of_dst = dst / half;
    let pod_of_dst = edge_of_dst / half;
    let uplinks = Hops { first: half as u16, count: half as u16 };
    if switch < pods_start * half {
        // An edge switch.
        if switch == edge_of_dst {
            Hops::one((dst % half) as u16)
        } else {
            uplinks
        }
    } else if switch < 2 * pods_start * half {
        // An aggregation switch.
        if (switch - pods_start * half) / half == pod_of_dst {
            Hops::one((edge_of_dst % half) as u16)
        } else {
            uplinks
        }
    } else {
        Hops::one(pod_of_dst as u16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Topology, TopologyKind};

    /// Each switch's port links in port order and each host's link, as the engine wires
    /// them (ports numbered in the order of the network's links).
    fn wiring(net: &NetworkSpec) -> (Vec<Vec<u32>>, Vec<u32>) {
        let mut switch_ports = vec![Vec::new(); net.switches as usize];
        let mut host_link = vec![0; net.hosts as usize];
        for (i, l) in net.links.iter().enumerate() {
            match l.from {
                NodeId::Switch(s) => switch_ports[s as usize].push(i as u32),
                NodeId::Host(h) => host_link[h as usize] = i as u32,
            }
        }
        (switch_ports, host_link)
    }

    /// The definition, host by host: a port is a next hop toward `dst` if it leads to
    /// `dst` itself, or to a switch one hop closer to `dst` (breadth-first distances
    /// from `dst` over the whole graph).
    fn oracle(net: &NetworkSpec, switch_ports: &[Vec<u32>], dst: u32) -> Vec<Vec<u16>> {
        let node = |n: NodeId| match n {
            NodeId::Host(h) => h as usize,
            NodeId::Switch(s) => net.hosts as usize + s as usize,
        };
        let mut dist = vec![usize::MAX; (net.hosts + net.switches) as usize];
        dist[dst as usize] = 0;
        let mut frontier = VecDeque::from([NodeId::Host(dst)]);
        while let Some(n) = frontier.pop_front() {
            for l in net.links.iter().filter(|l| l.to == n) {
                // Hosts do not forward: paths leave them only at their start.
                if dist[node(l.from)] == usize::MAX && matches!(l.from, NodeId::Switch(_)) {
                    dist[node(l.from)] = dist[node(n)] + 1;
                    frontier.push_back(l.from);
                }
            }
        }
        (0..net.switches as usize)
            .map(|s| {
                let here = dist[net.hosts as usize + s];
                switch_ports[s]
                    .iter()
                    .enumerate()
                    .filter(|&(_, &l)| {
                        here != usize::MAX && dist[node(net.links[l as usize].to)].checked_add(1) == Some(here)
                    })
                    .map(|(p, _)| p as u16)
                    .collect()
            })
            .collect()
    }

    #[test]
    fn next_hops_are_every_shortest_path_port() {
        let leaf_spine =
            Topology { kind: TopologyKind::LeafSpine, leaves: 3, spines: 2, hosts_per_leaf: 3, ..Default::default() };
        for t in [
            Topology { kind: TopologyKind::Star, hosts: 5, ..Default::default() },
            Topology { kind: TopologyKind::Dumbbell, hosts: 3, hosts_right: 2, ..Default::default() },
            leaf_spine,
            Topology { kind: TopologyKind::FatTree, k: 4, ..Default::default() },
            Topology { kind: TopologyKind::FatTree, k: 6, ..Default::default() },
        ] {
            let net = crate::net::build(&t);
            let (switch_ports, host_link) = wiring(&net);
            let routes = Routes::compute(&net, &switch_ports, &host_link);
            for dst in 0..net.hosts {
                let expected = oracle(&net, &switch_ports, dst);
                for s in 0..net.switches {
                    assert_eq!(
                        routes.next_hops(s, dst).ports().collect::<Vec<_>>(),
                        expected[s as usize],
                        "{:?}: switch {s} to host {dst}",
                        t.kind
                    );
                    assert!(!expected[s as usize].is_empty());
                }
            }
        }
    }

    /// A fat tree's next hops are computed, not read from the table (which they match:
    /// `compute` checks it).
    #[test]
    fn fat_trees_compute_their_routes() {
        for k in [2, 4, 8, 16] {
            let net = crate::net::build(&Topology { kind: TopologyKind::FatTree, k, ..Default::default() });
            let (switch_ports, host_link) = wiring(&net);
            let routes = Routes::compute(&net, &switch_ports, &host_link);
            assert!(matches!(routes.lookup, Lookup::FatTree { half } if half == k / 2), "k = {k}");
        }
        let leaf_spine = Topology { kind: TopologyKind::LeafSpine, ..Default::default() };
        let net = crate::net::build(&leaf_spine);
        let (switch_ports, host_link) = wiring(&net);
        assert!(matches!(Routes::compute(&net, &switch_ports, &host_link).lookup, Lookup::Table { .. }));
    }
}
