//! The flows of a run between their start and their release: memory follows the flows in
//! flight, not every flow of the run.

use crate::sim::Ps;
use crate::transport::{AnyReceiver, AnySender, Outcome, Receiver, Sender, Stacks};
use crate::workload::FlowSpec;

/// A flow from its start until it has finished and nothing of it is left to happen: no
/// packet of it in the network, no timer of it pending, no NIC pacing it. Its row of the
/// flow table is then final, and its state is released.
pub(super) struct Flow {
    pub spec: FlowSpec,
    /// Its end at the source host.
    pub sender: AnySender,
    /// Its end at the destination host.
    pub receiver: AnyReceiver,
    /// The ECMP hash of its data packets.
    pub hash: u32,
    /// Time of the pending timer event that is current, if any.
    pub timer_event_at: Option<Ps>,
    /// Data bytes of this flow waiting in its sender's NIC queue.
    pub nic_bytes: u64,
    /// Its sender wants to hear when its packets leave the NIC.
    pub drain_notices: bool,
}

impl Flow {
    /// Whether a timer may still make its sender act (a packet of it in the network or a
    /// NIC pacing it may too: `Simulation::release_quiet_flows` looks for those).
    pub fn waits_for_timer(&self) -> bool {
        self.timer_event_at.is_some() && self.sender.wants_timer()
    }

    /// What its two ends know of its results.
    pub fn outcome(&self, stacks: &Stacks) -> Outcome {
        self.sender.outcome(stacks).merge(self.receiver.outcome(stacks))
    }
}

/// The started flows, by index (their start order), the active ones in the slots of a
/// slab whose released slots are reused.
///
/// Invariants: `slot_of` has an entry per started flow, `RELEASED` or the slot of an
/// active flow; every slot is either an active flow's (exactly one) or in `free`. A free
/// slot keeps its released flow until it is reused.
#[derive(Default)]
pub(super) struct Flows {
    slot_of: Vec<u32>,
    slots: Vec<Flow>,
    free: Vec<u32>,
}

const RELEASED: u32 = u32::MAX;

impl Flows {
    /// Flows started so far.
    pub fn started(&self) -> usize {
        self.slot_of.len()
    }

    /// Flows started and not released.
    pub fn active_count(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Starts `flow` as the next flow (index `started()`).
    pub fn start(&mut self, flow: Flow) {
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = flow;
                slot
            }
            None => {
                self.slots.push(flow);
                self.slots.len() as u32 - 1
            }
        };
        self.slot_of.push(slot);
    }

    /// Active flow `fi` (panics if it was released).
    #[inline]
    pub fn get_mut(&mut self, fi: u32) -> &mut Flow {
        &mut self.slots[self.slot_of[fi as usize] as usize]
    }

    /// Flow `fi`, if it is active.
    #[inline]
    pub fn get_mut_if_active(&mut self, fi: u32) -> Option<&mut Flow> {
        self.slots.get_mut(self.slot_of[fi as usize] as usize)
    }

    /// Flow `fi`, if it is active.
    pub fn get(&self, fi: u32) -> Option<&Flow> {
        self.slots.get(*self.slot_of.get(fi as usize)? as usize)
    }

    /// Releases active flow `fi`.
    pub fn release(&mut self, fi: u32) {
        let slot = std::mem::replace(&mut self.slot_of[fi as usize], RELEASED);
        debug_assert_ne!(slot, RELEASED, "a flow is released once");
        self.free.push(slot);
    }

    /// The active flows with their indices, in index order.
    pub fn active(&self) -> impl Iterator<Item = (u32, &Flow)> {
        self.slot_of
            .iter()
            .enumerate()
            .filter(|(_, &slot)| slot != RELEASED)
            .map(|(fi, &slot)| (fi as u32, &self.slots[slot as usize]))
    }
}
