//! Observers: what looks at the network at intervals without taking part in it (queue
//! occupancy samples today; pause and deadlock statistics with lossless flow control).
//! They run once per interval, not per packet, so dynamic dispatch costs nothing here.

mod deadlock;
mod queues;

pub use deadlock::{Deadlock, DeadlockDetector, PortClass};
pub use queues::{IngressSample, QueueSampler, Sample};

use crate::sim::Ps;
use crate::switch::Switch;

/// A read-only view of the network at one instant.
pub struct NetView<'a> {
    pub now: Ps,
    pub switches: &'a [Switch],
    /// Bytes each link has sent since the start, by link index.
    pub link_tx_bytes: &'a dyn Fn(u32) -> u64,
    /// Whether nothing in the network can move by itself (every packet held by a pause,
    /// nothing on a wire): what pauses hold then stays held.
    pub nothing_can_move: &'a dyn Fn() -> bool,
    /// How many host NICs hold packets while paused.
    pub held_nics: &'a dyn Fn() -> usize,
}

pub trait Observer: Send {
    /// Time between two observations.
    fn interval(&self) -> Ps;
    fn observe(&mut self, net: &NetView);
    /// Called when the network is found at rest (at each observation from then on, and
    /// at the stop time): no event is left but observations, so nothing in it will ever
    /// change again.
    fn at_rest(&mut self, _net: &NetView) {}
    /// The queue samples it took, if it takes any.
    fn samples(&self) -> &[Sample] {
        &[]
    }
    /// The ingress samples it took, if it takes any.
    fn ingress_samples(&self) -> &[IngressSample] {
        &[]
    }
    /// The deadlocks it found, if it looks for them.
    fn deadlocks(&self) -> &[Deadlock] {
        &[]
    }
    /// Whether the run should end now (after a deadlock, when asked to).
    fn wants_stop(&self) -> bool {
        false
    }
}
