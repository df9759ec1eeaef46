//! In-band network telemetry: what a switch port reports about itself to packets that
//! ask for it (HPCC-style INT), and what a congestion controller reads back from an ACK.
//!
//! As in the reference (ns3-datacenter 6ddb4a4, `switch-node.cc:264-274`,
//! `network/utils/int-header.{h,cc}`), a switch stamps a data packet that carries a stack
//! when the packet leaves an egress port (at dequeue), and the receiver copies the stack
//! into its ACK or NACK. Records hold exact values; the reference's wire format quantizes
//! them (bytes in units of 128 B x `INT_MULTI`, queue lengths in units of 80 B x
//! `INT_MULTI`, 24-bit nanosecond timestamps), which is not modelled here yet.

use crate::sim::Ps;

/// One hop's record: the state of the egress port a packet left by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    /// Bytes queued at the port (all its queues) when the packet left, the packet itself
    /// no longer among them (the reference's `GetNBytesTotal` after the dequeue).
    pub queue_bytes: u64,
    /// Bytes the port had transmitted before this packet, ever (a running counter: two
    /// records of the same port give its throughput between them; the reference's
    /// `m_txBytes`, which counts every packet its queues sent, not the pause frames).
    pub tx_bytes: u64,
    /// When the record was taken: the packet's dequeue.
    pub timestamp: Ps,
    /// The port's link rate, bits per second.
    pub rate_bps: u64,
}

/// Hop slots of the reference's INT header (`IntHeader::maxHop`): its size on the wire
/// does not depend on how many hops were stamped.
pub const WIRE_HOP_SLOTS: u32 = 5;

/// Wire bytes of the reference's INT header: 8 B per hop slot and a 2 B hop count
/// (`int-header.cc:16-18`; 42 B).
pub const WIRE_STACK_BYTES: u32 = WIRE_HOP_SLOTS * 8 + 2;

/// Wire bytes of an RDMA ACK before padding: PPP 2 + IPv4 20 + the ACK header 12 (ports,
/// flags, priority group, sequence; `qbb-header.cc:101-104`). The reference pads the IPv4
/// payload to a 60 B Ethernet minimum less the 14 B MAC header (`rdma-hw.cc:342`): 48 B
/// without INT; with INT the header alone exceeds it, 34 + 42 = 76 B.
pub const ACK_UNPADDED_BYTES: u32 = 34;
