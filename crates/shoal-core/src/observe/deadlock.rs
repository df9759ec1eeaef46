//! PFC deadlock detection: a cycle of paused egress queues, each holding packets and none
//! sending for at least a set time.
//!
//! The wait-for graph has a node per stalled (switch, egress port, class): the neighbour
//! on the port paused the class, the pause has lasted `after` or more, and the port's
//! queues hold packets of the class. A node waits for each stalled node of the neighbour
//! (switch d) that holds packets which arrived at d through the paused link in that class:
//! those packets keep d's ingress over its threshold, so d's pause cannot end until they
//! leave. A cycle of waiting nodes can never drain: a deadlock. Looked for every
//! `after / 4`, so a deadlock is reported at most `after / 4` late; a congested fabric
//! whose pauses come and go is not reported, because no pause on its cycles lasts `after`.
//!
//! A network at rest (no event left: with ON/OFF pauses, a deadlock sends no more frames
//! and needs no timer) that still holds packets can never move them again, however short
//! its pauses are; and so can a network where nothing can move by itself (every queued
//! packet held by a pause, nothing on a wire) while hosts' timers still tick: what a
//! host adds then cannot drain a paused queue. Then every paused node that holds packets
//! is stalled, whatever `after` says, and the cycles among them are reported as `frozen`.
//!
//! A stalled node whose neighbour holds no packet at all that came through the paused
//! link has a pause with no cause: the neighbour sent the frame that ends it, and the
//! frame was lost (corrupted on a lossy link: `topology.error_rate`). So has a frozen
//! network with no cycle whose NICs are held. Reported once, as `without_cycle`; the run
//! ends there, whatever `stop` says: nothing can end such a pause, and senders' timeouts
//! would send into it until Shoal's time limit.

use super::{NetView, Observer};
use crate::sim::Ps;
use crate::switch::flow_control::DeadlockWatch;
use crate::switch::mmu::{class_of, CLASSES};
use crate::switch::Switch;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

/// The egress queues of one class at one port of one switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
pub struct PortClass {
    pub switch: u32,
    pub port: u16,
    pub class: u8,
}

/// A deadlock: the cycle of waiting (switch, port, class), each waiting for the next and
/// the last for the first; when its last pause began (`onset`), and when it was found.
/// `frozen`: found where the network was at rest or nothing in it could move, rather
/// than by its pauses lasting `deadlock_after`. `without_cycle`: a frozen network that
/// holds packets though no cycle holds them (see the module's documentation); `cycle`
/// then lists the paused nodes that wait for no other, and `held_nics` the NICs held.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Deadlock {
    pub onset: Ps,
    pub detected: Ps,
    pub cycle: Vec<PortClass>,
    pub frozen: bool,
    pub without_cycle: bool,
    pub held_nics: usize,
}

/// Watches for deadlocks; see the module's documentation.
pub struct DeadlockDetector {
    watch: DeadlockWatch,
    /// By switch, by port: the switch at the far end of the port's link and the port the
    /// link arrives on; `None` toward a host.
    peers: Vec<Vec<Option<(u32, u16)>>>,
    found: Vec<Deadlock>,
    /// The cycles reported, each as its sorted nodes.
    reported: FxHashSet<Vec<PortClass>>,
}

impl DeadlockDetector {
    pub fn new(watch: DeadlockWatch, peers: Vec<Vec<Option<(u32, u16)>>>) -> Self {
        DeadlockDetector { watch, peers, found: Vec::new(), reported: FxHashSet::default() }
    }

    /// The stalled nodes at `now`, each with when its pause began: those paused for
    /// `after` or more that hold packets.
    fn stalled(&self, switches: &[Switch], now: Ps, after: Ps) -> FxHashMap<PortClass, Ps> {
        let mut stalled = FxHashMap::default();
        for (s, switch) in switches.iter().enumerate().filter(|(_, sw)| sw.pauses().any()) {
            for port in 0..switch.ports.len() {
                for class in 0..CLASSES {
                    let Some(since) = switch.pauses().paused_since(port, class) else { continue };
                    if now - since >= after && holds(switch, port, class, None) {
                        stalled.insert(PortClass { switch: s as u32, port: port as u16, class: class as u8 }, since);
                    }
                }
            }
        }
        stalled
    }

    /// The stalled nodes that `node` waits for, in order.
    fn waits_for(&self, node: PortClass, stalled: &FxHashMap<PortClass, Ps>, switches: &[Switch]) -> Vec<PortClass> {
        let Some((d, arrival)) = self.peers[node.switch as usize][node.port as usize] else { return Vec::new() };
        let downstream = &switches[d as usize];
        let mut next: Vec<PortClass> = (0..downstream.ports.len())
            .map(|port| PortClass { switch: d, port: port as u16, class: node.class })
            .filter(|n| stalled.contains_key(n))
            .filter(|n| holds(downstream, n.port as usize, n.class as usize, Some(arrival)))
            .collect();
        next.sort_unstable();
        next
    }
}

/// Whether `port` of `switch` holds a packet of `class` (that arrived on `ingress`, if
/// given).
fn holds(switch: &Switch, port: usize, class: usize, ingress: Option<u16>) -> bool {
    let queues = switch.pauses().class_queues(class);
    switch.port_queues(port).iter().enumerate().filter(|(q, _)| queues & (1 << q) != 0).any(|(_, q)| {
        q.packets.iter().any(|p| class_of(p.priority) as usize == class && ingress.is_none_or(|i| p.ingress == i))
    })
}

impl Observer for DeadlockDetector {
    fn interval(&self) -> Ps {
        (self.watch.after / 4).max(1)
    }

    fn observe(&mut self, net: &NetView) {
        if net.switches.iter().any(|s| s.pauses().any()) && (net.nothing_can_move)() {
            self.look(net, 0, true);
        } else {
            self.look(net, self.watch.after, false);
        }
    }

    fn at_rest(&mut self, net: &NetView) {
        self.look(net, 0, true);
    }

    fn deadlocks(&self) -> &[Deadlock] {
        &self.found
    }

    fn wants_stop(&self) -> bool {
        self.watch.stop && !self.found.is_empty() || self.found.iter().any(|d| d.without_cycle)
    }
}

impl DeadlockDetector {
    /// Reports the cycles among the nodes stalled for `after` or more that were not
    /// reported before.
    fn look(&mut self, net: &NetView, after: Ps, frozen: bool) {
        if !net.switches.iter().any(|s| s.pauses().any()) {
            return;
        }
        let stalled = self.stalled(net.switches, net.now, after);
        let mut nodes: Vec<PortClass> = stalled.keys().copied().collect();
        nodes.sort_unstable();
        let edges: FxHashMap<PortClass, Vec<PortClass>> =
            nodes.iter().map(|&n| (n, self.waits_for(n, &stalled, net.switches))).collect();
        for cycle in cycles(&nodes, &edges) {
            let mut key = cycle.clone();
            key.sort_unstable();
            if self.reported.insert(key) {
                let onset = cycle.iter().map(|n| stalled[n]).max().expect("a cycle has nodes");
                self.found.push(Deadlock {
                    onset,
                    detected: net.now,
                    cycle,
                    frozen,
                    without_cycle: false,
                    held_nics: 0,
                });
            }
        }
        if self.found.iter().any(|d| d.without_cycle) {
            return;
        }
        let orphans: Vec<PortClass> =
            nodes.iter().copied().filter(|&n| !self.neighbour_holds_any_from(n, net.switches)).collect();
        let held_nics = if frozen && self.found.is_empty() && orphans.is_empty() { (net.held_nics)() } else { 0 };
        if !orphans.is_empty() || held_nics > 0 {
            let onset = orphans.iter().map(|n| stalled[n]).max().unwrap_or(net.now);
            let cycle = orphans;
            self.found.push(Deadlock { onset, detected: net.now, cycle, frozen, without_cycle: true, held_nics });
        }
    }

    /// Whether the neighbour that paused `node` holds any packet that came to it through
    /// the paused link, of any class: if not, it sent the frame that ends the pause.
    fn neighbour_holds_any_from(&self, node: PortClass, switches: &[Switch]) -> bool {
        let Some((d, arrival)) = self.peers[node.switch as usize][node.port as usize] else { return true };
        let downstream = &switches[d as usize];
        (0..downstream.ports.len())
            .any(|port| downstream.port_queues(port).iter().any(|q| q.packets.iter().any(|p| p.ingress == arrival)))
    }
}

/// One cycle per back edge that a depth-first search over `nodes` (in order) meets, each
/// listed from the node where the search entered it.
fn cycles(nodes: &[PortClass], edges: &FxHashMap<PortClass, Vec<PortClass>>) -> Vec<Vec<PortClass>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let mut mark: FxHashMap<PortClass, Mark> = nodes.iter().map(|&n| (n, Mark::New)).collect();
    let mut found = Vec::new();
    for &root in nodes {
        if mark[&root] != Mark::New {
            continue;
        }
        // The path from the root, each node with the index of its next edge to follow.
        let mut path: Vec<(PortClass, usize)> = vec![(root, 0)];
        mark.insert(root, Mark::OnPath);
        while let Some(&mut (node, ref mut next)) = path.last_mut() {
            match edges[&node].get(*next) {
                Some(&to) => {
                    *next += 1;
                    match mark[&to] {
                        Mark::New => {
                            mark.insert(to, Mark::OnPath);
                            path.push((to, 0));
                        }
                        Mark::OnPath => {
                            let start = path.iter().position(|&(n, _)| n == to).expect("on the path");
                            found.push(path[start..].iter().map(|&(n, _)| n).collect());
                        }
                        Mark::Done => {}
                    }
                }
                None => {
                    mark.insert(node, Mark::Done);
                    path.pop();
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(switch: u32) -> PortClass {
        PortClass { switch, port: 0, class: 3 }
    }

    #[test]
    fn finds_the_cycle_and_not_the_chain_that_leads_to_it() {
        // 0 -> 1 -> 2 -> 3 -> 1, and 4 -> 0: one cycle, 1 2 3.
        let nodes: Vec<PortClass> = (0..5).map(node).collect();
        let edges: FxHashMap<PortClass, Vec<PortClass>> =
            [(0, vec![1]), (1, vec![2]), (2, vec![3]), (3, vec![1]), (4, vec![0])]
                .into_iter()
                .map(|(n, to): (u32, Vec<u32>)| (node(n), to.into_iter().map(node).collect()))
                .collect();
        assert_eq!(cycles(&nodes, &edges), vec![vec![node(1), node(2), node(3)]]);
        let chain: FxHashMap<PortClass, Vec<PortClass>> =
            (0..5).map(|n| (node(n), if n < 4 { vec![node(n + 1)] } else { vec![] })).collect();
        assert!(cycles(&nodes, &chain).is_empty());
    }
}
