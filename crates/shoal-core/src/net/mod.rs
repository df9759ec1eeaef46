//! Packets, links and topologies.

mod packet;
mod routing;
mod topology;

pub use packet::{Packet, PacketKind};
pub use routing::Routes;
pub use topology::{build, reverse, LinkSpec, NetworkSpec, NodeId};
