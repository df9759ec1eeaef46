//! The scheduling decision point: which non-empty queue of a port sends next.

use super::PortQueue;
use crate::registry::{registry, NoKeys, Scheme};
use crate::scenario::{Scenario, ScenarioError, Warnings};
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

pub trait Scheduler: Send {
    /// The queue to serve next, or None when every queue is empty.
    fn pick(&mut self, queues: &[PortQueue]) -> Option<usize>;
}

registry! {
    /// How a port picks the queue that sends next (`[switch.scheduler]`).
    pub enum SchedulerConfig => AnyScheduler: Scheduler, env SchedulerEnv;
    "fifo" => Fifo(Fifo),
    "strict_priority" => StrictPriority(StrictPriority),
    "dwrr" => Dwrr(Dwrr),
    forward {
        mut fn pick(queues: &[PortQueue]) -> Option<usize>;
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

impl Scheme for Fifo {
    type Config = NoKeys;
    type Env = SchedulerEnv;

    fn build(_: &NoKeys, _: &SchedulerEnv) -> Self {
        Fifo
    }
}

impl Scheduler for Fifo {
    #[inline]
    fn pick(&mut self, queues: &[PortQueue]) -> Option<usize> {
        StrictPriority.pick(queues)
    }
}

impl Scheme for StrictPriority {
    type Config = NoKeys;
    type Env = SchedulerEnv;

    fn build(_: &NoKeys, _: &SchedulerEnv) -> Self {
        StrictPriority
    }
}

/// Strict priority: the lowest-numbered non-empty queue. With every packet in queue 0
/// this is plain FIFO.
pub struct StrictPriority;

impl Scheduler for StrictPriority {
    #[inline]
    fn pick(&mut self, queues: &[PortQueue]) -> Option<usize> {
        queues.iter().position(|q| !q.packets.is_empty())
    }
}

/// Deficit weighted round robin (Shreedhar and Varghese): each visit to a backlogged
/// queue adds `quantum * weight` bytes of credit; a queue sends while its head fits.
pub struct Dwrr {
    quanta: Vec<u64>,
    deficit: Vec<u64>,
    current: usize,
    /// The current queue has already received its quantum for this visit.
    credited: bool,
}

/// DWRR's keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DwrrConfig {
    /// Bytes of credit per round; each queue's weight scales it.
    pub quantum: Bytes,
    /// One weight per queue, or one for all.
    pub weights: Vec<f64>,
}

impl Default for DwrrConfig {
    fn default() -> Self {
        DwrrConfig { quantum: Bytes(9_000), weights: vec![1.0] }
    }
}

impl Scheme for Dwrr {
    type Config = DwrrConfig;
    type Env = SchedulerEnv;

    fn build(cfg: &DwrrConfig, env: &SchedulerEnv) -> Self {
        Dwrr::new(cfg.quantum.0, &cfg.weights, env.queues)
    }

    fn validate(cfg: &DwrrConfig, path: &str, sc: &Scenario, _: &mut Warnings) -> Result<(), ScenarioError> {
        let queues = sc.switch.queues;
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
        Ok(())
    }
}

impl Dwrr {
    pub fn new(quantum: u64, weights: &[f64], queues: usize) -> Self {
        let quanta = (0..queues)
            .map(|i| {
                let w = weights.get(i).copied().unwrap_or(weights[weights.len() - 1]);
                ((quantum as f64 * w).round() as u64).max(1)
            })
            .collect();
        Dwrr { quanta, deficit: vec![0; queues], current: 0, credited: false }
    }
}

impl Scheduler for Dwrr {
    fn pick(&mut self, queues: &[PortQueue]) -> Option<usize> {
        if queues.iter().all(|q| q.packets.is_empty()) {
            return None;
        }
        loop {
            let i = self.current;
            match queues[i].packets.front() {
                None => {
                    self.deficit[i] = 0;
                }
                Some(head) => {
                    if !self.credited {
                        self.deficit[i] += self.quanta[i];
                        self.credited = true;
                    }
                    let size = head.size as u64;
                    if size <= self.deficit[i] {
                        self.deficit[i] -= size;
                        return Some(i);
                    }
                }
            }
            self.current = (i + 1) % queues.len();
            self.credited = false;
        }
    }
}
