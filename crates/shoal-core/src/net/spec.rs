//! A network as built: its nodes and its directed links, cable by cable.

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
    /// The chance that a packet crossing it is corrupted (`Topology::error_rate`).
    pub error_rate: f64,
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
