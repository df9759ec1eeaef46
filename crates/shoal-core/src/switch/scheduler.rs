//! The scheduling decision point: which non-empty queue of a port sends next.

use super::PortQueue;

pub trait Scheduler: Send {
    /// The queue to serve next, or None when every queue is empty.
    fn pick(&mut self, queues: &[PortQueue]) -> Option<usize>;
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
                    let size = head.pkt.size as u64;
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
