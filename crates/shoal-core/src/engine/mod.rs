//! The run loop. It moves packets between host NICs, links and switches and dispatches
//! timers. It knows no scheme: switch schemes live behind the switch's decision points,
//! and flows behind `transport::Transport`, whose requests (`HostAction`) it carries out.
//!
//! Here: the events and their order, the links, the loop. Beside it: `build` (a
//! simulation from a scenario), `hosts` (flows and their transports' calls, NICs),
//! `effects` (what a node's scheme asks for), `observers`, `flows` (the started flows'
//! slots) and `report`.

use crate::host::{Nic, WAKE};
use crate::net::{self, Effects, ExtStore, NodeId, Packet, PacketKind, Routes};
use crate::observe::Observer;
use crate::results::FlowTable;
use crate::sim::{EventQueue, KeyedEvent, LinkRate, Ps, TIME_LIMIT};
use crate::stats::{Counters, DropReason, PauseLog};
use crate::switch::{Drops, Switch};
use crate::transport::{HostAction, Stacks};
use crate::workload::FlowStream;
use std::collections::VecDeque;
use std::sync::Arc;

mod build;
mod capture;
mod collectives;
mod cut;
mod effects;
mod flows;
mod hosts;
mod link_errors;
mod observers;
mod outages;
mod parallel;
mod report;
mod series;
use flows::{Flow, Flows};
use parallel::{Parallel, Part};

#[derive(Clone, Copy, Debug)]
enum Event {
    /// A link finished serializing and a packet is waiting for it.
    TxDone(u32),
    /// The oldest packet on a link's wire reaches the far end.
    Arrive(u32),
    /// The next flow in start order begins.
    FlowStart,
    /// The collective messages due by now begin (`collectives`).
    CollectiveStart,
    /// Step i of the outage schedule (`outages`).
    Outage(u32),
    Timer(TimerRef),
    /// An observer's next observation (its index).
    Observe(u16),
}

/// Entities (links, hosts, switches, flows, observers) are numbered below this: an
/// event's key holds its class in 3 bits, its entity in 29 and a token in 32.
pub(crate) const ENTITY_LIMIT: u32 = 1 << ENTITY_BITS;
const ENTITY_BITS: u32 = 29;

/// The classes of events, in the order same-time events run. An observation at t sees
/// the network as events before t left it; what arrives at t (a pause frame, say) is seen
/// by a transmitter that frees up at t; then come the nodes' timers, the NICs' wake-ups,
/// the flows' timers, and the flows starting at t.
mod class {
    pub const OBSERVE: u64 = 0;
    pub const ARRIVE: u64 = 1;
    pub const TX_DONE: u64 = 2;
    pub const SWITCH_TIMER: u64 = 3;
    pub const NIC_TIMER: u64 = 4;
    pub const NIC_WAKE: u64 = 5;
    pub const FLOW_TIMER: u64 = 6;
    pub const FLOW_START: u64 = 7;
}

/// The entities of a class run at `at` in the order of their numbers XOR this mask, a
/// hash of the time (Fibonacci hashing: the high bits of a product, one multiplication
/// on the path of every event): any two swap places from one time to another about half
/// the time. A fixed order would be a bias wherever ties are common (equal rates and
/// delays): of two packets reaching a nearly full buffer at the same picosecond, the one
/// on the lower-numbered link would always be let in.
#[inline(always)]
fn entity_mask(at: Ps) -> u32 {
    (at.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - ENTITY_BITS)) as u32
}

/// An event's key: its class, its entity (masked, `entity_mask`) and the owner's token
/// (`TimerRef`).
impl KeyedEvent for Event {
    #[inline(always)]
    fn key(&self, at: Ps) -> u64 {
        let (class, entity, token) = match *self {
            Event::Observe(i) => (class::OBSERVE, i as u32, 0),
            Event::Arrive(link) => (class::ARRIVE, link, 0),
            Event::TxDone(link) => (class::TX_DONE, link, 0),
            Event::Timer(TimerRef { owner: Owner::Switch, id, token }) => (class::SWITCH_TIMER, id, token),
            Event::Timer(TimerRef { owner: Owner::Nic, id, token: WAKE }) => (class::NIC_WAKE, id, WAKE),
            Event::Timer(TimerRef { owner: Owner::Nic, id, token }) => (class::NIC_TIMER, id, token),
            Event::Timer(TimerRef { owner: Owner::Flow, id, token }) => (class::FLOW_TIMER, id, token),
            Event::FlowStart => (class::FLOW_START, 0, 0),
            Event::Outage(step) => (class::FLOW_START, 1, step),
            Event::CollectiveStart => (class::FLOW_START, 2, 0),
        };
        debug_assert!(entity < ENTITY_LIMIT, "entities are checked against ENTITY_LIMIT when the run is built");
        class << 61 | ((entity ^ entity_mask(at)) as u64) << 32 | token as u64
    }

    #[inline]
    fn from_key(key: u64, at: Ps) -> Self {
        let entity = ((key >> 32) as u32 ^ entity_mask(at)) & (ENTITY_LIMIT - 1);
        let timer = |owner| Event::Timer(TimerRef { owner, id: entity, token: key as u32 });
        match key >> 61 {
            class::OBSERVE => Event::Observe(entity as u16),
            class::ARRIVE => Event::Arrive(entity),
            class::TX_DONE => Event::TxDone(entity),
            class::SWITCH_TIMER => timer(Owner::Switch),
            class::NIC_TIMER | class::NIC_WAKE => timer(Owner::Nic),
            class::FLOW_TIMER => timer(Owner::Flow),
            _ if entity == 1 => Event::Outage(key as u32),
            _ if entity == 2 => Event::CollectiveStart,
            _ => Event::FlowStart,
        }
    }
}

/// The token of a flow's idle timer (`HostAction::IdleTimer`); its other timers have 0.
const IDLE_TIMER: u32 = 1;

/// A timer's owner and the owner's token for it. The owner keeps what the timer means; a
/// timer that no longer matches what its owner waits for is stale and ignored, so timers
/// are never cancelled.
#[derive(Clone, Copy, Debug)]
struct TimerRef {
    owner: Owner,
    /// The flow or switch index.
    id: u32,
    token: u32,
}

#[derive(Clone, Copy, Debug)]
enum Owner {
    /// A flow's transport.
    Flow,
    /// A switch's flow control.
    Switch,
    /// A host NIC (the host index): token 0, its paced flows become ready; any other, a
    /// timed class pause it obeys runs out (`Nic::on_timer`).
    Nic,
}

/// A directed link: a transmitter that serializes one packet at a time, and a wire that
/// holds packets from the start of their serialization until their arrival (in arrival
/// order, so only the oldest has an event). The transmitter needs an event only when a
/// packet waits for it: an idle port's next packet starts as soon as it is queued.
///
/// Links come in pairs, the two directions of a cable (`net::reverse`); `to_port` is the
/// receiving node's port for this cable (its `from_port` there).
///
/// Laid out for the per-packet path, in two cache lines exactly: the first holds what an
/// arrival and a kick read (the wire, the far end, whether the transmitter is busy), the
/// second most of what starting a transmission adds (the sender, the rate).
#[repr(C, align(64))]
struct Link {
    /// The transmitter is serializing until this time.
    busy_until: Ps,
    wire: VecDeque<(Ps, Packet)>,
    to: NodeId,
    to_port: u32,
    /// A `TxDone` event is pending for this link.
    tx_event: bool,
    core: bool,
    /// In a partition of a parallel run, the link leads to another partition: its
    /// packets go there by mail (`parallel::mail`).
    crosses: bool,
    /// Each arrival over the link takes a look: it corrupts packets (`error_threshold` is
    /// not 0), is down (`outages`), or is captured (`capture`).
    watched: bool,
    delay: Ps,
    rate: LinkRate,
    tx_bytes: u64,
    from: NodeId,
    /// Port index at the sending switch (0 for a host NIC).
    from_port: u32,
    /// Control frames waiting to go ahead of data at the next packet boundary; boxed,
    /// since most links never carry one (it keeps `Link` at two cache lines).
    #[allow(clippy::box_collection)]
    control: Option<Box<VecDeque<Packet>>>,
    /// Its chance of corrupting a packet (`link_errors::threshold`).
    error_threshold: u64,
}

/// Asks the CPU to load the cache line holding `value` (a hint: no effect on results).
#[inline(always)]
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and cannot fault; the pointer
    // comes from a reference anyway.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(value as *const T as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Whether packets a transport sends should start their NIC's link.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wake {
    Send,
    /// The NIC is being served right now; its link picks the packets up when done.
    Queue,
}

pub struct Simulation {
    now: Ps,
    events: EventQueue<Event>,
    links: Vec<Link>,
    nics: Vec<Nic>,
    switches: Vec<Switch>,
    routes: Routes,
    /// The started flows, by index (the start order).
    flows: Flows,
    /// The flows still to start, in start order.
    upcoming: FlowStream,
    /// A row per started flow, final for released flows; `flow_table` brings the others'
    /// up to date and appends rows for the flows still to start (removed when the next
    /// one starts).
    table: Arc<FlowTable>,
    /// Flows that finished and are not yet released.
    finished_flows: Vec<u32>,
    /// Finished flows are looked for in the network once this many wait (`RELEASE_BATCH`;
    /// tests vary it), or `release_at` after a look that kept some.
    release_batch: usize,
    release_at: usize,
    /// Congestion notifications the released flows received (`Outcome::cnps`).
    released_cnps: u64,
    stacks: Stacks,
    counters: Counters,
    stop_time: Option<Ps>,
    observers: Vec<Box<dyn Observer>>,
    events_processed: u64,
    /// Flows that completed, of the `completing_flows` that can.
    flows_finished: usize,
    completing_flows: usize,
    finished: bool,
    reached_time_limit: bool,
    /// The run's seed (`run.seed`).
    seed: u64,
    /// A reused buffer for what a transport asks in one call.
    actions: Vec<HostAction>,
    /// A reused buffer for what a node's scheme asks in one call.
    effects: Effects,
    /// Payloads too large for a packet, owned by packets in the network.
    exts: ExtStore,
    /// The pause frames the nodes received.
    pauses: PauseLog,
    /// `Observe` events in the event queue.
    observations_pending: usize,
    /// Flows' idle timers in the event queue (`HostAction::IdleTimer`).
    idle_timers: usize,
    /// How messages name the nodes (as the topology file numbers them); set by `new`.
    node_ids: Option<net::NodeIds>,
    /// Bit c set: class c is lossless at some switch, so a NIC's drop of one of its
    /// packets breaks the lossless promise too (`Counters::lossless_drops`).
    lossless_classes: u8,
    /// The switches may split a flow over several paths, so the hosts count the packets
    /// that arrive after one their flow sent later (`Counters::packets_reordered`).
    counts_reordering: bool,
    /// In a partition of a parallel run: its place in it.
    part: Option<Part>,
    /// The outage schedule, when links or switches go down during the run.
    outages: Option<Box<outages::Outages>>,
    /// The collective jobs, when a workload runs one.
    collectives: Option<Box<collectives::CollectiveRun>>,
    /// The packets written to a capture file (`run.pcap`).
    capture: Option<Box<capture::Capture>>,
    /// The flows traced over time (`run.series`), when the run traces some.
    series: Option<Box<series::Series>>,
    /// Partition 0 of a parallel run: the other partitions, and when it last observed.
    parallel: Option<Box<Parallel>>,
    last_observation: Ps,
    /// Tests only: every data packet gets a side-table payload as it enters its NIC.
    #[cfg(test)]
    attach_exts: bool,
    /// Tests only: the telemetry stack of every data packet delivered, by (flow, seq).
    #[cfg(test)]
    delivered_stacks: Vec<(u32, u32, Vec<net::IntHop>)>,
}

impl Simulation {
    /// The node at the far end of port `port` of switch `switch` (ports are numbered in
    /// the order the topology wires them, failed links left out).
    pub fn port_peer(&self, switch: u32, port: u16) -> NodeId {
        self.links[self.switches[switch as usize].ports[port as usize].link as usize].to
    }

    /// `node` as messages name it: "switch 2 (node 130)", with the topology file's ids.
    pub fn describe(&self, node: NodeId) -> String {
        match (&self.node_ids, node) {
            (Some(ids), _) => ids.describe(node),
            (None, NodeId::Host(h)) => format!("host {h}"),
            (None, NodeId::Switch(s)) => format!("switch {s}"),
        }
    }

    pub fn now(&self) -> Ps {
        self.now
    }

    pub fn stop_time(&self) -> Option<Ps> {
        self.stop_time
    }

    pub fn events_processed(&self) -> u64 {
        self.events_processed + self.others().map(|p| p.events_processed).sum::<u64>()
    }

    /// Events waiting in the event queue that keep the run going: all but observations
    /// and idle timers.
    pub fn pending_events(&self) -> usize {
        self.events.len() - self.observations_pending - self.idle_timers
    }

    /// Flows that can complete (those with a completion time).
    pub fn flows_total(&self) -> usize {
        self.completing_flows
    }

    /// Flows started and not yet released: those in flight, and those finished whose
    /// release waits for the next look (`RELEASE_BATCH`).
    pub fn flows_active(&self) -> usize {
        self.flows.active_count() + self.others().map(|p| p.flows.active_count()).sum::<usize>()
    }

    /// Flows that completed.
    pub fn flows_finished(&self) -> usize {
        self.flows_finished + self.others().map(|p| p.flows_finished).sum::<usize>()
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Whether nothing is left to happen but observations (and idle timers, which wait
    /// for what cannot come): the network holds what it holds for good.
    pub fn came_to_rest(&self) -> bool {
        self.pending_events() == 0
    }

    /// Whether the run stopped because its next event lay beyond `TIME_LIMIT`: nothing
    /// was left but traffic that could not make progress in any reasonable time.
    pub fn reached_time_limit(&self) -> bool {
        self.reached_time_limit
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Runs every event up to simulated time `until` (or the run's stop time). Returns
    /// true when the run is over: no events are left or the stop time is reached.
    pub fn run_until(&mut self, until: Ps) -> bool {
        self.run_bounded(until, u64::MAX)
    }

    /// As `run_until`, but returns after at most `max_events` events (with `now` at the
    /// last one), so that a caller can stay responsive (Ctrl-C, progress) however many
    /// events a stretch of simulated time holds. A run whose next event lies beyond
    /// `TIME_LIMIT` stops there (see `reached_time_limit`).
    pub fn run_bounded(&mut self, until: Ps, max_events: u64) -> bool {
        if self.finished {
            return true;
        }
        if self.parallel.is_some() {
            return self.run_parallel(until, max_events);
        }
        let limit = self.stop_time.map_or(until, |s| s.min(until)).min(TIME_LIMIT);
        let mut budget = max_events;
        loop {
            let next = if budget > 0 { self.events.pop_until(limit) } else { Err(self.events.peek_time()) };
            let (t, event) = match next {
                Ok(due) => due,
                Err(Some(t)) if t > TIME_LIMIT => {
                    self.reached_time_limit = !self.came_to_rest();
                    self.finished = true;
                    return true;
                }
                Err(Some(t)) if t <= limit => return false, // due, but out of budget
                Err(_) => break,
            };
            if let Event::Timer(TimerRef { owner: Owner::Flow, token: IDLE_TIMER, .. }) = event {
                self.idle_timers -= 1;
                if self.came_to_rest() {
                    continue; // the run is over without it
                }
            }
            budget -= 1;
            self.now = t;
            self.events_processed += 1;
            if let Some(next) = self.events.peek_near() {
                self.prefetch_for(next);
            }
            if let Event::Observe(i) = event {
                // Looked for here, not after every event (where it cost 1.6% of a run's
                // instructions): with the popped observation still counted, nothing but
                // observations is left when the others are all that remain.
                let at_rest = self.events.len() + 1 == self.observations_pending + self.idle_timers;
                if (at_rest && self.tell_observers_at_rest()) | self.on_observe(i) {
                    // An observer ended the run (at a deadlock, as asked).
                    self.stop_time = Some(self.now);
                    self.finished = true;
                    return true;
                }
                continue;
            }
            self.dispatch(event);
        }
        if self.events.is_empty() {
            self.finished = true;
        } else if self.observations_pending == 0 && self.came_to_rest() {
            // Only idle timers are left, beyond `limit`.
            self.finished = true;
        } else {
            self.now = self.now.max(limit);
            if self.stop_time.is_some_and(|s| limit >= s) {
                if self.came_to_rest() {
                    self.tell_observers_at_rest();
                }
                self.finished = true;
            }
        }
        self.finished
    }

    /// Runs to the end.
    pub fn run(&mut self) {
        while !self.run_until(Ps::MAX) {}
    }

    /// Starts loading the link that the next event (most likely `next`, the earliest
    /// near event) will read, so that its cache miss overlaps with the work of the
    /// current event instead of following it.
    #[inline]
    fn prefetch_for(&self, next: Event) {
        if let Event::TxDone(link) | Event::Arrive(link) = next {
            prefetch(&self.links[link as usize]);
        }
    }

    fn dispatch(&mut self, event: Event) {
        match event {
            Event::TxDone(link) => self.on_tx_done(link),
            Event::Arrive(link) => self.on_arrive(link),
            Event::FlowStart => self.on_flow_start(),
            Event::CollectiveStart => self.on_collective_start(),
            Event::Timer(TimerRef { owner: Owner::Flow, id, .. }) => self.on_flow_timer(id),
            Event::Timer(TimerRef { owner: Owner::Nic, id, token: WAKE }) => self.on_nic_wake(id),
            Event::Timer(TimerRef { owner: Owner::Nic, id, token }) => {
                let mut effects = std::mem::take(&mut self.effects);
                self.nics[id as usize].on_timer(token, self.now, &mut effects);
                self.carry_out_effects(NodeId::Host(id), effects);
            }
            Event::Timer(TimerRef { owner: Owner::Switch, id, token }) => {
                let mut effects = std::mem::take(&mut self.effects);
                self.switches[id as usize].on_timer(token, self.now, &mut effects, &mut self.exts);
                self.carry_out_effects(NodeId::Switch(id), effects);
            }
            Event::Observe(_) => unreachable!("run_bounded observes"),
            Event::Outage(step) => self.on_outage_step(step),
        }
    }

    // ---- links -------------------------------------------------------------------

    /// Starts serializing the next packet of an idle link: a control frame if one
    /// waits, otherwise its owner's next packet, if any. The packet goes on the wire now,
    /// arriving after its serialization and the delay.
    fn start_transmission(&mut self, link_id: u32) {
        let link = &mut self.links[link_id as usize];
        debug_assert!(link.busy_until <= self.now && !link.tx_event);
        let next = match link.control.as_mut().and_then(|c| c.pop_front()) {
            Some(frame) => Some(frame),
            None => match link.from {
                NodeId::Host(h) => match self.nics[h as usize].pop() {
                    Some(pkt) => {
                        if pkt.kind == PacketKind::Data {
                            let sender = self.flows.get_mut(pkt.flow).sender();
                            sender.nic_bytes -= pkt.size as u64;
                            if sender.drain_notices {
                                self.nic_drained(h, pkt.flow);
                            }
                        }
                        Some(pkt)
                    }
                    None => self.pull_paced(h),
                },
                NodeId::Switch(s) => {
                    let (switch, port) = (&mut self.switches[s as usize], link.from_port as usize);
                    let pkt = switch.transmit(port, self.now, &mut self.counters, &mut self.effects);
                    if let Some(pkt) = &pkt {
                        if switch.keeps_telemetry() {
                            switch.stamp_departure(port, pkt, self.now, &mut self.exts);
                        }
                    }
                    pkt
                }
            },
        };
        let Some(pkt) = next else {
            debug_assert!(self.effects.is_empty(), "only a departure asks for frames");
            return;
        };
        let more = self.links[link_id as usize].control.as_ref().is_some_and(|c| !c.is_empty())
            || self.owner_has_queued(link_id);
        self.put_on_wire(link_id, pkt, more);
        if !self.effects.is_empty() {
            // A RESUME upstream, carried out now that this link is busy with `pkt`.
            self.carry_out_pending_effects(self.links[link_id as usize].from);
        }
    }

    /// Whether the node that transmits on `link_id` holds packets for it.
    fn owner_has_queued(&self, link_id: u32) -> bool {
        let link = &self.links[link_id as usize];
        match link.from {
            NodeId::Host(h) => {
                let nic = &self.nics[h as usize];
                nic.can_send() || nic.has_paced()
            }
            NodeId::Switch(s) => self.switches[s as usize].has_queued(link.from_port as usize),
        }
    }

    /// Serializes `pkt` on the idle link `link_id`; `more` says whether something waits
    /// behind it.
    #[inline]
    fn put_on_wire(&mut self, link_id: u32, pkt: Packet, more: bool) {
        let link = &mut self.links[link_id as usize];
        link.busy_until = self.now + link.rate.serialization(pkt.size as u64);
        link.tx_bytes += pkt.size as u64;
        let arrival = link.busy_until + link.delay;
        if link.crosses {
            return self.send_across(link_id, pkt, arrival, more);
        }
        link.wire.push_back((arrival, pkt));
        if link.wire.len() == 1 {
            self.events.push(arrival, Event::Arrive(link_id));
        }
        if more {
            link.tx_event = true;
            self.events.push(link.busy_until, Event::TxDone(link_id));
        }
    }

    /// `put_on_wire` of a link to another partition of a parallel run: the packet goes
    /// there by mail (`parallel::mail`), its side-table payload with it.
    #[inline(never)]
    fn send_across(&mut self, link_id: u32, mut pkt: Packet, arrival: Ps, more: bool) {
        let ext = pkt.ext.take().map(|id| self.exts.remove(id));
        let link = &mut self.links[link_id as usize];
        self.part.as_mut().expect("a partition").send(link_id, link.to, arrival, pkt, ext);
        if more {
            link.tx_event = true;
            self.events.push(link.busy_until, Event::TxDone(link_id));
        }
    }

    /// A packet was queued for `link_id`: start it now if the transmitter is free, or
    /// make sure an event will start it when the transmitter frees up.
    fn kick(&mut self, link_id: u32) {
        let link = &mut self.links[link_id as usize];
        if link.tx_event {
            return;
        }
        if link.busy_until <= self.now {
            self.start_transmission(link_id);
        } else {
            link.tx_event = true;
            self.events.push(link.busy_until, Event::TxDone(link_id));
        }
    }

    fn on_tx_done(&mut self, link_id: u32) {
        self.links[link_id as usize].tx_event = false;
        self.start_transmission(link_id);
    }

    fn on_arrive(&mut self, link_id: u32) {
        let link = &mut self.links[link_id as usize];
        let (_, pkt) = link.wire.pop_front().expect("an arrival has a packet on the wire");
        match link.wire.front() {
            Some(&(next, _)) => self.events.push(next, Event::Arrive(link_id)),
            // Back to the start of the buffer (`clear` resets an empty deque's head), so
            // that a wire that keeps emptying reuses its first, cached slots.
            None => link.wire.clear(),
        }
        let (to, to_port, watched) = (link.to, link.to_port as usize, link.watched);
        if watched && self.lost_on_watched_link(link_id, &pkt) {
            return;
        }
        if pkt.kind == PacketKind::Control {
            self.counters.frames_received += 1;
            let rate = self.links[link_id as usize].rate;
            let mut effects = std::mem::take(&mut self.effects);
            match to {
                NodeId::Switch(s) => {
                    self.switches[s as usize].on_frame(to_port, &pkt, self.now, &mut effects, &mut self.exts)
                }
                NodeId::Host(h) => self.nics[h as usize].on_frame(&pkt, self.now, &rate, &mut effects, &self.exts),
            }
            self.exts.release(pkt.ext);
            self.carry_out_effects(to, effects);
            return;
        }
        match to {
            NodeId::Switch(s) => self.switch_receive(s, to_port, pkt),
            NodeId::Host(h) => self.host_receive(h, pkt),
        }
    }

    /// Whether `pkt`, arriving over the watched link `link_id`, was lost on the way (the
    /// link is down, or corrupted it); if it was not, the capture may take it.
    #[inline(never)]
    fn lost_on_watched_link(&mut self, link_id: u32, pkt: &Packet) -> bool {
        if self.lost_to_outage(link_id, pkt) || self.corrupted(link_id, pkt) {
            return true;
        }
        self.capture(link_id, pkt);
        false
    }

    /// Whether `pkt`, arriving over the watched link `link_id`, was corrupted on the way;
    /// if so, it is counted and gone.
    #[inline(never)]
    fn corrupted(&mut self, link_id: u32, pkt: &Packet) -> bool {
        let threshold = self.links[link_id as usize].error_threshold;
        if threshold == 0 || !link_errors::corrupted(self.seed, link_id, self.now, threshold) {
            return false;
        }
        self.lose_on_link(pkt, DropReason::LinkError);
        true
    }

    /// `pkt` is lost on a link, corrupted (`LinkError`) or down (`LinkDown`): counted, and
    /// gone. A control frame is not a packet: it is counted apart.
    fn lose_on_link(&mut self, pkt: &Packet, reason: DropReason) {
        match (pkt.kind, reason) {
            (PacketKind::Control, DropReason::LinkDown) => self.counters.frames_lost += 1,
            (PacketKind::Control, _) => self.counters.frames_corrupted += 1,
            _ => self.counters.drop(reason, pkt),
        }
        self.exts.release(pkt.ext);
    }

    fn switch_receive(&mut self, s: u32, ingress: usize, pkt: Packet) {
        let hops = self.routes.next_hops(s, pkt.dst);
        let switch = &mut self.switches[s as usize];
        let port = match hops.count() {
            1 => hops.first(),
            _ => match switch.hashed_next_hop(hops, &pkt) {
                Some(port) => port,
                None => switch.next_hop(hops, &pkt, self.now),
            },
        } as usize;
        let mut drops = Drops { counters: &mut self.counters, exts: &mut self.exts };
        let buffered = switch.receive(ingress, port, pkt, self.now, &mut drops, &mut self.effects);
        let link = switch.ports[port].link;
        // A PAUSE upstream goes first: the kick may send a packet whose departure RESUMEs
        // the same upstream, and that frame must follow the PAUSE.
        if !self.effects.is_empty() {
            self.carry_out_pending_effects(NodeId::Switch(s));
        }
        if buffered {
            self.kick(link);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{Effect, IntHop};
    use crate::scenario::Scenario;
    use crate::stats::DropReason;

    impl Simulation {
        /// Sends a control frame out of `node`'s port `port`, as a flow-control scheme
        /// would through `Effect::Frame`.
        fn send_frame(&mut self, node: NodeId, port: u16) {
            let frame = Packet { kind: PacketKind::Control, size: 64, ..Packet::template(0, 0, 0, 0) };
            self.effects.push(Effect::Frame { port, frame });
            let effects = std::mem::take(&mut self.effects);
            self.carry_out_effects(node, effects);
        }

        /// Makes RDMA data packets carry telemetry stacks and the switches stamp them, as
        /// a controller that wants telemetry would.
        fn force_telemetry(&mut self) {
            self.stacks.rdma = self.stacks.rdma.clone().with_telemetry(true);
            for switch in &mut self.switches {
                let rates: Vec<u64> = switch.ports.iter().map(|p| self.links[p.link as usize].rate.bps).collect();
                switch.keep_telemetry(&rates, self.stacks.rdma.int_format);
            }
        }

        /// Sends a PFC frame for `class` out of `node`'s port `port`, as a switch's PFC
        /// would (hosts never send one; here they may, to pause their switch).
        fn send_pause(&mut self, node: NodeId, port: u16, class: u8, pause: crate::switch::flow_control::Pause) {
            let frame = crate::switch::flow_control::pause_frame(class, pause, 64);
            self.effects.push(Effect::Frame { port, frame });
            let effects = std::mem::take(&mut self.effects);
            self.carry_out_effects(node, effects);
        }
    }

    /// One RDMA connection at line rate across two switches (100 Gbps, 1 us links):
    /// packet k leaves its sender at k x T (T = 1,078 B at 100 Gbps: 1,036 B and the 42 B
    /// stack) and each switch forwards it at once, so its records are (queue 0, k x 1,078
    /// B sent before it, (k + 1) T + 1 us and (k + 2) T + 2 us); each ACK is 76 B.
    #[test]
    fn a_data_packet_collects_one_record_per_switch_and_its_ack_grows() {
        let sc = Scenario::from_toml(
            r#"
            [topology]
            kind = "dumbbell"
            hosts = 1
            hosts_right = 1
            link_rate = "100Gbps"
            uplink_rate = "100Gbps"
            link_delay = "1us"
            uplink_delay = "1us"
            [run]
            fct_until = "acked"
            [workload]
            pattern = "incast"
            transport = "rdma"
            senders = "0"
            receiver = 1
            size = "10KB"
            [rdma.cc]
            kind = "none"
            "#,
        )
        .unwrap();
        let mut sim = Simulation::new(&sc).unwrap();
        sim.force_telemetry();
        sim.run();
        assert_eq!(sim.flows_finished(), 1);
        assert_eq!(sim.exts.len(), 0, "every stack is released");
        let t = 86_240; // 1,078 B at 100 Gbps, ps
        let us = 1_000_000;
        let g100 = 100_000_000_000;
        assert_eq!(sim.delivered_stacks.len(), 10);
        for (k, (_, seq, hops)) in sim.delivered_stacks.iter().enumerate() {
            let k = k as u64;
            assert_eq!(*seq as u64, k);
            let hop = |n: u64| IntHop {
                queue_bytes: 0,
                tx_bytes: k * 1078,
                rx_bytes: (k + 1) * 1078,
                timestamp: (k + n) * t + n * us,
                rate_bps: g100,
            };
            assert_eq!(hops, &[hop(1), hop(2)], "packet {k}");
        }
        let sent = |from: NodeId| sim.links.iter().find(|l| l.from == from).unwrap().tx_bytes;
        assert_eq!(sent(NodeId::Host(0)), 10 * 1078);
        assert_eq!(sent(NodeId::Host(1)), 10 * 76);
    }

    /// 802.1Qbb's quantum is 512 bit times of the link: a PAUSE of 65535 quanta, received
    /// alone (no RESUME, no refresh), holds its class for exactly 65535 x 5.12 ns =
    /// 335,539.2 ns at 100 Gbps, and four times that at 25 Gbps; at a NIC (from its
    /// switch) and at a switch (from a host, here made to send one). The pause log's
    /// paused time is that, with one PAUSE, no RESUME and one expiry; the class is still
    /// paused 1 ps before the end.
    #[test]
    fn a_lone_timed_pause_lasts_its_quanta_of_512_bit_times() {
        use crate::switch::flow_control::Pause;
        for (rate, expected_ps) in [("100Gbps", 335_539_200), ("25Gbps", 4 * 335_539_200)] {
            let sc = Scenario::from_toml(&format!(
                "[topology]\nkind = \"star\"\nhosts = 2\nlink_rate = \"{rate}\"\n\
                 [switch.flow_control]\nkind = \"pfc\"\npause_quanta = 65535\n\
                 [workload]\npattern = \"incast\"\nreceiver = 0\nsize = \"1KB\"\n"
            ))
            .unwrap();
            let mut sim = Simulation::new(&sc).unwrap();
            let port = sim.routes.next_hops(0, 1).first();
            let (switch, host) = (NodeId::Switch(0), NodeId::Host(1));
            let class = 5;
            sim.send_pause(switch, port, class, Pause::Quanta(65535));
            sim.send_pause(host, 0, class, Pause::Quanta(65535));
            while sim.pauses.events().len() < 2 {
                assert!(!sim.run_bounded(Ps::MAX, 1), "the run ended before the frames arrived");
            }
            let arrived = |node| sim.pauses.events().iter().find(|e| e.key.node == node).expect("received").time;
            let (at_host, at_switch) = (arrived(host), arrived(switch));
            let paused = |sim: &Simulation| {
                (sim.nics[1].paused() & 1 << class != 0, sim.switches[0].pauses().is_paused(port as usize, 5))
            };
            sim.run_until(at_host.min(at_switch) + expected_ps - 1);
            assert_eq!(paused(&sim), (true, true), "{rate}: paused until the timer runs out");
            sim.run();
            assert_eq!(paused(&sim), (false, false), "{rate}");
            for node in [host, switch] {
                let (_, tally) = sim.pauses.tallies().find(|(k, _)| k.node == node).expect("a tally");
                assert_eq!(
                    (tally.pauses, tally.resumes, tally.expiries, tally.paused_ps),
                    (1, 0, 1, expected_ps),
                    "{rate}, {node:?}"
                );
            }
            assert_eq!(sim.pause_events().len(), 2, "{rate}: an expiry is not a frame");
            assert_eq!(sim.flows_finished(), 1);
        }
    }

    /// A 9-host star that loses packets: a NIC buffer smaller than a window, small pools
    /// with LossPass pushouts, a short RTO.
    const LOSSY_STAR: &str = r#"
            [topology]
            kind = "star"
            hosts = 9
            link_rate = "10Gbps"
            [host]
            nic_buffer = "30KB"
            [switch]
            pool_size = "60KB"
            reserved = "0B"
            alpha = 1000
            queues = 2
            scheduler = "strict_priority"
            admission = "losspass"
            [transport]
            init_cwnd = 40
            rto_min = "200us"
            "#;

    /// Payloads in the side table live exactly as long as their packets: a lossy run
    /// (LossPass pushouts, full pools, a NIC buffer too small for the window) with a
    /// payload on every data packet keeps the table equal to the packets that own one, and
    /// ends with it empty.
    #[test]
    fn side_table_payloads_follow_their_packets() {
        let sc = Scenario::from_toml(&format!(
            r#"{LOSSY_STAR}
            [workload]
            pattern = "incast"
            senders = "1-8"
            receiver = 0
            size = "1MB"
            priority = 1
            [[workload.extra]]
            pattern = "incast"
            senders = "1-8"
            receiver = 0
            size = "20KB"
            repeats = 4
            period = "300us"
            start = "200us"
            "#
        ))
        .unwrap();
        let mut sim = Simulation::new(&sc).unwrap();
        sim.attach_exts = true;
        let mut checked = 0;
        while !sim.run_bounded(Ps::MAX, 500) {
            assert!(sim.check_invariants().is_empty(), "{:?}", sim.check_invariants());
            checked += 1;
        }
        assert!(checked > 10);
        assert!(sim.check_invariants().is_empty(), "{:?}", sim.check_invariants());
        let drops = &sim.counters.dropped;
        assert!(drops[DropReason::Pushout as usize] > 0 && drops[DropReason::NicBuffer as usize] > 0, "{drops:?}");
        assert_eq!(sim.exts.len(), 0);
        assert_eq!(sim.flows_finished(), 8 + 4 * 8);
    }

    /// Releasing flows changes nothing: a lossy run with many short flows (drops at full
    /// pools and a small NIC buffer, timeouts, LossPass pushouts) gives the same records
    /// and counters whether finished flows are released (in batches of 32 here) or kept,
    /// and releases most of them along the way (kept, every flow started stays).
    #[test]
    fn released_flows_keep_their_records_and_free_their_state() {
        let sc = Scenario::from_toml(&format!(
            r#"{LOSSY_STAR}
            [workload]
            pattern = "all_to_all"
            cdf = "google_rpc"
            load = 0.3
            flows = 2000
            priorities = [0, 1]
            [[workload.extra]]
            pattern = "incast"
            senders = "1-8"
            receiver = 0
            size = "200KB"
            repeats = 4
            period = "400us"
            "#
        ))
        .unwrap();
        let run = |release_batch: usize| {
            let mut sim = Simulation::new(&sc).unwrap();
            (sim.release_batch, sim.release_at) = (release_batch, release_batch);
            let mut most_active = 0;
            while !sim.run_bounded(Ps::MAX, 2_000) {
                most_active = most_active.max(sim.flows_active());
            }
            assert!(sim.check_invariants().is_empty(), "{:?}", sim.check_invariants());
            let records = format!("{:?}", sim.flow_records());
            (records, sim.counters_json(), most_active, sim.flows_active())
        };
        let (released, kept) = (run(32), run(usize::MAX));
        assert_eq!(released.0, kept.0, "the same records");
        assert_eq!(released.1, kept.1, "the same counters");
        assert!(kept.1["timeouts"].as_u64().unwrap() > 0 && kept.1["drops"]["pushout"].as_u64().unwrap() > 0);
        assert_eq!(kept.3, 2_032);
        assert!(released.2 < 1000, "{} flows active at once", released.2);
    }

    /// A frame sent from a backlogged switch port overtakes the data queued there: it
    /// leaves at the next packet boundary, so it reaches the host within one data
    /// packet's serialization (plus its own and the delay), not behind the queue.
    #[test]
    fn control_frames_go_ahead_of_queued_data() {
        let sc = Scenario::from_toml(
            r#"
            [topology]
            kind = "star"
            hosts = 5
            link_rate = "10Gbps"
            link_delay = "1us"
            [workload]
            pattern = "incast"
            senders = "1-4"
            receiver = 0
            size = "500KB"
            "#,
        )
        .unwrap();
        let mut sim = Simulation::new(&sc).unwrap();
        let port = sim.routes.next_hops(0, 0).first() as usize;
        sim.run_until(100_000_000); // 100 us: the receiver's port is backlogged
        let queued = sim.switches[0].port_queues(port).iter().map(|q| q.packets.len()).sum::<usize>();
        assert!(queued >= 3, "the test needs a backlog, found {queued} packets");
        let sent_at = sim.now();
        sim.send_frame(NodeId::Switch(0), port as u16);
        while sim.counters.frames_received == 0 {
            assert!(!sim.run_bounded(Ps::MAX, 1), "the run ended before the frame arrived");
        }
        let mtu_ps = 1500 * 8 * 100; // at 10 Gbps
        let frame_ps = 64 * 8 * 100;
        assert!(sim.now() <= sent_at + mtu_ps + frame_ps + 1_000_000, "frame arrived at {} ps", sim.now() - sent_at);
        assert_eq!(sim.counters.frames_sent, 1);
        assert!(sim.check_invariants().is_empty(), "{:?}", sim.check_invariants());
        sim.run();
        assert!(sim.check_invariants().is_empty(), "{:?}", sim.check_invariants());
        assert_eq!(sim.flows_finished(), 4);
    }
}
#[cfg(test)]
mod layout {
    /// A link fills two cache lines exactly, and what arrivals and kicks read is in the
    /// first.
    #[test]
    fn a_link_is_two_cache_lines() {
        assert_eq!(std::mem::size_of::<super::Link>(), 128);
        assert!(std::mem::offset_of!(super::Link, tx_event) < 64);
    }

    /// Every event's key gives the event back, and same-time events run in the order of
    /// their classes; within a class, any two entities run in either order, about half the
    /// time each.
    #[test]
    fn events_key_and_back_in_class_order() {
        use super::{Event, KeyedEvent, Owner, TimerRef, ENTITY_LIMIT};
        let max = ENTITY_LIMIT - 1;
        let timer = |owner, id, token| Event::Timer(TimerRef { owner, id, token });
        let classes = [
            [Event::Observe(0), Event::Observe(u16::MAX)],
            [Event::Arrive(7), Event::Arrive(max)],
            [Event::TxDone(0), Event::TxDone(max)],
            [timer(Owner::Switch, 0, u32::MAX), timer(Owner::Switch, max, 3)],
            [timer(Owner::Nic, 2, 1), timer(Owner::Nic, max, u32::MAX)],
            [timer(Owner::Nic, 0, 0), timer(Owner::Nic, max, 0)],
            [timer(Owner::Flow, 3, 0), timer(Owner::Flow, max, 0)],
            [Event::FlowStart, Event::FlowStart],
        ];
        for at in 0..1_000u64 {
            for event in classes.iter().flatten() {
                assert_eq!(format!("{:?}", Event::from_key(event.key(at), at)), format!("{event:?}"));
            }
            for pair in classes.windows(2) {
                for (a, b) in pair[0].iter().zip(&pair[1]) {
                    assert!(a.key(at) < b.key(at), "{a:?} before {b:?}");
                }
            }
        }
        // Times in steps of a picosecond, of a 1,500 B packet at 1 Gbps and of 1 us (many
        // trailing zero bits); entities far apart and neighbours.
        let neighbours = [[Event::Arrive(5), Event::Arrive(6)], [Event::TxDone(0), Event::TxDone(1)]];
        for step in [1, 12_000_000, 1_000_000] {
            for [a, b] in classes[..7].iter().chain(&neighbours) {
                let first = (0..1_000u64).filter(|&k| a.key(k * step) < b.key(k * step)).count();
                assert!((400..600).contains(&first), "{a:?} ran first {first} times in 1,000 (step {step})");
            }
        }
    }
}
