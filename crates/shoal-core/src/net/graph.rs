//! Searches over a network's switches: hop counts and next hops. Hosts never forward, so
//! every search runs over the switch fabric and adds the hosts' links at the ends.

use super::topology::{NetworkSpec, NodeId};
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
                        NodeId::Switch(n) => Some(Peer { port: p as u16, switch: n }),
                        NodeId::Host(_) => None,
                    })
                    .collect()
            })
            .collect();
        Fabric { peers }
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
