//! Searches over a network's switches: hop counts, next hops, reachability and the
//! costliest route. Hosts never forward, so every search runs over the switch fabric and
//! adds the hosts' links at the ends.

use super::spec::{reverse, NetworkSpec, NodeId};
use std::collections::VecDeque;

/// Where each link sits: every switch's ports (link ids in port order: a switch's ports
/// are its outgoing links in the order of the network's links) and each host's link.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Wiring {
    pub switch_ports: Vec<Vec<u32>>,
    pub host_link: Vec<u32>,
}

impl Wiring {
    /// The wiring of `net`, whose hosts each have one link (the builders and the topology
    /// file reader ensure it).
    pub fn of(net: &NetworkSpec) -> Wiring {
        let mut switch_ports = vec![Vec::new(); net.switches as usize];
        let mut host_link = vec![0; net.hosts as usize];
        for (i, l) in net.links.iter().enumerate() {
            match l.from {
                NodeId::Switch(s) => switch_ports[s as usize].push(i as u32),
                NodeId::Host(h) => host_link[h as usize] = i as u32,
            }
        }
        Wiring { switch_ports, host_link }
    }
}

/// A switch's port toward another switch.
#[derive(Clone, Copy, Debug)]
struct Peer {
    port: u16,
    switch: u32,
    /// The link out of that port.
    link: u32,
}

/// The switches and the links between them. Links come in cable pairs, so the fabric
/// is the same graph either way round.
pub struct Fabric {
    peers: Vec<Vec<Peer>>,
}

/// Hop counts from one switch; `UNREACHED` where there is no path.
pub type Distances = Vec<u32>;
pub const UNREACHED: u32 = u32::MAX;

impl Fabric {
    /// The fabric of `net` wired as `wiring` says. A switch has at most 65,535 ports (the
    /// scenario and the topology file reader refuse more), so a port index fits 16 bits.
    pub fn new(net: &NetworkSpec, wiring: &Wiring) -> Fabric {
        let peers = wiring
            .switch_ports
            .iter()
            .map(|links| {
                debug_assert!(links.len() <= u16::MAX as usize, "validated: a port index fits 16 bits");
                links
                    .iter()
                    .enumerate()
                    .filter_map(|(p, &l)| match net.links[l as usize].to {
                        NodeId::Switch(n) => Some(Peer { port: p as u16, switch: n, link: l }),
                        NodeId::Host(_) => None,
                    })
                    .collect()
            })
            .collect();
        Fabric { peers }
    }

    pub fn switches(&self) -> usize {
        self.peers.len()
    }

    /// Hop counts from switch `from` to every switch, in `dist`; returns the switches
    /// reached, nearest first (`from` itself first).
    pub fn distances(&self, from: u32, dist: &mut Distances) -> Vec<u32> {
        dist.clear();
        dist.resize(self.peers.len(), UNREACHED);
        dist[from as usize] = 0;
        let mut order = vec![from];
        let mut frontier = VecDeque::from([from]);
        while let Some(s) = frontier.pop_front() {
            for peer in &self.peers[s as usize] {
                if dist[peer.switch as usize] == UNREACHED {
                    dist[peer.switch as usize] = dist[s as usize] + 1;
                    frontier.push_back(peer.switch);
                    order.push(peer.switch);
                }
            }
        }
        order
    }

    /// Switch `s`'s next hops toward the switch that `dist` counts from: the ports to a
    /// switch one hop closer, in port order (none for that switch itself, or for a switch
    /// that does not reach it).
    pub fn next_hops<'a>(&'a self, s: u32, dist: &'a [u32]) -> impl Iterator<Item = u16> + 'a {
        self.closer(s, dist).map(|p| p.port)
    }

    fn closer<'a>(&'a self, s: u32, dist: &'a [u32]) -> impl Iterator<Item = &'a Peer> + 'a {
        let here = dist[s as usize];
        let closer = move |p: &&Peer| {
            let there = dist[p.switch as usize];
            here != UNREACHED && there != UNREACHED && there + 1 == here
        };
        self.peers[s as usize].iter().filter(closer)
    }
}

/// Each host's edge switch (the far end of its link).
pub fn host_switches(net: &NetworkSpec, wiring: &Wiring) -> Vec<u32> {
    wiring
        .host_link
        .iter()
        .map(|&l| match net.links[l as usize].to {
            NodeId::Switch(s) => s,
            NodeId::Host(_) => unreachable!("a host's link goes to a switch"),
        })
        .collect()
}

/// A host that cannot reach host 0, if any (hosts reach each other through their edge
/// switches).
pub fn cut_off_host(net: &NetworkSpec, wiring: &Wiring) -> Option<u32> {
    let edge = host_switches(net, wiring);
    let first = *edge.first()?;
    let mut dist = Distances::new();
    Fabric::new(net, wiring).distances(first, &mut dist);
    (0..net.hosts).find(|&h| dist[edge[h as usize] as usize] == UNREACHED)
}

/// The costliest route between two different hosts: among the shortest routes (by hop
/// count, those routing uses) of every pair of hosts, the one whose links add up to the
/// most by `cost`; its link ids from source to destination. The first such route in
/// host and port order wins ties. Empty for fewer than two hosts or unconnected ones.
pub fn costliest_route(net: &NetworkSpec, cost: impl Fn(u32) -> u64) -> Vec<u32> {
    let wiring = Wiring::of(net);
    let fabric = Fabric::new(net, &wiring);
    let edge = host_switches(net, &wiring);
    let host_cost = |h: u32| cost(wiring.host_link[h as usize]);
    let mut best: Option<(u64, u32, u32)> = None; // (cost, source host, destination host)
    let mut dist = Distances::new();
    let mut done = vec![false; fabric.switches()];
    for dst in 0..net.hosts {
        let e = edge[dst as usize];
        if std::mem::replace(&mut done[e as usize], true) {
            continue;
        }
        // Every destination behind switch e shares the route to e: the costliest way
        // there from each switch, then the costliest host link down (another host's, for
        // a source behind e itself).
        let worst = costliest_to(&fabric, e, &mut dist, &cost);
        let mut down: Vec<u32> = (0..net.hosts).filter(|&h| edge[h as usize] == e).collect();
        down.sort_by_key(|&h| std::cmp::Reverse(cost(reverse_of(&wiring, h))));
        for src in 0..net.hosts {
            let s = edge[src as usize];
            let Some(&to) = down.iter().find(|&&h| h != src) else { continue };
            if dist[s as usize] == UNREACHED {
                continue;
            }
            let total = host_cost(src) + worst[s as usize].0 + cost(reverse_of(&wiring, to));
            if best.is_none_or(|(c, _, _)| total > c) {
                best = Some((total, src, to));
            }
        }
    }
    let Some((_, src, dst)) = best else { return Vec::new() };
    let e = edge[dst as usize];
    let worst = costliest_to(&fabric, e, &mut dist, &cost);
    let mut route = vec![wiring.host_link[src as usize]];
    let mut s = edge[src as usize];
    while s != e {
        let (_, link) = worst[s as usize];
        route.push(link);
        s = match net.links[link as usize].to {
            NodeId::Switch(n) => n,
            NodeId::Host(_) => unreachable!("fabric links join switches"),
        };
    }
    route.push(reverse_of(&wiring, dst));
    route
}

/// The link into host `h` (the other direction of its own link's cable).
fn reverse_of(wiring: &Wiring, h: u32) -> u32 {
    reverse(wiring.host_link[h as usize])
}

/// For every switch, the costliest shortest way to switch `e`: (its cost, its first
/// link); `dist` gets the hop counts to `e`.
fn costliest_to(fabric: &Fabric, e: u32, dist: &mut Distances, cost: &impl Fn(u32) -> u64) -> Vec<(u64, u32)> {
    let order = fabric.distances(e, dist);
    let mut worst = vec![(0u64, 0u32); fabric.switches()];
    // Nearest first: a switch's next hops are settled before it.
    for &s in &order[1..] {
        let mut way: Option<(u64, u32)> = None;
        for p in fabric.closer(s, dist) {
            let c = cost(p.link) + worst[p.switch as usize].0;
            if way.is_none_or(|(w, _)| c > w) {
                way = Some((c, p.link));
            }
        }
        worst[s as usize] = way.expect("a switch reached from e has a hop closer to e");
    }
    worst
}
