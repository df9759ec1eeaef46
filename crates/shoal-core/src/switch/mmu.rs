//! The memory-management unit: buffer pools shared by groups of ports, per-queue static
//! reserves, and the accounting that admission decisions read.

use super::PortQueue;
use crate::net::Packet;
use crate::sim::Ps;
use crate::stats::TimeWeighted;

/// A buffer pool shared by a group of ports.
///
/// Invariant: `shared_used` is the sum over the pool's queues of the bytes each holds
/// above its reserve, and never exceeds `size`.
#[derive(Debug)]
pub struct Pool {
    /// Shared bytes (reserves come on top).
    pub size: u64,
    pub shared_used: u64,
    /// Reserved plus shared bytes held by the pool's queues.
    pub occupancy: TimeWeighted,
    /// Packets this pool refused or pushed out.
    pub drops: u64,
}

impl Pool {
    pub fn new(size: u64, reserved_total: u64) -> Self {
        Pool { size, shared_used: 0, occupancy: TimeWeighted::with_histogram(size + reserved_total, 1000), drops: 0 }
    }

    /// Unused shared bytes.
    pub fn free(&self) -> u64 {
        self.size - self.shared_used
    }
}

/// The buffer accounting of one egress queue, as admission policies read it.
#[derive(Debug, Clone)]
pub struct QueueAccount {
    pub bytes: u64,
    pub reserved: u64,
    /// Dynamic-threshold parameter of this queue.
    pub alpha: f64,
}

impl QueueAccount {
    /// Bytes held above the static reserve, i.e. taken from the shared pool.
    #[inline]
    pub fn shared(&self) -> u64 {
        self.bytes.saturating_sub(self.reserved)
    }
}

/// The account of `queue`, whose static reserve is `reserved`.
#[inline]
pub fn queue_account(queue: &PortQueue, reserved: u64, alpha: f64) -> QueueAccount {
    QueueAccount { bytes: queue.bytes(), reserved, alpha }
}

/// Puts `size` bytes into a queue with static reserve `reserved`: its reserve first, then
/// the pool's shared space.
#[inline]
pub fn charge(queue: &mut PortQueue, reserved: u64, pool: &mut Pool, size: u64, now: Ps) {
    let before = queue.bytes();
    let after = before + size;
    pool.shared_used += after.saturating_sub(reserved) - before.saturating_sub(reserved);
    pool.occupancy.set(now, pool.occupancy.value() + size);
    queue.occupancy.set(now, after);
    debug_assert!(pool.shared_used <= pool.size, "pool over-committed");
}

/// Takes `size` bytes out of a queue with static reserve `reserved`: from the pool's
/// shared space first, then its reserve (the reverse of `charge`).
#[inline]
pub fn release(queue: &mut PortQueue, reserved: u64, pool: &mut Pool, size: u64, now: Ps) {
    let before = queue.bytes();
    debug_assert!(before >= size, "queue bytes would go negative");
    let after = before - size;
    pool.shared_used -= before.saturating_sub(reserved) - after.saturating_sub(reserved);
    pool.occupancy.set(now, pool.occupancy.value() - size);
    queue.occupancy.set(now, after);
}

/// Traffic classes (PFC priorities) that ingress accounting tells apart; a packet's class
/// is its priority, with higher priorities folded into the last class.
pub const CLASSES: usize = 8;

/// What a buffered packet is charged at ingress: its bytes, to its (ingress port,
/// class). It is read off the packet, whose ingress port, priority and size do not change
/// while it is buffered, so its departure or eviction releases exactly what its admission
/// charged, whatever has changed in between.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Charge {
    pub ingress: u16,
    pub class: u8,
    pub size: u32,
}

impl Charge {
    #[inline]
    pub fn of(pkt: &Packet) -> Charge {
        Charge { ingress: pkt.ingress, class: (pkt.priority as usize).min(CLASSES - 1) as u8, size: pkt.size }
    }
}

/// Buffered bytes by (ingress port, class): the counters that lossless flow control
/// reads. Invariant: each entry is the sum of the `Charge`s of the buffered packets with
/// that ingress port and class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngressAccounts {
    bytes: Vec<u64>,
}

impl IngressAccounts {
    pub fn new(ports: usize) -> Self {
        IngressAccounts { bytes: vec![0; ports * CLASSES] }
    }

    #[inline]
    pub fn charge(&mut self, c: Charge) {
        self.bytes[c.ingress as usize * CLASSES + c.class as usize] += c.size as u64;
    }

    #[inline]
    pub fn release(&mut self, c: Charge) {
        let slot = &mut self.bytes[c.ingress as usize * CLASSES + c.class as usize];
        debug_assert!(*slot >= c.size as u64, "ingress bytes would go negative");
        *slot -= c.size as u64;
    }

    /// Bytes buffered that arrived on `port` in `class`.
    pub fn bytes(&self, port: usize, class: usize) -> u64 {
        self.bytes[port * CLASSES + class]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounting_splits_reserved_and_shared() {
        let mut pool = Pool::new(1000, 100);
        let mut q = PortQueue::new();
        let shared = |q: &PortQueue| queue_account(q, 100, 1.0).shared();
        charge(&mut q, 100, &mut pool, 80, 0);
        assert_eq!((shared(&q), pool.shared_used), (0, 0));
        charge(&mut q, 100, &mut pool, 50, 0);
        assert_eq!((shared(&q), pool.shared_used, pool.occupancy.value()), (30, 30, 130));
        release(&mut q, 100, &mut pool, 130, 0);
        assert_eq!((q.bytes(), pool.shared_used, pool.occupancy.value()), (0, 0, 0));
    }
}
