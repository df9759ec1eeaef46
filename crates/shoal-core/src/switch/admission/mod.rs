//! The admission decision point: may an arriving packet enter the buffer, and if not,
//! may it push out a buffered one? A policy answers one question at a time; the switch
//! carries out each eviction (one O(1) tail removal) and asks again.

mod dynamic_threshold;
mod losspass;
mod lqd;

pub use dynamic_threshold::DynamicThreshold;
pub use losspass::LossPass;
pub use lqd::LongestQueueDrop;

use super::mmu::{Pool, QueueAccount, Reserve};
use crate::registry::registry;
use crate::stats::DropReason;
use crate::switch::queue::PortQueue;
use std::ops::Range;

/// What an admission policy sees: the arriving packet's port and queue, its size, the
/// ports of its pool and the pool.
pub struct AdmitContext<'a> {
    /// The switch's queues, port after port (`queues_per_port` each).
    pub queues: &'a [PortQueue],
    pub queues_per_port: usize,
    /// The static reserve of every queue or port.
    pub reserve: Reserve,
    /// Bytes the arriving packet's port holds.
    pub port_bytes: u64,
    /// Dynamic-threshold alpha of each queue index.
    pub alphas: &'a [f64],
    /// The ports sharing the packet's pool.
    pub pool_ports: Range<usize>,
    pub pool: &'a Pool,
    pub port: usize,
    pub queue: usize,
    pub size: u64,
}

impl AdmitContext<'_> {
    /// The account of the arriving packet's queue.
    #[inline]
    pub fn account(&self) -> QueueAccount {
        let queue_bytes = self.port_queues(self.port)[self.queue].bytes();
        self.reserve.account(queue_bytes, self.port_bytes, self.alphas[self.queue])
    }

    /// The queues of `port`, by index.
    #[inline]
    pub fn port_queues(&self, port: usize) -> &[PortQueue] {
        &self.queues[port * self.queues_per_port..(port + 1) * self.queues_per_port]
    }
}

/// An admission verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Admit,
    Drop(DropReason),
    /// Push out the tail packet of (port, queue), then ask again. The queue is not empty.
    Evict {
        port: usize,
        queue: usize,
    },
}

pub trait Admission: Send {
    fn admit(&mut self, ctx: &AdmitContext) -> Verdict;
}

registry! {
    /// How a switch decides whether an arriving packet may enter the buffer
    /// (`[switch.admission]`).
    pub enum AdmissionConfig => AnyAdmission: Admission, env ();
    "dynamic_threshold" => DynamicThreshold(DynamicThreshold),
    "losspass" => LossPass(LossPass),
    "lqd" => Lqd(LongestQueueDrop),
    forward {
        mut fn admit(ctx: &AdmitContext) -> Verdict;
    }
}
