//! BFC's per-switch flow table (§3.8): the state of each virtual flow that has packets
//! queued here (its physical queue, its queued packets, whether it is paused upstream).
//!
//! As in the preprint, the table has one bucket of four entries per VFID, so the VFID
//! itself is not stored; an entry stores the flow's ingress and egress, and two 5-tuples
//! with the same VFID, ingress and egress are one flow to this switch. A full bucket
//! spills into a small associative overflow cache; when that is full too, the flow has
//! no entry and its packets go to the egress's overflow queue.

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
/// cache. Valid until the entry is removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    Bucket { vfid: u32, way: u8 },
    Cache(u16),
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    ingress: u16,
    egress: u16,
    state: FlowState,
}

/// Ways per bucket (§3.8).
pub const WAYS: usize = 4;

/// The flow table of one switch.
///
/// Invariant: a (VFID, ingress, egress) has at most one entry, in its bucket or in the
/// cache; `len` counts the entries.
pub struct FlowTable {
    buckets: Box<[Option<Entry>]>,
    cache: Vec<Option<(u32, Entry)>>,
    len: usize,
}

impl FlowTable {
    /// A table for `vfids` VFIDs (one bucket of `WAYS` entries each) and an overflow
    /// cache of `cache` entries.
    pub fn new(vfids: u32, cache: usize) -> Self {
        FlowTable { buckets: vec![None; vfids as usize * WAYS].into(), cache: vec![None; cache], len: 0 }
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
        self.cache
            .iter()
            .position(|e| e.as_ref().is_some_and(|(v, e)| *v == vfid && same(e)))
            .map(|i| Slot::Cache(i as u16))
    }

    /// Whether a flow of `vfid` without an entry would get one: its bucket or the cache
    /// has a free place.
    pub fn has_room(&self, vfid: u32) -> bool {
        let base = vfid as usize * WAYS;
        self.buckets[base..base + WAYS].iter().any(Option::is_none) || self.cache.iter().any(Option::is_none)
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
            let i = self.cache.iter().position(Option::is_none)?;
            self.cache[i] = Some((vfid, entry));
            Slot::Cache(i as u16)
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
            Slot::Cache(i) => self.cache[i as usize].take().is_some(),
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
