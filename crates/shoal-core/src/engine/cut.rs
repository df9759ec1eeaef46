//! Cutting a network into partitions for the parallel engine: which thread owns which
//! node, and the lookahead the cut allows.
//!
//! A host goes with its switch, and the cut runs between switches, as high as it can:
//! the switches of the top tier (the cores of a fat tree, the spines of a leaf-spine) are
//! taken away, and the rest falls apart into pods (or leaves); when that leaves fewer pods
//! than partitions, the tier below goes too, and so on. The pods are dealt out to the
//! threads' home partitions so that each has about as much traffic; the switches taken
//! away make partitions of their own, which any thread takes once its home is done, so
//! that a window's work evens out when one pod is busier than the others for a while (as
//! it is, with heavy-tailed flows, for milliseconds at a time). A network whose switches
//! all have hosts (a star, a ring) is cut into runs of consecutive switches. Only links
//! between partitions bound the windows, so the cut leaves host links, whose delay may be
//! 0, inside.

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
    /// Partitions: the homes, then those of the switches taken away.
    pub parts: usize,
    /// Home partitions, one a thread at most (the network may not cut that finely): the
    /// first `homes` partitions.
    pub homes: usize,
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

    /// `net` cut for `threads` threads, with as many hosts in each home partition.
    #[cfg(test)]
    pub fn new(net: &NetworkSpec, threads: usize) -> Cut {
        Cut::weighted(net, threads, &vec![1; net.hosts as usize])
    }

    /// `net` cut for `threads` threads (see the module's doc): at most a home partition
    /// for each, balanced by `weight`, each host's share of the work (the traffic it sends
    /// and receives), and at most as many partitions again of the switches above the cut.
    pub fn weighted(net: &NetworkSpec, threads: usize, weight: &[u64]) -> Cut {
        let switches = net.switches as usize;
        let mut neighbours = vec![Vec::new(); switches];
        let mut has_hosts = vec![false; switches];
        let mut weight_of = vec![0u64; switches];
        let mut host_switch = vec![0u32; net.hosts as usize];
        for l in &net.links {
            match (l.from, l.to) {
                (NodeId::Switch(a), NodeId::Switch(b)) => neighbours[a as usize].push(b),
                (NodeId::Host(h), NodeId::Switch(s)) => {
                    host_switch[h as usize] = s;
                    has_hosts[s as usize] = true;
                    weight_of[s as usize] += weight[h as usize];
                }
                _ => {}
            }
        }
        let tier = tiers(&neighbours, &has_hosts);
        let top = tier.iter().copied().max().unwrap_or(0);
        let mut switch = vec![u16::MAX; switches];
        let parts = threads.max(1);
        let mut extras = 0;
        if top == 0 {
            // Every switch has hosts: runs of consecutive switches, about as much work
            // each.
            let total: u64 = weight_of.iter().sum::<u64>().max(1);
            let mut seen = 0u64;
            for s in 0..switches {
                switch[s] = ((seen * parts as u64 / total) as usize).min(parts - 1) as u16;
                seen += weight_of[s];
            }
        } else {
            // The highest tier whose removal leaves pods that share the work out evenly
            // (within `BALANCE`) among the partitions: a fat tree's cores; in a three-tier
            // fabric whose aggregation switches join every rack, the aggregation tier
            // too. Failing that, the most even.
            let dealt: Vec<Dealt> = (1..=top)
                .rev()
                .map(|tier_cut| {
                    let pods = pods(&neighbours, &tier, tier_cut);
                    let (owner, imbalance) = deal(&pods, &weight_of, parts);
                    Dealt { tier: tier_cut, pods, owner, imbalance }
                })
                .collect();
            let best = dealt.iter().position(|d| d.imbalance <= BALANCE).unwrap_or_else(|| {
                (0..dealt.len()).min_by(|&a, &b| dealt[a].imbalance.total_cmp(&dealt[b].imbalance)).unwrap_or(0)
            });
            let Dealt { tier: cut_tier, pods, owner, .. } = &dealt[best];
            for (pod, &part) in pods.iter().zip(owner) {
                for &s in pod {
                    switch[s as usize] = part;
                }
            }
            let homes = owner.iter().map(|&p| p as usize + 1).max().unwrap_or(1);
            let above: Vec<usize> = (0..switches).filter(|&s| tier[s] >= *cut_tier).collect();
            // With one thread, the one partition takes them.
            extras = if parts == 1 { 0 } else { above.len().min(parts) };
            for (i, &s) in above.iter().enumerate() {
                switch[s] = if extras == 0 { 0 } else { (homes + i % extras) as u16 };
            }
        }
        let homes = switch.iter().map(|&p| p as usize + 1).max().unwrap_or(1) - extras;
        let host = host_switch.iter().map(|&s| switch.get(s as usize).copied().unwrap_or(0)).collect();
        let mut cut = Cut { host, switch, parts: homes + extras, homes, lookahead: Ps::MAX };
        cut.lookahead =
            net.links.iter().filter(|l| cut.of(l.from) != cut.of(l.to)).map(|l| l.delay).min().unwrap_or(Ps::MAX);
        cut
    }
}

/// The pods below a tier, and the partition each is dealt to (`deal`).
struct Dealt {
    tier: u32,
    pods: Vec<Vec<u32>>,
    owner: Vec<u16>,
    /// The busiest partition's work over the average.
    imbalance: f64,
}

/// How much more work than the average the busiest partition may get at a tier before
/// the cut goes a tier lower (where the lookahead may be shorter).
const BALANCE: f64 = 1.2;

/// `pods` dealt out to `parts` partitions, the heaviest first, each to the partition with
/// the least work so far (the lowest-numbered of those); returns each pod's partition, and
/// the busiest partition's work over the average (1 when there is none).
fn deal(pods: &[Vec<u32>], weight_of: &[u64], parts: usize) -> (Vec<u16>, f64) {
    let weight = |p: &Vec<u32>| p.iter().map(|&s| weight_of[s as usize]).sum::<u64>();
    let mut order: Vec<usize> = (0..pods.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(weight(&pods[i])), pods[i][0]));
    let mut load = vec![0u64; parts];
    let mut owner = vec![0u16; pods.len()];
    for i in order {
        let part = (0..parts).min_by_key(|&p| (load[p], p)).expect("one partition at least");
        load[part] += weight(&pods[i]);
        owner[i] = part as u16;
    }
    let total: u64 = load.iter().sum();
    let busiest = load.iter().copied().max().unwrap_or(0);
    let imbalance =
        if total == 0 || pods.len() < parts { f64::INFINITY } else { busiest as f64 * parts as f64 / total as f64 };
    (owner, imbalance)
}

/// Each switch's tier: 0 for a switch with hosts, else its distance in hops from the
/// nearest one (a switch that reaches none is of tier 0).
fn tiers(neighbours: &[Vec<u32>], has_hosts: &[bool]) -> Vec<u32> {
    let mut tier = vec![u32::MAX; neighbours.len()];
    let mut queue = VecDeque::new();
    for (s, &h) in has_hosts.iter().enumerate() {
        if h {
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

/// The switches below tier `top`, in connected groups once the switches of that tier and
/// above are taken away, each group's switches in index order, the groups in order of
/// their first.
fn pods(neighbours: &[Vec<u32>], tier: &[u32], top: u32) -> Vec<Vec<u32>> {
    let mut pod_of = vec![usize::MAX; neighbours.len()];
    let mut pods: Vec<Vec<u32>> = Vec::new();
    for start in 0..neighbours.len() {
        if tier[start] >= top || pod_of[start] != usize::MAX {
            continue;
        }
        let id = pods.len();
        let mut members = vec![start as u32];
        pod_of[start] = id;
        let mut i = 0;
        while i < members.len() {
            for &n in &neighbours[members[i] as usize] {
                if tier[n as usize] < top && pod_of[n as usize] == usize::MAX {
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

    /// A k = 4 fat tree for two threads: two homes of two pods each (4 hosts per pod),
    /// and the four cores in two partitions of their own; only aggregation-to-core links
    /// cross, so the lookahead is their delay, not the host links'. Every host is with its
    /// edge switch.
    #[test]
    fn a_fat_tree_is_cut_between_pods_and_cores() {
        let spec = net("[topology]\nkind = \"fat_tree\"\nk = 4\nlink_delay = \"1us\"");
        let cut = Cut::new(&spec, 2);
        assert_eq!((cut.homes, cut.parts), (2, 4));
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
        assert_eq!(members(&cut).iter().map(Vec::len).collect::<Vec<_>>(), [8, 8, 2, 2], "4 pods of 4, 4 cores");
        let tiers: Vec<bool> = members(&cut)[2..].iter().flatten().map(|&s| s >= 16).collect();
        assert!(tiers.iter().all(|&core| core), "the cores are the switches after the pods'");
    }

    /// Partitions never outnumber what the network can give: a leaf-spine of 3 leaves
    /// for 8 threads makes 3 homes (a leaf each) and 2 of the spines; one partition has
    /// no lookahead.
    #[test]
    fn a_network_is_cut_at_most_as_finely_as_it_can_be() {
        let spec = net("[topology]\nkind = \"leaf_spine\"\nleaves = 3\nspines = 2\nhosts_per_leaf = 4");
        let cut = Cut::new(&spec, 8);
        assert_eq!((cut.homes, cut.parts), (3, 5));
        let one = Cut::new(&spec, 1);
        assert_eq!((one.parts, one.lookahead), (1, Ps::MAX));
        assert!(one.switch.iter().all(|&p| p == 0));
    }

    /// ns3-datacenter's 128-host three-tier fabric: taking its top tier away leaves one
    /// pod, so the cut goes a tier lower: 64 hosts a home, the switches above the racks in
    /// two partitions, and only its 5 us links cross (the lookahead).
    #[test]
    fn a_three_tier_fabric_whose_aggregation_joins_every_rack_is_cut_below_it() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../validation/n3dc/topology.txt");
        let spec = net(&format!("[topology]\nkind = \"file\"\npath = \"{path}\""));
        let cut = Cut::new(&spec, 2);
        assert_eq!((cut.homes, cut.parts), (2, 4));
        let hosts = |p: u16| cut.host.iter().filter(|&&q| q == p).count();
        assert_eq!((hosts(0), hosts(1)), (64, 64));
        assert_eq!(cut.lookahead, 5_000_000);
    }

    /// A star has one switch: nothing to cut.
    #[test]
    fn a_star_is_one_partition() {
        let spec = net("[topology]\nkind = \"star\"\nhosts = 8");
        assert_eq!(Cut::new(&spec, 4).parts, 1);
    }
}
