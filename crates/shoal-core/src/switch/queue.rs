//! An egress queue: the packets a port holds for one of its queues.

use crate::net::Packet;
use crate::stats::TimeIntegral;
use std::collections::VecDeque;

/// One egress queue of a port: its packets and its bytes, with their time integral. One
/// cache line: an arrival or a departure reads and writes nothing else of the queue.
/// Its static reserve and dynamic-threshold alpha are the switch's (`Switch::account`).
#[repr(align(64))]
pub struct PortQueue {
    pub packets: VecDeque<Packet>,
    /// Bytes held (the sum of the packets' charges), over time.
    pub occupancy: TimeIntegral,
}

impl PortQueue {
    pub fn new() -> Self {
        PortQueue { packets: VecDeque::new(), occupancy: TimeIntegral::default() }
    }

    /// Bytes held: the sum of the charges of its packets.
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.occupancy.value()
    }
}

impl Default for PortQueue {
    fn default() -> Self {
        Self::new()
    }
}
