//! Shortest-path routing with every equal-cost next hop kept for ECMP.
//!
//! Hosts hang off one switch each (their edge switch), so every host behind the same
//! edge switch is reached the same way until that switch: routes are kept per (switch,
//! edge switch), and the last hop is the host's own port. Memory and work grow with
//! switches x edge switches, not switches x hosts (a k = 64 fat tree: 5,120 x 2,048).
//!
//! Every built-in topology wires a switch's equal-cost ports next to each other (host
//! ports first, then uplinks), so the next hops are a run of consecutive ports, four
//! bytes in the table. A network where they are not (one read from a file, or with
//! failed links) keeps a list of ports per entry instead. A fat tree's runs follow from
//! the switch and host numbers alone: when the network is wired as `net::build` wires a
//! fat tree (checked against the table, entry by entry), they are computed and no table is
//! read per packet.

use super::graph::{host_switches, Distances, Fabric, Wiring};
use super::topology::NetworkSpec;

/// `count` consecutive ports of a switch from `first`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Run {
    pub first: u16,
    pub count: u16,
}

impl Run {
    fn one(port: u16) -> Run {
        Run { first: port, count: 1 }
    }
}

/// The next hops of a switch toward a host, in port order; never empty for a switch on
/// the way (every host reaches every other: `net::build` refuses networks where not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hops<'a> {
    Run(Run),
    /// Ports that are not side by side.
    Listed(&'a [u16]),
}

impl<'a> Hops<'a> {
    #[inline]
    pub fn count(self) -> usize {
        match self {
            Hops::Run(r) => r.count as usize,
            Hops::Listed(ports) => ports.len(),
        }
    }

    /// The `i`-th next hop (`i < count`).
    #[inline]
    pub fn port(self, i: usize) -> u16 {
        debug_assert!(i < self.count());
        match self {
            Hops::Run(r) => r.first + i as u16,
            Hops::Listed(ports) => ports[i],
        }
    }

    /// The next hop that ECMP picks for a packet whose hash, salted by the switch, is
    /// `hash`: the remainder of `hash` by the number of hops.
    #[inline]
    pub fn ecmp(self, hash: u64) -> u16 {
        let n = self.count() as u64;
        // A mask when n is a power of two (the same remainder, without a division).
        self.port((if n.is_power_of_two() { hash & (n - 1) } else { hash % n }) as usize)
    }

    /// Whether `port` is one of the next hops.
    #[inline]
    pub fn contains(self, port: u16) -> bool {
        match self {
            Hops::Run(r) => port.wrapping_sub(r.first) < r.count,
            Hops::Listed(ports) => ports.contains(&port),
        }
    }

    /// The first next hop.
    #[inline]
    pub fn first(self) -> u16 {
        self.port(0)
    }

    /// The next hops, in port order.
    pub fn ports(self) -> impl Iterator<Item = u16> + 'a {
        (0..self.count()).map(move |i| self.port(i))
    }
}

/// For each switch and destination host, the switch ports on a shortest path.
pub struct Routes {
    lookup: Lookup,
}

/// Each host's edge switch and its port there, and the edge switches numbered.
struct Edges {
    /// The edge switch of each host, and its index among the edge switches.
    host_edge: Vec<(u32, u32)>,
    /// Each host's port at its edge switch.
    host_port: Vec<u16>,
    /// The edge switches, in the order of their first host.
    switches: Vec<u32>,
}

impl Edges {
    fn new(net: &NetworkSpec, wiring: &Wiring) -> Edges {
        let mut edge_index = vec![u32::MAX; net.switches as usize];
        let mut switches = Vec::new();
        let host_edge = host_switches(net, wiring)
            .into_iter()
            .map(|edge| {
                if edge_index[edge as usize] == u32::MAX {
                    edge_index[edge as usize] = switches.len() as u32;
                    switches.push(edge);
                }
                (edge, edge_index[edge as usize])
            })
            .collect();
        let mut host_port = vec![0u16; wiring.host_link.len()];
        for links in &wiring.switch_ports {
            for (p, &l) in links.iter().enumerate() {
                if let super::NodeId::Host(h) = net.links[l as usize].to {
                    host_port[h as usize] = p as u16;
                }
            }
        }
        Edges { host_edge, host_port, switches }
    }

    /// The next hop at `switch` when it is `dst`'s edge switch; otherwise the index of
    /// the edge switch's column in the tables.
    #[inline]
    fn last_hop(&self, switch: u32, dst: u32) -> Result<u16, usize> {
        let (edge, e) = self.host_edge[dst as usize];
        if edge == switch {
            Ok(self.host_port[dst as usize])
        } else {
            Err(e as usize)
        }
    }
}

/// Where a switch's list of next hops sits in `Lookup::Lists::ports`.
#[derive(Clone, Copy, Debug, Default)]
struct Span {
    start: u32,
    count: u16,
}

enum Lookup {
    /// Indexed by switch * edge switches + edge index; empty for a switch's own edge index
    /// (the host port is the next hop there).
    Runs { edges: Edges, runs: Vec<Run> },
    /// As `Runs`, with lists of ports.
    Lists { edges: Edges, spans: Vec<Span>, ports: Vec<u16> },
    /// A fat tree as `net::build` wires it, with `half` = k / 2 (see `fat_tree_hops`).
    FatTree { half: u32 },
}

impl Routes {
    /// The routes of `net` wired as `wiring` says.
    pub fn compute(net: &NetworkSpec, wiring: &Wiring) -> Routes {
        let table = Self::table(net, wiring);
        let lookup = match fat_tree_half(net) {
            Some(half) if table.agrees_with(net, |s, dst| Hops::Run(fat_tree_hops(half, s, dst))) => {
                Lookup::FatTree { half }
            }
            _ => table.lookup,
        };
        Routes { lookup }
    }

    /// The routes read from a table, computed by breadth-first search from each edge
    /// switch: runs of ports when every entry is one, else lists.
    fn table(net: &NetworkSpec, wiring: &Wiring) -> Routes {
        let fabric = Fabric::new(net, wiring);
        let edges = Edges::new(net, wiring);
        let cells = net.switches as usize * edges.switches.len();
        let mut runs = vec![Run::default(); cells];
        let consecutive = each_route(&fabric, &edges.switches, |cell, s, dist| {
            let mut hops = fabric.next_hops(s, dist);
            let first = hops.next().expect("a switch on the way has a next hop");
            let mut count = 1u16;
            for p in hops {
                if p != first + count {
                    return false;
                }
                count += 1;
            }
            runs[cell] = Run { first, count };
            true
        });
        let lookup = if consecutive {
            Lookup::Runs { edges, runs }
        } else {
            drop(runs);
            let mut spans = vec![Span::default(); cells];
            let mut ports = Vec::new();
            each_route(&fabric, &edges.switches, |cell, s, dist| {
                let start = ports.len() as u32;
                ports.extend(fabric.next_hops(s, dist));
                spans[cell] = Span { start, count: (ports.len() as u32 - start) as u16 };
                true
            });
            Lookup::Lists { edges, spans, ports }
        };
        Routes { lookup }
    }

    /// The routes of `net` (wired as `wiring` says) with the cables `down[c]` out of
    /// service: shortest paths over the other links, ports numbered as in `net`. A switch
    /// that no longer reaches an edge switch has no next hop toward its hosts.
    pub fn compute_without(net: &NetworkSpec, wiring: &Wiring, down: &[bool]) -> Routes {
        let kept: Vec<u32> = (0..net.links.len() as u32).filter(|&l| !down[l as usize / 2]).collect();
        let up = NetworkSpec { links: kept.iter().map(|&l| net.links[l as usize].clone()).collect(), ..*net };
        let up_wiring = Wiring::of(&up);
        let mut port_of_link = vec![0u16; net.links.len()];
        for ports in &wiring.switch_ports {
            for (p, &l) in ports.iter().enumerate() {
                port_of_link[l as usize] = p as u16;
            }
        }
        let fabric = Fabric::new(&up, &up_wiring);
        let edges = Edges::new(net, wiring);
        let mut spans = vec![Span::default(); net.switches as usize * edges.switches.len()];
        let mut ports = Vec::new();
        each_route(&fabric, &edges.switches, |cell, s, dist| {
            let start = ports.len();
            let up_ports = &up_wiring.switch_ports[s as usize];
            ports.extend(fabric.next_hops(s, dist).map(|p| port_of_link[kept[up_ports[p as usize] as usize] as usize]));
            ports[start..].sort_unstable();
            spans[cell] = Span { start: start as u32, count: (ports.len() - start) as u16 };
            true
        });
        Routes { lookup: Lookup::Lists { edges, spans, ports } }
    }

    /// Whether `hops` gives the next hops of this (table) routing for every switch and host.
    fn agrees_with(&self, net: &NetworkSpec, hops: impl Fn(u32, u32) -> Hops<'static>) -> bool {
        (0..net.switches).all(|s| (0..net.hosts).all(|dst| self.next_hops(s, dst) == hops(s, dst)))
    }

    /// Candidate egress ports at `switch` toward host `dst`. Always inlined: the engine
    /// calls it per packet and switch, and a `Hops` returned from a call goes through
    /// memory (it is larger than a register since it may hold a list).
    #[inline(always)]
    pub fn next_hops(&self, switch: u32, dst: u32) -> Hops<'_> {
        match &self.lookup {
            Lookup::FatTree { half } => Hops::Run(fat_tree_hops(*half, switch, dst)),
            Lookup::Runs { edges, runs } => match edges.last_hop(switch, dst) {
                Ok(port) => Hops::Run(Run::one(port)),
                Err(e) => Hops::Run(runs[switch as usize * edges.switches.len() + e]),
            },
            Lookup::Lists { edges, spans, ports } => match edges.last_hop(switch, dst) {
                Ok(port) => Hops::Run(Run::one(port)),
                Err(e) => {
                    let span = spans[switch as usize * edges.switches.len() + e];
                    Hops::Listed(&ports[span.start as usize..][..span.count as usize])
                }
            },
        }
    }
}

/// Calls `f(cell, s, dist)` for every edge switch (index e) and every other switch s that
/// reaches it, `cell` being s * edge switches + e and `dist` the hop counts to the edge
/// switch (for `Fabric::next_hops`); stops as soon as `f` returns false, and returns
/// whether it never did.
fn each_route(fabric: &Fabric, edge_switches: &[u32], mut f: impl FnMut(usize, u32, &[u32]) -> bool) -> bool {
    let mut dist = Distances::new();
    for (e, &edge) in edge_switches.iter().enumerate() {
        let reached = fabric.distances(edge, &mut dist);
        for &s in &reached[1..] {
            if !f(s as usize * edge_switches.len() + e, s, &dist) {
                return false;
            }
        }
    }
    true
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
fn fat_tree_hops(half: u32, switch: u32, dst: u32) -> Run {
    // Divisions by `half` are shifts when it is a power of two (k = 4, 8, 16, 32, ...).
    let shift = half.trailing_zeros();
    let div = |x: u32| if half.is_power_of_two() { x >> shift } else { x / half };
    let rem = |x: u32| if half.is_power_of_two() { x & (half - 1) } else { x % half };
    let pods_start = 2 * half; // k
    let edge_of_dst = div(dst);
    let pod_of_dst = div(edge_of_dst);
    let uplinks = Run { first: half as u16, count: half as u16 };
    if switch < pods_start * half {
        // An edge switch.
        if switch == edge_of_dst {
            Run::one(rem(dst) as u16)
        } else {
            uplinks
        }
    } else if switch < 2 * pods_start * half {
        // An aggregation switch.
        if div(switch - pods_start * half) == pod_of_dst {
            Run::one(rem(edge_of_dst) as u16)
        } else {
            uplinks
        }
    } else {
        Run::one(pod_of_dst as u16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::config::{Topology, TopologyKind};
    use crate::net::NodeId;
    use std::collections::VecDeque;

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

    /// Checks every switch's next hops toward every host against the oracle; returns the
    /// routes.
    fn check_against_oracle(net: &NetworkSpec, what: &str) -> Routes {
        let wiring = Wiring::of(net);
        let routes = Routes::compute(net, &wiring);
        for dst in 0..net.hosts {
            let expected = oracle(net, &wiring.switch_ports, dst);
            for s in 0..net.switches {
                let hops = routes.next_hops(s, dst);
                assert_eq!(hops.ports().collect::<Vec<_>>(), expected[s as usize], "{what}: switch {s} to host {dst}");
                assert_eq!(hops.count(), expected[s as usize].len());
            }
        }
        routes
    }

    /// A leaf-spine of 3 leaves and 3 spines, 3 hosts per leaf (hosts are nodes 0-8,
    /// leaves 9-11, spines 12-14), with `failed` links down.
    fn leaf_spine(failed: Vec<[u32; 2]>) -> NetworkSpec {
        let t = Topology {
            kind: TopologyKind::LeafSpine,
            leaves: 3,
            spines: 3,
            hosts_per_leaf: 3,
            failed_links: failed,
            ..Default::default()
        };
        crate::net::build(&t).unwrap()
    }

    #[test]
    fn ecmp_picks_the_remainder_of_the_hash() {
        let listed = [7u16, 3, 9, 4, 12, 5, 6, 1, 2];
        for n in 1..=listed.len() {
            for hops in [Hops::Run(Run { first: 10, count: n as u16 }), Hops::Listed(&listed[..n])] {
                for hash in [0, 1, 5, 6, 7, 8, 255, 0x9e37_79b9_7f4a_7c15, u64::MAX] {
                    assert_eq!(hops.ecmp(hash), hops.port((hash % n as u64) as usize), "{hops:?}, hash {hash}");
                }
            }
        }
    }

    #[test]
    fn next_hops_are_every_shortest_path_port() {
        for t in [
            Topology { kind: TopologyKind::Star, hosts: 5, ..Default::default() },
            Topology { kind: TopologyKind::Dumbbell, hosts: 3, hosts_right: 2, ..Default::default() },
            Topology { kind: TopologyKind::FatTree, k: 4, ..Default::default() },
            Topology { kind: TopologyKind::FatTree, k: 6, ..Default::default() },
        ] {
            let net = crate::net::build(&t).unwrap();
            check_against_oracle(&net, &format!("{:?}", t.kind));
        }
        let routes = check_against_oracle(&leaf_spine(Vec::new()), "leaf_spine");
        assert!(matches!(routes.lookup, Lookup::Runs { .. }));
        // Every host pair is reached, so every switch on the way has a next hop.
        let net = leaf_spine(Vec::new());
        assert!((0..net.switches).all(|s| (0..net.hosts).all(|d| routes.next_hops(s, d).count() > 0)));
    }

    /// With the link from leaf 1 to spine 1 down, leaf 0 reaches leaf 1 through spines 0
    /// and 2 only: ports 3 and 5, not side by side, so the routes are lists. Spine 1 goes
    /// round through leaf 0 or 2 and then any other spine: 4 hops instead of 2.
    #[test]
    fn failed_links_make_lists_of_next_hops() {
        let net = leaf_spine(vec![[10, 13]]);
        assert_eq!(net.links.len(), 2 * (9 + 9 - 1));
        let routes = check_against_oracle(&net, "leaf_spine with a failed link");
        assert!(matches!(routes.lookup, Lookup::Lists { .. }));
        let host_on_leaf1 = 3;
        assert_eq!(routes.next_hops(0, host_on_leaf1), Hops::Listed(&[3, 5]));
        // Spine 1 (switch 4) has two ports left, to leaves 0 and 2.
        assert_eq!(routes.next_hops(4, host_on_leaf1).ports().collect::<Vec<_>>(), vec![0, 1]);
        // Toward leaf 0, nothing changed at leaf 2.
        assert_eq!(routes.next_hops(2, 0).ports().collect::<Vec<_>>(), vec![3, 4, 5]);
    }

    /// A fat tree's next hops are computed, not read from the table (which they match:
    /// `compute` checks it).
    #[test]
    fn fat_trees_compute_their_routes() {
        let lookup = |t: &Topology| {
            let net = crate::net::build(t).unwrap();
            Routes::compute(&net, &Wiring::of(&net)).lookup
        };
        for k in [2, 4, 8, 16] {
            let t = Topology { kind: TopologyKind::FatTree, k, ..Default::default() };
            assert!(matches!(lookup(&t), Lookup::FatTree { half } if half == k / 2), "k = {k}");
        }
        let leaf_spine = Topology { kind: TopologyKind::LeafSpine, ..Default::default() };
        assert!(matches!(lookup(&leaf_spine), Lookup::Runs { .. }));
        // A fat tree with a link down is routed by its table.
        let t = Topology { kind: TopologyKind::FatTree, k: 4, failed_links: vec![[16, 24]], ..Default::default() };
        assert!(matches!(lookup(&t), Lookup::Lists { .. } | Lookup::Runs { .. }));
    }
}
