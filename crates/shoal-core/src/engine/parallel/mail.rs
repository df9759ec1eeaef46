//! What the partitions of a parallel run send each other: the packets on the links
//! between them, and the receiving ends of the flows that start in one and end in
//! another. A partition posts what it sent in a window at the window's end, and each
//! partition takes its own mail at the start of the next, on its own thread.

use super::super::flows::Flow;
use super::super::{Event, Simulation};
use crate::net::{Ext, Packet};
use crate::sim::Ps;
use crate::transport::AnyReceiver;
use crate::workload::FlowSpec;
use std::sync::Mutex;

/// One thing sent from a partition to another.
pub(super) enum Parcel {
    /// A packet put on the wire of `link`, arriving at `arrival`, with its side-table
    /// payload (the sender's handle for it is void).
    Packet { link: u32, arrival: Ps, packet: Packet, ext: Option<Ext> },
    /// The receiving end of flow `flow`, started at its source in another partition.
    Receiver { flow: u32, spec: FlowSpec, receiver: AnyReceiver },
}

/// A mailbox for each ordered pair of partitions, in two sets that take turns by window:
/// what a partition sends in window w goes into set w mod 2, which its receivers empty at
/// the start of window w + 1 (or the coordinator between the two). So a partition never
/// takes mail sent in the window it runs, whatever its threads' timing, and takes its
/// mail in the order of the partitions that sent it: the same for any number of threads.
pub(super) struct Mailboxes {
    parts: usize,
    boxes: Vec<Mutex<Vec<Parcel>>>,
}

impl Mailboxes {
    pub fn new(parts: usize) -> Self {
        Mailboxes { parts, boxes: (0..2 * parts * parts).map(|_| Mutex::new(Vec::new())).collect() }
    }

    fn slot(&self, window: u64, from: usize, to: usize) -> &Mutex<Vec<Parcel>> {
        &self.boxes[((window % 2) as usize * self.parts + from) * self.parts + to]
    }

    /// Posts what partition `from` sent to each other partition in `window` (`outbox`,
    /// by destination), leaving each list empty.
    pub fn post(&self, window: u64, from: usize, outbox: &mut [Vec<Parcel>]) {
        for (to, parcels) in outbox.iter_mut().enumerate().filter(|(_, p)| !p.is_empty()) {
            let mut slot = self.slot(window, from, to).lock().expect("a mailbox");
            match slot.is_empty() {
                // The lists trade places, so that their memory is used again.
                true => std::mem::swap(&mut *slot, parcels),
                false => slot.append(parcels),
            }
        }
    }

    /// Partition `to`'s mail from `window`, each sender's in turn, handed to `take`.
    fn collect(&self, window: u64, to: usize, scratch: &mut Vec<Parcel>, mut take: impl FnMut(Parcel)) {
        for from in (0..self.parts).filter(|&from| from != to) {
            std::mem::swap(&mut *self.slot(window, from, to).lock().expect("a mailbox"), scratch);
            scratch.drain(..).for_each(&mut take);
        }
    }
}

impl Simulation {
    /// Takes this partition's mail from `window`: the packets join their wires here (and
    /// an arrival is scheduled for a wire that was empty), their payloads this
    /// partition's side table, and the receiving ends their flows.
    pub(super) fn take_mail(&mut self, mail: &Mailboxes, window: u64) {
        let part = self.part.as_mut().expect("a partition");
        let (id, mut scratch) = (part.id as usize, std::mem::take(&mut part.inbox));
        mail.collect(window, id, &mut scratch, |parcel| match parcel {
            Parcel::Packet { link, arrival, mut packet, ext } => {
                packet.ext = ext.map(|e| self.exts.insert(e));
                let wire = &mut self.links[link as usize].wire;
                wire.push_back((arrival, packet));
                if wire.len() == 1 {
                    self.events.push(arrival, Event::Arrive(link));
                }
            }
            Parcel::Receiver { flow, spec, receiver } => {
                self.flows.start(flow, Flow { spec, sender: None, receiver: Some(receiver) });
            }
        });
        self.part.as_mut().expect("a partition").inbox = scratch;
    }
}
