//! The admission decision point: may an arriving packet enter the buffer, and if not,
//! may it push out a buffered one? A policy answers one question at a time; the switch
//! carries out each eviction (one O(1) tail removal) and asks again.

mod dynamic_threshold;
mod losspass;
mod lqd;

pub use dynamic_threshold::DynamicThreshold;
pub use losspass::LossPass;
pub use lqd::LongestQueueDrop;

use super::mmu::Pool;
use super::SwitchPort;
use crate::registry::registry;
use crate::stats::DropReason;
use std::ops::Range;

/// What an admission policy sees: the arriving packet's port and queue, its size, the
/// ports of its pool and the pool.
pub struct AdmitContext<'a> {
    pub ports: &'a [SwitchPort],
    /// The ports sharing the packet's pool.
    pub pool_ports: Range<usize>,
    pub pool: &'a Pool,
    pub port: usize,
    pub queue: usize,
    pub size: u64,
}

impl AdmitContext<'_> {
    pub fn account(&self) -> &super::mmu::QueueAccount {
        &self.ports[self.port].queues[self.queue].account
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
