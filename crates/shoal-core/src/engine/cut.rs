//! Cutting a network into partitions for the parallel engine: which thread owns which
//! node, and the lookahead the cut allows.
//!
//! A host goes with its switch, and the cut runs between switches, where it is cheapest:
//! the switches of the top tier (the cores of a fat tree, the spines of a leaf-spine) are
//! taken away, the rest falls apart into pods (or leaves, or leaf groups), and the pods
//! are dealt out so that each partition has about as many hosts; the top tier is dealt out
//! in turn. A network whose switches all have hosts (a star, a ring) is cut into runs of
//! consecutive switches. Only links between partitions bound the windows, so the cut
//! leaves host links, whose delay may be 0, inside.

use crate::net::{NetworkSpec, NodeId};
use crate::sim::Ps;
use std::collections::VecDeque;

/// Which partition owns each node; a link belongs to the partition of the node that
/// transmits on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Cut {
    /// The partition of each host.
    pub host: Vec<u16>,
    /// The partition of each switch.
    pub switch: Vec<u16>,
    /// Partitions (at most the number asked for: a network may not cut that finely).
    pub parts: usize,
    /// The smallest propagation delay of a link between two partitions (`Ps::MAX` with
    /// one partition): no packet sent in one partition reaches another sooner.
    pub lookahead: Ps,
}

impl Cut {
    /// The partition of `node`.
    pub fn of(&self, node: NodeId) -> u16 {
        match node {
            NodeId::Host(h) => self.host[h as usize],
            NodeId::Switch(s) => self.switch[s as usize],
        }
    }

    /// `net` cut into at most `parts` partitions (see the module's doc).
    pub fn new(net: &NetworkSpec, parts: usize) -> Cut {
        let switches = net.switches as usize;
        let mut neighbours = vec![Vec::new(); switches];
        let mut hosts_of = vec![0u32; switches];
        let mut host_switch = vec![0u32; net.hosts as usize];
        for l in &net.links {
            match (l.from, l.to) {
                (NodeId::Switch(a), NodeId::Switch(b)) => neighbours[a as usize].push(b),
                (NodeId::Host(h), NodeId::Switch(s)) => {
                    host_switch[h as usize] = s;
                    hosts_of[s as usize] += 1;
                }
                _ => {}
            }
        }
        let tier = tiers(&neighbours, &hosts_of);
        let top = tier.iter().copied().max().unwrap_or(0);
        let mut switch = vec![u16::MAX; switches];
        let parts = parts.max(1);
        if top == 0 {
            // Every switch has hosts: runs of consecutive switches, about as many hosts
            // each.
            let total: u64 = hosts_of.iter().map(|&h| h as u64).sum::<u64>().max(1);
            let mut seen = 0u64;
            for s in 0..switches {
                switch[s] = ((seen * parts as u64 / total) as usize).min(parts - 1) as u16;
                seen += hosts_of[s] as u64;
            }
        } else {
            let pods = pods(&neighbours, &tier, top);
            // The largest pods first, each to the partition with the fewest hosts so far
            // (the lowest-numbered of those).
            let mut order: Vec<usize> = (0..pods.len()).collect();
            let weight = |p: &Vec<u32>| p.iter().map(|&s| hosts_of[s as usize] as u64).sum::<u64>();
            order.sort_by_key(|&i| (std::cmp::Reverse(weight(&pods[i])), pods[i][0]));
            let mut load = vec![0u64; parts];
            for i in order {
                let part = (0..parts).min_by_key(|&p| (load[p], p)).expect("one partition at least");
                load[part] += weight(&pods[i]);
                for &s in &pods[i] {
                    switch[s as usize] = part as u16;
                }
            }
            let used = load.iter().filter(|&&l| l > 0).count().max(1);
            let mut next = 0;
            for s in 0..switches {
                if tier[s] == top {
                    switch[s] = (next % used) as u16;
                    next += 1;
                }
            }
        }
        let used = switch.iter().map(|&p| p as usize + 1).max().unwrap_or(1);
        let host = host_switch.iter().map(|&s| switch.get(s as usize).copied().unwrap_or(0)).collect();
        let mut cut = Cut { host, switch, parts: used, lookahead: Ps::MAX };
        cut.lookahead =
            net.links.iter().filter(|l| cut.of(l.from) != cut.of(l.to)).map(|l| l.delay).min().unwrap_or(Ps::MAX);
        cut
    }
}

/// Each switch's tier: 0 for a switch with hosts, else its distance in hops from the
/// nearest one (a switch that reaches none is of tier 0).
fn tiers(neighbours: &[Vec<u32>], hosts_of: &[u32]) -> Vec<u32> {
    let mut tier = vec![u32::MAX; neighbours.len()];
    let mut queue = VecDeque::new();
    for (s, &h) in hosts_of.iter().enumerate() {
        if h > 0 {
            tier[s] = 0;
            queue.push_back(s);
        }
    }
    while let Some(s) = queue.pop_front() {
        for &n in &neighbours[s] {
            if tier[n as usize] == u32::MAX {
                tier[n as usize] = tier[s] + 1;
                queue.push_back(n as usize);
            }
        }
    }
    tier.iter().map(|&t| if t == u32::MAX { 0 } else { t }).collect()
}

/// The switches below the top tier, in connected groups once the top tier is taken
/// away, each group's switches in index order, the groups in order of their first.
fn pods(neighbours: &[Vec<u32>], tier: &[u32], top: u32) -> Vec<Vec<u32>> {
    let mut pod_of = vec![usize::MAX; neighbours.len()];
    let mut pods: Vec<Vec<u32>> = Vec::new();
    for start in 0..neighbours.len() {
        if tier[start] == top || pod_of[start] != usize::MAX {
            continue;
        }
        let id = pods.len();
        let mut members = vec![start as u32];
        pod_of[start] = id;
        let mut i = 0;
        while i < members.len() {
            for &n in &neighbours[members[i] as usize] {
                if tier[n as usize] != top && pod_of[n as usize] == usize::MAX {
                    pod_of[n as usize] = id;
                    members.push(n);
                }
            }
            i += 1;
        }
        members.sort_unstable();
        pods.push(members);
    }
    pods
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::build_with_ids;
    use crate::scenario::Scenario;

    fn net(toml: &str) -> NetworkSpec {
        let sc = Scenario::from_toml(toml).unwrap();
        build_with_ids(&sc.topology).unwrap().0
    }

    /// The switches of each partition, by index.
    fn members(cut: &Cut) -> Vec<Vec<u32>> {
        let mut parts = vec![Vec::new(); cut.parts];
        for (s, &p) in cut.switch.iter().enumerate() {
            parts[p as usize].push(s as u32);
        }
        parts
    }

    /// A k = 4 fat tree in two: two pods each (4 hosts per pod), two cores each; only
    /// aggregation-to-core links cross, so the lookahead is their delay, not the host
    /// links'. Every host is with its edge switch.
    #[test]
    fn a_fat_tree_is_cut_between_pods_and_cores() {
        let spec = net("[topology]\nkind = \"fat_tree\"\nk = 4\nlink_delay = \"1us\"");
        let cut = Cut::new(&spec, 2);
        assert_eq!(cut.parts, 2);
        let hosts = |p: u16| cut.host.iter().filter(|&&q| q == p).count();
        assert_eq!((hosts(0), hosts(1)), (8, 8));
        for l in &spec.links {
            if let (NodeId::Host(_), s) | (s, NodeId::Host(_)) = (l.from, l.to) {
                assert_eq!(cut.of(l.from), cut.of(l.to), "a host is with its switch {s:?}");
            }
        }
        let crossing: Vec<_> = spec.links.iter().filter(|l| cut.of(l.from) != cut.of(l.to)).collect();
        assert!(!crossing.is_empty());
        assert_eq!(cut.lookahead, 1_000_000);
        assert_eq!(members(&cut).iter().map(Vec::len).collect::<Vec<_>>(), [10, 10], "4 pods of 4, 4 cores");
    }

    /// Partitions never outnumber what the network can give: a leaf-spine of 3 leaves
    /// asked for 8 makes 3 (a leaf each, the spines dealt among them); one partition has
    /// no lookahead.
    #[test]
    fn a_network_is_cut_at_most_as_finely_as_it_can_be() {
        let spec = net("[topology]\nkind = \"leaf_spine\"\nleaves = 3\nspines = 2\nhosts_per_leaf = 4");
        let cut = Cut::new(&spec, 8);
        assert_eq!(cut.parts, 3);
        let one = Cut::new(&spec, 1);
        assert_eq!((one.parts, one.lookahead), (1, Ps::MAX));
        assert!(one.switch.iter().all(|&p| p == 0));
    }

    /// A star has one switch: nothing to cut.
    #[test]
    fn a_star_is_one_partition() {
        let spec = net("[topology]\nkind = \"star\"\nhosts = 8");
        assert_eq!(Cut::new(&spec, 4).parts, 1);
    }
}
