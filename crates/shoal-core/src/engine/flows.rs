//! The flows of a run between their start and their release: memory follows the flows in
//! flight, not every flow of the run.

use crate::sim::Ps;
use crate::transport::{AnyReceiver, AnySender, Outcome, Receiver, Sender, Stacks};
use crate::workload::FlowSpec;

/// A flow from its start until it has finished and nothing of it is left to happen: no
/// packet of it in the network, no timer of it pending, no NIC pacing it. Its row of the
/// flow table is then final, and its state is released. A partition of a parallel run
/// holds the ends whose hosts it owns.
pub(super) struct Flow {
    pub spec: FlowSpec,
    /// Its end at the source host.
    pub sender: Option<SenderEnd>,
    /// Its end at the destination host.
    pub receiver: Option<AnyReceiver>,
    /// The (send time, sequence number) of the latest-sent packet that has reached its
    /// destination so far, where the run counts reordering.
    pub newest_arrived: (Ps, u32),
}

/// A flow's sender and what the engine keeps for it at its host.
pub(super) struct SenderEnd {
    pub transport: AnySender,
    /// The ECMP hash of its data packets.
    pub hash: u32,
    /// Time of the pending timer event that is current, if any.
    pub timer_event_at: Option<Ps>,
    /// That event is an idle timer (`HostAction::IdleTimer`).
    pub timer_idle: bool,
    /// Data bytes of this flow waiting in its sender's NIC queue.
    pub nic_bytes: u64,
    /// Its sender wants to hear when its packets leave the NIC.
    pub drain_notices: bool,
}

impl Flow {
    /// Its sender's end (held by the partition of its source host).
    #[inline]
    pub fn sender(&mut self) -> &mut SenderEnd {
        self.sender.as_mut().expect("a flow's sender is where its source host is")
    }

    /// Whether a timer may still make its sender act (a packet of it in the network or a
    /// NIC pacing it may too: `Simulation::release_quiet_flows` looks for those). An idle
    /// timer does not: it waits for replies, which only packets in the network can be.
    pub fn waits_for_timer(&self) -> bool {
        self.sender.as_ref().is_some_and(|s| s.timer_event_at.is_some() && !s.timer_idle && s.transport.wants_timer())
    }

    /// What its ends here know of its results.
    pub fn outcome(&self, stacks: &Stacks) -> Outcome {
        let sender = self.sender.as_ref().map(|s| s.transport.outcome(stacks)).unwrap_or_default();
        sender.merge(self.receiver.as_ref().map(|r| r.outcome(stacks)).unwrap_or_default())
    }
}

/// The started flows, by index (their start order), the active ones in the slots of a
/// slab whose released slots are reused.
///
/// Invariants: `slot_of` has an entry per started flow, `RELEASED` or the slot of an
/// active flow (in a partition of a parallel run, `RELEASED` too for the flows whose ends
/// are elsewhere); every slot is either an active flow's (exactly one) or in `free`. A free
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

    /// Starts `flow` as flow `fi`: the next (index `started()`), or in a partition of a
    /// parallel run any other not here yet (a later one, whose sender is here, or an
    /// earlier one, whose receiver was just handed over).
    pub fn start(&mut self, fi: u32, flow: Flow) {
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
        if fi as usize >= self.slot_of.len() {
            self.slot_of.resize(fi as usize + 1, RELEASED);
        }
        debug_assert_eq!(self.slot_of[fi as usize], RELEASED, "a flow starts once");
        self.slot_of[fi as usize] = slot;
    }

    /// Active flow `fi` (panics if it was released).
    #[inline]
    pub fn get_mut(&mut self, fi: u32) -> &mut Flow {
        &mut self.slots[self.slot_of[fi as usize] as usize]
    }

    /// Flow `fi`, if it is active.
    #[inline]
    pub fn get_mut_if_active(&mut self, fi: u32) -> Option<&mut Flow> {
        self.slots.get_mut(*self.slot_of.get(fi as usize)? as usize)
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

    /// Makes `started()` at least `n` (the flows of a parallel run that started in other
    /// partitions, with no end here).
    pub fn pad_to(&mut self, n: usize) {
        if self.slot_of.len() < n {
            self.slot_of.resize(n, RELEASED);
        }
    }

    /// The active flows with their indices, in index order, taken out.
    pub fn into_active(self) -> Vec<(u32, Flow)> {
        let mut slots: Vec<Option<Flow>> = self.slots.into_iter().map(Some).collect();
        let active = self.slot_of.iter().enumerate().filter(|(_, &slot)| slot != RELEASED);
        active.map(|(fi, &slot)| (fi as u32, slots[slot as usize].take().expect("one slot per flow"))).collect()
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
