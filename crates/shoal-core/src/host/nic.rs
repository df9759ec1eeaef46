//! A host's NIC: an egress queue per traffic class in front of the host's link, served
//! in strict priority (class 0 first), behind a pause gate; and, after the queues, the
//! paced flows that it pulls packets from when their rate limiters allow.

use crate::host::config::{HostConfig, NicOrder};
use crate::net::pause::{is_filter_frame, read_pause_frame, vfid, PauseGate, CLASSES, PORT_LEVEL};
use crate::net::{Effect, Effects, ExtStore, Packet};
use crate::sim::{LinkRate, Ps};
use crate::stats::DropReason;
use crate::stats::MarkRule;
use crate::switch::Drops;
use std::collections::VecDeque;

use super::paced::{PacedFlows, HELD_BY_FILTER};

/// A host NIC's egress queues: tail drop when the NIC holds `capacity` bytes, and an
/// optional ECN cut-off on the bytes ahead of an arriving packet (the marking queues of
/// ns-2's hosts). A packet of priority p waits in queue min(p, queues - 1); with one
/// queue (the default) the NIC is a FIFO.
///
/// Paced flows (RDMA-style hardware rate limiting) queue nothing: the NIC keeps each one's
/// next send time and, when its queues have nothing to send, pulls a packet from the
/// first ready flow in round-robin order (`NicOrder`) whose class is not paused.
///
/// Invariants: `bytes` is the total size of the queued packets; bit q of `backlogged` is
/// set exactly when queue q holds packets; `paced` holds each paced flow with a packet to
/// send once; `paused` holds every queue while `gate` holds the port, else the queues of
/// the classes it holds.
pub struct Nic {
    /// The link the NIC transmits on.
    pub link: u32,
    queues: Vec<VecDeque<Packet>>,
    bytes: u64,
    capacity: u64,
    /// ECN cut-off in bytes; 0 = off.
    ecn_k: u64,
    /// Bit q set: queue q holds packets.
    backlogged: u64,
    /// Bit q set: queue q may not send (a pause from the switch), or q is
    /// `HELD_BY_FILTER`.
    paused: u64,
    /// What the switch's pause frames said.
    gate: PauseGate,
    /// Paced flows with a packet to send, in round-robin order.
    paced: PacedFlows,
    /// The time of the NIC's pending wake-up, if one is pending: the earliest time a paced
    /// flow that was not ready becomes ready.
    pub wake_at: Option<Ps>,
    /// Under BFC: the virtual flow ids its paced flows are named by in filter frames; a
    /// paced flow whose id the gate's filter holds waits (the NIC keeps a queue per
    /// flow, §3.6).
    filter_vfids: Option<u32>,
}

/// The timer token of the NIC's wake-up; a token t above it is the end of a timed pause
/// of class t - 1.
pub const WAKE: u32 = 0;

impl Nic {
    pub fn new(link: u32, capacity: u64, ecn_k: u64, queues: usize) -> Nic {
        assert!((1..=HELD_BY_FILTER as usize).contains(&queues), "a NIC has 1 to 63 queues");
        Nic {
            link,
            queues: vec![VecDeque::new(); queues],
            bytes: 0,
            capacity,
            ecn_k,
            backlogged: 0,
            paused: 1 << HELD_BY_FILTER,
            gate: PauseGate::default(),
            paced: PacedFlows::new(NicOrder::Rotate, queues),
            wake_at: None,
            filter_vfids: None,
        }
    }

    /// The NIC obeying BFC's filter frames, which name flows by virtual flow ids below
    /// `vfids`.
    pub fn obeying_filters(self, vfids: u32) -> Nic {
        Nic { filter_vfids: Some(vfids), ..self }
    }

    /// The NIC with its paced flows served in `order` (before any paces).
    pub fn with_order(self, order: NicOrder) -> Nic {
        let queues = self.queues.len();
        Nic { paced: PacedFlows::new(order, queues), ..self }
    }

    /// The NIC of a host as `host` configures it, transmitting on `link`, with a queue
    /// per class when the fabric pauses classes (`per_class`; one queue otherwise). A
    /// queue per class lets a PAUSE of one class leave the others running, and a RESUME
    /// of one class never release another that is still paused.
    pub fn from_config(link: u32, host: &HostConfig, per_class: bool) -> Nic {
        Nic::new(link, host.nic_buffer.0, host.ecn_k.0, if per_class { CLASSES } else { 1 }).with_order(host.nic_order)
    }

    /// Queues `pkt` (marked CE when the bytes ahead reach the cut-off). Returns false,
    /// the drop counted, when it does not fit.
    pub fn push(&mut self, mut pkt: Packet, drops: &mut Drops) -> bool {
        if self.bytes + pkt.size as u64 > self.capacity {
            drops.counters.drop(DropReason::NicBuffer, &pkt);
            drops.exts.release(pkt.ext);
            return false;
        }
        let counters = &mut *drops.counters;
        if self.ecn_k > 0 && pkt.ect && !pkt.ce && self.bytes >= self.ecn_k {
            pkt.ce = true;
            counters.ecn_marks += 1;
            counters.marks_by_rule[MarkRule::HostNic as usize] += 1;
        }
        self.bytes += pkt.size as u64;
        let q = self.class(pkt.priority) as usize;
        self.queues[q].push_back(pkt);
        self.backlogged |= 1 << q;
        true
    }

    /// The queue that sends next: the first non-empty one that is not paused.
    #[inline]
    fn next_queue(&self) -> Option<usize> {
        let ready = self.backlogged & !self.paused;
        (ready != 0).then(|| ready.trailing_zeros() as usize)
    }

    /// The next packet to transmit.
    #[inline]
    pub fn pop(&mut self) -> Option<Packet> {
        let q = self.next_queue()?;
        let queue = &mut self.queues[q];
        let pkt = queue.pop_front().expect("a backlogged queue holds packets");
        if queue.is_empty() {
            // Back to the start of the buffer (an empty deque's `clear` resets its head),
            // so that a queue that keeps draining reuses its first, cached slots.
            queue.clear();
            self.backlogged &= !(1 << q);
        }
        self.bytes -= pkt.size as u64;
        Some(pkt)
    }

    /// Whether a packet may be sent now (queued and not paused).
    #[inline]
    pub fn can_send(&self) -> bool {
        self.next_queue().is_some()
    }

    /// The class (queue) of a packet of priority `priority`.
    #[inline]
    fn class(&self, priority: u8) -> u8 {
        (priority as usize).min(self.queues.len() - 1) as u8
    }

    /// Flow `flow`, whose packets have priority `priority` and 5-tuple hash `hash`, may
    /// send its next packet at `ready_at`, or has nothing to send (`None`).
    #[inline]
    pub fn pace(&mut self, flow: u32, priority: u8, hash: u32, ready_at: Option<Ps>) {
        let Some(at) = ready_at else {
            self.paced.remove(flow);
            return;
        };
        if self.paced.update(flow, at) {
            return;
        }
        let class = self.class(priority);
        let (gate, vfid) = match self.filter_vfids {
            Some(vfids) => {
                let id = vfid(hash, vfids);
                (if self.gate.holds_flow(id) { HELD_BY_FILTER } else { class }, id)
            }
            None => (class, 0),
        };
        self.paced.add(flow, class, gate, vfid, at);
    }

    /// Whether the NIC paces flow `flow`: it has a packet to send, now or later.
    pub fn paces(&self, flow: u32) -> bool {
        self.paced.contains(flow)
    }

    /// The first paced flow in round-robin order that may send at `now` and whose class
    /// is not paused; under `NicOrder::Rotate` it moves to the back of the order.
    #[inline]
    pub fn next_paced(&mut self, now: Ps) -> Option<u32> {
        self.paced.next(now, self.paused)
    }

    /// When the earliest paced flow of an unpaused class may send.
    pub fn earliest_paced(&self) -> Option<Ps> {
        self.paced.earliest(self.paused)
    }

    /// Whether a paced flow of an unpaused class has a packet to send, now or later.
    #[inline]
    pub fn has_paced(&self) -> bool {
        self.paced.any(self.paused)
    }

    /// Stops (`paused`) or resumes the classes of `mask` (bit c for class c), as ON/OFF
    /// frames would. After a resume the caller starts the link, which may have been idle.
    #[cfg(test)]
    pub fn set_paused(&mut self, mask: u8, paused: bool) {
        for class in (0..CLASSES).filter(|c| mask & 1 << c != 0) {
            self.gate.set(class, paused, 0);
        }
        self.update_paused();
    }

    /// `paused` from the gate: every queue while the port is paused, else the queues of
    /// the paused classes.
    fn update_paused(&mut self) {
        self.paused = self.gate.held_queues(|c| 1 << self.class(c as u8)) | 1 << HELD_BY_FILTER;
    }

    pub fn len(&self) -> usize {
        self.queues.iter().map(VecDeque::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.backlogged == 0
    }

    /// The queued packets, queue by queue, oldest first.
    pub fn packets(&self) -> impl Iterator<Item = &Packet> {
        self.queues.iter().flatten()
    }

    /// The packets waiting, to change their side table handles (`Switch::queued_mut`).
    pub fn packets_mut(&mut self) -> impl Iterator<Item = &mut Packet> {
        self.queues.iter_mut().flatten()
    }

    /// A control frame from the switch arrived at `now` on a link of `rate`. A pause
    /// frame goes to the gate (`PauseGate`): a class PAUSE stops the queue of its class
    /// (and the paced flows of that class) at the next packet boundary, a port-level one
    /// (DSH) every queue; a RESUME lets them send again and asks for the link to be
    /// started. A timed PAUSE (802.1Qbb quanta) also asks for a timer at its end (token
    /// `WAKE` + 1 + class); a later PAUSE re-arms it. NICs obey PFC but never send it:
    /// hosts have no MMU (lossless-facts §1.1, "NIC reaction").
    ///
    /// A filter frame replaces the filter the paced flows are held by (when the NIC
    /// obeys filters), and asks for the link to be started: it may release a flow.
    pub fn on_frame(&mut self, frame: &Packet, now: Ps, rate: &LinkRate, effects: &mut Effects, exts: &ExtStore) {
        if is_filter_frame(frame) {
            if self.filter_vfids.is_some() {
                self.gate.set_filter(exts.filter(frame.ext).expect("a filter frame carries its filter"));
                let gate = &self.gate;
                self.paced.regate(|p| if gate.holds_flow(p.vfid) { HELD_BY_FILTER } else { p.class });
                effects.push(Effect::Kick { port: 0 });
            }
            return;
        }
        let Some((class, pause)) = read_pause_frame(frame) else { return };
        let held_before = self.held(class);
        let obeyed = self.gate.obey(class, pause, now, rate);
        self.update_paused();
        effects.push(Effect::PauseReceived { port: 0, class: obeyed.class, paused: pause.pauses() });
        if let Some(at) = obeyed.expires_at {
            effects.push(Effect::Timer { at, token: WAKE + 1 + obeyed.class as u32 });
        }
        // A port-level RESUME releases the queues if the port was paused; a class RESUME
        // asks for the link if the class's queue was held (whatever else still holds it).
        let released = if class == PORT_LEVEL { obeyed.changed } else { held_before };
        if released && !pause.pauses() {
            effects.push(Effect::Kick { port: 0 });
        }
    }

    /// A timer of `on_frame` fired at `now`: the timed pause of its class runs out, unless
    /// a later frame re-armed or ended it (the timer is then stale).
    pub fn on_timer(&mut self, token: u32, now: Ps, effects: &mut Effects) {
        let class = (token - WAKE - 1) as usize;
        let held_before = self.held(class as u8);
        if self.gate.expire(class, now).is_none() {
            return;
        }
        self.update_paused();
        effects.push(Effect::PauseExpired { port: 0, class: class as u8 });
        if held_before {
            effects.push(Effect::Kick { port: 0 });
        }
    }

    /// Whether the queue of `class` (a class or `PORT_LEVEL`, which holds every queue) may
    /// not send.
    fn held(&self, class: u8) -> bool {
        match class {
            PORT_LEVEL => self.gate.port_paused(),
            class => self.paused & 1 << self.class(class.min(CLASSES as u8 - 1)) != 0,
        }
    }

    /// Bit q set: queue q is paused.
    pub fn paused(&self) -> u64 {
        self.paused & !(1 << HELD_BY_FILTER)
    }

    /// Violations of the byte-count invariant, described.
    pub fn check_accounting(&self, host: usize) -> Option<String> {
        let bytes: u64 = self.packets().map(|p| p.size as u64).sum();
        let backlogged = self.queues.iter().enumerate().filter(|(_, q)| !q.is_empty()).fold(0, |m, (i, _)| m | 1 << i);
        (bytes != self.bytes || backlogged != self.backlogged).then(|| {
            format!(
                "host {host}: NIC queues hold {bytes} B but account {} B, or their backlog bits are wrong",
                self.bytes
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::bloom::BloomFilter;
    use crate::net::pause::{pause_frame, Pause};
    use crate::net::ExtStore;
    use crate::stats::Counters;

    fn packet(priority: u8, seq: u32) -> Packet {
        Packet { size: 1000, seq, ..Packet::template(0, 0, 0, priority) }
    }

    /// Classes are served in strict priority; a paused class waits while the others
    /// send, and resumes in order.
    #[test]
    fn strict_priority_behind_a_pause_gate() {
        let mut nic = Nic::new(0, 1 << 20, 0, 2);
        let mut counters = Counters::default();
        for (priority, seq) in [(1, 0), (0, 1), (1, 2), (0, 3), (5, 4)] {
            assert!(
                nic.push(packet(priority, seq), &mut Drops { counters: &mut counters, exts: &mut ExtStore::default() })
            );
        }
        nic.set_paused(1 << 0, true);
        let order: Vec<u32> = std::iter::from_fn(|| nic.pop()).map(|p| p.seq).collect();
        assert_eq!(order, [0, 2, 4], "only the unpaused class sends, in order");
        assert!(!nic.can_send() && nic.len() == 2);
        nic.set_paused(1 << 0, false);
        let order: Vec<u32> = std::iter::from_fn(|| nic.pop()).map(|p| p.seq).collect();
        assert_eq!(order, [1, 3]);
        assert_eq!(nic.check_accounting(0), None);
        assert_eq!(nic.len(), 0);
    }

    /// PFC frames act per class: with class 1 and class 3 paused, a RESUME of class 3
    /// lets class 3 send and keeps class 1 paused (a NIC with one queue for both would
    /// release class 1 too, and overflow the switch's headroom); each frame is recorded,
    /// and only a RESUME that ends a pause asks for the link to start.
    #[test]
    fn pfc_frames_pause_and_resume_one_class_each() {
        let mut nic = Nic::from_config(0, &HostConfig::default(), true);
        nic.pace(10, 1, 0, Some(0));
        nic.pace(30, 3, 0, Some(0));
        let mut effects = Effects::new();
        let rate = LinkRate::new(100_000_000_000);
        nic.on_frame(&pause_frame(1, Pause::UntilResume, 64), 0, &rate, &mut effects, &ExtStore::default());
        nic.on_frame(&pause_frame(3, Pause::UntilResume, 64), 0, &rate, &mut effects, &ExtStore::default());
        assert_eq!(nic.next_paced(0), None, "both classes paused");
        nic.on_frame(&pause_frame(3, Pause::Resume, 64), 0, &rate, &mut effects, &ExtStore::default());
        assert_eq!(nic.next_paced(0), Some(30));
        assert_eq!(nic.next_paced(0), Some(30), "class 1 stays paused");
        nic.on_frame(&pause_frame(3, Pause::Resume, 64), 0, &rate, &mut effects, &ExtStore::default());
        let kicks = effects.iter().filter(|e| matches!(e, Effect::Kick { .. })).count();
        let records = effects.iter().filter(|e| matches!(e, Effect::PauseReceived { .. })).count();
        let timers = effects.iter().filter(|e| matches!(e, Effect::Timer { .. })).count();
        assert_eq!((kicks, records, timers), (1, 4, 0), "ON/OFF frames ask for no timer: {effects:?}");
    }

    /// A timed PAUSE holds its class for its quanta of 512 bit times of the link (5.12 ns
    /// each at 100 Gbps, 20.48 ns at 25 Gbps); a second PAUSE re-arms it, so the first
    /// timer is stale; its expiry resumes the class with a record that is not a frame.
    #[test]
    fn a_timed_pause_runs_out_unless_re_armed() {
        for (rate, quantum) in [(100_000_000_000, 5_120), (25_000_000_000, 20_480)] {
            let mut nic = Nic::from_config(0, &HostConfig::default(), true);
            nic.pace(10, 2, 0, Some(0));
            let rate = LinkRate::new(rate);
            let mut effects = Effects::new();
            nic.on_frame(&pause_frame(2, Pause::Quanta(100), 64), 0, &rate, &mut effects, &ExtStore::default());
            nic.on_frame(&pause_frame(2, Pause::Quanta(100), 64), 1_000, &rate, &mut effects, &ExtStore::default());
            let timers: Vec<(Ps, u32)> = effects
                .iter()
                .filter_map(|e| match *e {
                    Effect::Timer { at, token } => Some((at, token)),
                    _ => None,
                })
                .collect();
            assert_eq!(timers, [(100 * quantum, 3), (1_000 + 100 * quantum, 3)]);
            effects.clear();
            nic.on_timer(3, 100 * quantum, &mut effects);
            assert!(effects.is_empty() && nic.next_paced(0).is_none(), "re-armed: the first timer is stale");
            nic.on_timer(3, 1_000 + 100 * quantum, &mut effects);
            assert!(matches!(effects[..], [Effect::PauseExpired { port: 0, class: 2 }, Effect::Kick { port: 0 }]));
            assert_eq!(nic.next_paced(0), Some(10));
        }
    }

    /// Under BFC a filter frame holds exactly the paced flows whose VFID it matches; the
    /// next frame, without them, releases them and asks for the link to start. A class's
    /// pause still holds every flow of the class.
    #[test]
    fn a_filter_frame_holds_the_flows_it_names() {
        use crate::net::{Ext, PacketKind};
        use crate::switch::flow_control::bfc::{BloomShape, CountingBloom};
        let vfids = 16_384;
        let mut nic = Nic::from_config(0, &HostConfig::default(), true).obeying_filters(vfids);
        let (hash_a, hash_b) = (0x1234_5678, 0x9abc_def0);
        nic.pace(1, 3, hash_a, Some(0));
        nic.pace(2, 3, hash_b, Some(0));
        let mut paused = CountingBloom::new(BloomShape::new(128, 4).unwrap());
        paused.insert(vfid(hash_a, vfids));
        let mut exts = ExtStore::default();
        let frame = |filter, exts: &mut ExtStore| Packet {
            kind: PacketKind::Control,
            ext: Some(exts.insert(Ext::Filter(filter))),
            ..Packet::template(u32::MAX - 1, 0, 0, 0)
        };
        let rate = LinkRate::new(100_000_000_000);
        let mut effects = Effects::new();
        nic.on_frame(&frame(paused.filter().clone(), &mut exts), 0, &rate, &mut effects, &exts);
        let served: Vec<u32> = (0..3).map(|_| nic.next_paced(0).unwrap()).collect();
        assert_eq!(served, [2, 2, 2], "flow 1 is held");
        assert_eq!(nic.paused(), 0, "no queue is paused");
        nic.pace(3, 3, hash_a, Some(0));
        assert_eq!(nic.next_paced(0), Some(2), "a flow that joins with a held VFID waits too");
        paused.remove(vfid(hash_a, vfids));
        nic.on_frame(&frame(paused.filter().clone(), &mut exts), 0, &rate, &mut effects, &exts);
        let mut served: Vec<u32> = (0..3).map(|_| nic.next_paced(0).unwrap()).collect();
        served.sort_unstable();
        assert_eq!(served, [1, 2, 3]);
        assert!(matches!(effects[..], [Effect::Kick { port: 0 }, Effect::Kick { port: 0 }]));
        nic.set_paused(1 << 3, true);
        assert_eq!(nic.next_paced(0), None, "the class's pause holds them all");
    }

    /// One queue is a FIFO whatever the priorities.
    #[test]
    fn one_queue_is_a_fifo() {
        let mut nic = Nic::new(0, 1 << 20, 0, 1);
        let mut counters = Counters::default();
        for (priority, seq) in [(3, 0), (0, 1), (7, 2)] {
            nic.push(packet(priority, seq), &mut Drops { counters: &mut counters, exts: &mut ExtStore::default() });
        }
        let order: Vec<u32> = std::iter::from_fn(|| nic.pop()).map(|p| p.seq).collect();
        assert_eq!(order, [0, 1, 2]);
    }

    /// In creation order the NIC goes on after the flow it served last, in flow order,
    /// whatever order the flows became ready in: flow 1 serves, then the next ready one
    /// after it (2, then 4, which arrived last but sorts after 2), then around to 0. A
    /// flow that leaves and comes back keeps its place; rotation would serve it last.
    #[test]
    fn creation_order_goes_on_after_the_last_served() {
        let mut nic = Nic::new(0, 1 << 20, 0, 1).with_order(NicOrder::Creation);
        for flow in [2, 0, 1] {
            nic.pace(flow, 0, 0, Some(0));
        }
        assert_eq!(nic.next_paced(0), Some(0));
        assert_eq!(nic.next_paced(0), Some(1));
        nic.pace(4, 0, 0, Some(0));
        let order: Vec<u32> = (0..4).map(|_| nic.next_paced(0).unwrap()).collect();
        assert_eq!(order, [2, 4, 0, 1]);
        nic.pace(2, 0, 0, None);
        nic.pace(2, 0, 0, Some(0));
        assert_eq!(nic.next_paced(0), Some(2), "back in its place after flow 1");
    }

    /// The NIC's paced flows as a list in round-robin order, scanned for each answer: the
    /// oracle that `PacedFlows` must agree with.
    struct LinearPaced {
        paced: VecDeque<Listed>,
        order: NicOrder,
        last_served: Option<u32>,
        queues: usize,
        /// The paused classes, and whether the port is paused.
        classes: u8,
        port: bool,
        /// The queues of the paused classes (every queue while the port is), and
        /// `HELD_BY_FILTER`.
        paused: u64,
        /// The VFID count and the filter in force, when the NIC obeys filters.
        filter: Option<(u32, Option<BloomFilter>)>,
        vfid_of: rustc_hash::FxHashMap<u32, u32>,
    }

    #[derive(Clone, Copy, Debug)]
    struct Listed {
        flow: u32,
        class: u8,
        gate: u8,
        ready_at: Ps,
    }

    impl LinearPaced {
        fn new(order: NicOrder, queues: usize, vfids: Option<u32>) -> Self {
            LinearPaced {
                paced: VecDeque::new(),
                order,
                last_served: None,
                queues,
                classes: 0,
                port: false,
                paused: 1 << HELD_BY_FILTER,
                filter: vfids.map(|v| (v, None)),
                vfid_of: Default::default(),
            }
        }

        fn holds(&self, vfid: u32) -> bool {
            self.filter.as_ref().is_some_and(|(_, f)| f.as_ref().is_some_and(|f| f.matches(vfid)))
        }

        fn pace(&mut self, flow: u32, priority: u8, hash: u32, ready_at: Option<Ps>) {
            let at = self.paced.iter().position(|p| p.flow == flow);
            match (at, ready_at) {
                (Some(i), Some(t)) => self.paced[i].ready_at = t,
                (Some(i), None) => {
                    self.paced.remove(i);
                    self.vfid_of.remove(&flow);
                }
                (None, Some(t)) => {
                    let class = (priority as usize).min(self.queues - 1) as u8;
                    let mut gate = class;
                    if let Some(&(vfids, _)) = self.filter.as_ref() {
                        let id = vfid(hash, vfids);
                        self.vfid_of.insert(flow, id);
                        if self.holds(id) {
                            gate = HELD_BY_FILTER;
                        }
                    }
                    let listed = Listed { flow, class, gate, ready_at: t };
                    match self.order {
                        NicOrder::Rotate => self.paced.push_back(listed),
                        NicOrder::Creation => {
                            let at = self.paced.partition_point(|p| p.flow < flow);
                            self.paced.insert(at, listed);
                        }
                    }
                }
                (None, None) => {}
            }
        }

        fn may_send(&self, p: &Listed) -> bool {
            self.paused & (1 << p.gate) == 0
        }

        fn next_paced(&mut self, now: Ps) -> Option<u32> {
            let eligible = |p: &Listed| p.ready_at <= now && self.may_send(p);
            match self.order {
                NicOrder::Rotate => {
                    let i = self.paced.iter().position(eligible)?;
                    let p = self.paced.remove(i).expect("a found position");
                    self.paced.push_back(p);
                    Some(p.flow)
                }
                NicOrder::Creation => {
                    let start = self.last_served.map_or(0, |last| self.paced.partition_point(|p| p.flow <= last));
                    let (after, before) = (self.paced.range(start..), self.paced.range(..start));
                    let flow = after.chain(before).find(|p| eligible(p))?.flow;
                    self.last_served = Some(flow);
                    Some(flow)
                }
            }
        }

        fn earliest_paced(&self) -> Option<Ps> {
            self.paced.iter().filter(|p| self.may_send(p)).map(|p| p.ready_at).min()
        }

        fn has_paced(&self) -> bool {
            self.paced.iter().any(|p| self.may_send(p))
        }

        /// A PAUSE (`paused`) or RESUME of `class`, or of the port (`PORT_LEVEL`).
        fn on_pause(&mut self, class: u8, paused: bool) {
            if class == PORT_LEVEL {
                self.port = paused;
            } else if paused {
                self.classes |= 1 << class;
            } else {
                self.classes &= !(1 << class);
            }
            let queue = |c: usize| 1u64 << c.min(self.queues - 1);
            let held = (0..CLASSES).filter(|c| self.classes & 1 << c != 0).fold(0, |m, c| m | queue(c));
            self.paused = if self.port { u64::MAX } else { held } | 1 << HELD_BY_FILTER;
        }

        fn on_filter(&mut self, filter: &BloomFilter) {
            let Some((_, held)) = &mut self.filter else { return };
            *held = (!filter.is_empty()).then(|| filter.clone());
            let mut paced = std::mem::take(&mut self.paced);
            for p in &mut paced {
                p.gate = if self.holds(self.vfid_of[&p.flow]) { HELD_BY_FILTER } else { p.class };
            }
            self.paced = paced;
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        /// A pace of flow `flow`, ready `ready` after now (before it if negative), or with
        /// nothing to send.
        Pace { flow: u32, priority: u8, ready: Option<i64> },
        /// Time moves on by `advance`, and the NIC pulls.
        Next { advance: u64 },
        /// A PAUSE or RESUME frame of `class` (`PORT_LEVEL`: of the port).
        Pause { class: u8, paused: bool },
        /// A filter frame holding the VFIDs of the bits of `held`.
        Filter { held: u8 },
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            5 => (0..1000u32, 0..8u8, proptest::option::weighted(0.85, -30i64..120))
                .prop_map(|(flow, priority, ready)| Op::Pace { flow, priority, ready }),
            5 => prop_oneof![Just(0u64), 0..50u64].prop_map(|advance| Op::Next { advance }),
            1 => (0..=PORT_LEVEL, any::<bool>()).prop_map(|(class, paused)| Op::Pause { class, paused }),
            1 => any::<u8>().prop_map(|held| Op::Filter { held }),
        ]
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// The NIC picks the same paced flow as a scan of a list in round-robin order, and
        /// gives the same earliest time and the same answer to whether it has any, after
        /// any sequence of paces (joining, moving, leaving), pulls, pauses and filters, in
        /// both orders; with 3 to 300 flows, so that from a few to hundreds are paced.
        #[test]
        fn paced_flows_match_a_linear_scan(
            rotate in any::<bool>(),
            queues in prop_oneof![Just(1usize), Just(CLASSES)],
            filters in any::<bool>(),
            spread in prop_oneof![Just(3u32), Just(12), Just(300)],
            ops in proptest::collection::vec(op(), 1..400),
        ) {
            use crate::net::Ext;
            use crate::net::bloom::{BloomShape, CountingBloom};
            let order = if rotate { NicOrder::Rotate } else { NicOrder::Creation };
            let vfids = 8;
            let mut nic = Nic::new(0, 1 << 20, 0, queues).with_order(order);
            if filters {
                nic = nic.obeying_filters(vfids);
            }
            let mut oracle = LinearPaced::new(order, queues, filters.then_some(vfids));
            let (mut now, rate, mut exts) = (1_000u64, LinkRate::new(100_000_000_000), ExtStore::default());
            for (step, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Pace { flow, priority, ready } => {
                        let flow = flow % spread;
                        let hash = flow.wrapping_mul(0x9e37_79b9);
                        let at = ready.map(|r| now.saturating_add_signed(r));
                        nic.pace(flow, priority, hash, at);
                        oracle.pace(flow, priority, hash, at);
                    }
                    Op::Next { advance } => {
                        now += advance;
                        prop_assert_eq!(nic.next_paced(now), oracle.next_paced(now), "step {}: next at {}", step, now);
                    }
                    Op::Pause { class, paused } => {
                        let pause = if paused { Pause::UntilResume } else { Pause::Resume };
                        nic.on_frame(&pause_frame(class, pause, 64), now, &rate, &mut Effects::new(), &exts);
                        oracle.on_pause(class, paused);
                    }
                    Op::Filter { held } => {
                        let mut bloom = CountingBloom::new(BloomShape::new(8, 2).unwrap());
                        (0..vfids).filter(|v| held & 1 << v != 0).for_each(|v| bloom.insert(v));
                        let frame =
                            crate::net::pause::filter_frame(64, exts.insert(Ext::Filter(bloom.filter().clone())));
                        nic.on_frame(&frame, now, &rate, &mut Effects::new(), &exts);
                        oracle.on_filter(bloom.filter());
                        exts.release(frame.ext);
                    }
                }
                prop_assert_eq!(nic.earliest_paced(), oracle.earliest_paced(), "step {}: earliest", step);
                prop_assert_eq!(nic.has_paced(), oracle.has_paced(), "step {}: has", step);
                for flow in 0..spread.min(16) {
                    let listed = oracle.paced.iter().any(|p| p.flow == flow);
                    prop_assert_eq!(nic.paces(flow), listed, "step {}: paces flow {}", step, flow);
                }
            }
        }
    }

    /// Ready flows are served in turn; one not yet ready is skipped, and so is one whose
    /// class is paused; a flow with nothing to send leaves the order.
    #[test]
    fn paced_flows_take_turns_when_ready() {
        let mut nic = Nic::new(0, 1 << 20, 0, 2);
        for flow in 0..3 {
            nic.pace(flow, 0, 0, Some(0));
        }
        nic.pace(3, 1, 0, Some(0));
        nic.pace(1, 0, 0, Some(50));
        let order: Vec<u32> = (0..4).map(|_| nic.next_paced(10).unwrap()).collect();
        assert_eq!(order, [0, 2, 3, 0]);
        nic.set_paused(1 << 1, true);
        assert_eq!(nic.next_paced(10), Some(2));
        assert_eq!(nic.next_paced(10), Some(0));
        nic.pace(0, 0, 0, None);
        nic.pace(2, 0, 0, None);
        assert_eq!(nic.next_paced(10), None, "flow 1 waits until 50, flow 3 is paused");
        assert_eq!(nic.earliest_paced(), Some(50));
        assert!(nic.has_paced(), "flow 1 has a packet, later");
        nic.set_paused(1 << 1, false);
        assert_eq!(nic.earliest_paced(), Some(0));
        assert_eq!(nic.next_paced(60), Some(1), "flow 1 kept its place while it waited");
        assert_eq!(nic.next_paced(60), Some(3));
        assert_eq!(nic.next_paced(60), Some(1));
    }
}
