//! Packets, links and topologies.

pub mod effect;
mod packet;
mod routing;
mod telemetry;
mod topology;

pub use effect::{Effect, Effects};
pub use packet::{Packet, PacketKind};
pub use routing::Routes;
pub use telemetry::IntHop;
pub use topology::{build, reverse, LinkSpec, NetworkSpec, NodeId};
