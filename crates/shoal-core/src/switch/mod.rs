//! An output-queued, shared-memory switch. Its decision points are narrow traits:
//! admission (`mmu::Admission`), marking (`marking::Marker`) and scheduling
//! (`scheduler::Scheduler`); the switch itself only moves packets between them.

pub mod marking;
pub mod mmu;
pub mod scheduler;

use crate::net::Packet;
use crate::scenario::{MarkPoint, SchedulerKind, SwitchConfig};
use crate::sim::{Ps, Rng};
use crate::stats::{Counters, DropReason, TimeWeighted};
use marking::{MarkContext, Marker, QueueCutoff, QueueRed};
use mmu::{account, Admission, DynamicThreshold, Pool, QueueAccount};
use scheduler::{Dwrr, Scheduler, StrictPriority};
use std::collections::VecDeque;

/// One egress queue of a port.
pub struct PortQueue {
    pub packets: VecDeque<Packet>,
    pub account: QueueAccount,
    pub occupancy: TimeWeighted,
}

/// An egress port: its queues, its scheduler and the link it transmits on.
pub struct SwitchPort {
    pub link: u32,
    pub pool: usize,
    pub queues: Vec<PortQueue>,
    scheduler: Box<dyn Scheduler>,
}

pub struct Switch {
    pub ports: Vec<SwitchPort>,
    pub pools: Vec<Pool>,
    /// Salt of this switch's ECMP hash.
    pub ecmp_salt: u64,
    admission: Box<dyn Admission>,
    markers: Vec<Box<dyn Marker>>,
    mark_at: MarkPoint,
    /// Every packet uses queue 0 (FIFO).
    single_queue: bool,
    rng: Rng,
}

impl Switch {
    /// A switch whose ports transmit on `links`, configured by `cfg`.
    pub fn new(cfg: &SwitchConfig, links: &[u32], ecmp_salt: u64, rng: Rng) -> Self {
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
                queues: (0..queues)
                    .map(|q| PortQueue {
                        packets: VecDeque::new(),
                        account: QueueAccount { bytes: 0, reserved: cfg.reserved.0, alpha: cfg.alpha.get(q) },
                        occupancy: TimeWeighted::default(),
                    })
                    .collect(),
                scheduler: match cfg.scheduler {
                    SchedulerKind::Fifo | SchedulerKind::StrictPriority => Box::new(StrictPriority),
                    SchedulerKind::Dwrr => Box::new(Dwrr::new(cfg.dwrr_quantum.0, &cfg.dwrr_weights, queues)),
                },
            })
            .collect();
        let mut markers: Vec<Box<dyn Marker>> = Vec::new();
        let ecn = &cfg.ecn;
        if let Some(k) = ecn.k {
            markers.push(Box::new(QueueCutoff { k: k.0 }));
        }
        if let (Some(kmin), Some(kmax)) = (ecn.kmin, ecn.kmax) {
            markers.push(Box::new(QueueRed { kmin: kmin.0, kmax: kmax.0, pmax: ecn.pmax }));
        }
        Switch {
            ports,
            pools,
            ecmp_salt,
            admission: Box::new(DynamicThreshold),
            markers,
            mark_at: ecn.at,
            single_queue: cfg.scheduler == SchedulerKind::Fifo,
            rng,
        }
    }

    #[inline]
    fn queue_of(&self, port: usize, pkt: &Packet) -> usize {
        if self.single_queue {
            0
        } else {
            (pkt.priority as usize).min(self.ports[port].queues.len() - 1)
        }
    }

    /// Runs the marking rules on `pkt`. Returns false when the packet must be dropped
    /// (a rule fired on a packet that is not ECN-capable).
    #[inline]
    fn mark(&mut self, pkt: &mut Packet, queue_bytes: u64, pool: usize, counters: &mut Counters) -> bool {
        if self.markers.is_empty() {
            return true;
        }
        let ctx = MarkContext { queue_bytes, pool_shared: self.pools[pool].shared_used };
        let rng = &mut self.rng;
        if self.markers.iter_mut().any(|m| m.marks(&ctx, rng)) {
            if pkt.ect {
                if !pkt.ce {
                    pkt.ce = true;
                    counters.ecn_marks += 1;
                }
            } else {
                return false;
            }
        }
        true
    }

    /// Offers `pkt` to egress `port`. On refusal the packet is dropped and counted.
    pub fn enqueue(&mut self, port: usize, mut pkt: Packet, now: Ps, counters: &mut Counters) -> bool {
        let q = self.queue_of(port, &pkt);
        let pool = self.ports[port].pool;
        let size = pkt.size as u64;
        if let Err(reason) = self.admission.admit(&self.ports[port].queues[q].account, &self.pools[pool], size) {
            counters.drop(reason, size);
            return false;
        }
        if self.mark_at == MarkPoint::Enqueue {
            let ahead = self.ports[port].queues[q].account.bytes;
            if !self.mark(&mut pkt, ahead, pool, counters) {
                counters.drop(DropReason::MarkingDrop, size);
                return false;
            }
        }
        let queue = &mut self.ports[port].queues[q];
        account(&mut queue.account, &mut self.pools[pool], size, true, now);
        queue.occupancy.set(now, queue.account.bytes);
        queue.packets.push_back(pkt);
        true
    }

    /// Takes the next packet to transmit on `port`, if any.
    pub fn dequeue(&mut self, port: usize, now: Ps, counters: &mut Counters) -> Option<Packet> {
        loop {
            let p = &mut self.ports[port];
            let q = p.scheduler.pick(&p.queues)?;
            let pool = p.pool;
            let queue = &mut p.queues[q];
            let mut pkt = queue.packets.pop_front().expect("the scheduler picks a non-empty queue");
            let size = pkt.size as u64;
            account(&mut queue.account, &mut self.pools[pool], size, false, now);
            queue.occupancy.set(now, queue.account.bytes);
            let behind = queue.account.bytes;
            if self.mark_at == MarkPoint::Dequeue && !self.mark(&mut pkt, behind, pool, counters) {
                counters.drop(DropReason::MarkingDrop, size);
                continue;
            }
            return Some(pkt);
        }
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
        errors
    }
}
