//! The scheduling decision point: which non-empty queue of a port sends next. The port
//! keeps the set of non-empty queues and tells its scheduler when a queue empties or
//! fills, so that picking costs O(1) however many queues the port has.

use super::active_set::ActiveSet;
use super::queue::PortQueue;
use crate::check_env::CheckEnv;
use crate::config::{ScenarioError, Warnings};
use crate::registry::{keyless_scheme, registry, Scheme};
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

pub trait Scheduler: Send {
    /// The queue to serve next, or None when `active` is empty. `active` holds the
    /// non-empty queues that may send: a paused queue is left out while it holds packets,
    /// so a scheduler tests membership in `active`, not whether a queue is empty.
    fn pick(&mut self, queues: &[PortQueue], active: &ActiveSet) -> Option<usize>;
    /// Queue `q` became empty (its last packet left or was pushed out).
    fn on_empty(&mut self, _q: usize) {}
    /// Queue `q` was empty and received a packet.
    fn on_backlog(&mut self, _q: usize) {}
}

registry! {
    /// How a port picks the queue that sends next (`[switch.scheduler]`).
    pub enum SchedulerConfig => AnyScheduler: Scheduler, env SchedulerEnv;
    "fifo" => Fifo(Fifo),
    "strict_priority" => StrictPriority(StrictPriority),
    "dwrr" => Dwrr(Dwrr),
    forward {
        mut fn pick(queues: &[PortQueue], active: &ActiveSet) -> Option<usize>;
        mut fn on_empty(q: usize);
        mut fn on_backlog(q: usize);
    }
}

impl SchedulerConfig {
    /// Every packet goes to queue 0, whatever its priority.
    pub fn single_queue(&self) -> bool {
        matches!(self, SchedulerConfig::Fifo(_))
    }
}

/// What a port's scheduler is built for.
pub struct SchedulerEnv {
    /// Queues per port (`switch.queues`).
    pub queues: usize,
}

/// One queue: every packet of the port goes to queue 0 and leaves in arrival order.
pub struct Fifo;

keyless_scheme!(Fifo, env SchedulerEnv);

impl Scheduler for Fifo {
    #[inline]
    fn pick(&mut self, queues: &[PortQueue], active: &ActiveSet) -> Option<usize> {
        StrictPriority.pick(queues, active)
    }
}

keyless_scheme!(StrictPriority, env SchedulerEnv);

/// Strict priority: the lowest-numbered non-empty queue. With every packet in queue 0
/// this is plain FIFO.
pub struct StrictPriority;

impl Scheduler for StrictPriority {
    #[inline]
    fn pick(&mut self, _queues: &[PortQueue], active: &ActiveSet) -> Option<usize> {
        active.first()
    }
}

/// Deficit weighted round robin (Shreedhar and Varghese): the round robin visits the
/// queues in index order; each visit to a backlogged queue adds `quantum * weight` bytes
/// of credit, and the queue sends while its head fits. A queue's credit is cleared when
/// the round robin passes it while it is empty.
///
/// The round robin jumps straight to the next non-empty queue. The credits of the empty
/// queues it jumps over are cleared lazily: `position` counts every queue the round robin
/// has moved past, and a queue that empties records the position at which the round
/// robin would reach it (`reset_at`); if it fills again after that, it starts from zero.
///
/// The per-queue state sits in one allocation, so that a port's scheduler stays small
/// (`SwitchPort` is one cache line).
pub struct Dwrr {
    queues: Box<[DwrrQueue]>,
    /// Queues below this index go first, in strict priority, and take no part in the
    /// round robin.
    strict: u16,
    position: u64,
    current: u32,
    /// The current queue has already received its quantum for this visit.
    credited: bool,
}

/// DWRR's state of one queue.
#[derive(Clone, Copy)]
struct DwrrQueue {
    /// Credit per visit.
    quantum: u64,
    deficit: u64,
    /// `position` at which the round robin reaches the queue after it emptied.
    reset_at: u64,
}

/// DWRR's keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DwrrConfig {
    /// Bytes of credit per round; each queue's weight scales it.
    pub quantum: Bytes,
    /// One weight per queue, or one for all.
    pub weights: Vec<f64>,
    /// The first this many queues are served in strict priority (queue 0 first) ahead of
    /// the round robin of the others, as a switch's control and ACK queue is (DSH §V-A).
    #[serde(skip_serializing_if = "is_zero")]
    pub strict_queues: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Default for DwrrConfig {
    fn default() -> Self {
        DwrrConfig { quantum: Bytes(9_000), weights: vec![1.0], strict_queues: 0 }
    }
}

impl Scheme for Dwrr {
    type Config = DwrrConfig;
    type Env = SchedulerEnv;

    fn build(cfg: &DwrrConfig, env: &SchedulerEnv) -> Self {
        // At most `MAX_QUEUES` (1,024) queues: a u16 keeps a port in one cache line.
        Dwrr { strict: cfg.strict_queues as u16, ..Dwrr::new(cfg.quantum.0, &cfg.weights, env.queues) }
    }

    fn validate(cfg: &DwrrConfig, path: &str, env: &CheckEnv, _: &mut Warnings) -> Result<(), ScenarioError> {
        let queues = env.queues;
        let w = &cfg.weights;
        if w.is_empty() || w.iter().any(|w| !(w.is_finite() && *w > 0.0)) {
            return Err(ScenarioError::new(
                format!("{path}.weights"),
                format!("{w:?} is not accepted (accepted: numbers > 0)"),
            ));
        }
        if w.len() > 1 && w.len() != queues as usize {
            return Err(ScenarioError::new(
                format!("{path}.weights"),
                format!("has {} values but switch.queues = {queues}", w.len()),
            ));
        }
        if cfg.quantum.0 == 0 {
            return Err(ScenarioError::new(format!("{path}.quantum"), "must be positive"));
        }
        if cfg.strict_queues >= queues {
            return Err(ScenarioError::queue_index(
                path,
                "strict_queues",
                cfg.strict_queues,
                queues,
                "at least one queue takes part in the round robin",
            ));
        }
        Ok(())
    }
}

impl Dwrr {
    pub fn new(quantum: u64, weights: &[f64], queues: usize) -> Self {
        let queues = (0..queues)
            .map(|i| {
                let w = weights.get(i).copied().unwrap_or(weights[weights.len() - 1]);
                DwrrQueue { quantum: ((quantum as f64 * w).round() as u64).max(1), deficit: 0, reset_at: 0 }
            })
            .collect();
        Dwrr { queues, strict: 0, current: 0, credited: false, position: 0 }
    }

    /// Queues the round robin moves past going from `from` to `to` (a full round when
    /// they are equal).
    #[inline]
    fn distance(&self, from: usize, to: usize) -> u64 {
        let n = self.queues.len();
        match (to + n - from) % n {
            0 => n as u64,
            d => d as u64,
        }
    }
}

impl Scheduler for Dwrr {
    fn pick(&mut self, queues: &[PortQueue], active: &ActiveSet) -> Option<usize> {
        let first = active.first()?;
        if first < self.strict as usize {
            return Some(first);
        }
        loop {
            let i = self.current as usize;
            // Members only: `active` may leave out paused queues that hold packets.
            if let Some(head) = queues[i].packets.front().filter(|_| active.contains(i)) {
                let state = &mut self.queues[i];
                if !self.credited {
                    state.deficit += state.quantum;
                    self.credited = true;
                }
                let size = head.size as u64;
                if size <= state.deficit {
                    state.deficit -= size;
                    return Some(i);
                }
            }
            let next = active.next_after(i).expect("the set is not empty");
            self.position += self.distance(i, next);
            self.current = next as u32;
            self.credited = false;
        }
    }

    fn on_empty(&mut self, q: usize) {
        let current = self.current as usize;
        let ahead = if q == current { 0 } else { self.distance(current, q) };
        self.queues[q].reset_at = self.position + ahead;
    }

    fn on_backlog(&mut self, q: usize) {
        if self.position > self.queues[q].reset_at {
            self.queues[q].deficit = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Packet;
    use rand::{Rng, SeedableRng};

    /// Deficit round robin as written first: walk every queue in index order, clearing
    /// the credit of each empty queue visited. The active-set `Dwrr` must pick the same
    /// queue at every step.
    struct ScanningDwrr {
        quanta: Vec<u64>,
        deficit: Vec<u64>,
        current: usize,
        credited: bool,
    }

    impl ScanningDwrr {
        fn pick(&mut self, queues: &[PortQueue]) -> Option<usize> {
            if queues.iter().all(|q| q.packets.is_empty()) {
                return None;
            }
            loop {
                let i = self.current;
                match queues[i].packets.front() {
                    None => self.deficit[i] = 0,
                    Some(head) => {
                        if !self.credited {
                            self.deficit[i] += self.quanta[i];
                            self.credited = true;
                        }
                        if head.size as u64 <= self.deficit[i] {
                            self.deficit[i] -= head.size as u64;
                            return Some(i);
                        }
                    }
                }
                self.current = (i + 1) % queues.len();
                self.credited = false;
            }
        }
    }

    /// With one strict queue, queue 0 sends whenever it holds a packet; queues 1 and 2
    /// share the rest by DWRR, a 1,500 B quantum sending one 1,500 B packet per visit.
    #[test]
    fn strict_queues_go_before_the_round_robin() {
        let mut dwrr = Dwrr { strict: 1, ..Dwrr::new(1500, &[1.0], 3) };
        let mut queues: Vec<PortQueue> = (0..3).map(|_| PortQueue::new()).collect();
        let mut active = ActiveSet::new(3);
        for q in [1, 2] {
            for _ in 0..3 {
                queues[q].packets.push_back(queued(1500));
            }
            active.insert(q);
            dwrr.on_backlog(q);
        }
        let mut order = Vec::new();
        for step in 0..6 {
            if step == 2 {
                queues[0].packets.push_back(queued(64));
                active.insert(0);
            }
            let q = dwrr.pick(&queues, &active).unwrap();
            queues[q].packets.pop_front();
            if queues[q].packets.is_empty() {
                active.remove(q);
                dwrr.on_empty(q);
            }
            order.push(q);
        }
        assert_eq!(order, [1, 2, 0, 1, 2, 1]);
    }

    fn queued(size: u32) -> Packet {
        Packet { size, ..Packet::template(0, 0, 0, 0) }
    }

    /// Random arrivals, departures and tail pushouts (which empty queues behind the round
    /// robin's back) on ports of 1 to 70 queues with uneven weights.
    #[test]
    fn dwrr_picks_what_a_full_scan_picks() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(11);
        for n in [1usize, 2, 3, 8, 64, 70] {
            let weights: Vec<f64> = (0..n).map(|i| 1.0 + (i % 3) as f64).collect();
            let mut fast = Dwrr::new(1500, &weights, n);
            let mut scan = ScanningDwrr {
                quanta: fast.queues.iter().map(|q| q.quantum).collect(),
                deficit: vec![0; n],
                current: 0,
                credited: false,
            };
            let mut queues: Vec<PortQueue> = (0..n).map(|_| PortQueue::new()).collect();
            let mut active = ActiveSet::new(n);
            for step in 0..20_000 {
                let busy = rng.gen_range(0..n.min(4));
                match rng.gen_range(0..10) {
                    0..=4 => {
                        let q = rng.gen_range(0..=busy) * n / 4 % n;
                        if queues[q].packets.is_empty() {
                            active.insert(q);
                            fast.on_backlog(q);
                        }
                        queues[q].packets.push_back(queued(rng.gen_range(64..=4000)));
                    }
                    5..=8 => {
                        let picked = fast.pick(&queues, &active);
                        assert_eq!(picked, scan.pick(&queues), "{n} queues, step {step}");
                        if let Some(q) = picked {
                            queues[q].packets.pop_front();
                            if queues[q].packets.is_empty() {
                                active.remove(q);
                                fast.on_empty(q);
                            }
                        }
                    }
                    _ => {
                        if let Some(q) = (0..n).map(|d| (d + step) % n).find(|&q| !queues[q].packets.is_empty()) {
                            queues[q].packets.pop_back();
                            if queues[q].packets.is_empty() {
                                active.remove(q);
                                fast.on_empty(q);
                            }
                        }
                    }
                }
            }
        }
    }
}
