//! Topologies: the built-in kinds, built from their keys, and networks read from a
//! topology file (`topology_file`); then the failed links are taken out. Each produces
//! directed links; a switch's ports are its outgoing links in the order they were
//! created, so pools (consecutive ports) follow that order: host-facing ports first, then
//! uplinks, for the built-in kinds; the file's order of links for a file. A failed link
//! is not built: its switches have a port fewer.

use super::graph::{cut_off_host, Wiring};
pub use super::spec::{reverse, LinkSpec, NetworkSpec, NodeId};
use super::topology_file::{TopologyFile, MAX_FILE_BYTES};
use crate::config::ScenarioError;
use crate::files::read_regular_file;
use crate::net::config::{Topology, TopologyKind};
use crate::sim::Ps;
use std::collections::HashMap;

/// A full-duplex cable: two directed links, `a` to `b` first, without errors.
fn cable(links: &mut Vec<LinkSpec>, a: NodeId, b: NodeId, rate_bps: u64, delay: Ps) {
    let core = matches!((a, b), (NodeId::Switch(_), NodeId::Switch(_)));
    links.push(LinkSpec { from: a, to: b, rate_bps, delay, core, error_rate: 0.0 });
    links.push(LinkSpec { from: b, to: a, rate_bps, delay, core, error_rate: 0.0 });
}

/// How node ids name a network's nodes: in a topology file and in
/// `topology.failed_links`.
pub enum NodeIds {
    /// A built-in kind: hosts are nodes 0 to hosts - 1 and switch s is node hosts + s (as
    /// in the HPCC and ns3-datacenter files, whose switches follow their hosts).
    HostsFirst { hosts: u32, switches: u32 },
    /// A file: node id i is `nodes[i]`.
    Listed { nodes: Vec<NodeId>, host_ids: Vec<u32>, switch_ids: Vec<u32> },
}

impl NodeIds {
    fn listed(nodes: Vec<NodeId>) -> NodeIds {
        let (mut host_ids, mut switch_ids) = (Vec::new(), Vec::new());
        for (id, n) in nodes.iter().enumerate() {
            match n {
                NodeId::Host(_) => host_ids.push(id as u32),
                NodeId::Switch(_) => switch_ids.push(id as u32),
            }
        }
        NodeIds::Listed { nodes, host_ids, switch_ids }
    }

    /// The node with id `id`, if there is one.
    pub fn node(&self, id: u32) -> Option<NodeId> {
        match self {
            NodeIds::HostsFirst { hosts, switches } => match id.checked_sub(*hosts) {
                None => Some(NodeId::Host(id)),
                Some(s) if s < *switches => Some(NodeId::Switch(s)),
                Some(_) => None,
            },
            NodeIds::Listed { nodes, .. } => nodes.get(id as usize).copied(),
        }
    }

    pub fn id(&self, node: NodeId) -> u32 {
        match (self, node) {
            (NodeIds::HostsFirst { .. }, NodeId::Host(h)) => h,
            (NodeIds::HostsFirst { hosts, .. }, NodeId::Switch(s)) => hosts + s,
            (NodeIds::Listed { host_ids, .. }, NodeId::Host(h)) => host_ids[h as usize],
            (NodeIds::Listed { switch_ids, .. }, NodeId::Switch(s)) => switch_ids[s as usize],
        }
    }

    /// How many node ids there are (ids run from 0 to this less one).
    pub fn count(&self) -> u32 {
        match self {
            NodeIds::HostsFirst { hosts, switches } => hosts + switches,
            NodeIds::Listed { nodes, .. } => nodes.len() as u32,
        }
    }

    /// How the ids are given, for messages.
    pub fn numbering(&self) -> &'static str {
        match self {
            NodeIds::HostsFirst { .. } => "hosts first, then switches",
            NodeIds::Listed { .. } => "as in the topology file",
        }
    }

    /// `node` as messages name it: "host 3", "switch 2 (node 130)".
    pub fn describe(&self, node: NodeId) -> String {
        let id = self.id(node);
        match node {
            NodeId::Host(h) if h == id => format!("host {h}"),
            NodeId::Host(h) => format!("host {h} (node {id})"),
            NodeId::Switch(s) => format!("switch {s} (node {id})"),
        }
    }
}

/// The network of `t`: built from its keys or read from its file, without its failed
/// links. Every host reaches every other (a network where not is refused).
pub fn build(t: &Topology) -> Result<NetworkSpec, ScenarioError> {
    Ok(build_with_ids(t)?.0)
}

/// As `build`, with the node ids that name the network's nodes (in a file, in
/// `topology.failed_links` and in `switch.buffer_of_node`).
pub fn build_with_ids(t: &Topology) -> Result<(NetworkSpec, NodeIds), ScenarioError> {
    let (mut net, ids) = match t.kind {
        TopologyKind::File => {
            let path = t.path.as_deref().unwrap_or_default();
            let (net, ids) = read_file(path)?;
            connected(&net, &ids).map_err(|why| {
                ScenarioError::new("topology.path", format!("{path}: {why} (accepted: a connected network)"))
            })?;
            (net, ids)
        }
        _ => {
            let net = built_in(t);
            let ids = NodeIds::HostsFirst { hosts: net.hosts, switches: net.switches };
            (net, ids)
        }
    };
    set_error_rates(&mut net, &ids, t)?;
    if !t.failed_links.is_empty() {
        let err = |why: String| ScenarioError::new("topology.failed_links", why);
        fail(&mut net, &ids, &t.failed_links).map_err(err)?;
        connected(&net, &ids).map_err(|why| {
            err(format!("with these links down, {why} (accepted: failures that leave every host reaching every other)"))
        })?;
    }
    Ok((net, ids))
}

/// The network a topology file describes, and its node ids.
fn read_file(path: &str) -> Result<(NetworkSpec, NodeIds), ScenarioError> {
    let err = |why: String| ScenarioError::new("topology.path", why);
    let text =
        read_regular_file(path, MAX_FILE_BYTES).map_err(|e| err(format!("cannot read topology file {path:?}: {e}")))?;
    let file = TopologyFile::parse(&text).map_err(|e| match e.line {
        Some(line) => err(format!("{path}: line {line}: {}", e.message)),
        None => err(format!("{path}: {}", e.message)),
    })?;
    let nodes = file.nodes();
    let mut links = Vec::with_capacity(2 * file.links.len());
    for l in &file.links {
        cable(&mut links, nodes[l.src as usize], nodes[l.dst as usize], l.rate_bps, l.delay);
        for link in links.iter_mut().rev().take(2) {
            link.error_rate = l.error_rate;
        }
    }
    let hosts = file.hosts();
    let net = NetworkSpec { hosts, switches: nodes.len() as u32 - hosts, links };
    Ok((net, NodeIds::listed(nodes)))
}

/// Takes the cables `failed` names (by node ids) out of `net`.
fn fail(net: &mut NetworkSpec, ids: &NodeIds, failed: &[[u32; 2]]) -> Result<(), String> {
    let mut down = vec![false; net.links.len() / 2];
    for cable in cables_between(net, ids, failed)? {
        down[cable] = true;
    }
    take_out(net, &down);
    Ok(())
}

/// Removes the cables `down[c]` (links `2c` and `2c + 1`) from `net`.
fn take_out(net: &mut NetworkSpec, down: &[bool]) {
    let mut link = 0;
    net.links.retain(|_| {
        link += 1;
        !down[(link - 1) / 2]
    });
}

/// The cable (`links[2c]` and `links[2c + 1]`) between each pair of node ids, in order.
/// Refused: an id that names no node, a pair with no link, a pair given twice.
pub(crate) fn cables_between(net: &NetworkSpec, ids: &NodeIds, pairs: &[[u32; 2]]) -> Result<Vec<usize>, String> {
    let cables: HashMap<(u32, u32), usize> = net
        .links
        .chunks(2)
        .enumerate()
        .map(|(i, pair)| {
            let (a, b) = (ids.id(pair[0].from), ids.id(pair[0].to));
            ((a.min(b), a.max(b)), i)
        })
        .collect();
    let mut named: HashMap<usize, usize> = HashMap::new();
    let mut found = Vec::with_capacity(pairs.len());
    for (i, &[a, b]) in pairs.iter().enumerate() {
        let item = format!("[{a}, {b}] (item {i})");
        for id in [a, b] {
            if ids.node(id).is_none() {
                return Err(format!(
                    "{item}: there is no node {id} (accepted: node ids 0 to {}; {})",
                    ids.count() - 1,
                    ids.numbering()
                ));
            }
        }
        let describe = |id| ids.describe(ids.node(id).expect("checked above"));
        let Some(&cable) = cables.get(&(a.min(b), a.max(b))) else {
            return Err(format!("{item}: there is no link between {} and {}", describe(a), describe(b)));
        };
        if let Some(first) = named.insert(cable, i) {
            return Err(format!("{item}: the same link as item {first} (accepted: each link once)"));
        }
        found.push(cable);
    }
    Ok(found)
}

/// Gives each link its error rate: a `lossy_links` entry's, else its own (a file's line),
/// else `error_rate`. Before failed links are taken out, which renumbers the cables.
fn set_error_rates(net: &mut NetworkSpec, ids: &NodeIds, t: &Topology) -> Result<(), ScenarioError> {
    for link in net.links.iter_mut().filter(|l| l.error_rate == 0.0) {
        link.error_rate = t.error_rate;
    }
    if t.lossy_links.is_empty() {
        return Ok(());
    }
    let ends: Vec<[u32; 2]> = t.lossy_links.iter().map(|l| l.ends).collect();
    let cables = cables_between(net, ids, &ends).map_err(|why| ScenarioError::new("topology.lossy_links", why))?;
    for (i, (lossy, cable)) in t.lossy_links.iter().zip(cables).enumerate() {
        if !crate::net::config::is_probability(lossy.error_rate) {
            return Err(ScenarioError::new(
                format!("topology.lossy_links[{i}].error_rate"),
                format!("{} is not accepted (accepted: a probability from 0 to 1)", lossy.error_rate),
            ));
        }
        net.links[2 * cable].error_rate = lossy.error_rate;
        net.links[2 * cable + 1].error_rate = lossy.error_rate;
    }
    Ok(())
}

/// An outage on the built network: its cables (links `2c` and `2c + 1`) are down from
/// `at` until `until` (for good if `None`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CableOutage {
    pub at: Ps,
    pub until: Option<Ps>,
    pub cables: Vec<u32>,
}

/// `topology.outages` on `net` (as built, failed links out). Refused: an item that names
/// neither or both of a link and a switch, or no link or no switch; an end before its
/// start; a host's link or a switch with hosts (the host would be cut off, and routing
/// needs every host to reach every other); outages that, all at once, cut some host off.
pub fn outages(net: &NetworkSpec, ids: &NodeIds, t: &Topology) -> Result<Vec<CableOutage>, ScenarioError> {
    let mut all = Vec::with_capacity(t.outages.len());
    for (i, o) in t.outages.iter().enumerate() {
        let err = |key: &str, why: String| ScenarioError::new(format!("topology.outages[{i}]{key}"), why);
        if o.until.is_some_and(|until| until <= o.at) {
            let until = o.until.expect("checked");
            return Err(err(".until", format!("{until} is not after at = {} (accepted: a later time, or none)", o.at)));
        }
        let cables: Vec<u32> = match (o.link, o.switch) {
            (Some(ends), None) => {
                let cable = cables_between(net, ids, &[ends]).map_err(|why| err(".link", why))?[0];
                vec![cable as u32]
            }
            (None, Some(id)) => match ids.node(id) {
                Some(NodeId::Switch(s)) => (0..net.links.len() as u32 / 2)
                    .filter(|&c| {
                        net.links[2 * c as usize].from == NodeId::Switch(s)
                            || net.links[2 * c as usize].to == NodeId::Switch(s)
                    })
                    .collect(),
                _ => {
                    return Err(err(
                        ".switch",
                        format!("{id} is not a switch's node id (accepted: {})", ids.numbering()),
                    ))
                }
            },
            _ => return Err(err("", "names a link or a switch (accepted: link = [a, b], or switch = id)".into())),
        };
        for &c in &cables {
            let link = &net.links[2 * c as usize];
            if let Some(host) = [link.from, link.to].into_iter().find(|n| matches!(n, NodeId::Host(_))) {
                let key = if o.link.is_some() { ".link" } else { ".switch" };
                return Err(err(
                    key,
                    format!(
                        "would cut {} off (accepted: links between switches, and switches without hosts)",
                        ids.describe(host)
                    ),
                ));
            }
        }
        all.push(CableOutage { at: o.at.0, until: o.until.map(|u| u.0), cables });
    }
    if !all.is_empty() {
        let mut down = vec![false; net.links.len() / 2];
        all.iter().flat_map(|o| &o.cables).for_each(|&c| down[c as usize] = true);
        let mut without = net.clone();
        take_out(&mut without, &down);
        connected(&without, ids).map_err(|why| {
            ScenarioError::new(
                "topology.outages",
                format!(
                    "with every outage at once, {why} (accepted: outages that leave every host reaching every other)"
                ),
            )
        })?;
    }
    Ok(all)
}

/// Whether every host reaches every other; if not, why.
fn connected(net: &NetworkSpec, ids: &NodeIds) -> Result<(), String> {
    let mut linked = vec![false; net.hosts as usize];
    for l in &net.links {
        if let NodeId::Host(h) = l.from {
            linked[h as usize] = true;
        }
    }
    if let Some(h) = linked.iter().position(|&l| !l) {
        return Err(format!("{} has no link", ids.describe(NodeId::Host(h as u32))));
    }
    match cut_off_host(net, &Wiring::of(net)) {
        Some(h) => Err(format!("{} cannot reach {}", ids.describe(NodeId::Host(h)), ids.describe(NodeId::Host(0)))),
        None => Ok(()),
    }
}

/// The network of a built-in kind.
fn built_in(t: &Topology) -> NetworkSpec {
    let (host_rate, up_rate) = (t.link_rate.0, t.uplink_rate.0);
    let (host_delay, up_delay) = (t.link_delay.0, t.uplink_delay.unwrap_or(t.link_delay).0);
    let mut links = Vec::new();
    let mut wire = |a: NodeId, b: NodeId| {
        let core = matches!((a, b), (NodeId::Switch(_), NodeId::Switch(_)));
        let (rate, delay) = if core { (up_rate, up_delay) } else { (host_rate, host_delay) };
        cable(&mut links, a, b, rate, delay);
    };
    use NodeId::{Host, Switch};
    let (hosts, switches) = match t.kind {
        TopologyKind::Star => {
            for h in 0..t.hosts {
                wire(Switch(0), Host(h));
            }
            (t.hosts, 1)
        }
        TopologyKind::Dumbbell => {
            for h in 0..t.hosts {
                wire(Switch(0), Host(h));
            }
            for h in t.hosts..t.hosts + t.hosts_right {
                wire(Switch(1), Host(h));
            }
            wire(Switch(0), Switch(1));
            (t.hosts + t.hosts_right, 2)
        }
        TopologyKind::LeafSpine => {
            let hosts = t.leaves * t.hosts_per_leaf;
            for h in 0..hosts {
                wire(Switch(h / t.hosts_per_leaf), Host(h));
            }
            for leaf in 0..t.leaves {
                for spine in 0..t.spines {
                    wire(Switch(leaf), Switch(t.leaves + spine));
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
                wire(Switch(h / half), Host(h));
            }
            for pod in 0..k {
                for e in 0..half {
                    for a in 0..half {
                        wire(Switch(edge(pod, e)), Switch(agg(pod, a)));
                    }
                }
            }
            for pod in 0..k {
                for a in 0..half {
                    for c in 0..half {
                        wire(Switch(agg(pod, a)), Switch(core(a * half + c)));
                    }
                }
            }
            (hosts, 2 * k * half + half * half)
        }
        TopologyKind::File => unreachable!("a file is read, not built (`build`)"),
    };
    NetworkSpec { hosts, switches, links }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        let mut t = Topology { kind: TopologyKind::FatTree, k: 4, ..Topology::default() };
        let n = build(&t).unwrap();
        assert_eq!(n.hosts, 16);
        assert_eq!(n.switches, 20);
        // 16 host cables + 16 edge-agg + 16 agg-core, two directions each.
        assert_eq!(n.links.len(), 2 * 48);
        t.kind = TopologyKind::LeafSpine;
        let n = build(&t).unwrap();
        assert_eq!(n.hosts, 128);
        assert_eq!(n.links.len(), 2 * (128 + 64));
    }

    /// Every link's `reverse` is the same cable the other way: swapped ends, equal rate
    /// and delay.
    #[test]
    fn reverse_is_the_other_direction() {
        for kind in [TopologyKind::Star, TopologyKind::Dumbbell, TopologyKind::LeafSpine, TopologyKind::FatTree] {
            let n = build(&Topology { kind, k: 4, ..Topology::default() }).unwrap();
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
