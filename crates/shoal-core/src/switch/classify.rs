//! The classification decision point: which egress queue of a port an arriving packet
//! joins (`[switch.classifier]`).

use crate::net::Packet;
use crate::registry::{keyless_scheme, registry};

pub trait Classify: Send {
    /// The queue (below `queues`) that `pkt` joins at its egress port.
    fn queue(&mut self, pkt: &Packet, queues: usize) -> usize;
}

registry! {
    /// How a switch picks a packet's egress queue (`[switch.classifier]`). Unset, it
    /// follows the scheduler: `single_queue` under `fifo`, else `by_priority`.
    pub enum ClassifierConfig => AnyClassifier: Classify, env ();
    "by_priority" => ByPriority(ByPriority),
    "single_queue" => SingleQueue(SingleQueue),
    forward {
        mut fn queue(pkt: &Packet, queues: usize) -> usize;
    }
}

/// Every packet in queue 0: one FIFO per port.
pub struct SingleQueue;

keyless_scheme!(SingleQueue);

impl Classify for SingleQueue {
    #[inline]
    fn queue(&mut self, _pkt: &Packet, _queues: usize) -> usize {
        0
    }
}

/// A packet joins the queue of its priority; priorities beyond the last queue share it.
pub struct ByPriority;

keyless_scheme!(ByPriority);

impl Classify for ByPriority {
    #[inline]
    fn queue(&mut self, pkt: &Packet, queues: usize) -> usize {
        (pkt.priority as usize).min(queues - 1)
    }
}
