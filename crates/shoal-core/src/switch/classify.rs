//! The classification decision point: which egress queue of a port an arriving packet
//! joins.

use crate::net::Packet;

pub trait Classify: Send {
    /// The queue (below `queues`) that `pkt` joins at its egress port.
    fn queue(&mut self, pkt: &Packet, queues: usize) -> usize;
}

/// Every packet in queue 0: one FIFO per port.
pub struct SingleQueue;

impl Classify for SingleQueue {
    #[inline]
    fn queue(&mut self, _pkt: &Packet, _queues: usize) -> usize {
        0
    }
}

/// A packet joins the queue of its priority; priorities beyond the last queue share it.
pub struct ByPriority;

impl Classify for ByPriority {
    #[inline]
    fn queue(&mut self, pkt: &Packet, queues: usize) -> usize {
        (pkt.priority as usize).min(queues - 1)
    }
}
