//! Packets, links and topologies.

pub mod bloom;
pub mod config;
pub mod effect;
pub mod ext;
mod graph;
mod packet;
pub mod pause;
pub mod pcap;
mod routing;
mod spec;
mod telemetry;
mod topology;
mod topology_file;

pub use effect::{Effect, Effects};
pub use ext::{Ext, ExtId, ExtStore};
pub use graph::{costliest_route, Wiring};
pub use packet::{Packet, PacketKind};
pub use routing::{Hops, Routes, Run};
pub use telemetry::{IntFormat, IntHop, IntValues, ACK_UNPADDED_BYTES, WIRE_HOP_SLOTS, WIRE_STACK_BYTES};
pub(crate) use topology::cables_between;
pub use topology::{build, build_with_ids, outages, reverse, CableOutage, LinkSpec, NetworkSpec, NodeId, NodeIds};
