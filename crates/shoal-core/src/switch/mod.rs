//! An output-queued, shared-memory switch. Its decision points are narrow traits:
//! admission (`admission::Admission`), classification (`classify::Classify`), marking
//! (`marking::Marker`), scheduling (`scheduler::Scheduler`) and flow control
//! (`flow_control::FlowControl`); the switch itself only moves packets between them.

pub mod active_set;
pub mod admission;
pub mod classify;
pub mod config;
pub mod flow_control;
pub mod load_balance;
pub mod marking;
pub mod mmu;
pub mod queue;
pub mod scheduler;

use crate::net::pause::{is_filter_frame, read_pause_frame};
use crate::net::{Effect, Effects, Ext, ExtStore, Hops, IntFormat, IntHop, Packet, PacketKind};
use crate::sim::{Ps, Rng};
use crate::stats::{Counters, DropReason};
use crate::switch::config::{EcnScope, MarkPoint, NonEct, SwitchConfig};
use active_set::ActiveSet;
use admission::{Admission, AdmitContext, AnyAdmission, Verdict};
use classify::{Classifier, Classify};
use flow_control::{
    AnyFlowControl, FlowControl, FlowControlEnv, FlowCx, IngressCx, IngressLink, Lossless, LosslessArrival, PoolState,
    PortPauses, PortView, Ports, Steering, StepCx,
};
use load_balance::{AnyLoadBalancer, Ecmp, Egress, LoadBalancer};
use marking::{AnyMarker, MarkContext, MarkRule, Marker, PoolEnv};
use mmu::{charge, class_of, release, Charge, IngressAccounts, Pool, Reserve, CLASSES};
pub use queue::PortQueue;
use scheduler::{AnyScheduler, Scheduler, SchedulerEnv};

/// The flag of a switch timer's token that marks the end of a timed pause (its slot, port
/// x `CLASSES` + class, in the bits below); the flow control's tokens never set it.
const GATE_EXPIRY: u32 = 1 << 31;

/// What a switch touches when it drops a packet: the counters, and the side table that
/// holds the packet's payload.
pub struct Drops<'a> {
    pub counters: &'a mut Counters,
    pub exts: &'a mut ExtStore,
}

/// An egress port: its link, its pool, its scheduler and which of its queues hold packets
/// (the queues themselves are the switch's, `Switch::port_queues`).
///
/// Invariants: `active` holds exactly the non-empty queues, and `bytes` is the sum of the
/// queues' bytes.
///
/// One cache line (a test holds it): an arrival or a departure touches the port, its
/// queue and the pool, one line each.
#[repr(align(64))]
pub struct SwitchPort {
    pub link: u32,
    pub pool: u32,
    bytes: u64,
    active: ActiveSet,
    scheduler: AnyScheduler,
}

pub struct Switch {
    pub ports: Vec<SwitchPort>,
    /// The queues of every port, port after port (`queues_per_port` each).
    queues: Vec<PortQueue>,
    queues_per_port: usize,
    /// The static reserve of every queue or port.
    reserve: Reserve,
    /// Dynamic-threshold alpha of each queue index.
    alphas: Box<[f64]>,
    pub pools: Vec<Pool>,
    /// Bytes buffered by ingress port and traffic class; kept only when the flow control
    /// reads them (`FlowControl::reads_ingress_accounts`).
    pub ingress: Option<IngressAccounts>,
    /// Salt of this switch's ECMP hash.
    pub ecmp_salt: u64,
    /// Chooses among equal-cost next hops.
    balancer: AnyLoadBalancer,
    admission: AnyAdmission,
    flow_control: AnyFlowControl,
    /// Bit c set: class c is lossless (`FlowControl::lossless_classes`), cached here so
    /// that a lossy packet costs one bit test.
    lossless: u8,
    /// Which egress queues the neighbours' pauses hold.
    pauses: PortPauses,
    /// The ports obey pause frames and keep filter frames (`FlowControl::obeys_*`).
    obeys_pauses: bool,
    obeys_filters: bool,
    /// The flow control chooses the packets' queues and follows them
    /// (`FlowControl::steers_flows`), cached so that other switches pay one branch.
    steers: bool,
    ports_per_pool: usize,
    /// The per-queue rule (at most one: `MarkingConfig::validate`) of each port, built
    /// for the port's link rate; empty without one.
    queue_markers: Vec<AnyMarker>,
    /// Shared-buffer rule of each pool, if any.
    pool_markers: Vec<Option<AnyMarker>>,
    mark_at: MarkPoint,
    ecn_scope: EcnScope,
    non_ect: NonEct,
    classify: Classifier,
    rng: Rng,
    /// What each port reports to in-band telemetry, kept only in runs whose packets ask
    /// for it (`keep_telemetry`): a run without pays one branch per departure.
    telemetry: Option<Box<[PortTelemetry]>>,
    /// How the ports write their records.
    int_format: IntFormat,
}

/// What an egress port reports in its telemetry records besides its queue.
#[derive(Clone, Copy, Debug)]
struct PortTelemetry {
    /// Bytes the port transmitted (every packet its queues sent; control frames leave
    /// outside the queues and are not counted).
    tx_bytes: u64,
    /// Bytes the port took into its queues.
    rx_bytes: u64,
    rate_bps: u64,
}

impl Switch {
    /// A switch whose ports transmit on `links` at `rates` (bits per second), configured
    /// by `cfg`; its flow control sees links of `rates` without delay arriving at its
    /// ports, and 1500 B packets (see `with_env`).
    pub fn new(cfg: &SwitchConfig, links: &[u32], rates: &[u64], ecmp_salt: u64, rng: Rng) -> Self {
        let env = FlowControlEnv {
            ingress_links: rates.iter().map(|&rate_bps| IngressLink { rate_bps, delay: 0 }).collect(),
            largest_packet: 1500,
            queues: cfg.queues as usize,
            seed: ecmp_salt,
        };
        Switch::with_env(cfg, links, rates, &env, ecmp_salt, rng)
    }

    /// As `new`, with the flow control built for `env` (the links arriving at the ports).
    pub fn with_env(
        cfg: &SwitchConfig,
        links: &[u32],
        rates: &[u64],
        env: &FlowControlEnv,
        ecmp_salt: u64,
        rng: Rng,
    ) -> Self {
        let queues = cfg.queues as usize;
        let ports_per_pool = cfg.ports_per_pool as usize;
        let pool_count = links.len().div_ceil(ports_per_pool).max(1);
        let reserve = Reserve { bytes: cfg.reserved.0, per: cfg.reserve_per };
        debug_assert_eq!(env.ingress_links.len(), links.len());
        let flow_control = cfg.flow_control.build(env);
        let pools: Vec<Pool> = (0..pool_count)
            .map(|p| {
                let ports = p * ports_per_pool..((p + 1) * ports_per_pool).min(links.len());
                let headroom = ports.clone().map(|port| flow_control.headroom_of_port(port)).sum();
                let reserved = reserve.total(ports.len(), queues);
                Pool::with_headroom(shared_size(cfg, reserved, headroom), reserved, headroom)
            })
            .collect();
        let ports = links
            .iter()
            .enumerate()
            .map(|(i, &link)| SwitchPort {
                link,
                pool: (i / ports_per_pool) as u32,
                active: ActiveSet::new(queues),
                bytes: 0,
                scheduler: cfg.scheduler.build(&SchedulerEnv { queues }),
            })
            .collect();
        debug_assert_eq!(links.len(), rates.len());
        let alpha_min = (0..queues).map(|q| cfg.alpha.get(q)).fold(f64::INFINITY, f64::min);
        // A per-queue rule is built for each port (its thresholds may scale with the
        // port's rate); a shared-buffer rule (at most one) for each pool.
        let mut queue_markers: Vec<AnyMarker> = Vec::new();
        let mut pool_markers: Vec<Option<AnyMarker>> = (0..pool_count).map(|_| None).collect();
        for (p, pool_marker) in pool_markers.iter_mut().enumerate() {
            let ports = p * ports_per_pool..((p + 1) * ports_per_pool).min(links.len());
            let mut env = PoolEnv {
                ports: ports.len(),
                max_rate_bps: rates[ports.clone()].iter().copied().max().unwrap_or(0),
                port_rate_bps: 0,
                pool_size: pools[p].size,
                reserved: cfg.reserved.0,
                alpha_min,
            };
            for rule in cfg.marking.rules() {
                if rule.scope() == MarkRule::SharedBuffer {
                    *pool_marker = Some(rule.build(&env));
                    continue;
                }
                for port in ports.clone() {
                    env.port_rate_bps = rates[port];
                    queue_markers.push(rule.build(&env));
                }
            }
        }
        debug_assert!(
            queue_markers.is_empty() || queue_markers.len() == links.len(),
            "validated: at most one per-queue marking rule"
        );
        let ecn = &cfg.ecn;
        let mut classify = Classifier::Scheme(cfg.classifier().build(&()));
        // The queues of each class: those its priorities join (priorities above the last
        // class are in it).
        let mut class_queues = [0u64; CLASSES];
        let steers = flow_control.steers_flows();
        let ingress_rates: Vec<u64> = env.ingress_links.iter().map(|l| l.rate_bps).collect();
        if steers {
            // A flow of any class may be steered to any queue: a class's pause holds all.
            class_queues = [u64::MAX >> (64 - queues.min(64)); CLASSES];
        } else if queues <= 64 {
            for priority in 0..=u8::MAX {
                class_queues[class_of(priority) as usize] |= classify.queues_of_priority(priority, queues);
            }
        }
        Switch {
            lossless: flow_control.lossless_classes(),
            pauses: PortPauses::new(&ingress_rates, class_queues),
            obeys_pauses: flow_control.obeys_pause_frames(),
            obeys_filters: flow_control.obeys_filter_frames(),
            steers,
            ingress: flow_control.reads_ingress_accounts().then(|| IngressAccounts::new(links.len())),
            ports,
            queues: (0..links.len() * queues).map(|_| PortQueue::new()).collect(),
            queues_per_port: queues,
            reserve,
            alphas: (0..queues).map(|q| cfg.alpha.get(q)).collect(),
            pools,
            ecmp_salt,
            balancer: cfg.load_balancing.build(&()),
            admission: cfg.admission.build(&()),
            flow_control,
            ports_per_pool,
            queue_markers,
            pool_markers,
            mark_at: ecn.at,
            ecn_scope: ecn.scope,
            non_ect: ecn.non_ect,
            classify,
            rng,
            telemetry: None,
            int_format: IntFormat::default(),
        }
    }

    /// Makes the ports count their transmitted bytes and stamp a record, written as
    /// `format` says, on each data packet that carries a telemetry stack
    /// (`stamp_departure`); `rates` are the ports' link rates, as given to `new`.
    pub fn keep_telemetry(&mut self, rates: &[u64], format: IntFormat) {
        self.int_format = format;
        debug_assert_eq!(rates.len(), self.ports.len());
        self.telemetry =
            Some(rates.iter().map(|&rate_bps| PortTelemetry { tx_bytes: 0, rx_bytes: 0, rate_bps }).collect());
    }

    /// Whether the ports keep telemetry (`keep_telemetry`).
    #[inline]
    pub fn keeps_telemetry(&self) -> bool {
        self.telemetry.is_some()
    }

    /// The departure of `pkt`, just taken from `port` by `transmit`, at `now`: with
    /// telemetry kept, a data packet carrying a stack gets the port's record (its queue
    /// without the packet, the bytes sent before it, the bytes queued until now, the
    /// time, the rate), and the port counts the packet's bytes. The reference stamps at
    /// the same point, its dequeue notification (ns3-datacenter 6ddb4a4,
    /// `switch-node.cc:264-274,366`).
    pub fn stamp_departure(&mut self, port: usize, pkt: &Packet, now: Ps, exts: &mut ExtStore) {
        let Some(telemetry) = &mut self.telemetry else { return };
        let counters = &mut telemetry[port];
        if let (Some(id), PacketKind::Data) = (pkt.ext, pkt.kind) {
            let Ext::Telemetry(stack) = exts.get_mut(id) else { unreachable!("data packets carry only telemetry") };
            stack.push(self.int_format.write(IntHop {
                queue_bytes: self.ports[port].bytes,
                tx_bytes: counters.tx_bytes,
                rx_bytes: counters.rx_bytes,
                timestamp: now,
                rate_bps: counters.rate_bps,
            }));
        }
        counters.tx_bytes += pkt.size as u64;
    }

    /// Replaces the classifier (a scheme not in the registry, say, in a benchmark).
    pub fn set_classifier(&mut self, classify: Box<dyn Classify>) {
        self.classify = Classifier::Custom(classify);
    }

    /// The queues of `port`, by index.
    #[inline]
    pub fn port_queues(&self, port: usize) -> &[PortQueue] {
        let first = port * self.queues_per_port;
        &self.queues[first..first + self.queues_per_port]
    }

    /// Appends a packet to queue `q` of `port`.
    #[inline]
    fn push(&mut self, port: usize, q: usize, pkt: Packet) {
        let queues_per_port = self.queues_per_port;
        let p = &mut self.ports[port];
        let queue = &mut self.queues[port * queues_per_port + q];
        if queue.packets.is_empty() {
            p.active.insert(q);
            p.scheduler.on_backlog(q);
        }
        queue.packets.push_back(pkt);
        p.bytes += pkt.size as u64;
    }

    /// Takes the head (`tail` false) or the tail packet of the non-empty queue `q` of
    /// `port`.
    #[inline]
    fn take(&mut self, port: usize, q: usize, tail: bool) -> Packet {
        let queues_per_port = self.queues_per_port;
        let p = &mut self.ports[port];
        let packets = &mut self.queues[port * queues_per_port + q].packets;
        let pkt = if tail { packets.pop_back() } else { packets.pop_front() }.expect("the queue is not empty");
        if packets.is_empty() {
            // Back to the start of the buffer (`clear` resets an empty deque's head), so
            // that a queue that keeps draining reuses its first, cached slots.
            packets.clear();
            p.active.remove(q);
            p.scheduler.on_empty(q);
        }
        p.bytes -= pkt.size as u64;
        pkt
    }

    /// What the per-queue rule measures for a packet of queue `q` of `port`.
    #[inline]
    fn marking_bytes(&self, port: usize, q: usize) -> u64 {
        match self.ecn_scope {
            EcnScope::Queue => self.queues[port * self.queues_per_port + q].bytes(),
            EcnScope::Port => self.ports[port].bytes,
        }
    }

    /// Runs the marking rules for a packet of `port`, seeing `queue_bytes` in its queue;
    /// true when any rule fires (each firing is counted by rule).
    #[inline]
    fn rules_fire(&mut self, queue_bytes: u64, port: usize, pool: usize, counters: &mut Counters) -> bool {
        let ctx = MarkContext { queue_bytes, pool_shared: self.pools[pool].shared_used };
        let rng = &mut self.rng;
        let mut fired = false;
        // A port's rule judges its queue, a pool's the pool (`MarkerFacts::scope`).
        if let Some(m) = self.queue_markers.get_mut(port) {
            if m.marks(&ctx, rng) {
                counters.marks_by_rule[MarkRule::Queue as usize] += 1;
                fired = true;
            }
        }
        if let Some(m) = &mut self.pool_markers[pool] {
            if m.marks(&ctx, rng) {
                counters.marks_by_rule[MarkRule::SharedBuffer as usize] += 1;
                fired = true;
            }
        }
        fired
    }

    #[inline]
    fn has_rules(&self, pool: usize) -> bool {
        !self.queue_markers.is_empty() || self.pool_markers[pool].is_some()
    }

    /// Marks an ECN-capable packet CE if a rule fires.
    #[inline]
    fn mark(&mut self, pkt: &mut Packet, queue_bytes: u64, port: usize, pool: usize, counters: &mut Counters) {
        if self.has_rules(pool) && self.rules_fire(queue_bytes, port, pool, counters) && !pkt.ce {
            pkt.ce = true;
            counters.ecn_marks += 1;
        }
    }

    /// Drops a packet of `pool`: counts it, network-wide and in the pool, and frees its
    /// side-table payload.
    fn drop_packet(&mut self, pool: usize, reason: DropReason, pkt: &Packet, cx: &mut Drops) {
        cx.counters.drop(reason, pkt);
        if self.lossless & (1 << class_of(pkt.priority)) != 0 {
            cx.counters.lossless_drops += 1;
        }
        cx.exts.release(pkt.ext);
        self.pools[pool].drops += 1;
    }

    /// The port among `hops` (two or more equal-cost next hops) that `pkt` leaves by, if
    /// the switch hashes flows onto them (ECMP, the default); otherwise None, and
    /// `next_hop` decides. ECMP is every packet's choice at every switch with several next
    /// hops in most runs, and reads nothing of the switch but its salt: it is kept apart
    /// so that it costs what it did before balancers could be chosen.
    #[inline(always)]
    pub fn hashed_next_hop(&self, hops: Hops, pkt: &Packet) -> Option<u16> {
        match self.balancer {
            AnyLoadBalancer::Ecmp(_) => Some(Ecmp::choose(hops, pkt, self.ecmp_salt)),
            _ => None,
        }
    }

    /// The port among `hops` (two or more equal-cost next hops) that `pkt` leaves by.
    #[inline(never)]
    pub fn next_hop(&mut self, hops: Hops, pkt: &Packet, now: Ps) -> u16 {
        let ports = &self.ports;
        let queued = |port: u16| ports[port as usize].bytes;
        self.balancer.pick(hops, pkt, now, &Egress::new(self.ecmp_salt, &queued))
    }

    /// Offers `pkt`, which arrived on port `ingress`, to egress `port`. Returns whether it
    /// was buffered; on refusal the packet is dropped and counted. The flow control may
    /// ask for frames (a PAUSE upstream) through `effects`.
    pub fn receive(
        &mut self,
        ingress: usize,
        port: usize,
        mut pkt: Packet,
        now: Ps,
        cx: &mut Drops,
        effects: &mut Effects,
    ) -> bool {
        debug_assert!(ingress <= u16::MAX as usize, "port indices are 16 bits");
        pkt.ingress = ingress as u16;
        cx.counters.switch_arrivals += 1;
        let q =
            if self.steers { self.steer(ingress, port, &pkt) } else { self.classify.queue(&pkt, self.queues_per_port) };
        let pool = self.ports[port].pool as usize;
        let size = pkt.size as u64;
        let lossless = self.lossless & (1 << class_of(pkt.priority)) != 0;
        if lossless && !self.admit_lossless(ingress, port, q, &pkt, cx) {
            return false;
        }
        let pool_ports = pool * self.ports_per_pool..((pool + 1) * self.ports_per_pool).min(self.ports.len());
        // Lossless packets were admitted above, by the flow control.
        if !lossless {
            loop {
                let ctx = AdmitContext {
                    queues: &self.queues,
                    queues_per_port: self.queues_per_port,
                    reserve: self.reserve,
                    port_bytes: self.ports[port].bytes,
                    alphas: &self.alphas,
                    pool_ports: pool_ports.clone(),
                    pool: &self.pools[pool],
                    port,
                    queue: q,
                    size,
                };
                match self.admission.admit(&ctx) {
                    Verdict::Admit => break,
                    Verdict::Drop(reason) => {
                        self.drop_packet(pool, reason, &pkt, cx);
                        return false;
                    }
                    Verdict::Evict { port: victim_port, queue: victim_queue } => {
                        if self.lossless != 0 && self.tail_is_lossless(victim_port, victim_queue) {
                            // Lossless packets are never pushed out: the arrival gives way.
                            self.drop_packet(pool, DropReason::PoolFull, &pkt, cx);
                            return false;
                        }
                        let port_bytes = self.ports[victim_port].bytes;
                        let victim = self.take(victim_port, victim_queue, true);
                        let vq = &mut self.queues[victim_port * self.queues_per_port + victim_queue];
                        release(vq, port_bytes, self.reserve, &mut self.pools[pool], victim.size as u64, now);
                        if let Some(ingress) = &mut self.ingress {
                            ingress.release(Charge::of(&victim));
                        }
                        self.drop_packet(pool, DropReason::Pushout, &victim, cx);
                    }
                }
            }
        }
        let ahead = self.marking_bytes(port, q);
        if !pkt.ect {
            // WRED drops are admission decisions: judged on arrival, never at dequeue.
            // Lossless packets are not WRED's to drop.
            if !lossless
                && self.non_ect == NonEct::Drop
                && self.has_rules(pool)
                && self.rules_fire(ahead, port, pool, cx.counters)
            {
                self.drop_packet(pool, DropReason::MarkingDrop, &pkt, cx);
                return false;
            }
        } else if self.mark_at == MarkPoint::Enqueue {
            self.mark(&mut pkt, ahead, port, pool, cx.counters);
        }
        let queue = &mut self.queues[port * self.queues_per_port + q];
        charge(queue, self.ports[port].bytes, self.reserve, &mut self.pools[pool], size, now);
        if let Some(accounts) = &mut self.ingress {
            accounts.charge(Charge::of(&pkt));
        }
        self.push(port, q, pkt);
        if self.steers {
            self.follow(port, q, &pkt, true, now, effects);
        }
        if let Some(telemetry) = &mut self.telemetry {
            telemetry[port].rx_bytes += size;
        }
        if lossless {
            self.tell_flow_control(Charge::of(&pkt), true, now, effects);
        }
        true
    }

    fn pool_state(&self, index: usize) -> PoolState {
        let pool = &self.pools[index];
        PoolState { index, size: pool.size, shared_used: pool.shared_used }
    }

    /// Tells the flow control that a lossless packet of `charge` entered (`enqueued`) or
    /// left the buffer. Kept out of line: a lossy switch never calls it.
    #[inline(never)]
    fn tell_flow_control(&mut self, charge: Charge, enqueued: bool, now: Ps, effects: &mut Effects) {
        let ingress = charge.ingress as usize;
        let mut cx = IngressCx {
            now,
            effects,
            ingress: self.ingress.as_ref().expect("lossless flow control keeps ingress accounts"),
            ingress_pool: self.pool_state(self.ports[ingress].pool as usize),
        };
        if enqueued {
            self.flow_control.on_enqueue(charge, &mut cx);
        } else {
            self.flow_control.on_dequeue(charge, &mut cx);
        }
    }

    /// The flow control's verdict on the lossless `pkt` from `ingress` for queue `q` of
    /// `port`: true when admitted; otherwise the packet is dropped and counted.
    #[inline(never)]
    fn admit_lossless(&mut self, ingress: usize, port: usize, q: usize, pkt: &Packet, cx: &mut Drops) -> bool {
        let pool = self.ports[port].pool as usize;
        let size = pkt.size as u64;
        let egress_pool = &self.pools[pool];
        let arrival = LosslessArrival {
            ingress,
            class: class_of(pkt.priority) as usize,
            size,
            ingress_bytes: self.ingress.as_ref().map_or(0, |a| a.bytes(ingress, class_of(pkt.priority) as usize)),
            ingress_pool: self.pool_state(self.ports[ingress].pool as usize),
            shared_needed: self
                .reserve
                .account(self.queues[port * self.queues_per_port + q].bytes(), self.ports[port].bytes, 1.0)
                .shared_needed(size),
            egress_pool_free: egress_pool.free(),
            egress_pool_free_with_headroom: egress_pool.free_with_headroom(),
        };
        match self.flow_control.admit(&arrival) {
            Verdict::Admit => true,
            Verdict::Drop(reason) => {
                self.drop_packet(pool, reason, pkt, cx);
                false
            }
            Verdict::Evict { .. } => unreachable!("flow control never evicts"),
        }
    }

    /// Whether the tail packet of queue `q` of `port` is of a lossless class.
    fn tail_is_lossless(&self, port: usize, q: usize) -> bool {
        let tail = self.port_queues(port)[q].packets.back().expect("a victim queue is not empty");
        self.lossless & (1 << class_of(tail.priority)) != 0
    }

    /// Takes the next packet to transmit on `port`, if any, from a queue that is not
    /// paused. The flow control may ask for frames (a RESUME upstream) through `effects`.
    pub fn transmit(&mut self, port: usize, now: Ps, counters: &mut Counters, effects: &mut Effects) -> Option<Packet> {
        let p = &mut self.ports[port];
        let first = port * self.queues_per_port;
        let queues = &self.queues[first..first + self.queues_per_port];
        let q = match self.pauses.held_queues(port) {
            0 => p.scheduler.pick(queues, &p.active)?,
            held => p.scheduler.pick(queues, &p.active.without(held))?,
        };
        let (pool, port_bytes) = (p.pool as usize, p.bytes);
        let mut pkt = self.take(port, q, false);
        release(&mut self.queues[first + q], port_bytes, self.reserve, &mut self.pools[pool], pkt.size as u64, now);
        if let Some(ingress) = &mut self.ingress {
            ingress.release(Charge::of(&pkt));
        }
        if self.lossless & (1 << class_of(pkt.priority)) != 0 {
            self.tell_flow_control(Charge::of(&pkt), false, now, effects);
        }
        if self.steers {
            self.follow(port, q, &pkt, false, now, effects);
        }
        if pkt.ect && self.mark_at == MarkPoint::Dequeue {
            let behind = self.marking_bytes(port, q);
            self.mark(&mut pkt, behind, port, pool, counters);
        }
        Some(pkt)
    }

    /// The queue the flow control steers `pkt`, from `ingress`, to on `port`.
    #[inline(never)]
    fn steer(&mut self, ingress: usize, port: usize, pkt: &Packet) -> usize {
        let view = port_view(&self.queues, &self.ports, &self.pauses, port, self.queues_per_port);
        self.flow_control.assign_queue(pkt, ingress, &view)
    }

    /// Tells the flow control that `pkt` entered (`arrived`) or left queue `q` of `port`,
    /// and holds or releases the queue by its (possibly new) head.
    #[inline(never)]
    fn follow(&mut self, port: usize, q: usize, pkt: &Packet, arrived: bool, now: Ps, effects: &mut Effects) {
        let first = port * self.queues_per_port;
        let view = port_view(&self.queues, &self.ports, &self.pauses, port, self.queues_per_port);
        let mut cx = StepCx { now, effects };
        if arrived {
            self.flow_control.on_buffered(pkt, q, &view, &mut cx);
            if self.queues[first + q].packets.len() == 1 {
                self.check_head(port, q);
            }
        } else {
            self.flow_control.on_sent(pkt, q, &view, &mut cx);
            self.check_head(port, q);
        }
    }

    /// Holds queue `q` of `port` while the flow control holds its head packet; returns
    /// whether that released it.
    fn check_head(&mut self, port: usize, q: usize) -> bool {
        let held = match self.queues[port * self.queues_per_port + q].packets.front() {
            Some(head) => self.flow_control.holds_head(q, head, self.pauses.gate(port)),
            None => false,
        };
        self.pauses.set_head_held(port, q, held)
    }

    /// A control frame from the neighbour on `port` arrived. If its flow control obeys
    /// pause frames, the port obeys one (`PauseGate`), recording it; a timed PAUSE asks
    /// for a timer at its end, and a RESUME that ends a pause starts the port's link. If
    /// its flow control reads filter frames, one replaces the port's filter of paused
    /// flows. Under a scheme that steers flows, every queue of the port is then judged
    /// again by its head, and the port started if one was released.
    pub fn on_frame(&mut self, port: usize, frame: &Packet, now: Ps, effects: &mut Effects, exts: &mut ExtStore) {
        if let (Some((class, pause)), true) = (read_pause_frame(frame), self.obeys_pauses) {
            let obeyed = self.pauses.obey(port, class, pause, now);
            let port16 = port as u16;
            effects.push(Effect::PauseReceived { port: port16, class: obeyed.class, paused: pause.pauses() });
            if let Some(at) = obeyed.expires_at {
                effects
                    .push(Effect::Timer { at, token: GATE_EXPIRY | ((port * CLASSES) as u32 + obeyed.class as u32) });
            }
            if obeyed.changed && !pause.pauses() {
                effects.push(Effect::Kick { port: port16 });
            }
        } else if is_filter_frame(frame) && self.obeys_filters {
            self.pauses.set_filter(port, exts.filter(frame.ext).expect("a filter frame carries its filter"));
        }
        if self.steers {
            let mut released = false;
            for q in 0..self.queues_per_port {
                released |= self.check_head(port, q);
            }
            if released {
                effects.push(Effect::Kick { port: port as u16 });
            }
        }
    }

    /// The link of `port` went down at `now`: the pauses its neighbour sent end, and
    /// the port sends what it holds (into a link that loses it, until routing moves
    /// traffic away).
    pub fn on_link_down(&mut self, port: usize, now: Ps, effects: &mut Effects) {
        let mut released = self.pauses.clear(port, now);
        if self.steers {
            for q in 0..self.queues_per_port {
                released |= self.check_head(port, q);
            }
        }
        if released {
            effects.push(Effect::Kick { port: port as u16 });
        }
    }

    /// A timer that this switch asked for fired: the end of a timed pause
    /// (`GATE_EXPIRY`), which resumes its class as a RESUME would (but no frame arrived,
    /// so none is recorded), unless a later frame re-armed or ended it; or one of its
    /// flow control's.
    pub fn on_timer(&mut self, token: u32, now: Ps, effects: &mut Effects, exts: &mut ExtStore) {
        if token & GATE_EXPIRY != 0 {
            let slot = (token & !GATE_EXPIRY) as usize;
            let (port, class) = (slot / CLASSES, slot % CLASSES);
            if let Some(changed) = self.pauses.expire(port, class, now) {
                effects.push(Effect::PauseExpired { port: port as u16, class: class as u8 });
                if changed {
                    effects.push(Effect::Kick { port: port as u16 });
                }
            }
            return;
        }
        let switch_ports = &self.ports;
        let active = |port: usize| switch_ports[port].active.mask();
        let ports = Ports { queues: &self.queues, queues_per_port: self.queues_per_port, active: &active };
        self.flow_control.on_timer(token, &mut FlowCx { now, effects, pauses: &mut self.pauses, exts, ports });
    }

    /// Whether any queue of `port` that is not paused holds a packet.
    #[inline]
    pub fn has_queued(&self, port: usize) -> bool {
        self.ports[port].active.any_outside(self.pauses.held_queues(port))
    }

    /// Which egress queues the neighbours' pauses hold.
    pub fn pauses(&self) -> &PortPauses {
        &self.pauses
    }

    /// Bit c set: class c is lossless here.
    pub fn lossless_classes(&self) -> u8 {
        self.lossless
    }

    /// The switch's flow control.
    pub fn flow_control(&self) -> &AnyFlowControl {
        &self.flow_control
    }

    /// The packets waiting in all queues.
    pub fn queued(&self) -> impl Iterator<Item = &Packet> {
        self.queues.iter().flat_map(|q| &q.packets)
    }

    /// The packets waiting in all queues, to change what is not the switch's (their side
    /// table handles, when they move to another table).
    pub fn queued_mut(&mut self) -> impl Iterator<Item = &mut Packet> {
        self.queues.iter_mut().flat_map(|q| q.packets.iter_mut())
    }

    /// Packets waiting in all queues.
    pub fn queued_packets(&self) -> usize {
        self.queues.iter().map(|q| q.packets.len()).sum()
    }

    /// Checks the buffer accounting; returns a description of each violation.
    pub fn check_accounting(&self, id: usize) -> Vec<String> {
        let mut errors = Vec::new();
        for (pi, pool) in self.pools.iter().enumerate() {
            let mut shared = 0;
            let mut total = 0;
            for port in (0..self.ports.len()).filter(|&p| self.ports[p].pool as usize == pi) {
                let held: Vec<u64> =
                    self.port_queues(port).iter().map(|q| q.packets.iter().map(|p| p.size as u64).sum()).collect();
                for (q, &bytes) in self.port_queues(port).iter().zip(&held) {
                    if bytes != q.bytes() {
                        errors.push(format!("switch {id}: queue holds {bytes} B but accounts {} B", q.bytes()));
                    }
                }
                shared += self.reserve.shared_of_port(held.iter().copied());
                total += held.iter().sum::<u64>();
            }
            if shared != pool.shared_used
                || total != pool.occupancy.value()
                || pool.shared_used > pool.size + pool.headroom
            {
                errors.push(format!(
                    "switch {id} pool {pi}: shared {} B (queues say {shared}), total {} B (queues say {total}), size {} + headroom {}",
                    pool.shared_used,
                    pool.occupancy.value(),
                    pool.size,
                    pool.headroom
                ));
            }
        }
        for (pi, port) in self.ports.iter().enumerate() {
            let queues = self.port_queues(pi);
            let bytes: u64 = queues.iter().map(PortQueue::bytes).sum();
            let active = (0..queues.len()).all(|q| port.active.contains(q) != queues[q].packets.is_empty());
            if bytes != port.bytes || !active {
                errors.push(format!(
                    "switch {id} port {pi}: queues hold {bytes} B, port accounts {} B; active set {}",
                    port.bytes,
                    if active { "right" } else { "wrong" }
                ));
            }
        }
        let mut by_ingress = IngressAccounts::new(self.ports.len());
        for pkt in self.queued() {
            by_ingress.charge(Charge::of(pkt));
        }
        if self.ingress.as_ref().is_some_and(|kept| *kept != by_ingress) {
            errors.push(format!("switch {id}: ingress accounts differ from the charges of the queued packets"));
        }
        self.flow_control.check_accounting(id, self.ingress.as_ref(), &mut errors);
        errors
    }
}

#[cfg(test)]
mod layout {
    /// A queue fills one cache line, and so does a port.
    #[test]
    fn a_queue_and_a_port_are_one_cache_line_each() {
        assert_eq!(std::mem::size_of::<super::PortQueue>(), 64);
        assert_eq!(std::mem::size_of::<super::SwitchPort>(), 64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::stream;
    use crate::units::Bytes;

    /// Kept ingress accounts follow every admission, departure and pushout.
    #[test]
    fn kept_ingress_accounts_follow_the_buffer() {
        let cfg = SwitchConfig {
            pool_size: Bytes(20_000),
            reserved: Bytes(0),
            admission: admission::AdmissionConfig::of_kind("lqd").unwrap(),
            ..SwitchConfig::default()
        };
        let ports = 4;
        let links: Vec<u32> = (0..ports as u32).collect();
        let mut sw = Switch::new(&cfg, &links, &vec![10_000_000_000; ports], 0, stream(1, "test", 0));
        assert!(sw.ingress.is_none(), "lossy switches keep no ingress accounts");
        sw.ingress = Some(IngressAccounts::new(ports));
        let mut counters = Counters::default();
        let mut exts = ExtStore::default();
        for step in 0..2_000u64 {
            let (ingress, egress) = ((step % 3) as usize, (step % 4) as usize);
            let pkt = Packet { size: 500 + (step % 7) as u32 * 100, ..Packet::template(0, 0, 0, (step % 2) as u8) };
            let mut drops = Drops { counters: &mut counters, exts: &mut exts };
            sw.receive(ingress, egress, pkt, step, &mut drops, &mut Effects::new());
            if step % 3 == 0 {
                sw.transmit((step / 3 % 4) as usize, step, &mut counters, &mut Effects::new());
            }
            assert!(sw.check_accounting(0).is_empty(), "{:?}", sw.check_accounting(0));
        }
        assert!(counters.dropped[DropReason::Pushout as usize] > 0, "the test needs pushouts");
        let kept = sw.ingress.as_ref().unwrap();
        let buffered: u64 =
            (0..ports).flat_map(|p| (0..mmu::CLASSES).map(move |c| (p, c))).map(|(p, c)| kept.bytes(p, c)).sum();
        assert_eq!(buffered, (0..ports).map(|p| sw.ports[p].bytes).sum::<u64>());
    }

    /// Two hand-driven switches in a row: each data packet that carries a stack gets, at
    /// its departure, the port's queue without it, the bytes the port sent before it (any
    /// packet's), the time and the port's rate; ACKs (even with an echoed stack) and
    /// packets without a stack get nothing, but count in the port's bytes.
    #[test]
    fn a_departure_stamps_the_ports_record_on_data_packets_with_a_stack() {
        use crate::net::{Ext, IntHop, PacketKind};
        let (g100, g40) = (100_000_000_000, 40_000_000_000);
        let mut counters = Counters::default();
        let mut exts = ExtStore::default();
        let stacked = |kind, size, exts: &mut ExtStore| Packet {
            kind,
            size,
            ext: Some(exts.insert(Ext::Telemetry(Default::default()))),
            ..Packet::template(0, 0, 0, 0)
        };
        let d1 = stacked(PacketKind::Data, 1000, &mut exts);
        let ack = stacked(PacketKind::Ack, 76, &mut exts);
        let d2 = stacked(PacketKind::Data, 500, &mut exts);
        let d3 = Packet { size: 300, ..Packet::template(0, 0, 0, 0) };
        let filler = Packet { size: 200, ..Packet::template(0, 0, 0, 0) };
        let switch = |rates: &[u64]| {
            let links: Vec<u32> = (0..rates.len() as u32).collect();
            let mut sw = Switch::new(&SwitchConfig::default(), &links, rates, 0, stream(1, "test", 0));
            sw.keep_telemetry(rates, IntFormat::default());
            sw
        };
        let (mut a, mut b) = (switch(&[g100, g40]), switch(&[g100, g100]));
        let hop = |queue_bytes, tx_bytes, rx_bytes, timestamp, rate_bps| IntHop {
            queue_bytes,
            tx_bytes,
            rx_bytes,
            timestamp,
            rate_bps,
        };
        let stack = |exts: &ExtStore, pkt: &Packet| exts.telemetry(pkt.ext).unwrap().to_vec();

        for pkt in [d1, ack, d2, d3] {
            let mut drops = Drops { counters: &mut counters, exts: &mut exts };
            assert!(a.receive(0, 1, pkt, 0, &mut drops, &mut Effects::new()));
        }
        let mut left_a = Vec::new();
        for now in [10, 20, 30, 40] {
            let pkt = a.transmit(1, now, &mut counters, &mut Effects::new()).unwrap();
            a.stamp_departure(1, &pkt, now, &mut exts);
            left_a.push(pkt);
        }
        assert_eq!(stack(&exts, &left_a[0]), [hop(876, 0, 1876, 10, g40)]);
        assert_eq!(stack(&exts, &left_a[1]), [], "an ACK is not stamped");
        assert_eq!(stack(&exts, &left_a[2]), [hop(300, 1076, 1876, 30, g40)]);
        assert!(left_a[3].ext.is_none());

        for pkt in [filler, left_a[0], left_a[2]] {
            let mut drops = Drops { counters: &mut counters, exts: &mut exts };
            assert!(b.receive(1, 0, pkt, 45, &mut drops, &mut Effects::new()));
        }
        for now in [50, 60, 70] {
            let pkt = b.transmit(0, now, &mut counters, &mut Effects::new()).unwrap();
            b.stamp_departure(0, &pkt, now, &mut exts);
        }
        assert_eq!(stack(&exts, &left_a[0]), [hop(876, 0, 1876, 10, g40), hop(500, 200, 1700, 60, g100)]);
        assert_eq!(stack(&exts, &left_a[2]), [hop(300, 1076, 1876, 30, g40), hop(0, 1200, 1700, 70, g100)]);
    }
}

/// Port `port` as a scheme that steers flows sees it: its queues are `queues[first ..
/// first + queues_per_port]`.
fn port_view<'a>(
    queues: &'a [PortQueue],
    ports: &[SwitchPort],
    pauses: &PortPauses,
    port: usize,
    queues_per_port: usize,
) -> PortView<'a> {
    PortView::of(port, queues, queues_per_port, ports[port].active.mask(), pauses)
}

/// The shared bytes of a pool whose queues reserve `reserved` bytes and whose ports keep
/// `headroom` bytes of headroom: `switch.buffer` less both, when set; else
/// `switch.pool_size`.
pub fn shared_size(cfg: &SwitchConfig, reserved: u64, headroom: u64) -> u64 {
    cfg.buffer.map_or(cfg.pool_size.0, |buffer| buffer.0.saturating_sub(reserved + headroom))
}
