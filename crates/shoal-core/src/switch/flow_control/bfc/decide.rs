//! BFC's decisions at one switch, apart from the frames that carry them (§3.3-3.8): which
//! queue a packet joins, when a flow is paused and resumed at its ingress, and which
//! queue heads the downstream's filters hold.
//!
//! The queues of a port, by index: 0 takes packets without payload (ACKs, NACKs, CNPs),
//! 1 is the high-priority queue of flows' first packets (§3.7), 2 up to the last but one
//! are the physical queues assigned to flows, and the last is the overflow queue of
//! flows without a table entry (§3.8). Queues 0 and 1 are served first and never held.

use super::{pause_threshold, vfid, BloomFilter, BloomShape, CountingBloom, FlowState, FlowTable};
use crate::net::pause::PauseGate;
use crate::net::{Packet, PacketKind};
use crate::sim::{mix_below, Ps, Rng};
use crate::switch::flow_control::PortView;
use rand::Rng as _;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// The queue of packets without payload.
pub const ACK_QUEUE: usize = 0;
/// The high-priority queue of flows' first packets.
pub const FIRST_PACKET_QUEUE: usize = 1;
/// The first physical queue.
pub const FIRST_PHYSICAL: usize = 2;

/// How one switch's BFC is set up.
#[derive(Clone, Debug)]
pub struct Setup {
    /// Queues per port: 2 strict queues, the physical queues, then the overflow queue.
    pub queues: usize,
    pub vfids: u32,
    pub overflow_cache: usize,
    pub shape: BloomShape,
    /// By port: the round trip of a pause over its link and back, and the time between
    /// the filters sent on it (§3.3-3.4: a flow's threshold covers the round trip and
    /// interval of the link it arrived on).
    pub hop_rtt: Vec<Ps>,
    pub interval: Vec<Ps>,
    /// By port: its link's rate, bits per second.
    pub rates: Vec<u64>,
    /// Resume every flow due at each interval (BFC-BufferOpt) instead of one per queue.
    pub resume_all: bool,
    pub assignment: Assignment,
    /// Flows' first packets go to the high-priority queue (§3.7).
    pub first_packet_queue: bool,
}

impl Setup {
    /// The switch's tick: the shortest interval of its ports. Resumes are decided each
    /// tick, and a port sends its filter at the first tick an interval after the last.
    pub fn tick(&self) -> Ps {
        self.interval.iter().copied().min().unwrap_or(1).max(1)
    }

    /// A pause's round trip and interval over the link of `port`.
    fn window(&self, port: usize) -> Ps {
        self.hop_rtt[port] + self.interval[port]
    }
}

/// How a flow without packets queued gets its physical queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Assignment {
    /// A free physical queue, else a random one (BFC, §3.3).
    #[default]
    Dynamic,
    /// The physical queue its VFID hashes to, the same at every switch (the straw
    /// proposal of §3.2, BFC-VFID in §4).
    Hash,
}

/// Mixed into a VFID to hash it to a physical queue under `Assignment::Hash`.
const QUEUE_KEY: u64 = 0x63d8_3c1e_95a4_0b77;

/// A paused flow waiting for its turn to resume.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Waiting {
    vfid: u32,
    ingress: u16,
}

/// A flow resumed with no packets queued, holding its physical queue for the packets
/// its resume releases upstream. Ordered by `until` first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Kept {
    /// The tick after which the queue is released if none of them has come.
    until: u64,
    port: u16,
    flow: Waiting,
}

/// BFC's state at one switch.
///
/// Invariants: a flow has a table entry while it has packets in a physical queue here, is
/// paused, or has been resumed with nothing queued and sent nothing here since, for the
/// window of its last such resume (`kept`, `FlowState::kept_until`); `paused[i]` holds
/// the VFID of each paused flow from ingress `i` once; a flow is on at most one
/// `to_resume` list, and only while paused.
///
/// Why `kept`: the resume limit (one flow per physical queue per interval, §3.5) bounds a
/// queue's growth only if the flows it resumes send into it. A resumed flow whose packets
/// all left here would otherwise take a free or random queue when they return, and with
/// many flows per queue several resumed flows' bursts would meet in one queue (its
/// occupancy then grows with the flows, which Fig. 10 says it does not). So a flow
/// resumed with nothing queued keeps its queue for a pause round trip and an interval;
/// after that a first packet is placed afresh.
pub struct Decide {
    setup: Setup,
    table: FlowTable,
    /// Bit q set for each physical queue (the overflow queue is not one).
    physical: u64,
    /// By ingress port: the flows paused there, as the filter sent upstream.
    paused: Vec<CountingBloom>,
    /// By (egress port, physical queue): flows due to resume, oldest first.
    to_resume: Vec<VecDeque<Waiting>>,
    /// By (egress port, physical queue): paused flows whose last packet left while the
    /// queue was above the threshold; they are due when it is down to it.
    parked: Vec<Vec<Waiting>>,
    /// Flows on the `to_resume` lists.
    waiting: usize,
    /// By (egress port, physical queue): the tick of its last resume, 0 if none.
    resumed_at: Vec<u64>,
    /// Flows resumed with nothing queued, the first to be released on top (ports'
    /// round trips differ, so they are not released in the order they were kept).
    kept: BinaryHeap<Reverse<Kept>>,
    /// Intervals ticked.
    ticks: u64,
    /// The longest round trip and interval of a port.
    widest_window: Ps,
    rng: Rng,
    /// Pauses and resumes decided.
    pub pauses: u64,
    pub resumes: u64,
    /// Packets that joined a physical queue, and those that found another flow's
    /// packets in it (a collision: head-of-line blocking between flows).
    pub placements: u64,
    pub collisions: u64,
    /// Packets that joined the overflow queue, the table having no room for their flow
    /// (§3.8, Fig. 13).
    pub overflowed: u64,
    /// Packets that joined a physical queue under another flow's entry: the two share a
    /// VFID, an ingress and an egress, and with them their queue and their pauses.
    pub shared_vfid: u64,
}

impl Decide {
    pub fn new(setup: Setup, rng: Rng) -> Self {
        let ports = setup.rates.len();
        assert!(setup.queues >= FIRST_PHYSICAL + 2 && setup.queues <= 64, "validated: 4 to 64 queues");
        let overflow = setup.queues - 1;
        Decide {
            table: FlowTable::new(setup.vfids, setup.overflow_cache),
            physical: (1u64 << overflow) - (1 << FIRST_PHYSICAL),
            paused: (0..ports).map(|_| CountingBloom::new(setup.shape)).collect(),
            to_resume: (0..ports * setup.queues).map(|_| VecDeque::new()).collect(),
            parked: (0..ports * setup.queues).map(|_| Vec::new()).collect(),
            waiting: 0,
            resumed_at: vec![0; ports * setup.queues],
            kept: BinaryHeap::new(),
            ticks: 0,
            widest_window: (0..setup.rates.len()).map(|p| setup.window(p)).max().unwrap_or(0),
            rng,
            pauses: 0,
            resumes: 0,
            placements: 0,
            collisions: 0,
            overflowed: 0,
            shared_vfid: 0,
            setup,
        }
    }

    fn overflow(&self) -> usize {
        self.setup.queues - 1
    }

    fn vfid(&self, pkt: &Packet) -> u32 {
        vfid(pkt.hash, self.setup.vfids)
    }

    /// The queue `pkt`, from `ingress`, joins at `view`'s port: its flow's physical queue
    /// while it has packets queued; the high-priority queue for a first packet of a flow
    /// neither queued nor paused here; else a free physical queue, the lowest, or a random
    /// one when none is free; the overflow queue when the flow has no entry and the table
    /// has no room for one.
    pub fn assign(&mut self, pkt: &Packet, ingress: usize, view: &PortView) -> usize {
        if !pkt.kind.carries_payload() {
            return ACK_QUEUE;
        }
        let vfid = self.vfid(pkt);
        let known = self.table.find(vfid, ingress as u16, view.port as u16);
        if let Some(slot) = known {
            let state = *self.table.state(slot);
            // Not paused with nothing queued: kept since its resume.
            if state.packets > 0 || !state.paused {
                return state.queue as usize;
            }
        } else if pkt.seq == 0 && pkt.kind == PacketKind::Data && self.setup.first_packet_queue {
            return FIRST_PACKET_QUEUE;
        }
        if known.is_none() && !self.table.has_room(vfid) {
            return self.overflow();
        }
        if self.setup.assignment == Assignment::Hash {
            let physical = (self.overflow() - FIRST_PHYSICAL) as u64;
            return FIRST_PHYSICAL + mix_below(vfid as u64, QUEUE_KEY, physical) as usize;
        }
        let free = self.physical & !view.active;
        if free != 0 {
            free.trailing_zeros() as usize
        } else {
            self.rng.gen_range(FIRST_PHYSICAL..self.overflow())
        }
    }

    /// `pkt` joined queue `q` of `view`'s port (shown after it): its flow's entry counts
    /// it, and the flow is paused at its ingress when the queue holds more than the
    /// threshold. Returns whether it was paused now.
    pub fn buffered(&mut self, pkt: &Packet, q: usize, view: &PortView) -> bool {
        if self.physical & 1 << q == 0 {
            self.overflowed += u64::from(q == self.overflow());
            return false;
        }
        let vfid = self.vfid(pkt);
        let fresh = FlowState {
            queue: q as u16,
            packets: 0,
            paused: false,
            resuming: false,
            parked: false,
            owner: pkt.hash,
            kept_until: 0,
        };
        let slot = self
            .table
            .find_or_insert(vfid, pkt.ingress, view.port as u16, fresh)
            .expect("assign saw room in the table");
        let state = self.table.state(slot);
        if state.packets == 0 {
            state.queue = q as u16;
        }
        self.shared_vfid += u64::from(state.owner != pkt.hash);
        // The queue holds this packet, the flow's earlier ones, and any other flow's.
        self.collisions += u64::from(view.queues[q].packets.len() > state.packets as usize + 1);
        self.placements += 1;
        state.packets += 1;
        if state.paused || view.queues[q].bytes() <= self.threshold(view, pkt.ingress as usize) {
            return false;
        }
        self.table.state(slot).paused = true;
        self.paused[pkt.ingress as usize].insert(vfid);
        self.pauses += 1;
        true
    }

    /// `pkt` left queue `q` of `view`'s port (shown after it). A paused flow is due to
    /// resume when the queue is down to the threshold at one of its departures; one whose
    /// last packet here left above it waits (parked) until the queue is down to it.
    pub fn sent(&mut self, pkt: &Packet, q: usize, view: &PortView) {
        if self.physical & 1 << q == 0 {
            return;
        }
        let vfid = self.vfid(pkt);
        let Some(slot) = self.table.find(vfid, pkt.ingress, view.port as u16) else {
            debug_assert!(false, "a packet in a physical queue has an entry");
            return;
        };
        let at = view.port * self.setup.queues + q;
        // The threshold is needed only by a paused flow or by flows parked on the queue.
        let below =
            self.table.state(slot).paused && view.queues[q].bytes() <= self.threshold(view, pkt.ingress as usize);
        let state = self.table.state(slot);
        state.packets -= 1;
        let waiting = Waiting { vfid, ingress: pkt.ingress };
        if !state.paused {
            if state.packets == 0 {
                self.table.remove(slot);
            }
        } else if !state.resuming && !state.parked {
            if below {
                state.resuming = true;
                self.make_due(at, waiting);
            } else if state.packets == 0 {
                state.parked = true;
                self.parked[at].push(waiting);
            }
        }
        if !self.parked[at].is_empty() {
            self.unpark(view, q);
        }
    }

    /// Puts a paused flow (marked resuming) on the list of queue `at`'s flows to resume.
    fn make_due(&mut self, at: usize, waiting: Waiting) {
        self.to_resume[at].push_back(waiting);
        self.waiting += 1;
    }

    /// Queue `q` of `view`'s port lost a packet: its parked flows for which it is down
    /// to the threshold are due, in the order they parked (a flow that since moved on is
    /// dropped from the list).
    fn unpark(&mut self, view: &PortView, q: usize) {
        let at = view.port * self.setup.queues + q;
        let (bytes, serving) = (view.queues[q].bytes(), self.serving(view));
        let rate = self.setup.rates[view.port];
        if bytes > pause_threshold(self.widest_window, 0, rate, serving) {
            return;
        }
        for waiting in std::mem::take(&mut self.parked[at]) {
            let Some(slot) = self.table.find(waiting.vfid, waiting.ingress, view.port as u16) else { continue };
            if !self.table.state(slot).parked {
                continue;
            }
            if bytes <= pause_threshold(self.setup.window(waiting.ingress as usize), 0, rate, serving) {
                let state = self.table.state(slot);
                state.parked = false;
                state.resuming = true;
                self.make_due(at, waiting);
            } else {
                self.parked[at].push(waiting);
            }
        }
    }

    /// One tick (the switch's shortest interval) passed: each physical queue down to its
    /// threshold resumes the oldest flow due, unless it resumed one less than an interval
    /// of that flow's link ago (so resumes from one link go out in separate filters);
    /// under `resume_all` (BFC-BufferOpt) every queue resumes all its flows due.
    /// `view_of` shows a port. Returns the flows resumed.
    ///
    /// A queue above its threshold resumes none: the flow resumed last has refilled it,
    /// and another would add its own burst of a pause round trip at line rate before the
    /// queue drains. A flow resumed with nothing queued keeps its queue (`kept`).
    pub fn tick<'a>(&mut self, view_of: impl Fn(usize) -> PortView<'a>) -> u32 {
        self.ticks += 1;
        self.release_kept();
        let mut resumed = 0;
        let queues = self.setup.queues;
        let tick = self.setup.tick();
        for i in 0..self.to_resume.len() {
            if self.to_resume[i].is_empty() {
                continue;
            }
            let (port, q) = (i / queues, i % queues);
            let take = if self.setup.resume_all {
                self.to_resume[i].len()
            } else {
                let oldest = self.to_resume[i][0].ingress as usize;
                let last = self.resumed_at[i];
                if last != 0 && self.ticks - last < self.setup.interval[oldest].div_ceil(tick) {
                    continue;
                }
                let view = view_of(port);
                usize::from(view.queues[q].bytes() <= self.threshold(&view, oldest))
            };
            if take > 0 {
                self.resumed_at[i] = self.ticks;
            }
            for Waiting { vfid, ingress } in self.to_resume[i].drain(..take) {
                let slot = self.table.find(vfid, ingress, port as u16).expect("a waiting flow has an entry");
                let state = self.table.state(slot);
                debug_assert!(state.paused && state.resuming);
                state.paused = false;
                state.resuming = false;
                if state.packets == 0 {
                    // Its first packet comes back within a pause round trip after the
                    // filter that resumes it, which leaves within an interval.
                    let until = self.ticks + self.setup.window(ingress as usize).div_ceil(tick);
                    state.kept_until = until as u32;
                    self.kept.push(Reverse(Kept { until, port: port as u16, flow: Waiting { vfid, ingress } }));
                }
                self.paused[ingress as usize].remove(vfid);
                self.waiting -= 1;
                self.resumes += 1;
                resumed += 1;
            }
        }
        resumed
    }

    /// Releases the queues kept past their time by flows that sent nothing into them.
    fn release_kept(&mut self) {
        while let Some(&Reverse(Kept { until, port, flow })) = self.kept.peek() {
            if until >= self.ticks {
                break;
            }
            self.kept.pop();
            let Some(slot) = self.table.find(flow.vfid, flow.ingress, port) else { continue };
            let state = self.table.state(slot);
            // A flow kept again since, or an entry made afresh, is not this one's to end.
            if state.kept_until == until as u32 && state.packets == 0 && !state.paused {
                self.table.remove(slot);
            }
        }
    }

    /// The pause threshold at `view`'s port of a flow from `ingress`: the bytes a queue
    /// drains at its share of the link during the pause round trip and interval of the
    /// link the flow came in on.
    fn threshold(&self, view: &PortView, ingress: usize) -> u64 {
        pause_threshold(
            self.setup.hop_rtt[ingress],
            self.setup.interval[ingress],
            self.setup.rates[view.port],
            self.serving(view),
        )
    }

    /// The physical queues (the overflow queue counted) of `view`'s port that hold
    /// packets and are not held: those sharing the link.
    fn serving(&self, view: &PortView) -> usize {
        (view.active & !view.held & (self.physical | 1 << self.overflow())).count_ones() as usize
    }

    /// The filter of the flows paused at `ingress`.
    pub fn filter(&self, ingress: usize) -> &BloomFilter {
        self.paused[ingress].filter()
    }

    /// Flows paused at `ingress`.
    pub fn paused_at(&self, ingress: usize) -> u32 {
        self.paused[ingress].members()
    }

    /// Whether `head`, at the head of queue `q` of a port, waits: its flow matches the
    /// last filter from the neighbour there, which the port's `gate` keeps. Queues 0 and
    /// 1 never wait.
    pub fn holds(&self, q: usize, head: &Packet, gate: &PauseGate) -> bool {
        q >= FIRST_PHYSICAL && gate.holds_flow(self.vfid(head))
    }

    /// Whether nothing is paused here and no resume is due: the filters sent would all
    /// be empty, and ticking can stop.
    pub fn is_idle(&self) -> bool {
        self.waiting == 0 && self.kept.is_empty() && self.paused.iter().all(|p| p.members() == 0)
    }

    /// Flows with a table entry.
    pub fn flows(&self) -> usize {
        self.table.len()
    }

    pub fn setup(&self) -> &Setup {
        &self.setup
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::stream;
    use crate::switch::PortQueue;

    const G100: u64 = 100_000_000_000;

    fn decide(queues: usize, resume_all: bool) -> Decide {
        Decide::new(
            Setup {
                queues,
                vfids: 4096,
                overflow_cache: 4,
                shape: BloomShape::new(128, 4).unwrap(),
                hop_rtt: vec![2_000_000; 16],
                interval: vec![1_000_000; 16],
                rates: vec![G100; 16],
                resume_all,
                assignment: Assignment::Dynamic,
                first_packet_queue: true,
            },
            stream(1, "bfc-test", 0),
        )
    }

    /// As `decide`, with port 1's link ten times as long as the others': a 20 us round
    /// trip and filters every 10 us (the switch still ticks every 1 us).
    fn setup_with_long_port_1(queues: usize) -> Setup {
        let mut setup = decide(queues, false).setup.clone();
        setup.hop_rtt[1] = 20_000_000;
        setup.interval[1] = 10_000_000;
        setup
    }

    /// A port of `queues` queues, its queues filled with `bytes`.
    struct Port {
        queues: Vec<PortQueue>,
    }

    impl Port {
        fn new(queues: usize) -> Self {
            Port { queues: (0..queues).map(|_| PortQueue::new()).collect() }
        }

        /// Queues a packet of `bytes`, or (negative) takes the oldest one out.
        fn add(&mut self, q: usize, bytes: i64) {
            let queue = &mut self.queues[q];
            if bytes > 0 {
                queue.packets.push_back(Packet { size: bytes as u32, ..Packet::template(0, 0, 0, 0) });
            } else {
                queue.packets.pop_front();
            }
            let now = queue.bytes() as i64 + bytes;
            queue.occupancy.set(0, now as u64);
        }

        fn view(&self, port: usize) -> PortView<'_> {
            let active = self.queues.iter().enumerate().filter(|(_, q)| q.bytes() > 0).fold(0, |m, (i, _)| m | 1 << i);
            PortView { port, queues: &self.queues, active, held: 0 }
        }
    }

    fn data(hash: u32, seq: u32, ingress: u16) -> Packet {
        Packet { size: 1000, seq, ingress, ..Packet::template(0, 0, hash, 0) }
    }

    /// A packet joins its queue as the switch would: assigned, counted, then told.
    fn arrive(d: &mut Decide, port: &mut Port, pkt: &Packet) -> (usize, bool) {
        let q = d.assign(pkt, pkt.ingress as usize, &port.view(1));
        port.add(q, pkt.size as i64);
        (q, d.buffered(pkt, q, &port.view(1)))
    }

    #[test]
    fn first_packets_go_ahead_and_flows_take_free_queues_in_order() {
        let mut d = decide(6, false);
        let mut port = Port::new(6);
        let ack = Packet { kind: PacketKind::Ack, ..data(1, 5, 0) };
        assert_eq!(d.assign(&ack, 0, &port.view(1)), ACK_QUEUE);
        assert_eq!(arrive(&mut d, &mut port, &data(1, 0, 0)).0, FIRST_PACKET_QUEUE);
        let mut without = Decide::new(Setup { first_packet_queue: false, ..d.setup.clone() }, stream(1, "t", 0));
        assert_eq!(without.assign(&data(1, 0, 0), 0, &port.view(1)), FIRST_PHYSICAL, "no high-priority queue");
        // Flows 1, 2 and 3 take the three physical queues (2, 3, 4); 4 shares one.
        let qs: Vec<usize> = (1..=3).map(|h| arrive(&mut d, &mut port, &data(h, 1, 0)).0).collect();
        assert_eq!(qs, [2, 3, 4]);
        assert_eq!(arrive(&mut d, &mut port, &data(1, 2, 0)).0, 2, "a queued flow keeps its queue");
        let shared = arrive(&mut d, &mut port, &data(4, 1, 0)).0;
        assert!((2..5).contains(&shared), "no free queue: a random physical one, not {shared}");
        assert_eq!(d.flows(), 4);
    }

    #[test]
    fn a_flow_pauses_at_the_threshold_of_the_link_it_came_in_on() {
        // Port 1's link is ten times as long (a 20 us round trip, filters every 10 us):
        // a flow from it is paused at (20 + 10) us x 100 Gbps = 375 KB, one from port 0
        // at (2 + 1) us x 100 Gbps = 37.5 KB; the switch ticks at the shorter interval.
        let setup = setup_with_long_port_1(6);
        assert_eq!(setup.tick(), 1_000_000);
        for (ingress, packets) in [(0u16, 38), (1, 376)] {
            let mut d = Decide::new(setup.clone(), stream(1, "t", 0));
            let mut port = Port::new(6);
            let crossed: Vec<bool> =
                (1..=packets).map(|seq| arrive(&mut d, &mut port, &data(7, seq, ingress)).1).collect();
            let last = packets as usize - 1;
            assert!(!crossed[..last].contains(&true) && crossed[last], "from port {ingress}: paused at {packets} KB");
        }
    }

    #[test]
    fn a_flow_pauses_above_the_threshold_and_resumes_one_per_interval() {
        let mut d = decide(6, false);
        let mut port = Port::new(6);
        // One flow alone: the threshold is 37,500 B; the 38th packet of 1,000 B crosses it.
        let crossed: Vec<bool> = (1..=38).map(|seq| arrive(&mut d, &mut port, &data(7, seq, 0)).1).collect();
        assert!(crossed[..37].iter().all(|p| !p) && crossed[37], "paused at 38,000 B > 37,500 B");
        assert_eq!(d.paused_at(0), 1);
        assert!(d.filter(0).matches(vfid(7, 4096)));
        // A second flow from another ingress joins another queue and pauses at half.
        let crossed: Vec<bool> = (1..=19).map(|seq| arrive(&mut d, &mut port, &data(9, seq, 2)).1).collect();
        assert!(crossed[..18].iter().all(|p| !p) && crossed[18], "2 queues: 19,000 B > 18,750 B");
        // Draining the first queue to the threshold puts flow 7 on its resume list; it
        // resumes at the next tick, flow 9 (still above) does not.
        for _ in 0..20 {
            port.add(2, -1000);
            d.sent(&data(7, 0, 0), 2, &port.view(1));
        }
        assert_eq!(d.tick(|_| port.view(1)), 1);
        assert_eq!((d.paused_at(0), d.paused_at(2)), (0, 1));
        assert_eq!(d.tick(|_| port.view(1)), 0);
        assert!(!d.is_idle());
    }

    #[test]
    fn one_resume_per_queue_per_interval_unless_resume_all() {
        for (resume_all, expected) in [(false, [1, 1, 1]), (true, [0, 0, 0])] {
            let mut d = decide(4, resume_all);
            let mut port = Port::new(4);
            // Three flows from three ingresses share the one physical queue (2); 40
            // packets each pause all three.
            for seq in 1..=40 {
                for (h, ingress) in [(11, 0), (12, 1), (13, 2)] {
                    arrive(&mut d, &mut port, &data(h, seq, ingress));
                }
            }
            assert_eq!((0..3).map(|i| d.paused_at(i)).sum::<u32>(), 3);
            // Their last packets leave: each is due.
            for (h, ingress) in [(11, 0), (12, 1), (13, 2)] {
                for _ in 0..40 {
                    port.add(2, -1000);
                    d.sent(&data(h, 0, ingress), 2, &port.view(1));
                }
            }
            // A queue refilled above its threshold resumes none, unless resume_all.
            port.add(2, 40_000);
            let held = d.tick(|_| port.view(1));
            port.add(2, -40_000);
            let resumed: Vec<u32> = (0..3).map(|_| d.tick(|_| port.view(1))).collect();
            assert_eq!(resumed, expected, "resume_all {resume_all}");
            assert_eq!(held, if resume_all { 3 } else { 0 }, "a queue above its threshold (37.5 KB) waits");
            // They keep their queue for a pause round trip and an interval (three ticks
            // of 1 us here) and leave the table at the fourth tick after the last resume.
            assert!(!d.is_idle() && d.flows() == 3, "resumed flows keep their queue a while");
            for _ in 0..4 {
                d.tick(|_| port.view(1));
            }
            assert!(d.is_idle() && d.flows() == 0, "resumed flows without packets leave the table");
        }
    }

    #[test]
    fn a_queue_resumes_one_flow_per_interval_of_their_link() {
        // Two flows from port 1 (20 us round trip, filters every 10 us) share the one
        // physical queue of a switch that ticks every 1 us (port 0's interval).
        let mut d = Decide::new(setup_with_long_port_1(4), stream(1, "t", 0));
        let mut port = Port::new(4);
        for seq in 1..=300 {
            for h in [11, 12] {
                arrive(&mut d, &mut port, &data(h, seq, 1));
            }
        }
        assert_eq!(d.paused_at(1), 2, "600 KB > 375 KB: both paused");
        for _ in 1..=300 {
            for h in [11, 12] {
                port.add(FIRST_PHYSICAL, -1000);
                d.sent(&data(h, 0, 1), FIRST_PHYSICAL, &port.view(1));
            }
        }
        // One resumes at the first tick, the other ten ticks (one interval of their
        // link) later: resumed together, both would go out in one filter.
        let resumed: Vec<u32> = (1..=12).map(|_| d.tick(|_| port.view(1))).collect();
        assert_eq!(resumed, [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]);
    }

    #[test]
    fn a_flow_resumed_without_packets_returns_to_its_queue_for_a_round_trip() {
        let mut d = decide(35, false);
        let mut port = Port::new(35);
        // Flow 5 fills queue 2 and pauses; flow 6 then takes queue 3.
        for seq in 1..=40 {
            arrive(&mut d, &mut port, &data(5, seq, 0));
        }
        assert_eq!(arrive(&mut d, &mut port, &data(6, 1, 1)).0, 3);
        // Flow 5 drains out of queue 2 and resumes with nothing queued.
        for _ in 0..40 {
            port.add(2, -1000);
            d.sent(&data(5, 0, 0), 2, &port.view(1));
        }
        assert_eq!(d.tick(|_| port.view(1)), 1);
        // Queue 2 is now free and another flow takes it first (the lowest free queue)...
        assert_eq!(arrive(&mut d, &mut port, &data(7, 1, 2)).0, 2);
        // ...yet flow 5's packets, released by its resume, join queue 2, not a free one.
        assert_eq!(arrive(&mut d, &mut port, &data(5, 41, 0)).0, 2);
        // A flow resumed whose packets come after the round trip is placed afresh.
        let mut d = decide(35, false);
        let mut port = Port::new(35);
        for seq in 1..=40 {
            arrive(&mut d, &mut port, &data(5, seq, 0));
        }
        for _ in 0..40 {
            port.add(2, -1000);
            d.sent(&data(5, 0, 0), 2, &port.view(1));
        }
        for _ in 0..5 {
            d.tick(|_| port.view(1));
        }
        assert_eq!(arrive(&mut d, &mut port, &data(7, 1, 2)).0, 2);
        assert_eq!(arrive(&mut d, &mut port, &data(5, 41, 0)).0, 3, "its queue was released");
    }

    #[test]
    fn a_queue_kept_for_a_short_link_is_released_before_one_kept_earlier_for_a_long_link() {
        // Port 1's link has a 20 us round trip and 10 us filters (kept 30 ticks), port 0's
        // 2 us and 1 us (kept 3 ticks).
        let mut d = Decide::new(setup_with_long_port_1(6), stream(1, "t", 0));
        let mut port = Port::new(6);
        // Each flow fills its queue past its threshold, drains out of it, and resumes
        // with nothing queued: first flow 5 from the long link, a tick later flow 6.
        for (h, ingress, packets) in [(5, 1u16, 376), (6, 0, 38)] {
            let q = (1..=packets).map(|seq| arrive(&mut d, &mut port, &data(h, seq, ingress)).0).last().unwrap();
            for _ in 0..packets {
                port.add(q, -1000);
                d.sent(&data(h, 0, ingress), q, &port.view(1));
            }
            assert_eq!(d.tick(|_| port.view(1)), 1, "flow {h} resumes");
        }
        for _ in 0..4 {
            d.tick(|_| port.view(1));
        }
        assert_eq!(d.flows(), 1, "flow 6's queue is released on time, flow 5's is still kept");
        assert!(d.table.find(vfid(5, 4096), 1, 1).is_some(), "flow 5 keeps its queue");
    }

    #[test]
    fn a_flow_kept_again_keeps_its_queue_until_the_later_deadline() {
        // Port 1's link keeps a resumed flow's queue 30 ticks (20 us round trip, 10 us
        // filters, 1 us ticks).
        let mut d = Decide::new(setup_with_long_port_1(6), stream(1, "t", 0));
        let mut port = Port::new(6);
        // Flow 5 fills its queue past 375 KB, drains and resumes with nothing queued.
        let pause_and_resume = |d: &mut Decide, port: &mut Port, first_seq: u32| {
            let q = (first_seq..first_seq + 376).map(|seq| arrive(d, port, &data(5, seq, 1)).0).last().unwrap();
            for _ in 0..376 {
                port.add(q, -1000);
                d.sent(&data(5, 0, 1), q, &port.view(1));
            }
            assert_eq!(d.tick(|_| port.view(1)), 1, "flow 5 resumes");
        };
        pause_and_resume(&mut d, &mut port, 1); // at tick 1: kept to tick 31
        for _ in 0..20 {
            d.tick(|_| port.view(1));
        }
        pause_and_resume(&mut d, &mut port, 1000); // at tick 22: kept to tick 52
        for _ in 0..20 {
            d.tick(|_| port.view(1));
        }
        assert_eq!(d.flows(), 1, "at tick {}, past the first deadline, the queue is still kept", d.ticks);
        for _ in 0..11 {
            d.tick(|_| port.view(1));
        }
        assert_eq!(d.flows(), 0, "released at the tick after the second deadline (tick {})", d.ticks);
    }

    #[test]
    fn hashed_assignment_puts_a_flow_in_the_same_queue_at_every_switch_and_collides() {
        let hashed = Setup { assignment: Assignment::Hash, ..decide(35, false).setup.clone() };
        let (mut a, mut b) = (Decide::new(hashed.clone(), stream(1, "a", 0)), Decide::new(hashed, stream(2, "b", 0)));
        let (mut pa, mut pb) = (Port::new(35), Port::new(35));
        let mut dynamic = decide(35, false);
        let mut pd = Port::new(35);
        for h in 0..16u32 {
            let pkt = data(h.wrapping_mul(0x9e37_79b9), 1, 0);
            let (qa, qb) = (arrive(&mut a, &mut pa, &pkt).0, arrive(&mut b, &mut pb, &pkt).0);
            assert_eq!(qa, qb, "the queue is a function of the flow alone");
            assert!((FIRST_PHYSICAL..34).contains(&qa));
            arrive(&mut dynamic, &mut pd, &pkt);
        }
        // 16 one-packet arrivals hashed into 32 queues collide (the birthday problem:
        // 1 - (31/32)^k for the k-th), dynamically placed ones never while a queue is
        // free.
        assert!(a.collisions > 0 && a.placements == 16, "{} of {}", a.collisions, a.placements);
        assert_eq!((dynamic.collisions, dynamic.placements), (0, 16));
    }

    #[test]
    fn a_full_table_sends_new_flows_to_the_overflow_queue() {
        let mut d =
            Decide::new(Setup { vfids: 1, overflow_cache: 1, ..decide(6, false).setup.clone() }, stream(1, "t", 0));
        let mut port = Port::new(6);
        // One VFID: 4 ways and 1 cache slot hold 5 flows (distinct ingresses on port 1).
        let qs: Vec<usize> =
            (0..6u32).map(|i| arrive(&mut d, &mut port, &data(i, 1, i as u16 % 3 + 10 * (i as u16 / 3))).0).collect();
        assert_eq!(qs[5], 5, "the sixth flow overflows: {qs:?}");
        assert_eq!(d.overflowed, 1);
        // One VFID for every flow: two flows from one ingress share an entry, counted.
        assert_eq!(d.shared_vfid, 0);
        arrive(&mut d, &mut port, &data(99, 1, 0));
        assert_eq!((d.shared_vfid, d.overflowed), (1, 1), "flow 99 joins flow 0's entry");
    }

    #[test]
    fn only_physical_queues_wait_on_the_received_filter() {
        let d = decide(6, false);
        let mut downstream = decide(6, false);
        let mut port = Port::new(6);
        for seq in 1..=38 {
            arrive(&mut downstream, &mut port, &data(21, seq, 0));
        }
        let (mut gate, other) = (PauseGate::default(), PauseGate::default());
        gate.set_filter(downstream.filter(0));
        assert!(d.holds(3, &data(21, 5, 0), &gate));
        assert!(!d.holds(FIRST_PACKET_QUEUE, &data(21, 0, 0), &gate), "the high-priority queue never waits");
        assert!(!d.holds(3, &data(21, 5, 0), &other), "the filter is the port's own");
        assert!(!d.holds(3, &data(22, 5, 0), &gate));
    }
}
