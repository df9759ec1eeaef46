//! The marking decision point: ECN marking rules. A packet is marked when any enabled
//! rule marks it.

use crate::sim::Rng;
use rand::Rng as _;

/// What a marking rule sees when it decides.
pub struct MarkContext {
    /// Bytes in the packet's queue (or, with per-port scope, in all the queues of its
    /// port): ahead of it at enqueue, behind it at dequeue.
    pub queue_bytes: u64,
    /// Shared bytes in use in the packet's pool.
    pub pool_shared: u64,
}

/// Which kind of rule marked a packet (counted separately).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkRule {
    /// Per-queue (or per-port) ECN on the packet's queue (or port).
    Queue,
    /// Shared-buffer ECN on the packet's pool.
    SharedBuffer,
    /// The cut-off of a sending host's NIC queue (`host.ecn_k`).
    HostNic,
}

impl MarkRule {
    pub const ALL: [MarkRule; 3] = [MarkRule::Queue, MarkRule::SharedBuffer, MarkRule::HostNic];

    pub fn name(self) -> &'static str {
        match self {
            MarkRule::Queue => "queue",
            MarkRule::SharedBuffer => "shared_buffer",
            MarkRule::HostNic => "host_nic",
        }
    }
}

pub trait Marker: Send {
    fn marks(&mut self, ctx: &MarkContext, rng: &mut Rng) -> bool;
    fn rule(&self) -> MarkRule;
}

/// Per-queue cut-off: mark when the queue holds at least `k` bytes (DCTCP's rule).
pub struct QueueCutoff {
    pub k: u64,
}

impl Marker for QueueCutoff {
    #[inline]
    fn marks(&mut self, ctx: &MarkContext, _: &mut Rng) -> bool {
        ctx.queue_bytes >= self.k
    }

    fn rule(&self) -> MarkRule {
        MarkRule::Queue
    }
}

/// Per-queue RED on the instantaneous queue: no marks below `kmin`, probability rising
/// linearly to `pmax` at `kmax`, every packet at or above `kmax`.
pub struct QueueRed {
    pub kmin: u64,
    pub kmax: u64,
    pub pmax: f64,
}

/// The RED probability of marking at occupancy `q`.
#[inline]
pub fn red_probability(q: u64, kmin: u64, kmax: u64, pmax: f64) -> f64 {
    if q < kmin {
        0.0
    } else if q >= kmax {
        1.0
    } else {
        pmax * (q - kmin) as f64 / (kmax - kmin) as f64
    }
}

impl Marker for QueueRed {
    #[inline]
    fn marks(&mut self, ctx: &MarkContext, rng: &mut Rng) -> bool {
        red_marks(ctx.queue_bytes, self.kmin, self.kmax, self.pmax, rng)
    }

    fn rule(&self) -> MarkRule {
        MarkRule::Queue
    }
}

#[inline]
fn red_marks(q: u64, kmin: u64, kmax: u64, pmax: f64, rng: &mut Rng) -> bool {
    let p = red_probability(q, kmin, kmax, pmax);
    p >= 1.0 || (p > 0.0 && rng.gen::<f64>() < p)
}

/// Shared-buffer RED (BCC): the same rule on the pool's instantaneous shared occupancy,
/// for every packet of the pool whatever its port or queue. `kmin == kmax` is a cut-off.
pub struct SharedBufferRed {
    pub kmin: u64,
    pub kmax: u64,
    pub pmax: f64,
}

impl Marker for SharedBufferRed {
    #[inline]
    fn marks(&mut self, ctx: &MarkContext, rng: &mut Rng) -> bool {
        red_marks(ctx.pool_shared, self.kmin, self.kmax, self.pmax, rng)
    }

    fn rule(&self) -> MarkRule {
        MarkRule::SharedBuffer
    }
}
