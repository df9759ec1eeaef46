//! Queue occupancy over time: every queue that has held a packet, at every interval.

use super::{NetView, Observer};
use crate::sim::Ps;

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

/// Samples each queue that has ever held a packet, every `interval` (`run.sample_interval`).
pub struct QueueSampler {
    pub interval: Ps,
    samples: Vec<Sample>,
}

impl QueueSampler {
    pub fn new(interval: Ps) -> Self {
        QueueSampler { interval, samples: Vec::new() }
    }
}

impl Observer for QueueSampler {
    fn interval(&self) -> Ps {
        self.interval
    }

    fn observe(&mut self, net: &NetView) {
        for (si, switch) in net.switches.iter().enumerate() {
            for (pi, port) in switch.ports.iter().enumerate() {
                for (qi, q) in switch.port_queues(pi).iter().enumerate() {
                    if q.occupancy.max() > 0 {
                        self.samples.push(Sample {
                            time: net.now,
                            switch: si as u32,
                            port: pi as u32,
                            queue: qi as u32,
                            bytes: q.bytes(),
                            pool_bytes: switch.pools[port.pool as usize].occupancy.value(),
                            tx_bytes: (net.link_tx_bytes)(port.link),
                        });
                    }
                }
            }
        }
    }

    fn samples(&self) -> &[Sample] {
        &self.samples
    }
}
