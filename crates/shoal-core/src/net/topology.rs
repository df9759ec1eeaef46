//! Topology builders. Each produces directed links; a switch's ports are its outgoing
//! links in the order they were created, so pools (consecutive ports) follow that order:
//! host-facing ports first, then uplinks.

use crate::scenario::{Topology, TopologyKind};
use crate::sim::Ps;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NodeId {
    Host(u32),
    Switch(u32),
}

#[derive(Clone, Debug)]
pub struct LinkSpec {
    pub from: NodeId,
    pub to: NodeId,
    pub rate_bps: u64,
    pub delay: Ps,
    /// A switch-to-switch link.
    pub core: bool,
}

#[derive(Clone, Debug)]
pub struct NetworkSpec {
    pub hosts: u32,
    pub switches: u32,
    /// Directed links in cable order: links `2i` and `2i + 1` are the two directions of
    /// one cable (see `reverse`).
    pub links: Vec<LinkSpec>,
}

/// The other direction of link `link`'s cable.
#[inline]
pub fn reverse(link: u32) -> u32 {
    link ^ 1
}

struct Builder {
    links: Vec<LinkSpec>,
    host_rate: u64,
    up_rate: u64,
    host_delay: Ps,
    up_delay: Ps,
}

impl Builder {
    /// A full-duplex cable: two directed links.
    fn cable(&mut self, a: NodeId, b: NodeId) {
        let core = matches!((a, b), (NodeId::Switch(_), NodeId::Switch(_)));
        let (rate, delay) = if core { (self.up_rate, self.up_delay) } else { (self.host_rate, self.host_delay) };
        self.links.push(LinkSpec { from: a, to: b, rate_bps: rate, delay, core });
        self.links.push(LinkSpec { from: b, to: a, rate_bps: rate, delay, core });
    }
}

pub fn build(t: &Topology) -> NetworkSpec {
    let mut b = Builder {
        links: Vec::new(),
        host_rate: t.link_rate.0,
        up_rate: t.uplink_rate.0,
        host_delay: t.link_delay.0,
        up_delay: t.uplink_delay.unwrap_or(t.link_delay).0,
    };
    use NodeId::{Host, Switch};
    let (hosts, switches) = match t.kind {
        TopologyKind::Star => {
            for h in 0..t.hosts {
                b.cable(Switch(0), Host(h));
            }
            (t.hosts, 1)
        }
        TopologyKind::Dumbbell => {
            for h in 0..t.hosts {
                b.cable(Switch(0), Host(h));
            }
            for h in t.hosts..t.hosts + t.hosts_right {
                b.cable(Switch(1), Host(h));
            }
            b.cable(Switch(0), Switch(1));
            (t.hosts + t.hosts_right, 2)
        }
        TopologyKind::LeafSpine => {
            let hosts = t.leaves * t.hosts_per_leaf;
            for h in 0..hosts {
                b.cable(Switch(h / t.hosts_per_leaf), Host(h));
            }
            for leaf in 0..t.leaves {
                for spine in 0..t.spines {
                    b.cable(Switch(leaf), Switch(t.leaves + spine));
                }
            }
            (hosts, t.leaves + t.spines)
        }
        TopologyKind::FatTree => {
            let k = t.k;
            let half = k / 2;
            let hosts = k * k * k / 4;
            // Switch numbering: edges (k*half), then aggregations (k*half), then cores (half^2).
            let edge = |pod: u32, i: u32| pod * half + i;
            let agg = |pod: u32, i: u32| k * half + pod * half + i;
            let core = |i: u32| 2 * k * half + i;
            for h in 0..hosts {
                b.cable(Switch(h / half), Host(h));
            }
            for pod in 0..k {
                for e in 0..half {
                    for a in 0..half {
                        b.cable(Switch(edge(pod, e)), Switch(agg(pod, a)));
                    }
                }
            }
            for pod in 0..k {
                for a in 0..half {
                    for c in 0..half {
                        b.cable(Switch(agg(pod, a)), Switch(core(a * half + c)));
                    }
                }
            }
            (hosts, 2 * k * half + half * half)
        }
    };
    NetworkSpec { hosts, switches, links: b.links }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        let mut t = Topology { kind: TopologyKind::FatTree, k: 4, ..Topology::default() };
        let n = build(&t);
        assert_eq!(n.hosts, 16);
        assert_eq!(n.switches, 20);
        // 16 host cables + 16 edge-agg + 16 agg-core, two directions each.
        assert_eq!(n.links.len(), 2 * 48);
        t.kind = TopologyKind::LeafSpine;
        let n = build(&t);
        assert_eq!(n.hosts, 128);
        assert_eq!(n.links.len(), 2 * (128 + 64));
    }

    /// Every link's `reverse` is the same cable the other way: swapped ends, equal rate
    /// and delay.
    #[test]
    fn reverse_is_the_other_direction() {
        for kind in [TopologyKind::Star, TopologyKind::Dumbbell, TopologyKind::LeafSpine, TopologyKind::FatTree] {
            let n = build(&Topology { kind, k: 4, ..Topology::default() });
            for (i, l) in n.links.iter().enumerate() {
                let r = &n.links[reverse(i as u32) as usize];
                assert_eq!(
                    (r.from, r.to, r.rate_bps, r.delay),
                    (l.to, l.from, l.rate_bps, l.delay),
                    "{kind:?} link {i}"
                );
            }
        }
    }
}
