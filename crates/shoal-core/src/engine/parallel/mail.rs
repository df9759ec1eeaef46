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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// One thing sent from a partition to another.
enum Parcel {
    /// A packet put on the wire of `link`, arriving at `arrival`; with a side-table
    /// payload (the next of its batch's `exts`) if `has_ext` (the sender's handle for it
    /// is void).
    Packet { link: u32, arrival: Ps, packet: Packet, has_ext: bool },
    /// The receiving end of a flow (its index and spec), started at its source in
    /// another partition.
    Receiver(Box<(u32, FlowSpec, AnyReceiver)>),
}

/// What a partition sends another in a window, in the order sent. Payloads are kept
/// apart, so that a parcel stays small (a payload is five times a packet's size).
#[derive(Default)]
pub(super) struct Batch {
    parcels: Vec<Parcel>,
    exts: Vec<Ext>,
}

impl Batch {
    pub fn packet(&mut self, link: u32, arrival: Ps, packet: Packet, ext: Option<Ext>) {
        self.parcels.push(Parcel::Packet { link, arrival, packet, has_ext: ext.is_some() });
        self.exts.extend(ext);
    }

    pub fn receiver(&mut self, flow: u32, spec: FlowSpec, receiver: AnyReceiver) {
        self.parcels.push(Parcel::Receiver(Box::new((flow, spec, receiver))));
    }

    fn is_empty(&self) -> bool {
        self.parcels.is_empty()
    }

    /// Moves `other`'s parcels after these.
    fn append(&mut self, other: &mut Batch) {
        self.parcels.append(&mut other.parcels);
        self.exts.append(&mut other.exts);
    }
}

/// A mailbox for each ordered pair of partitions, in two sets that take turns by window:
/// what a partition sends in window w goes into set w mod 2, which its receivers empty at
/// the start of window w + 1 (or the coordinator between the two). So a partition never
/// takes mail sent in the window it runs, whatever its threads' timing, and takes its
/// mail in the order of the partitions that sent it: the same for any number of threads.
pub(super) struct Mailboxes {
    parts: usize,
    boxes: Vec<Mutex<Batch>>,
    /// For each set and receiver, a bit for each sender whose mailbox holds mail, so that
    /// a receiver opens only those.
    full: Vec<AtomicU64>,
}

impl Mailboxes {
    pub fn new(parts: usize) -> Self {
        let boxes = (0..2 * parts * parts).map(|_| Mutex::default()).collect();
        let full = (0..2 * parts * parts.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
        Mailboxes { parts, boxes, full }
    }

    fn slot(&self, window: u64, from: usize, to: usize) -> &Mutex<Batch> {
        &self.boxes[((window % 2) as usize * self.parts + from) * self.parts + to]
    }

    /// The bits of `to`'s senders in `window`'s set: `from` is bit `from % 64` of word
    /// `from / 64`.
    fn full(&self, window: u64, to: usize) -> &[AtomicU64] {
        let words = self.parts.div_ceil(64);
        let first = ((window % 2) as usize * self.parts + to) * words;
        &self.full[first..first + words]
    }

    /// Posts what partition `from` sent to each other partition in `window` (`outbox`,
    /// by destination), leaving each list empty.
    pub fn post(&self, window: u64, from: usize, outbox: &mut [Batch]) {
        for (to, parcels) in outbox.iter_mut().enumerate().filter(|(_, p)| !p.is_empty()) {
            let mut slot = self.slot(window, from, to).lock().expect("a mailbox");
            match slot.is_empty() {
                // The lists trade places, so that their memory is used again.
                true => std::mem::swap(&mut *slot, parcels),
                false => slot.append(parcels),
            }
            self.full(window, to)[from / 64].fetch_or(1 << (from % 64), Ordering::Release);
        }
    }

    /// Partition `to`'s mail from `window`, each sender's in turn (in the order of their
    /// numbers), handed to `take`.
    fn collect(
        &self,
        window: u64,
        to: usize,
        scratch: &mut Batch,
        mut take: impl FnMut(Parcel, &mut dyn Iterator<Item = Ext>),
    ) {
        for (word, bits) in self.full(window, to).iter().enumerate() {
            let mut senders = bits.swap(0, Ordering::Acquire);
            while senders != 0 {
                let from = word * 64 + senders.trailing_zeros() as usize;
                senders &= senders - 1;
                std::mem::swap(&mut *self.slot(window, from, to).lock().expect("a mailbox"), scratch);
                let mut exts = scratch.exts.drain(..);
                scratch.parcels.drain(..).for_each(|parcel| take(parcel, &mut exts));
            }
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
        mail.collect(window, id, &mut scratch, |parcel, exts| match parcel {
            Parcel::Packet { link, arrival, mut packet, has_ext } => {
                if has_ext {
                    packet.ext = Some(self.exts.insert(exts.next().expect("a payload for each that has one")));
                }
                let wire = &mut self.links[link as usize].wire;
                wire.push_back((arrival, packet));
                if wire.len() == 1 {
                    self.events.push(arrival, Event::Arrive(link));
                }
            }
            Parcel::Receiver(end) => {
                let (flow, spec, receiver) = *end;
                self.flows.start(flow, Flow { spec, sender: None, receiver: Some(receiver), newest_arrived: (0, 0) });
            }
        });
        self.part.as_mut().expect("a partition").inbox = scratch;
    }
}
