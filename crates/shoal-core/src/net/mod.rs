//! Packets, links and topologies.

mod packet;
mod routing;
mod telemetry;
mod topology;

pub use packet::{Packet, PacketKind};
pub use routing::Routes;
pub use telemetry::IntHop;
pub use topology::{build, LinkSpec, NetworkSpec, NodeId};
