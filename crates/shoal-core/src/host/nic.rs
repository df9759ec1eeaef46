//! A host's NIC: one egress queue in front of the host's link.

use crate::net::Packet;
use crate::stats::{Counters, DropReason};
use crate::switch::marking::MarkRule;
use std::collections::VecDeque;

/// A host NIC's egress queue: tail drop at `capacity` bytes, and an optional ECN cut-off
/// on the bytes ahead of an arriving packet (the marking queues of ns-2's hosts).
/// Invariant: `bytes` is the total size of the packets in `queue`.
pub struct Nic {
    /// The link the NIC transmits on.
    pub link: u32,
    queue: VecDeque<Packet>,
    bytes: u64,
    capacity: u64,
    /// ECN cut-off in bytes; 0 = off.
    ecn_k: u64,
}

impl Nic {
    pub fn new(link: u32, capacity: u64, ecn_k: u64) -> Nic {
        Nic { link, queue: VecDeque::new(), bytes: 0, capacity, ecn_k }
    }

    /// Queues `pkt` (marked CE when the bytes ahead reach the cut-off). Returns false,
    /// the drop counted, when it does not fit.
    pub fn push(&mut self, mut pkt: Packet, counters: &mut Counters) -> bool {
        if self.bytes + pkt.size as u64 > self.capacity {
            counters.drop(DropReason::NicBuffer, pkt.size as u64);
            return false;
        }
        if self.ecn_k > 0 && pkt.ect && !pkt.ce && self.bytes >= self.ecn_k {
            pkt.ce = true;
            counters.ecn_marks += 1;
            counters.marks_by_rule[MarkRule::HostNic as usize] += 1;
        }
        self.bytes += pkt.size as u64;
        self.queue.push_back(pkt);
        true
    }

    /// The next packet to transmit.
    pub fn pop(&mut self) -> Option<Packet> {
        let pkt = self.queue.pop_front()?;
        self.bytes -= pkt.size as u64;
        Some(pkt)
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// The queued packets, oldest first.
    pub fn packets(&self) -> impl Iterator<Item = &Packet> {
        self.queue.iter()
    }

    /// A control frame from the switch arrived. NICs run no flow control yet, so it has
    /// no effect.
    pub fn on_frame(&mut self, _frame: &Packet) {}

    /// Violations of the byte-count invariant, described.
    pub fn check_accounting(&self, host: usize) -> Option<String> {
        let bytes: u64 = self.queue.iter().map(|p| p.size as u64).sum();
        (bytes != self.bytes).then(|| format!("host {host}: NIC queue holds {bytes} B but accounts {} B", self.bytes))
    }
}
