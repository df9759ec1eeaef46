//! Payloads too large for a packet (a telemetry stack, a pause frame's flow filter), kept
//! in a side table. A packet holds a handle (`Packet::ext`) and owns what it points to:
//! whoever consumes the packet or drops it releases the payload.

use super::IntHop;
use crate::net::bloom::BloomFilter;
use std::num::NonZeroU32;

/// A handle into the `ExtStore`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtId(NonZeroU32);

/// The most hops a telemetry stack records.
pub const MAX_HOPS: usize = 8;

/// In-band telemetry gathered along a packet's path, one record per egress port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TelemetryStack {
    hops: [IntHop; MAX_HOPS],
    len: u8,
}

impl TelemetryStack {
    /// Appends a hop's record; a full stack keeps its first `MAX_HOPS` records.
    pub fn push(&mut self, hop: IntHop) {
        if (self.len as usize) < MAX_HOPS {
            self.hops[self.len as usize] = hop;
            self.len += 1;
        }
    }

    pub fn hops(&self) -> &[IntHop] {
        &self.hops[..self.len as usize]
    }
}

/// A large payload. Its variants differ in size, but the store reuses its slots, so the
/// larger one costs memory only once per slot, where boxing it would cost an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Ext {
    Telemetry(TelemetryStack),
    /// The paused flows of a BFC filter frame.
    Filter(BloomFilter),
}

/// The side table. Invariant: `live` is the number of occupied slots, and every occupied
/// slot belongs to exactly one packet in the network (checked by the engine's
/// conservation checks).
#[derive(Debug, Default)]
pub struct ExtStore {
    /// Slot i holds the payload of handle i + 1.
    slots: Vec<Option<Ext>>,
    free: Vec<u32>,
    live: usize,
}

impl ExtStore {
    /// Stores `ext` and returns its handle.
    pub fn insert(&mut self, ext: Ext) -> ExtId {
        let index = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(ext);
                i
            }
            None => {
                self.slots.push(Some(ext));
                self.slots.len() as u32 - 1
            }
        };
        self.live += 1;
        ExtId(NonZeroU32::new(index + 1).expect("index + 1 is not zero"))
    }

    pub fn get(&self, id: ExtId) -> &Ext {
        self.slots[id.0.get() as usize - 1].as_ref().expect("a live handle")
    }

    /// The per-hop records of a packet's telemetry stack, if it carries one.
    #[inline]
    pub fn telemetry(&self, id: Option<ExtId>) -> Option<&[IntHop]> {
        match self.get(id?) {
            Ext::Telemetry(stack) => Some(stack.hops()),
            Ext::Filter(_) => None,
        }
    }

    /// The flow filter a frame carries, if it carries one.
    #[inline]
    pub fn filter(&self, id: Option<ExtId>) -> Option<&BloomFilter> {
        match self.get(id?) {
            Ext::Filter(filter) => Some(filter),
            Ext::Telemetry(_) => None,
        }
    }

    pub fn get_mut(&mut self, id: ExtId) -> &mut Ext {
        self.slots[id.0.get() as usize - 1].as_mut().expect("a live handle")
    }

    /// Takes the payload out, freeing its slot.
    pub fn remove(&mut self, id: ExtId) -> Ext {
        let index = id.0.get() - 1;
        let ext = self.slots[index as usize].take().expect("a handle is released once");
        self.free.push(index);
        self.live -= 1;
        ext
    }

    /// Frees the payload of a packet that leaves the network (delivered or dropped).
    #[inline]
    pub fn release(&mut self, id: Option<ExtId>) {
        if let Some(id) = id {
            self.remove(id);
        }
    }

    /// Payloads stored.
    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_and_counted() {
        let mut store = ExtStore::default();
        let stack = |q| {
            let mut s = TelemetryStack::default();
            s.push(IntHop { queue_bytes: q, ..IntHop::default() });
            Ext::Telemetry(s)
        };
        let a = store.insert(stack(1));
        let b = store.insert(stack(2));
        assert_eq!(store.len(), 2);
        assert_eq!(store.remove(a), stack(1));
        let c = store.insert(stack(3));
        assert_eq!(c, a, "the freed slot is reused");
        assert_eq!(store.get(b), &stack(2));
        store.release(Some(b));
        store.release(None);
        assert_eq!(store.len(), 1);
    }

    #[test]
    fn a_full_stack_keeps_its_first_hops() {
        let mut s = TelemetryStack::default();
        for q in 0..MAX_HOPS as u64 + 3 {
            s.push(IntHop { queue_bytes: q, ..IntHop::default() });
        }
        assert_eq!(s.hops().len(), MAX_HOPS);
        assert_eq!(s.hops()[MAX_HOPS - 1].queue_bytes, MAX_HOPS as u64 - 1);
    }
}
