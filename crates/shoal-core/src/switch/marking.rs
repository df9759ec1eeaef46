//! The marking decision point: ECN marking rules. A packet is marked when any enabled
//! rule marks it.

use crate::sim::Rng;
use rand::Rng as _;

/// What a marking rule sees when it decides.
pub struct MarkContext {
    /// Bytes in the packet's queue: ahead of it at enqueue, behind it at dequeue.
    pub queue_bytes: u64,
    /// Shared bytes in use in the packet's pool.
    pub pool_shared: u64,
}

pub trait Marker: Send {
    fn marks(&mut self, ctx: &MarkContext, rng: &mut Rng) -> bool;
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
        let p = red_probability(ctx.queue_bytes, self.kmin, self.kmax, self.pmax);
        p >= 1.0 || (p > 0.0 && rng.gen::<f64>() < p)
    }
}
