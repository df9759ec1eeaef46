//! The paced flows of a NIC and the round-robin order it serves them in, kept so that the
//! flow served next is found in O(log n) of the flows behind its gate (the bit of the
//! NIC's pause mask that stops a flow): per gate, the flows in serving order under a
//! tree of the earliest time each subtree may send.
//!
//! The order is a key per flow: under `NicOrder::Creation` its flow id, from the one
//! after the last served, wrapping around; under `NicOrder::Rotate` a ticket drawn when it
//! joins and each time it is served, smallest first (a new ticket is the back of the
//! order). A flow keeps its key, and so its place, while it waits for its rate limiter or
//! its gate.

use crate::host::config::NicOrder;
use crate::sim::Ps;
use rustc_hash::FxHashMap;

/// The bit of a NIC's pause mask that is always set: a flow whose gate it is waits (held
/// by BFC's filter). The other gates are the NIC's queues, numbered below it.
pub(super) const HELD_BY_FILTER: u8 = 63;

/// `Member::flow` of a hole that no flow keeps.
const NOBODY: u32 = u32::MAX;

/// The ready time of a hole.
const NEVER: Ps = Ps::MAX;

/// A flow's place in the serving order (module documentation).
type Key = u64;

/// The paced flows of a NIC: each flow with a packet to send, when its rate limiter lets
/// it go, and its gate.
///
/// Invariants: each paced flow is a live member of exactly one lane, its gate's, and
/// `place` says where; under `NicOrder::Creation`, a flow that left may keep its member
/// as a hole (`place` then says where too). Bit g of `occupied` is set exactly when gate
/// g's lane has live members. `recent` is a paced flow and its place, or `NOBODY`.
pub(super) struct PacedFlows {
    order: NicOrder,
    /// By gate: the NIC's queues, then `HELD_BY_FILTER`'s.
    lanes: Box<[Lane]>,
    place: FxHashMap<u32, Place>,
    /// The flow served or found last: the flow served paces itself right after, so this
    /// spares the map most look-ups.
    recent: (u32, Place),
    occupied: u64,
    next_ticket: Key,
    /// The flow served last (`NicOrder::Creation` goes on after it).
    last_served: Option<u32>,
    /// The lane `last_served` was served from and where the members after it begin
    /// there, until a lane's members move or one joins (it spares a search per packet).
    resume: Option<(u8, u32)>,
}

#[derive(Clone, Copy, Debug)]
struct Place {
    lane: u8,
    at: u32,
}

/// A paced flow in its lane, or the hole one left.
#[derive(Clone, Copy, Debug)]
pub(super) struct Member {
    /// The flow; in a hole, the flow that comes back to it (`NicOrder::Creation`), or
    /// `NOBODY`.
    pub flow: u32,
    /// Its virtual flow id (BFC's filters name flows by it).
    pub vfid: u32,
    /// The queue (class) whose pause stops it.
    pub class: u8,
    live: bool,
    key: Key,
}

/// The flows of one gate in key order, holes among them, under a min-tree of their ready
/// times.
///
/// Invariants: `members` is in increasing key order and no longer than `width`, a power
/// of two. `nodes` holds the tree, then the flows: `nodes[width + i]` is when live member
/// i may send (`NEVER` for a hole and past the members), `nodes[j]` (0 < j < width) is
/// the smaller of `nodes[2j]` and `nodes[2j + 1]`, and `nodes[2 * width + i]` is live
/// member i's flow, beside the tree so that serving a flow reads no member. `live` counts
/// the live members, and there are no more holes than live members (the tree stays as
/// shallow as the flows allow).
struct Lane {
    members: Vec<Member>,
    nodes: Vec<Ps>,
    width: usize,
    live: usize,
}

impl Lane {
    fn new() -> Lane {
        Lane { members: Vec::new(), nodes: vec![NEVER; 3], width: 1, live: 0 }
    }

    /// Moves the leaves and flows of the members to a tree `width` wide, and rebuilds it.
    fn regrow(&mut self, width: usize) {
        let (old, len) = (self.width, self.members.len());
        let mut nodes = vec![NEVER; 3 * width];
        nodes[width..width + len].copy_from_slice(&self.nodes[old..old + len]);
        nodes[2 * width..2 * width + len].copy_from_slice(&self.nodes[2 * old..2 * old + len]);
        (self.nodes, self.width) = (nodes, width);
        self.retree();
    }

    /// Rebuilds the tree above the leaves of the members.
    fn retree(&mut self) {
        let (width, len) = (self.width, self.members.len());
        self.nodes[width + len..2 * width].fill(NEVER);
        for j in (1..width).rev() {
            self.nodes[j] = self.nodes[2 * j].min(self.nodes[2 * j + 1]);
        }
    }

    /// Drops the holes: each compaction is paid for by as many departures.
    fn compact(&mut self) {
        let width = self.width;
        let mut kept = 0;
        for i in 0..self.members.len() {
            if self.members[i].live {
                self.members[kept] = self.members[i];
                self.nodes[width + kept] = self.nodes[width + i];
                self.nodes[2 * width + kept] = self.nodes[2 * width + i];
                kept += 1;
            }
        }
        self.members.truncate(kept);
        self.regrow(kept.next_power_of_two());
    }

    /// Inserts live `member` at `i` of the order, ready at `at`.
    fn insert(&mut self, i: usize, member: Member, at: Ps) {
        let len = self.members.len();
        if len == self.width {
            self.regrow(2 * self.width);
        }
        let width = self.width;
        self.members.insert(i, member);
        self.live += 1;
        self.nodes.copy_within(width + i..width + len, width + i + 1);
        self.nodes[width + i] = at;
        self.nodes.copy_within(2 * width + i..2 * width + len, 2 * width + i + 1);
        self.nodes[2 * width + i] = member.flow as Ps;
        self.retree();
    }

    #[inline]
    fn ready_at(&self, i: usize) -> Ps {
        self.nodes[self.width + i]
    }

    /// The flow of live member `i`.
    #[inline]
    fn flow_at(&self, i: usize) -> u32 {
        self.nodes[2 * self.width + i] as u32
    }

    /// Live member `i` is flow `flow` (again).
    fn set_flow(&mut self, i: usize, flow: u32) {
        self.nodes[2 * self.width + i] = flow as Ps;
    }

    /// Member `i` may send at `at`.
    #[inline]
    fn set(&mut self, i: usize, at: Ps) {
        let mut j = self.width + i;
        self.nodes[j] = at;
        while j > 1 {
            let parent = self.nodes[j & !1].min(self.nodes[j | 1]);
            j >>= 1;
            if self.nodes[j] == parent {
                break;
            }
            self.nodes[j] = parent;
        }
    }

    /// Appends `member`, whose key is the largest, ready at `at`.
    fn push(&mut self, member: Member, at: Ps) {
        let i = self.members.len();
        if i == self.width {
            self.regrow(2 * self.width);
        }
        self.members.push(member);
        self.live += member.live as usize;
        self.set_flow(i, member.flow);
        self.set(i, at);
    }

    /// The first member from `from` on that may send at `now`.
    #[inline]
    fn first_from(&self, from: usize, now: Ps) -> Option<usize> {
        if from >= self.members.len() {
            return None;
        }
        // The subtrees right of `from`, left to right, until one may send; then down it.
        let mut j = self.width + from;
        while self.nodes[j] > now {
            while j & 1 == 1 {
                j >>= 1;
            }
            if j == 0 {
                return None;
            }
            j += 1;
        }
        while j < self.width {
            j *= 2;
            if self.nodes[j] > now {
                j += 1;
            }
        }
        Some(j - self.width)
    }

    /// The member served next at `now`, if one may send, and whether the order wrapped
    /// around to it. `after`, if known, is where the members after `last_served` begin.
    #[inline(always)]
    fn first(&self, now: Ps, order: NicOrder, last_served: Option<u32>, after: Option<u32>) -> Option<(bool, usize)> {
        if self.nodes[1] > now {
            return None;
        }
        match (order, last_served) {
            (NicOrder::Creation, Some(last)) => {
                let after = match after {
                    Some(after) => after as usize,
                    None => self.members.partition_point(|m| m.key <= last as Key),
                };
                match self.first_from(after, now) {
                    Some(i) => Some((false, i)),
                    None => self.first_from(0, now).map(|i| (true, i)),
                }
            }
            _ => self.first_from(0, now).map(|i| (false, i)),
        }
    }

    fn holes(&self) -> usize {
        self.members.len() - self.live
    }

    fn clear(&mut self) {
        *self = Lane::new();
    }
}

impl PacedFlows {
    /// No flows, for a NIC of `queues` queues.
    pub fn new(order: NicOrder, queues: usize) -> Self {
        debug_assert!(queues <= HELD_BY_FILTER as usize);
        PacedFlows {
            order,
            lanes: (0..=queues).map(|_| Lane::new()).collect(),
            place: FxHashMap::default(),
            recent: (NOBODY, Place { lane: 0, at: 0 }),
            occupied: 0,
            next_ticket: 0,
            last_served: None,
            resume: None,
        }
    }

    #[inline]
    fn lane_of(&self, gate: u8) -> usize {
        (gate as usize).min(self.lanes.len() - 1)
    }

    /// The bit of the pause mask of lane `lane`'s gate.
    #[inline]
    fn gate_bit(&self, lane: usize) -> u64 {
        if lane == self.lanes.len() - 1 {
            1 << HELD_BY_FILTER
        } else {
            1 << lane
        }
    }

    /// Where paced flow `flow` is.
    #[inline]
    fn find(&mut self, flow: u32) -> Option<Place> {
        if self.recent.0 == flow {
            return Some(self.recent.1);
        }
        let place = *self.place.get(&flow)?;
        if !self.lanes[place.lane as usize].members[place.at as usize].live {
            return None;
        }
        self.recent = (flow, place);
        Some(place)
    }

    /// Whether `flow` is paced (has a packet to send, now or later).
    pub fn contains(&self, flow: u32) -> bool {
        self.place.get(&flow).is_some_and(|p| self.lanes[p.lane as usize].members[p.at as usize].live)
    }

    /// Paced flow `flow` may send its next packet at `at`. False if `flow` is not paced
    /// (it joins with `add`).
    #[inline]
    pub fn update(&mut self, flow: u32, at: Ps) -> bool {
        let Some(place) = self.find(flow) else { return false };
        self.lanes[place.lane as usize].set(place.at as usize, at);
        true
    }

    /// Flow `flow`, not paced, joins behind `gate`: it may send at `at`.
    pub fn add(&mut self, flow: u32, class: u8, gate: u8, vfid: u32, at: Ps) {
        debug_assert!(gate == HELD_BY_FILTER || (gate as usize) < self.lanes.len() - 1);
        let l = self.lane_of(gate);
        self.occupied |= self.gate_bit(l);
        let key = match self.order {
            NicOrder::Creation => flow as Key,
            NicOrder::Rotate => {
                self.next_ticket += 1;
                self.next_ticket
            }
        };
        let member = Member { flow, vfid, class, live: true, key };
        if let Some(&hole) = self.place.get(&flow) {
            debug_assert!(self.order == NicOrder::Creation, "only this order keeps a place");
            if hole.lane as usize == l {
                let lane = &mut self.lanes[l];
                lane.members[hole.at as usize] = member;
                lane.live += 1;
                lane.set_flow(hole.at as usize, flow);
                lane.set(hole.at as usize, at);
                self.recent = (flow, hole);
                return;
            }
            // Its hole is behind another gate; it joins the new one's lane.
            self.lanes[hole.lane as usize].members[hole.at as usize].flow = NOBODY;
            self.place.remove(&flow);
            self.recent.0 = NOBODY;
        }
        self.resume = None;
        let lane = &mut self.lanes[l];
        if lane.members.last().is_none_or(|last| last.key < key) {
            lane.push(member, at);
            let place = Place { lane: l as u8, at: lane.members.len() as u32 - 1 };
            self.place.insert(flow, place);
            self.recent = (flow, place);
        } else {
            self.compact(l);
            let lane = &mut self.lanes[l];
            let i = lane.members.partition_point(|m| m.key < key);
            lane.insert(i, member, at);
            self.replace(l, i);
        }
    }

    /// Flow `flow` has nothing to send: it leaves, if it was paced.
    pub fn remove(&mut self, flow: u32) {
        let Some(place) = self.find(flow) else { return };
        let (l, at) = (place.lane as usize, place.at as usize);
        self.recent.0 = NOBODY;
        let lane = &mut self.lanes[l];
        let member = &mut lane.members[at];
        member.live = false;
        if self.order == NicOrder::Rotate {
            // It comes back with a new ticket: nothing keeps its place.
            member.flow = NOBODY;
            self.place.remove(&flow);
        }
        lane.live -= 1;
        lane.set(at, NEVER);
        if lane.live == 0 {
            self.occupied &= !self.gate_bit(l);
        }
        if self.lanes[l].holes() > self.lanes[l].live {
            self.compact(l);
        }
    }

    /// Drops lane `l`'s holes; the flows that kept them lose their places.
    #[cold]
    fn compact(&mut self, l: usize) {
        let lane = &mut self.lanes[l];
        for m in lane.members.iter().filter(|m| !m.live && m.flow != NOBODY) {
            self.place.remove(&m.flow);
        }
        if lane.live == 0 {
            lane.clear();
        } else {
            lane.compact();
        }
        self.replace(l, 0);
        self.recent.0 = NOBODY;
        self.resume = None;
    }

    /// Updates the places of lane `l`'s members from the `from`th on, which moved.
    fn replace(&mut self, l: usize, from: usize) {
        for (i, m) in self.lanes[l].members.iter().enumerate().skip(from) {
            self.place.insert(m.flow, Place { lane: l as u8, at: i as u32 });
        }
        self.recent.0 = NOBODY;
    }

    /// The flow served at `now`: the first in the order that may send and whose gate is
    /// clear in `paused`. Under `NicOrder::Rotate` it moves to the back of the order.
    #[inline]
    pub fn next(&mut self, now: Ps, paused: u64) -> Option<u32> {
        let open = self.occupied & !paused;
        if open == 0 {
            return None;
        }
        let (l, i) = if open & (open - 1) == 0 {
            let l = self.lane_of(open.trailing_zeros() as u8);
            let after = self.resume.filter(|&(lane, _)| lane as usize == l).map(|(_, after)| after);
            (l, self.lanes[l].first(now, self.order, self.last_served, after)?.1)
        } else {
            self.first_of(open, now)?
        };
        let lane = &mut self.lanes[l];
        let flow = lane.flow_at(i);
        match self.order {
            NicOrder::Creation => {
                self.last_served = Some(flow);
                self.resume = Some((l as u8, i as u32 + 1));
                self.recent = (flow, Place { lane: l as u8, at: i as u32 });
            }
            NicOrder::Rotate => {
                // To the back: a hole where it was, and the member again with a new ticket.
                let at = lane.ready_at(i);
                let member = lane.members[i];
                lane.members[i].flow = NOBODY;
                lane.members[i].live = false;
                lane.live -= 1;
                lane.set(i, NEVER);
                self.next_ticket += 1;
                lane.push(Member { key: self.next_ticket, ..member }, at);
                let place = Place { lane: l as u8, at: lane.members.len() as u32 - 1 };
                self.place.insert(flow, place);
                self.recent = (flow, place);
                if lane.holes() > lane.live {
                    self.compact(l);
                }
            }
        }
        Some(flow)
    }

    /// The lane and member served next at `now` among those of the gates `open`
    /// (several).
    fn first_of(&self, mut open: u64, now: Ps) -> Option<(usize, usize)> {
        let mut best: Option<((bool, Key), usize, usize)> = None;
        while open != 0 {
            let l = self.lane_of(open.trailing_zeros() as u8);
            open &= open - 1;
            let lane = &self.lanes[l];
            let after = self.resume.filter(|&(resumed, _)| resumed as usize == l).map(|(_, after)| after);
            let Some((wrapped, i)) = lane.first(now, self.order, self.last_served, after) else { continue };
            let rank = (wrapped, lane.members[i].key);
            if best.is_none_or(|(r, _, _)| rank < r) {
                best = Some((rank, l, i));
            }
        }
        best.map(|(_, l, i)| (l, i))
    }

    /// When the earliest flow whose gate is clear in `paused` may send.
    pub fn earliest(&self, paused: u64) -> Option<Ps> {
        let mut open = self.occupied & !paused;
        let mut earliest = None;
        while open != 0 {
            let at = self.lanes[self.lane_of(open.trailing_zeros() as u8)].nodes[1];
            open &= open - 1;
            earliest = Some(earliest.map_or(at, |e: Ps| e.min(at)));
        }
        earliest
    }

    /// Whether a flow whose gate is clear in `paused` has a packet to send, now or later.
    #[inline]
    pub fn any(&self, paused: u64) -> bool {
        self.occupied & !paused != 0
    }

    /// Sets each flow's gate to `gate_of` it (the lanes are rebuilt if one moves; flows
    /// lose the places they kept).
    pub fn regate(&mut self, gate_of: impl Fn(&Member) -> u8) {
        let moves = |l: usize, m: &Member| m.live && self.lane_of(gate_of(m)) != l;
        if !self.lanes.iter().enumerate().any(|(l, lane)| lane.members.iter().any(|m| moves(l, m))) {
            return;
        }
        let mut by_lane: Vec<Vec<(Member, Ps)>> = vec![Vec::new(); self.lanes.len()];
        for lane in self.lanes.iter() {
            for (i, m) in lane.members.iter().enumerate().filter(|(_, m)| m.live) {
                by_lane[self.lane_of(gate_of(m))].push((*m, lane.ready_at(i)));
            }
        }
        self.place.clear();
        self.recent.0 = NOBODY;
        self.resume = None;
        self.occupied = 0;
        for (l, mut kept) in by_lane.into_iter().enumerate() {
            kept.sort_unstable_by_key(|(m, _)| m.key);
            for (i, (m, _)) in kept.iter().enumerate() {
                self.place.insert(m.flow, Place { lane: l as u8, at: i as u32 });
            }
            if !kept.is_empty() {
                self.occupied |= self.gate_bit(l);
            }
            let lane = &mut self.lanes[l];
            lane.clear();
            for (m, at) in kept {
                lane.push(m, at);
            }
        }
    }
}
