//! The run loop. It moves packets between host NICs, links and switches and dispatches
//! timers. Switch schemes live behind the switch's traits; the TCP and UDP endpoints, the
//! FCT rule and connection reuse are still driven from here, until transports get a trait
//! of their own.

use crate::budget;
use crate::host::Nic;
use crate::net::{self, NodeId, Packet, PacketKind, Routes};
use crate::scenario::{FctUntil, Scenario, ScenarioError};
use crate::sim::{mix64, serialization, stream, EventQueue, LinkRate, Ps, TIME_LIMIT};
use crate::stats::Counters;
use crate::switch::{marking::MarkRule, Switch};
use crate::transport::{cc, IdleConnection, TcpConfig, TcpReceiver, TcpSender, UdpSource};
use crate::workload::{self, FlowKind, FlowSpec};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug)]
enum Event {
    /// A link finished serializing and a packet is waiting for it.
    TxDone(u32),
    /// The oldest packet on a link's wire reaches the far end.
    Arrive(u32),
    /// The next flow in start order begins.
    FlowStart,
    /// A TCP flow's retransmission timer.
    Timer(u32),
    /// A UDP source sends its next packet.
    UdpSend(u32),
    /// Periodic occupancy sampling.
    Sample,
}

/// A directed link: a transmitter that serializes one packet at a time, and a wire that
/// holds packets from the start of their serialization until their arrival (in arrival
/// order, so only the oldest has an event). The transmitter needs an event only when a
/// packet waits for it: an idle port's next packet starts as soon as it is queued.
struct Link {
    from: NodeId,
    /// Port index at the sending switch (0 for a host NIC).
    from_port: u32,
    to: NodeId,
    rate: LinkRate,
    delay: Ps,
    core: bool,
    /// The transmitter is serializing until this time.
    busy_until: Ps,
    /// A `TxDone` event is pending for this link.
    tx_event: bool,
    wire: VecDeque<(Ps, Packet)>,
    tx_bytes: u64,
}

enum Endpoint {
    Tcp { sender: TcpSender, receiver: TcpReceiver },
    Udp { source: UdpSource, delivered_bytes: u64, delivered_packets: u64 },
}

struct Flow {
    spec: FlowSpec,
    endpoint: Option<Endpoint>,
    /// Packet templates for each direction (ids, ECMP hash, priority).
    forward: Packet,
    reverse: Packet,
    /// Time of the pending timer event that is current, if any.
    timer_event_at: Option<Ps>,
    finished_at: Option<Ps>,
    /// Data bytes of this flow waiting in its sender's NIC queue (TCP small queues).
    nic_bytes: u64,
}

/// The bytes a TCP flow may add to its NIC queue under TCP small queues (`tsq` bytes per
/// flow; 0 = no limit).
#[inline]
fn tsq_budget(tsq: u64, nic_bytes: u64) -> u64 {
    if tsq == 0 {
        u64::MAX
    } else {
        tsq.saturating_sub(nic_bytes)
    }
}

/// One row of the per-flow results.
#[derive(Clone, Debug)]
pub struct FlowRecord {
    pub id: u64,
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    pub start: Ps,
    pub finish: Option<Ps>,
    pub ideal_fct: Option<Ps>,
    pub retransmits: u32,
    pub timeouts: u32,
    pub priority: u8,
    pub udp: bool,
    pub delivered_bytes: u64,
    /// The query (incast round) the flow answers, if any.
    pub query: Option<u64>,
}

/// One occupancy sample of a queue.
#[derive(Clone, Debug)]
pub struct Sample {
    pub time: Ps,
    pub switch: u32,
    pub port: u32,
    pub queue: u32,
    pub bytes: u64,
    pub pool_bytes: u64,
    /// Bytes the port's link has sent since the start (for throughput over time).
    pub tx_bytes: u64,
}

pub struct Simulation {
    now: Ps,
    events: EventQueue<Event>,
    links: Vec<Link>,
    nics: Vec<Nic>,
    switches: Vec<Switch>,
    routes: Routes,
    flows: Vec<Flow>,
    /// Index of the next flow to start.
    next_flow: usize,
    tcp: TcpConfig,
    fct_until: FctUntil,
    /// Open connections without a flow, by (sender, receiver) host (`reuse_connections`).
    idle_connections: FxHashMap<(u32, u32), Vec<IdleConnection>>,
    /// TCP small queues: a flow's bytes allowed in its NIC queue; 0 = unlimited.
    tsq: u64,
    udp_packet_bytes: u32,
    counters: Counters,
    stop_time: Option<Ps>,
    sample_interval: Option<Ps>,
    samples: Vec<Sample>,
    events_processed: u64,
    flows_finished: usize,
    tcp_flows: usize,
    finished: bool,
    reached_time_limit: bool,
    scratch: Vec<Packet>,
}

impl Simulation {
    /// Validates `sc`, builds its network (with `sc.resolved()`'s derived defaults) and
    /// generates its workload.
    pub fn new(sc: &Scenario) -> Result<Simulation, ScenarioError> {
        sc.validate()?;
        let sc = &sc.resolved();
        let spec = net::build(&sc.topology);
        if let Some(available) = budget::available_memory() {
            budget::MemoryEstimate::of(sc, &spec)?.check(available)?;
        }
        let flows = workload::generate(sc, &spec)?;
        Ok(Self::with_flows(sc, &spec, flows))
    }

    fn with_flows(sc: &Scenario, spec: &net::NetworkSpec, flow_specs: Vec<FlowSpec>) -> Simulation {
        let seed = sc.run.seed;
        let mut switch_links: Vec<Vec<u32>> = vec![Vec::new(); spec.switches as usize];
        let mut host_link = vec![0u32; spec.hosts as usize];
        let mut links = Vec::with_capacity(spec.links.len());
        for (i, l) in spec.links.iter().enumerate() {
            let from_port = match l.from {
                NodeId::Switch(s) => {
                    switch_links[s as usize].push(i as u32);
                    switch_links[s as usize].len() as u32 - 1
                }
                NodeId::Host(h) => {
                    host_link[h as usize] = i as u32;
                    0
                }
            };
            links.push(Link {
                from: l.from,
                from_port,
                to: l.to,
                rate: LinkRate::new(l.rate_bps),
                delay: l.delay,
                core: l.core,
                busy_until: 0,
                tx_event: false,
                wire: VecDeque::new(),
                tx_bytes: 0,
            });
        }
        let routes = Routes::compute(spec, &switch_links, &host_link);
        let switches = switch_links
            .iter()
            .enumerate()
            .map(|(i, ports)| {
                let salt = mix64(seed ^ mix64(0xec3f ^ i as u64));
                let rates: Vec<u64> = ports.iter().map(|&l| spec.links[l as usize].rate_bps).collect();
                Switch::new(&sc.switch, ports, &rates, salt, stream(seed, "switch", i as u64))
            })
            .collect();
        let nics = host_link.iter().map(|&link| Nic::new(link, sc.host.nic_buffer.0, sc.host.ecn_k.0)).collect();
        let tcp = TcpConfig::from_scenario(&sc.transport);
        let flows: Vec<Flow> = flow_specs
            .into_iter()
            .enumerate()
            .map(|(i, spec)| {
                let hash =
                    mix64(seed ^ mix64(spec.id.wrapping_mul(0x9e37) ^ ((spec.src as u64) << 32 | spec.dst as u64)));
                let template = Packet::template(i as u32, spec.dst, hash as u32, spec.priority);
                let reverse = Packet { dst: spec.src, hash: (hash >> 32) as u32, ..template };
                Flow {
                    spec,
                    endpoint: None,
                    forward: template,
                    reverse,
                    timer_event_at: None,
                    finished_at: None,
                    nic_bytes: 0,
                }
            })
            .collect();
        let tcp_flows = flows.iter().filter(|f| f.spec.kind == FlowKind::Tcp).count();
        let mut sim = Simulation {
            now: 0,
            events: EventQueue::new(),
            links,
            nics,
            switches,
            routes,
            flows,
            next_flow: 0,
            udp_packet_bytes: tcp.mss + tcp.header,
            tsq: sc.host.tsq.0,
            tcp,
            idle_connections: FxHashMap::default(),
            counters: Counters::default(),
            fct_until: sc.run.fct_until,
            stop_time: sc.run.stop_time.map(|t| t.0),
            sample_interval: sc.run.sample_interval.map(|t| t.0),
            samples: Vec::new(),
            events_processed: 0,
            flows_finished: 0,
            tcp_flows,
            finished: false,
            reached_time_limit: false,
            scratch: Vec::new(),
        };
        if let Some(first) = sim.flows.first() {
            sim.events.push(first.spec.start, Event::FlowStart);
        }
        if sim.sample_interval.is_some() {
            sim.events.push(0, Event::Sample);
        }
        sim
    }

    pub fn now(&self) -> Ps {
        self.now
    }

    pub fn stop_time(&self) -> Option<Ps> {
        self.stop_time
    }

    pub fn events_processed(&self) -> u64 {
        self.events_processed
    }

    /// Events waiting in the event queue.
    pub fn pending_events(&self) -> usize {
        self.events.len()
    }

    pub fn flows_total(&self) -> usize {
        self.tcp_flows
    }

    /// TCP flows whose receiver holds every byte.
    pub fn flows_finished(&self) -> usize {
        self.flows_finished
    }

    pub fn is_finished(&self) -> bool {
        self.finished
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
        let limit = self.stop_time.map_or(until, |s| s.min(until)).min(TIME_LIMIT);
        let mut budget = max_events;
        while let Some(t) = self.events.peek_time() {
            if t > limit {
                if t > TIME_LIMIT {
                    self.reached_time_limit = true;
                    self.finished = true;
                    return true;
                }
                break;
            }
            if budget == 0 {
                return false;
            }
            budget -= 1;
            let (t, event) = self.events.pop().expect("peeked");
            self.now = t;
            self.events_processed += 1;
            self.dispatch(event);
        }
        if self.events.is_empty() {
            self.finished = true;
        } else {
            self.now = self.now.max(limit);
            if self.stop_time.is_some_and(|s| limit >= s) {
                self.finished = true;
            }
        }
        self.finished
    }

    /// Runs to the end.
    pub fn run(&mut self) {
        while !self.run_until(Ps::MAX) {}
    }

    fn dispatch(&mut self, event: Event) {
        match event {
            Event::TxDone(link) => self.on_tx_done(link),
            Event::Arrive(link) => self.on_arrive(link),
            Event::FlowStart => self.on_flow_start(),
            Event::Timer(flow) => self.on_timer(flow),
            Event::UdpSend(flow) => self.on_udp_send(flow),
            Event::Sample => self.on_sample(),
        }
    }

    // ---- links -------------------------------------------------------------------

    /// Starts serializing the next packet of an idle link, if its owner has one. The
    /// packet goes on the wire now, arriving after its serialization and the delay.
    fn start_transmission(&mut self, link_id: u32) {
        let link = &self.links[link_id as usize];
        debug_assert!(link.busy_until <= self.now && !link.tx_event);
        let (next, more) = match link.from {
            NodeId::Host(h) => {
                let next = self.nics[h as usize].pop();
                if let Some(pkt) = next.filter(|p| p.kind == PacketKind::Data) {
                    self.flows[pkt.flow as usize].nic_bytes -= pkt.size as u64;
                    if self.tsq > 0 {
                        self.nic_drained(pkt.flow);
                    }
                }
                (next, !self.nics[h as usize].is_empty())
            }
            NodeId::Switch(s) => {
                let switch = &mut self.switches[s as usize];
                let port = link.from_port as usize;
                let next = switch.dequeue(port, self.now, &mut self.counters);
                (next, switch.has_queued(port))
            }
        };
        let Some(pkt) = next else { return };
        let link = &mut self.links[link_id as usize];
        link.busy_until = self.now + link.rate.serialization(pkt.size as u64);
        link.tx_bytes += pkt.size as u64;
        let arrival = link.busy_until + link.delay;
        link.wire.push_back((arrival, pkt));
        if link.wire.len() == 1 {
            self.events.push(arrival, Event::Arrive(link_id));
        }
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
        if let Some(&(next, _)) = link.wire.front() {
            self.events.push(next, Event::Arrive(link_id));
        }
        match link.to {
            NodeId::Switch(s) => self.switch_receive(s, pkt),
            NodeId::Host(h) => self.host_receive(h, pkt),
        }
    }

    // ---- switches ----------------------------------------------------------------

    fn switch_receive(&mut self, s: u32, pkt: Packet) {
        let hops = self.routes.next_hops(s, pkt.dst);
        let switch = &mut self.switches[s as usize];
        let port = match hops.len() {
            1 => hops[0],
            n => hops[(mix64(pkt.hash as u64 ^ switch.ecmp_salt) % n as u64) as usize],
        } as usize;
        if switch.enqueue(port, pkt, self.now, &mut self.counters) {
            let link = switch.ports[port].link;
            self.kick(link);
        }
    }

    // ---- hosts ---------------------------------------------------------------------

    /// Hands a packet to the sending host's NIC.
    fn host_send(&mut self, h: u32, pkt: Packet) {
        self.enqueue_at_nic(h, pkt);
        let link = self.nics[h as usize].link;
        self.kick(link);
    }

    /// Puts a packet in host `h`'s NIC queue, or drops it when the NIC buffer is full.
    fn enqueue_at_nic(&mut self, h: u32, pkt: Packet) {
        self.counters.created += 1;
        if matches!(pkt.kind, PacketKind::Data | PacketKind::Udp) {
            self.counters.data_packets_sent += 1;
        }
        if !self.nics[h as usize].push(pkt, &mut self.counters) {
            return;
        }
        if pkt.kind == PacketKind::Data {
            self.flows[pkt.flow as usize].nic_bytes += pkt.size as u64;
        }
    }

    /// Sends the packets a transport produced, from host `h`.
    fn send_all(&mut self, h: u32, packets: &mut Vec<Packet>) {
        for pkt in packets.drain(..) {
            self.host_send(h, pkt);
        }
    }

    fn host_receive(&mut self, h: u32, pkt: Packet) {
        self.counters.delivered += 1;
        let fi = pkt.flow;
        let mut out = std::mem::take(&mut self.scratch);
        let flow = &mut self.flows[fi as usize];
        let now = self.now;
        let mut newly_finished = false;
        match flow.endpoint.as_mut() {
            Some(Endpoint::Tcp { sender, receiver }) => match pkt.kind {
                PacketKind::Data | PacketKind::Syn => {
                    debug_assert_eq!(h, flow.spec.dst);
                    let was_done = receiver.finished_at.is_some();
                    out.push(receiver.on_packet(&self.tcp, &pkt, flow.reverse, now));
                    if !was_done && receiver.finished_at.is_some() && self.fct_until == FctUntil::Delivered {
                        flow.finished_at = receiver.finished_at;
                        newly_finished = true;
                    }
                }
                PacketKind::Ack | PacketKind::SynAck => {
                    let was_done = sender.done();
                    sender.set_budget(tsq_budget(self.tsq, flow.nic_bytes));
                    sender.on_ack(&self.tcp, &pkt, now, &mut out);
                    if !was_done && sender.done() {
                        if self.fct_until == FctUntil::Acked {
                            flow.finished_at = Some(now);
                            newly_finished = true;
                        }
                        if self.tcp.reuse_connections {
                            let pair = (flow.spec.src, flow.spec.dst);
                            self.idle_connections.entry(pair).or_default().push(sender.release());
                        }
                    }
                }
                PacketKind::Udp => unreachable!("a TCP flow carries no UDP packets"),
            },
            Some(Endpoint::Udp { delivered_bytes, delivered_packets, .. }) => {
                *delivered_bytes += (pkt.size - self.tcp.header) as u64;
                *delivered_packets += 1;
            }
            None => unreachable!("packets only exist for started flows"),
        }
        if newly_finished {
            self.flows_finished += 1;
        }
        self.send_all(h, &mut out);
        self.scratch = out;
        self.sync_timer(fi);
    }

    // ---- flows ---------------------------------------------------------------------

    fn on_flow_start(&mut self) {
        let fi = self.next_flow as u32;
        self.next_flow += 1;
        if let Some(next) = self.flows.get(self.next_flow) {
            self.events.push(next.spec.start, Event::FlowStart);
        }
        let flow = &mut self.flows[fi as usize];
        let src = flow.spec.src;
        match flow.spec.kind {
            FlowKind::Tcp => {
                let idle = self.idle_connections.get_mut(&(src, flow.spec.dst)).and_then(Vec::pop);
                let mut sender = match idle {
                    Some(conn) => TcpSender::reopen(&self.tcp, flow.spec.bytes, flow.forward, conn, self.now),
                    None => TcpSender::new(&self.tcp, flow.spec.bytes, flow.forward, cc::build(&self.tcp)),
                };
                let receiver = TcpReceiver::new(&self.tcp, flow.spec.bytes);
                let mut out = std::mem::take(&mut self.scratch);
                sender.set_budget(tsq_budget(self.tsq, 0));
                sender.start(&self.tcp, self.now, &mut out);
                flow.endpoint = Some(Endpoint::Tcp { sender, receiver });
                self.send_all(src, &mut out);
                self.scratch = out;
                self.sync_timer(fi);
            }
            FlowKind::Udp { rate_bps, stop } => {
                let packet_bytes = self.udp_packet_bytes;
                let payload = (packet_bytes - self.tcp.header) as u64;
                let source = UdpSource {
                    start: self.now,
                    stop: stop.unwrap_or(Ps::MAX),
                    rate_bps,
                    packet_bytes,
                    packets_total: flow.spec.bytes.div_ceil(payload),
                    sent: 0,
                };
                if let Some(t) = source.next_send() {
                    self.events.push(t, Event::UdpSend(fi));
                }
                flow.endpoint = Some(Endpoint::Udp { source, delivered_bytes: 0, delivered_packets: 0 });
            }
        }
    }

    /// One of the flow's packets left its NIC: a sender held back by TCP small queues
    /// may send again. Called while the NIC is being served; the new packets join the
    /// NIC queue behind the ones already there.
    fn nic_drained(&mut self, fi: u32) {
        let flow = &mut self.flows[fi as usize];
        let Some(Endpoint::Tcp { sender, .. }) = flow.endpoint.as_mut() else { return };
        if !sender.blocked {
            return;
        }
        sender.set_budget(tsq_budget(self.tsq, flow.nic_bytes));
        let mut out = std::mem::take(&mut self.scratch);
        sender.resume(&self.tcp, self.now, &mut out);
        let src = flow.spec.src;
        for pkt in out.drain(..) {
            self.enqueue_at_nic(src, pkt);
        }
        self.scratch = out;
        self.sync_timer(fi);
    }

    fn on_udp_send(&mut self, fi: u32) {
        let flow = &mut self.flows[fi as usize];
        let Some(Endpoint::Udp { source, .. }) = flow.endpoint.as_mut() else {
            unreachable!("a UDP event for a UDP flow")
        };
        let pkt = Packet {
            kind: PacketKind::Udp,
            seq: source.sent as u32,
            size: source.packet_bytes,
            timestamp: self.now,
            ..flow.forward
        };
        source.sent += 1;
        if let Some(t) = source.next_send() {
            self.events.push(t, Event::UdpSend(fi));
        }
        let src = flow.spec.src;
        self.host_send(src, pkt);
    }

    /// Makes sure a timer event is pending for the flow's current RTO deadline. Timer
    /// events are not cancelled: a stale one is recognized when it fires and ignored.
    fn sync_timer(&mut self, fi: u32) {
        let flow = &mut self.flows[fi as usize];
        let Some(Endpoint::Tcp { sender, .. }) = flow.endpoint.as_ref() else { return };
        if let Some(deadline) = sender.deadline {
            if flow.timer_event_at.is_none_or(|t| deadline < t) {
                flow.timer_event_at = Some(deadline);
                self.events.push(deadline, Event::Timer(fi));
            }
        }
    }

    fn on_timer(&mut self, fi: u32) {
        let now = self.now;
        let flow = &mut self.flows[fi as usize];
        if flow.timer_event_at != Some(now) {
            return; // stale
        }
        flow.timer_event_at = None;
        let Some(Endpoint::Tcp { sender, .. }) = flow.endpoint.as_mut() else { return };
        match sender.deadline {
            Some(d) if d <= now => {
                let mut out = std::mem::take(&mut self.scratch);
                sender.set_budget(tsq_budget(self.tsq, flow.nic_bytes));
                sender.on_timeout(&self.tcp, now, &mut out);
                let src = flow.spec.src;
                self.send_all(src, &mut out);
                self.scratch = out;
            }
            _ => {}
        }
        self.sync_timer(fi);
    }

    fn on_sample(&mut self) {
        let now = self.now;
        for (si, switch) in self.switches.iter().enumerate() {
            for (pi, port) in switch.ports.iter().enumerate() {
                for (qi, q) in port.queues.iter().enumerate() {
                    if q.occupancy.max() > 0 {
                        self.samples.push(Sample {
                            time: now,
                            switch: si as u32,
                            port: pi as u32,
                            queue: qi as u32,
                            bytes: q.account.bytes,
                            pool_bytes: switch.pools[port.pool].occupancy.value(),
                            tx_bytes: self.links[port.link as usize].tx_bytes,
                        });
                    }
                }
            }
        }
        // Keep sampling only while something else can still happen.
        if let (Some(interval), false) = (self.sample_interval, self.events.is_empty()) {
            self.events.push(now + interval, Event::Sample);
        }
    }

    // ---- results -------------------------------------------------------------------

    /// Packets inside the network now: in NIC and switch queues, or on a wire (being
    /// serialized or propagating).
    pub fn packets_in_network(&self) -> u64 {
        let hosts: usize = self.nics.iter().map(Nic::len).sum();
        let switches: usize = self.switches.iter().map(|s| s.queued_packets()).sum();
        let links: usize = self.links.iter().map(|l| l.wire.len()).sum();
        (hosts + switches + links) as u64
    }

    /// Conservation and buffer-accounting checks; each violation is described.
    pub fn check_invariants(&self) -> Vec<String> {
        let mut errors = Vec::new();
        let c = &self.counters;
        let in_network = self.packets_in_network();
        if c.created != c.delivered + c.total_dropped() + in_network {
            errors.push(format!(
                "conservation: created {} != delivered {} + dropped {} + in network {in_network}",
                c.created,
                c.delivered,
                c.total_dropped()
            ));
        }
        for (i, s) in self.switches.iter().enumerate() {
            errors.extend(s.check_accounting(i));
        }
        let mut flow_nic_bytes = vec![0u64; self.flows.len()];
        for (i, nic) in self.nics.iter().enumerate() {
            errors.extend(nic.check_accounting(i));
            for p in nic.packets().filter(|p| p.kind == PacketKind::Data) {
                flow_nic_bytes[p.flow as usize] += p.size as u64;
            }
        }
        for (f, (flow, bytes)) in self.flows.iter().zip(flow_nic_bytes).enumerate() {
            if flow.nic_bytes != bytes {
                errors.push(format!("flow {f}: {bytes} B in its NIC queue but accounts {} B", flow.nic_bytes));
            }
        }
        if self.events.is_empty() {
            if in_network != 0 {
                errors.push(format!("drained network still holds {in_network} packets"));
            }
            for (i, s) in self.switches.iter().enumerate() {
                for (p, pool) in s.pools.iter().enumerate() {
                    if pool.shared_used != 0 || pool.occupancy.value() != 0 {
                        errors.push(format!("switch {i} pool {p}: counters not back to zero after draining"));
                    }
                }
            }
        }
        errors
    }

    /// The base one-way path of a flow: (total propagation delay, link rates in order).
    fn path(&self, src: u32, dst: u32) -> (Ps, Vec<u64>) {
        let mut link = &self.links[self.nics[src as usize].link as usize];
        let mut delay = link.delay;
        let mut rates = vec![link.rate.bps];
        while let NodeId::Switch(s) = link.to {
            let port = self.routes.next_hops(s, dst)[0] as usize;
            link = &self.links[self.switches[s as usize].ports[port].link as usize];
            delay += link.delay;
            rates.push(link.rate.bps);
        }
        (delay, rates)
    }

    /// The ideal FCT: the path's base one-way latency for the flow's first packet (every
    /// link's propagation delay plus its serialization at every hop), plus the
    /// serialization of the rest of the flow's bytes, headers included, at the host link
    /// rate; plus, with the handshake, one SYN / SYN-ACK round trip. It is exactly the
    /// FCT of the flow alone on an idle network with an unlimited window whenever the
    /// host link is the slowest on the path.
    pub fn ideal_fct(&self, spec: &FlowSpec) -> Option<Ps> {
        if spec.kind != FlowKind::Tcp || spec.bytes == workload::ENDLESS {
            return None;
        }
        let cfg = &self.tcp;
        let (delay, rates) = self.path(spec.src, spec.dst);
        let segments = cfg.segments(spec.bytes) as u64;
        let wire = spec.bytes + segments * cfg.header as u64;
        let first = cfg.payload(spec.bytes, 0) + cfg.header as u64;
        let mut t = delay + rates.iter().map(|&r| serialization(first, r)).sum::<Ps>();
        t += serialization(wire - first, rates[0]);
        let ack_trip = delay + rates.iter().map(|&r| serialization(cfg.ack_size as u64, r)).sum::<Ps>();
        if cfg.handshake {
            t += 2 * ack_trip;
        }
        if self.fct_until == FctUntil::Acked {
            t += ack_trip;
        }
        Some(t)
    }

    pub fn flow_records(&self) -> Vec<FlowRecord> {
        self.flows
            .iter()
            .map(|f| {
                let (retransmits, timeouts, delivered_bytes) = match &f.endpoint {
                    Some(Endpoint::Tcp { sender, receiver }) => (
                        sender.retransmits,
                        sender.timeouts,
                        self.tcp.payload_between(f.spec.bytes, 0, receiver.received_segments()),
                    ),
                    Some(Endpoint::Udp { delivered_bytes, .. }) => (0, 0, *delivered_bytes),
                    None => (0, 0, 0),
                };
                FlowRecord {
                    id: f.spec.id,
                    src: f.spec.src,
                    dst: f.spec.dst,
                    bytes: f.spec.bytes,
                    start: f.spec.start,
                    finish: f.finished_at,
                    ideal_fct: self.ideal_fct(&f.spec),
                    retransmits,
                    timeouts,
                    priority: f.spec.priority,
                    udp: matches!(f.spec.kind, FlowKind::Udp { .. }),
                    delivered_bytes,
                    query: f.spec.query,
                }
            })
            .collect()
    }

    pub fn samples(&self) -> &[Sample] {
        &self.samples
    }

    /// Counters and occupancy statistics as JSON.
    pub fn counters_json(&mut self) -> serde_json::Value {
        use serde_json::json;
        let now = self.now.max(1);
        let c = &self.counters;
        let drops: serde_json::Map<String, serde_json::Value> = crate::stats::DropReason::ALL
            .iter()
            .map(|r| (r.name().to_string(), json!(c.dropped[*r as usize])))
            .collect();
        let mut pools = Vec::new();
        let mut queues = Vec::new();
        for (si, s) in self.switches.iter_mut().enumerate() {
            for (pi, pool) in s.pools.iter_mut().enumerate() {
                pools.push(json!({
                    "switch": si, "pool": pi, "size": pool.size,
                    "mean": pool.occupancy.mean(now),
                    "p50": pool.occupancy.quantile(now, 0.5),
                    "p99": pool.occupancy.quantile(now, 0.99),
                    "max": pool.occupancy.max(),
                    "now": pool.occupancy.value(),
                    "drops": pool.drops,
                }));
            }
            for (pi, port) in s.ports.iter_mut().enumerate() {
                for (qi, q) in port.queues.iter_mut().enumerate() {
                    if q.occupancy.max() > 0 {
                        queues.push(json!({
                            "switch": si, "port": pi, "queue": qi,
                            "mean": q.occupancy.mean(now), "max": q.occupancy.max(), "now": q.account.bytes,
                        }));
                    }
                }
            }
        }
        let utilization = |l: &Link| l.tx_bytes as f64 * 8.0 / (l.rate.bps as f64 * now as f64 / 1e12);
        let stats = |it: Vec<f64>| match it.len() {
            0 => json!(null),
            n => json!({"mean": it.iter().sum::<f64>() / n as f64, "max": it.iter().cloned().fold(0.0, f64::max)}),
        };
        let down: Vec<f64> = self.links.iter().filter(|l| matches!(l.to, NodeId::Host(_))).map(utilization).collect();
        let core: Vec<f64> = self.links.iter().filter(|l| l.core).map(utilization).collect();
        let node = |n: NodeId| match n {
            NodeId::Switch(s) => s,
            NodeId::Host(h) => h,
        };
        let core_links: Vec<serde_json::Value> = self
            .links
            .iter()
            .filter(|l| l.core)
            .map(|l| json!({"from_switch": node(l.from), "to_switch": node(l.to), "utilization": utilization(l)}))
            .collect();
        let in_network = self.packets_in_network();
        let timeouts: u64 = self
            .flows
            .iter()
            .filter_map(|f| match &f.endpoint {
                Some(Endpoint::Tcp { sender, .. }) => Some(sender.timeouts as u64),
                _ => None,
            })
            .sum();
        let c = &self.counters;
        json!({
            "packets": {
                "sent": c.created,
                "delivered": c.delivered,
                "dropped": c.total_dropped(),
                "in_network": in_network,
                "switch_arrivals": c.switch_arrivals,
                "switch_dropped": c.switch_dropped(),
            },
            "data_packets_sent": c.data_packets_sent,
            "bytes_dropped": c.bytes_dropped,
            "drops": drops,
            "ecn_marks": c.ecn_marks,
            "marks_by_rule": MarkRule::ALL
                .iter()
                .map(|r| (r.name().to_string(), json!(c.marks_by_rule[*r as usize])))
                .collect::<serde_json::Map<String, serde_json::Value>>(),
            "timeouts": timeouts,
            "pools": pools,
            "queues": queues,
            "links": {"host_downlinks": stats(down), "core": stats(core), "core_links": core_links},
            "duration_ps": self.now,
            "events": self.events_processed,
            "flows": {"tcp": self.tcp_flows, "tcp_finished": self.flows_finished, "total": self.flows.len()},
        })
    }
}
