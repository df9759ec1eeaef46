//! BFC's per-switch flow table (§3.8): the state of each virtual flow that has packets
//! queued here (its physical queue, its queued packets, whether it is paused upstream).
//!
//! As in the preprint, the table has one bucket of four entries per VFID, so the VFID
//! itself is not stored; an entry stores the flow's ingress and egress, and two 5-tuples
//! with the same VFID, ingress and egress are one flow to this switch. A full bucket
//! spills into a small associative overflow cache; when that is full too, the flow has
//! no entry and its packets go to the egress's overflow queue.

use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The state a switch keeps for one virtual flow while it holds its packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowState {
    /// The physical queue its packets join at its egress.
    pub queue: u16,
    /// Its packets queued here.
    pub packets: u32,
    /// The switch has paused it upstream (its VFID is in the ingress link's filter).
    pub paused: bool,
    /// Paused, and on its queue's list of flows to resume.
    pub resuming: bool,
    /// Paused without packets here, waiting for its queue to drain to the threshold.
    pub parked: bool,
    /// The 5-tuple hash of the flow that made the entry: another flow with the same VFID,
    /// ingress and egress shares it (counted, not told apart).
    pub owner: u32,
    /// The low 32 bits of the tick until which its queue is kept since its last resume
    /// with nothing queued (0 if never): of the flow's `Kept` entries, only the one with
    /// this deadline releases it.
    pub kept_until: u32,
}

/// Where a flow's entry lives: a way of its VFID's bucket, or a slot of the overflow
/// cache (up to 2^20 of them). Valid until the entry is removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    Bucket { vfid: u32, way: u8 },
    Cache(u32),
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    ingress: u16,
    egress: u16,
    state: FlowState,
}

/// Ways per bucket (§3.8).
pub const WAYS: usize = 4;

/// A flow as the overflow cache is searched by: (VFID, ingress, egress).
type CacheKey = (u32, u16, u16);

/// The flow table of one switch.
///
/// Invariant: a (VFID, ingress, egress) has at most one entry, in its bucket or in the
/// cache; `len` counts the entries. `cache_index` maps the key of each cache entry to its
/// slot, and `free_slots` holds every empty slot, the lowest on top: a lookup costs the
/// same whatever the cache's size, an insertion or removal its logarithm (scanning it made every packet of a flow
/// without a bucket entry cost `overflow_cache` steps).
pub struct FlowTable {
    buckets: Box<[Option<Entry>]>,
    cache: Vec<Option<(u32, Entry)>>,
    cache_index: FxHashMap<CacheKey, u32>,
    free_slots: BinaryHeap<Reverse<u32>>,
    len: usize,
}

impl FlowTable {
    /// A table for `vfids` VFIDs (one bucket of `WAYS` entries each) and an overflow
    /// cache of `cache` entries.
    pub fn new(vfids: u32, cache: usize) -> Self {
        FlowTable {
            buckets: vec![None; vfids as usize * WAYS].into(),
            cache: vec![None; cache],
            cache_index: FxHashMap::default(),
            free_slots: (0..cache as u32).map(Reverse).collect(),
            len: 0,
        }
    }

    /// The bytes `new(vfids, cache)` allocates.
    pub fn bytes(vfids: u32, cache: usize) -> u64 {
        (vfids as usize * WAYS * std::mem::size_of::<Option<Entry>>()
            + cache * std::mem::size_of::<Option<(u32, Entry)>>()) as u64
    }

    /// The flows with an entry.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entry of the flow, if it has one.
    pub fn find(&self, vfid: u32, ingress: u16, egress: u16) -> Option<Slot> {
        let base = vfid as usize * WAYS;
        let same = |e: &Entry| e.ingress == ingress && e.egress == egress;
        if let Some(way) = self.buckets[base..base + WAYS].iter().position(|e| e.as_ref().is_some_and(same)) {
            return Some(Slot::Bucket { vfid, way: way as u8 });
        }
        if self.cache_index.is_empty() {
            return None;
        }
        self.cache_index.get(&(vfid, ingress, egress)).map(|&i| Slot::Cache(i))
    }

    /// Whether a flow of `vfid` without an entry would get one: its bucket or the cache
    /// has a free place.
    pub fn has_room(&self, vfid: u32) -> bool {
        let base = vfid as usize * WAYS;
        self.buckets[base..base + WAYS].iter().any(Option::is_none) || !self.free_slots.is_empty()
    }

    /// The flow's entry, made with `state` if it has none: in a free way of its bucket,
    /// else in a free cache slot. `None` when both are full (the flow overflows).
    pub fn find_or_insert(&mut self, vfid: u32, ingress: u16, egress: u16, state: FlowState) -> Option<Slot> {
        if let Some(slot) = self.find(vfid, ingress, egress) {
            return Some(slot);
        }
        let entry = Entry { ingress, egress, state };
        let base = vfid as usize * WAYS;
        let slot = if let Some(way) = self.buckets[base..base + WAYS].iter().position(Option::is_none) {
            self.buckets[base + way] = Some(entry);
            Slot::Bucket { vfid, way: way as u8 }
        } else {
            let Reverse(i) = self.free_slots.pop()?;
            self.cache[i as usize] = Some((vfid, entry));
            self.cache_index.insert((vfid, ingress, egress), i);
            Slot::Cache(i)
        };
        self.len += 1;
        Some(slot)
    }

    /// The state at `slot`.
    pub fn state(&mut self, slot: Slot) -> &mut FlowState {
        let entry = match slot {
            Slot::Bucket { vfid, way } => self.buckets[vfid as usize * WAYS + way as usize].as_mut(),
            Slot::Cache(i) => self.cache[i as usize].as_mut().map(|(_, e)| e),
        };
        &mut entry.expect("a slot names a live entry").state
    }

    /// Removes the entry at `slot` (the flow's last packet left and it is not paused).
    pub fn remove(&mut self, slot: Slot) {
        let gone = match slot {
            Slot::Bucket { vfid, way } => self.buckets[vfid as usize * WAYS + way as usize].take().is_some(),
            Slot::Cache(i) => match self.cache[i as usize].take() {
                Some((vfid, e)) => {
                    self.cache_index.remove(&(vfid, e.ingress, e.egress));
                    // The lowest free slot is taken first, as the scan from the start
                    // this replaces did (slots are inner handles: no result depends on it).
                    self.free_slots.push(Reverse(i));
                    true
                }
                None => false,
            },
        };
        debug_assert!(gone, "removing an empty slot");
        self.len -= gone as usize;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRESH: FlowState =
        FlowState { queue: 2, packets: 0, paused: false, resuming: false, parked: false, owner: 0, kept_until: 0 };

    #[test]
    fn flows_sharing_a_vfid_fill_its_bucket_then_the_cache_then_overflow() {
        let mut table = FlowTable::new(16, 2);
        // Seven flows with VFID 5 that differ in ingress: 4 ways, 2 cache slots, 1 over.
        let slots: Vec<Option<Slot>> = (0..7).map(|i| table.find_or_insert(5, i, 9, FRESH)).collect();
        assert!(slots[..4].iter().all(|s| matches!(s, Some(Slot::Bucket { vfid: 5, .. }))));
        assert!(slots[4..6].iter().all(|s| matches!(s, Some(Slot::Cache(_)))));
        assert_eq!(slots[6], None, "bucket and cache full: the flow overflows");
        assert!(!table.has_room(5) && table.has_room(6));
        assert_eq!(table.len(), 6);
        // Another VFID has its own bucket.
        assert!(matches!(table.find_or_insert(6, 0, 9, FRESH), Some(Slot::Bucket { vfid: 6, way: 0 })));
        // A known flow finds its entry, whatever state is offered.
        assert_eq!(table.find_or_insert(5, 4, 9, FlowState { queue: 7, ..FRESH }), slots[4]);
        assert_eq!(table.state(slots[4].unwrap()).queue, 2);
    }

    /// A cache of more than 2^16 entries (the most is 2^20) keeps each flow's own entry:
    /// the slots were 16 bits, and slot 65,536 was slot 0.
    #[test]
    fn a_large_overflow_cache_keeps_every_entry_apart() {
        const FLOWS: u32 = 70_000;
        let mut table = FlowTable::new(1, FLOWS as usize);
        let key = |i: u32| (i as u16, (i >> 16) as u16);
        let slots: Vec<Slot> = (0..FLOWS + WAYS as u32)
            .map(|i| table.find_or_insert(0, key(i).0, key(i).1, FlowState { packets: i, ..FRESH }).unwrap())
            .collect();
        assert_eq!(table.find_or_insert(0, u16::MAX, u16::MAX, FRESH), None, "bucket and cache full");
        for (i, &slot) in slots.iter().enumerate() {
            assert_eq!(table.find(0, key(i as u32).0, key(i as u32).1), Some(slot));
            assert_eq!(table.state(slot).packets, i as u32);
        }
        // A freed slot takes the next flow.
        table.remove(slots[66_000]);
        assert_eq!(table.find(0, key(66_000).0, key(66_000).1), None);
        assert_eq!(table.find_or_insert(0, u16::MAX, u16::MAX, FRESH), Some(slots[66_000]));
    }

    #[test]
    fn same_vfid_ingress_and_egress_is_one_flow_and_removal_frees_the_way() {
        let mut table = FlowTable::new(4, 0);
        let a = table.find_or_insert(1, 3, 4, FRESH).unwrap();
        table.state(a).packets += 2;
        assert_eq!(table.find_or_insert(1, 3, 4, FRESH), Some(a), "a colliding 5-tuple joins the flow");
        assert_eq!(table.state(a).packets, 2);
        assert_ne!(table.find_or_insert(1, 3, 5, FRESH), Some(a), "another egress is another flow");
        table.remove(a);
        assert_eq!(table.find(1, 3, 4), None);
        assert_eq!(table.len(), 1);
        assert_eq!(table.find_or_insert(1, 7, 4, FRESH), Some(a), "the freed way is reused");
    }
}
