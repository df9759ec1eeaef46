//! An output-queued, shared-memory switch. Its decision points are narrow traits:
//! admission (`mmu::Admission`), marking (`marking::Marker`) and scheduling
//! (`scheduler::Scheduler`); the switch itself only moves packets between them.

pub mod active_set;
pub mod admission;
pub mod classify;
pub mod flow_control;
pub mod marking;
pub mod mmu;
pub mod scheduler;

use crate::net::{Effects, ExtStore, Packet};
use crate::scenario::{EcnScope, MarkPoint, NonEct, SwitchConfig};
use crate::sim::{Ps, Rng};
use crate::stats::{Counters, DropReason, TimeWeighted};
use active_set::ActiveSet;
use admission::{Admission, AdmitContext, AnyAdmission, Verdict};
use classify::Classify;
use flow_control::{AnyFlowControl, FlowControl, FlowCx};
use marking::{AnyMarker, MarkContext, MarkRule, Marker, PoolEnv};
use mmu::{charge, release, Charge, IngressAccounts, Pool, QueueAccount};
use scheduler::{AnyScheduler, Scheduler, SchedulerEnv};
use std::collections::VecDeque;

/// What a switch touches when it drops a packet: the counters, and the side table that
/// holds the packet's payload.
pub struct Drops<'a> {
    pub counters: &'a mut Counters,
    pub exts: &'a mut ExtStore,
}

/// One egress queue of a port.
pub struct PortQueue {
    pub packets: VecDeque<Packet>,
    pub account: QueueAccount,
    pub occupancy: TimeWeighted,
}

/// An egress port: its queues, its scheduler and the link it transmits on.
///
/// Invariants: `active` holds exactly the non-empty queues, and `bytes` is the sum of the
/// queues' `account.bytes`.
pub struct SwitchPort {
    pub link: u32,
    pub pool: usize,
    pub queues: Vec<PortQueue>,
    active: ActiveSet,
    bytes: u64,
    scheduler: AnyScheduler,
}

impl SwitchPort {
    /// Appends a packet to queue `q`.
    #[inline]
    fn push(&mut self, q: usize, pkt: Packet) {
        let queue = &mut self.queues[q];
        if queue.packets.is_empty() {
            self.active.insert(q);
            self.scheduler.on_backlog(q);
        }
        queue.packets.push_back(pkt);
        self.bytes += pkt.size as u64;
    }

    /// Takes the head (`tail` false) or the tail packet of the non-empty queue `q`.
    #[inline]
    fn take(&mut self, q: usize, tail: bool) -> Packet {
        let packets = &mut self.queues[q].packets;
        let pkt = if tail { packets.pop_back() } else { packets.pop_front() }.expect("the queue is not empty");
        if packets.is_empty() {
            self.active.remove(q);
            self.scheduler.on_empty(q);
        }
        self.bytes -= pkt.size as u64;
        pkt
    }
}

pub struct Switch {
    pub ports: Vec<SwitchPort>,
    pub pools: Vec<Pool>,
    /// Bytes buffered by ingress port and traffic class.
    pub ingress: IngressAccounts,
    /// Salt of this switch's ECMP hash.
    pub ecmp_salt: u64,
    admission: AnyAdmission,
    flow_control: AnyFlowControl,
    ports_per_pool: usize,
    /// Per-queue rules, shared for every queue.
    markers: Vec<AnyMarker>,
    /// Shared-buffer rule of each pool, if any.
    pool_markers: Vec<Option<AnyMarker>>,
    mark_at: MarkPoint,
    ecn_scope: EcnScope,
    non_ect: NonEct,
    classify: Box<dyn Classify>,
    rng: Rng,
}

impl Switch {
    /// A switch whose ports transmit on `links` at `rates` (bits per second), configured
    /// by `cfg`.
    pub fn new(cfg: &SwitchConfig, links: &[u32], rates: &[u64], ecmp_salt: u64, rng: Rng) -> Self {
        let queues = cfg.queues as usize;
        let ports_per_pool = cfg.ports_per_pool as usize;
        let pool_count = links.len().div_ceil(ports_per_pool).max(1);
        let pools = (0..pool_count)
            .map(|p| {
                let ports_here = ports_per_pool.min(links.len() - p * ports_per_pool);
                Pool::new(cfg.pool_size.0, cfg.reserved.0 * (ports_here * queues) as u64)
            })
            .collect();
        let ports = links
            .iter()
            .enumerate()
            .map(|(i, &link)| SwitchPort {
                link,
                pool: i / ports_per_pool,
                active: ActiveSet::new(queues),
                bytes: 0,
                queues: (0..queues)
                    .map(|q| PortQueue {
                        packets: VecDeque::new(),
                        account: QueueAccount { bytes: 0, reserved: cfg.reserved.0, alpha: cfg.alpha.get(q) },
                        occupancy: TimeWeighted::default(),
                    })
                    .collect(),
                scheduler: cfg.scheduler.build(&SchedulerEnv { queues }),
            })
            .collect();
        debug_assert_eq!(links.len(), rates.len());
        let alpha_min = (0..queues).map(|q| cfg.alpha.get(q)).fold(f64::INFINITY, f64::min);
        // Every rule is built for each pool: per-queue rules ignore the pool and are kept
        // once; the shared-buffer rule (at most one) is kept per pool.
        let mut markers: Vec<AnyMarker> = Vec::new();
        let mut pool_markers: Vec<Option<AnyMarker>> = (0..pool_count).map(|_| None).collect();
        for (p, pool_marker) in pool_markers.iter_mut().enumerate() {
            let ports = p * ports_per_pool..((p + 1) * ports_per_pool).min(links.len());
            let env = PoolEnv {
                ports: ports.len(),
                max_rate_bps: rates[ports].iter().copied().max().unwrap_or(0),
                pool_size: cfg.pool_size.0,
                reserved: cfg.reserved.0,
                alpha_min,
            };
            for rule in cfg.marking.rules() {
                let marker = rule.build(&env);
                match marker.rule() {
                    MarkRule::SharedBuffer => *pool_marker = Some(marker),
                    _ if p == 0 => markers.push(marker),
                    _ => {}
                }
            }
        }
        let ecn = &cfg.ecn;
        Switch {
            ingress: IngressAccounts::new(links.len()),
            ports,
            pools,
            ecmp_salt,
            admission: cfg.admission.build(&()),
            flow_control: cfg.flow_control.build(&()),
            ports_per_pool,
            markers,
            pool_markers,
            mark_at: ecn.at,
            ecn_scope: ecn.scope,
            non_ect: ecn.non_ect,
            classify: Box::new(cfg.classifier().build(&())),
            rng,
        }
    }

    /// Replaces the classifier (a scheme not in the registry, say, in a benchmark).
    pub fn set_classifier(&mut self, classify: Box<dyn Classify>) {
        self.classify = classify;
    }

    /// What the per-queue rule measures for a packet of queue `q` of `port`.
    #[inline]
    fn marking_bytes(&self, port: usize, q: usize) -> u64 {
        let port = &self.ports[port];
        match self.ecn_scope {
            EcnScope::Queue => port.queues[q].account.bytes,
            EcnScope::Port => port.bytes,
        }
    }

    /// Runs the marking rules for `pkt`, seeing `queue_bytes` in its queue; true when
    /// any rule fires (each firing is counted by rule).
    #[inline]
    fn rules_fire(&mut self, queue_bytes: u64, pool: usize, counters: &mut Counters) -> bool {
        let ctx = MarkContext { queue_bytes, pool_shared: self.pools[pool].shared_used };
        let rng = &mut self.rng;
        let mut fired = false;
        for m in self.markers.iter_mut().chain(self.pool_markers[pool].iter_mut()) {
            if m.marks(&ctx, rng) {
                counters.marks_by_rule[m.rule() as usize] += 1;
                fired = true;
            }
        }
        fired
    }

    #[inline]
    fn has_rules(&self, pool: usize) -> bool {
        !self.markers.is_empty() || self.pool_markers[pool].is_some()
    }

    /// Marks an ECN-capable packet CE if a rule fires.
    #[inline]
    fn mark(&mut self, pkt: &mut Packet, queue_bytes: u64, pool: usize, counters: &mut Counters) {
        if self.has_rules(pool) && self.rules_fire(queue_bytes, pool, counters) && !pkt.ce {
            pkt.ce = true;
            counters.ecn_marks += 1;
        }
    }

    /// Drops a packet of `pool`: counts it, network-wide and in the pool, and frees its
    /// side-table payload.
    fn drop_packet(&mut self, pool: usize, reason: DropReason, pkt: &Packet, cx: &mut Drops) {
        cx.counters.drop(reason, pkt.size as u64);
        cx.exts.release(pkt.ext);
        self.pools[pool].drops += 1;
    }

    /// Offers `pkt`, which arrived on port `ingress`, to egress `port`. Returns whether it
    /// was buffered; on refusal the packet is dropped and counted.
    pub fn receive(&mut self, ingress: usize, port: usize, mut pkt: Packet, now: Ps, cx: &mut Drops) -> bool {
        debug_assert!(ingress <= u16::MAX as usize, "port indices are 16 bits");
        pkt.ingress = ingress as u16;
        cx.counters.switch_arrivals += 1;
        let q = self.classify.queue(&pkt, self.ports[port].queues.len());
        let pool = self.ports[port].pool;
        let size = pkt.size as u64;
        let pool_ports = pool * self.ports_per_pool..((pool + 1) * self.ports_per_pool).min(self.ports.len());
        loop {
            let ctx = AdmitContext {
                ports: &self.ports,
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
                    let victim = self.ports[victim_port].take(victim_queue, true);
                    let vq = &mut self.ports[victim_port].queues[victim_queue];
                    release(&mut vq.account, &mut self.pools[pool], victim.size as u64, now);
                    vq.occupancy.set(now, vq.account.bytes);
                    self.ingress.release(Charge::of(&victim));
                    self.drop_packet(pool, DropReason::Pushout, &victim, cx);
                }
            }
        }
        let ahead = self.marking_bytes(port, q);
        if !pkt.ect {
            // WRED drops are admission decisions: judged on arrival, never at dequeue.
            if self.non_ect == NonEct::Drop && self.has_rules(pool) && self.rules_fire(ahead, pool, cx.counters) {
                self.drop_packet(pool, DropReason::MarkingDrop, &pkt, cx);
                return false;
            }
        } else if self.mark_at == MarkPoint::Enqueue {
            self.mark(&mut pkt, ahead, pool, cx.counters);
        }
        let queue = &mut self.ports[port].queues[q];
        charge(&mut queue.account, &mut self.pools[pool], size, now);
        queue.occupancy.set(now, queue.account.bytes);
        self.ingress.charge(Charge::of(&pkt));
        self.ports[port].push(q, pkt);
        true
    }

    /// Takes the next packet to transmit on `port`, if any.
    pub fn transmit(&mut self, port: usize, now: Ps, counters: &mut Counters) -> Option<Packet> {
        let p = &mut self.ports[port];
        let q = p.scheduler.pick(&p.queues, &p.active)?;
        let pool = p.pool;
        let mut pkt = p.take(q, false);
        let queue = &mut p.queues[q];
        release(&mut queue.account, &mut self.pools[pool], pkt.size as u64, now);
        queue.occupancy.set(now, queue.account.bytes);
        self.ingress.release(Charge::of(&pkt));
        if pkt.ect && self.mark_at == MarkPoint::Dequeue {
            let behind = self.marking_bytes(port, q);
            self.mark(&mut pkt, behind, pool, counters);
        }
        Some(pkt)
    }

    /// A control frame arrived on `port`.
    pub fn on_frame(&mut self, port: usize, frame: &Packet, now: Ps, effects: &mut Effects) {
        self.flow_control.on_frame(port, frame, &mut FlowCx { now, effects });
    }

    /// A timer that this switch's flow control asked for fired.
    pub fn on_timer(&mut self, token: u32, now: Ps, effects: &mut Effects) {
        self.flow_control.on_timer(token, &mut FlowCx { now, effects });
    }

    /// Whether any queue of `port` holds a packet.
    #[inline]
    pub fn has_queued(&self, port: usize) -> bool {
        !self.ports[port].active.is_empty()
    }

    /// The packets waiting in all queues.
    pub fn queued(&self) -> impl Iterator<Item = &Packet> {
        self.ports.iter().flat_map(|p| &p.queues).flat_map(|q| &q.packets)
    }

    /// Packets waiting in all queues.
    pub fn queued_packets(&self) -> usize {
        self.ports.iter().flat_map(|p| p.queues.iter()).map(|q| q.packets.len()).sum()
    }

    /// Checks the buffer accounting; returns a description of each violation.
    pub fn check_accounting(&self, id: usize) -> Vec<String> {
        let mut errors = Vec::new();
        for (pi, pool) in self.pools.iter().enumerate() {
            let mut shared = 0;
            let mut total = 0;
            for port in self.ports.iter().filter(|p| p.pool == pi) {
                for q in &port.queues {
                    let bytes: u64 = q.packets.iter().map(|p| p.size as u64).sum();
                    if bytes != q.account.bytes {
                        errors.push(format!("switch {id}: queue holds {bytes} B but accounts {} B", q.account.bytes));
                    }
                    shared += q.account.shared();
                    total += q.account.bytes;
                }
            }
            if shared != pool.shared_used || total != pool.occupancy.value() || pool.shared_used > pool.size {
                errors.push(format!(
                    "switch {id} pool {pi}: shared {} B (queues say {shared}), total {} B (queues say {total}), size {}",
                    pool.shared_used,
                    pool.occupancy.value(),
                    pool.size
                ));
            }
        }
        for (pi, port) in self.ports.iter().enumerate() {
            let bytes: u64 = port.queues.iter().map(|q| q.account.bytes).sum();
            let active = (0..port.queues.len()).all(|q| port.active.contains(q) != port.queues[q].packets.is_empty());
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
        if by_ingress != self.ingress {
            errors.push(format!("switch {id}: ingress accounts differ from the charges of the queued packets"));
        }
        errors
    }
}
