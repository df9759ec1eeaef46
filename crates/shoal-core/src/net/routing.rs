//! Shortest-path routing with every equal-cost next hop kept for ECMP.

use super::topology::{NetworkSpec, NodeId};
use std::collections::VecDeque;

/// For each switch and destination host, the switch ports on a shortest path.
pub struct Routes {
    hosts: usize,
    /// (offset, count) into `ports`, indexed by switch * hosts + dst.
    spans: Vec<(u32, u16)>,
    ports: Vec<u16>,
}

impl Routes {
    /// `switch_ports[s]` lists the link ids of switch s's ports in port order.
    pub fn compute(net: &NetworkSpec, switch_ports: &[Vec<u32>], host_link: &[u32]) -> Routes {
        let hosts = net.hosts as usize;
        let switches = net.switches as usize;
        // Neighbours of each switch: (port index, peer).
        let peers: Vec<Vec<(u16, NodeId)>> = switch_ports
            .iter()
            .map(|links| links.iter().enumerate().map(|(p, &l)| (p as u16, net.links[l as usize].to)).collect())
            .collect();
        let mut spans = vec![(0u32, 0u16); switches * hosts];
        let mut ports = Vec::new();
        let mut dist = vec![u32::MAX; switches];
        let mut frontier = VecDeque::new();
        for dst in 0..hosts {
            dist.fill(u32::MAX);
            let NodeId::Switch(first) = net.links[host_link[dst] as usize].to else {
                unreachable!("a host's link goes to a switch")
            };
            dist[first as usize] = 1;
            frontier.push_back(first as usize);
            while let Some(s) = frontier.pop_front() {
                for &(_, peer) in &peers[s] {
                    if let NodeId::Switch(n) = peer {
                        if dist[n as usize] == u32::MAX {
                            dist[n as usize] = dist[s] + 1;
                            frontier.push_back(n as usize);
                        }
                    }
                }
            }
            for s in 0..switches {
                let start = ports.len() as u32;
                for &(port, peer) in &peers[s] {
                    let next_hop = match peer {
                        NodeId::Host(h) => h as usize == dst && dist[s] == 1,
                        NodeId::Switch(n) => dist[n as usize] != u32::MAX && dist[n as usize] + 1 == dist[s],
                    };
                    if next_hop {
                        ports.push(port);
                    }
                }
                spans[s * hosts + dst] = (start, (ports.len() as u32 - start) as u16);
            }
        }
        Routes { hosts, spans, ports }
    }

    /// Candidate egress ports at `switch` toward host `dst`.
    #[inline]
    pub fn next_hops(&self, switch: u32, dst: u32) -> &[u16] {
        let (start, count) = self.spans[switch as usize * self.hosts + dst as usize];
        &self.ports[start as usize..start as usize + count as usize]
    }
}
