//! The memory-management unit: buffer pools shared by groups of ports, static reserves
//! per queue or per port, and the accounting that admission decisions read.

use super::queue::PortQueue;
use crate::net::Packet;
use crate::sim::Ps;
use crate::stats::TimeWeighted;
use serde::{Deserialize, Serialize};

/// Where `switch.reserved` sits (`switch.reserve_per`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ReservePer {
    /// Every queue has `reserved` bytes of its own.
    #[default]
    Queue,
    /// Every port has `reserved` bytes, used by whichever of its queues comes first (for
    /// ports with many queues: a thousand queues of their own reserve each would hold
    /// the whole buffer).
    Port,
}

/// A buffer pool shared by a group of ports.
///
/// Invariant: `shared_used` is the sum over the pool's reserve holders (its queues, or
/// its ports: `Reserve`) of the bytes each holds above its reserve, and never exceeds
/// `size + headroom`; only lossless packets admitted into PFC headroom take it beyond
/// `size`.
#[derive(Debug)]
pub struct Pool {
    /// Shared bytes (reserves come on top).
    pub size: u64,
    /// Bytes on top of `size` that only lossless packets admitted into their headroom may
    /// take (0 without lossless flow control). Lossy admission and the dynamic thresholds
    /// never see it: `free` counts `size` only.
    pub headroom: u64,
    pub shared_used: u64,
    /// Reserved plus shared bytes held by the pool's queues.
    pub occupancy: TimeWeighted,
    /// Packets this pool refused or pushed out.
    pub drops: u64,
}

impl Pool {
    pub fn new(size: u64, reserved_total: u64) -> Self {
        Pool::with_headroom(size, reserved_total, 0)
    }

    /// A pool with `headroom` bytes for lossless packets on top of its shared `size`.
    pub fn with_headroom(size: u64, reserved_total: u64, headroom: u64) -> Self {
        Pool {
            size,
            headroom,
            shared_used: 0,
            occupancy: TimeWeighted::with_histogram(size + reserved_total + headroom, 1000),
            drops: 0,
        }
    }

    /// Unused shared bytes (0 while lossless packets hold headroom beyond `size`).
    #[inline]
    pub fn free(&self) -> u64 {
        self.size.saturating_sub(self.shared_used)
    }

    /// Unused bytes of shared space and headroom together: what a lossless packet bound
    /// for its headroom may still take.
    #[inline]
    pub fn free_with_headroom(&self) -> u64 {
        (self.size + self.headroom) - self.shared_used
    }
}

/// The static reserve (`switch.reserved`) and where it sits (`switch.reserve_per`): each
/// queue has its own, or each port has one that its queues draw on in arrival order. The
/// bytes a holder keeps beyond its reserve come from its pool's shared space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reserve {
    pub bytes: u64,
    pub per: ReservePer,
}

impl Reserve {
    /// The bytes the reserve's holder keeps: the queue's, or its port's.
    #[inline]
    fn held(&self, queue_bytes: u64, port_bytes: u64) -> u64 {
        match self.per {
            ReservePer::Queue => queue_bytes,
            ReservePer::Port => port_bytes,
        }
    }

    /// Bytes of a holder of `held` bytes that come from the shared space.
    #[inline]
    pub fn excess(&self, held: u64) -> u64 {
        held.saturating_sub(self.bytes)
    }

    /// Bytes a port whose queues hold `queue_bytes` takes from the shared space: each
    /// queue's beyond its own reserve, or the port's beyond the port's.
    pub fn shared_of_port(&self, queue_bytes: impl Iterator<Item = u64>) -> u64 {
        match self.per {
            ReservePer::Queue => queue_bytes.map(|b| self.excess(b)).sum(),
            ReservePer::Port => self.excess(queue_bytes.sum()),
        }
    }

    /// The reserved bytes of `ports` ports of `queues` queues each.
    pub fn total(&self, ports: usize, queues: usize) -> u64 {
        match self.per {
            ReservePer::Queue => self.bytes * (ports * queues) as u64,
            ReservePer::Port => self.bytes * ports as u64,
        }
    }

    /// The account of a queue that holds `queue_bytes` on a port that holds `port_bytes`.
    #[inline]
    pub fn account(&self, queue_bytes: u64, port_bytes: u64, alpha: f64) -> QueueAccount {
        let held = self.held(queue_bytes, port_bytes);
        QueueAccount {
            bytes: queue_bytes,
            shared: self.excess(held).min(queue_bytes),
            reserve_left: self.bytes.saturating_sub(held),
            alpha,
        }
    }
}

/// The buffer accounting of one egress queue, as admission policies read it.
#[derive(Debug, Clone)]
pub struct QueueAccount {
    pub bytes: u64,
    /// Bytes it holds from the shared space. With a reserve per port, the port's shared
    /// bytes, as far as this queue holds that many.
    pub shared: u64,
    /// Reserved bytes its holder (the queue, or its port) has not used yet.
    pub reserve_left: u64,
    /// Dynamic-threshold parameter of this queue.
    pub alpha: f64,
}

impl QueueAccount {
    /// Whether a packet of `size` bytes fits in what is left of the reserve.
    #[inline]
    pub fn fits_reserve(&self, size: u64) -> bool {
        size <= self.reserve_left
    }

    /// Shared bytes a packet of `size` bytes takes: what the reserve does not cover.
    #[inline]
    pub fn shared_needed(&self, size: u64) -> u64 {
        size.saturating_sub(self.reserve_left)
    }
}

/// Puts `size` bytes into `queue`, on a port that holds `port_bytes` before it: its
/// reserve first, then the pool's shared space.
#[inline]
pub fn charge(queue: &mut PortQueue, port_bytes: u64, reserve: Reserve, pool: &mut Pool, size: u64, now: Ps) {
    let before = queue.bytes();
    let held = reserve.held(before, port_bytes);
    pool.shared_used += reserve.excess(held + size) - reserve.excess(held);
    pool.occupancy.set(now, pool.occupancy.value() + size);
    queue.occupancy.set(now, before + size);
    debug_assert!(pool.shared_used <= pool.size + pool.headroom, "pool over-committed");
}

/// Takes `size` bytes out of `queue`, on a port that held `port_bytes` before: from the
/// pool's shared space first, then the reserve (the reverse of `charge`).
#[inline]
pub fn release(queue: &mut PortQueue, port_bytes: u64, reserve: Reserve, pool: &mut Pool, size: u64, now: Ps) {
    let before = queue.bytes();
    debug_assert!(before >= size, "queue bytes would go negative");
    let held = reserve.held(before, port_bytes);
    pool.shared_used -= reserve.excess(held) - reserve.excess(held - size);
    pool.occupancy.set(now, pool.occupancy.value() - size);
    queue.occupancy.set(now, before - size);
}

/// Traffic classes (PFC priorities) that ingress accounting tells apart; a packet's class
/// is its priority, with higher priorities folded into the last class.
pub use crate::net::pause::CLASSES;

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
        Charge { ingress: pkt.ingress, class: class_of(pkt.priority), size: pkt.size }
    }
}

/// The traffic class of a packet of priority `priority`.
#[inline]
pub fn class_of(priority: u8) -> u8 {
    (priority as usize).min(CLASSES - 1) as u8
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
        let reserve = Reserve { bytes: 100, per: ReservePer::Queue };
        let mut pool = Pool::new(1000, 100);
        let mut q = PortQueue::new();
        let shared = |q: &PortQueue| reserve.account(q.bytes(), q.bytes(), 1.0).shared;
        charge(&mut q, 0, reserve, &mut pool, 80, 0);
        assert_eq!((shared(&q), pool.shared_used), (0, 0));
        charge(&mut q, 80, reserve, &mut pool, 50, 0);
        assert_eq!((shared(&q), pool.shared_used, pool.occupancy.value()), (30, 30, 130));
        release(&mut q, 130, reserve, &mut pool, 130, 0);
        assert_eq!((q.bytes(), pool.shared_used, pool.occupancy.value()), (0, 0, 0));
    }

    /// A reserve per port is used by whichever of the port's queues comes first; the
    /// other queues then take from the shared space, and give back shared bytes first.
    #[test]
    fn a_port_reserve_is_shared_by_its_queues() {
        let reserve = Reserve { bytes: 100, per: ReservePer::Port };
        let mut pool = Pool::new(1000, 100);
        let (mut a, mut b) = (PortQueue::new(), PortQueue::new());
        charge(&mut a, 0, reserve, &mut pool, 80, 0);
        assert_eq!(pool.shared_used, 0);
        charge(&mut b, 80, reserve, &mut pool, 50, 0);
        assert_eq!(pool.shared_used, 30);
        let account = reserve.account(b.bytes(), 130, 1.0);
        assert_eq!((account.shared, account.reserve_left), (30, 0));
        assert_eq!(reserve.account(a.bytes(), 130, 1.0).shared, 30, "the port's shared bytes, up to the queue's");
        release(&mut a, 130, reserve, &mut pool, 80, 0);
        assert_eq!(pool.shared_used, 0, "the 50 B left fit the port's reserve");
        assert_eq!(reserve.account(b.bytes(), 50, 1.0).reserve_left, 50);
    }
}
