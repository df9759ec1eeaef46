use super::ExtId;
use crate::sim::Ps;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PacketKind {
    Data,
    Ack,
    Syn,
    SynAck,
    Udp,
    /// A negative acknowledgement (RDMA go-back-N): the receiver expects `seq`.
    Nack,
    /// A congestion notification packet (RDMA, DCQCN's paper model): packets of the
    /// connection arrived marked.
    Cnp,
    /// A link-level control frame (a pause frame, say), from one node to its neighbour;
    /// its meaning belongs to the flow-control scheme that sent it.
    Control,
}

impl PacketKind {
    /// Whether packets of this kind carry flow payload (data, as opposed to ACKs,
    /// handshakes and control frames).
    #[inline]
    pub fn carries_payload(self) -> bool {
        matches!(self, PacketKind::Data | PacketKind::Udp)
    }

    /// Whether packets of this kind go from a flow's sender to its receiver (data and
    /// handshakes), as opposed to its replies (ACKs, NACKs, congestion notifications).
    /// Control frames belong to no flow.
    #[inline]
    pub fn is_forward(self) -> bool {
        matches!(self, PacketKind::Data | PacketKind::Syn | PacketKind::Udp)
    }
}

/// A packet in flight. Small and `Copy`: queues hold packets by value, so nothing is
/// allocated per packet.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Index of the flow this packet belongs to.
    pub flow: u32,
    /// Data: segment index. ACK: cumulative ACK (next segment expected).
    pub seq: u32,
    /// Wire size in bytes, headers included.
    pub size: u32,
    /// Destination host.
    pub dst: u32,
    /// ECMP hash of the flow's 5-tuple in this packet's direction.
    pub hash: u32,
    pub kind: PacketKind,
    /// Queue index requested at switches.
    pub priority: u8,
    /// ECN-capable transport.
    pub ect: bool,
    /// Congestion experienced (set by a switch).
    pub ce: bool,
    /// ECN echo (ACKs).
    pub ece: bool,
    /// ACK: the SACK block `[sack_start, sack_start + sack_len)` (see `transport::sack`);
    /// `sack_len == 0` when there is none. Two narrow fields rather than a struct, so that
    /// they fit in the padding of the packet's 40 bytes.
    pub sack_start: u32,
    pub sack_len: u16,
    /// Data: when the sender sent it. ACK: the echoed send time of the data packet.
    pub timestamp: Ps,
    /// A payload in the side table (`ExtStore`) that this packet owns.
    pub ext: Option<ExtId>,
    /// The port it arrived on at the switch that holds it (set on each switch's arrival),
    /// so that its departure releases the ingress accounting its admission charged.
    pub ingress: u16,
}

impl Packet {
    /// The template of a flow's packets in one direction: a data packet of size 0 at
    /// segment 0, no marks, no SACK block, time 0. Senders fill in the rest per packet.
    pub fn template(flow: u32, dst: u32, hash: u32, priority: u8) -> Packet {
        Packet {
            flow,
            seq: 0,
            size: 0,
            dst,
            hash,
            kind: PacketKind::Data,
            priority,
            ect: false,
            ce: false,
            ece: false,
            sack_start: 0,
            sack_len: 0,
            timestamp: 0,
            ext: None,
            ingress: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    /// Queues and links hold packets by value: keep them within 48 bytes (large payloads
    /// go to the side table).
    #[test]
    fn a_packet_stays_small() {
        assert!(std::mem::size_of::<super::Packet>() <= 48);
    }
}
