//! Queue occupancy over time: every queue that has held a packet, at every interval.

use super::{NetView, Observer};
use crate::sim::Ps;
use crate::switch::flow_control::Lossless;
use crate::switch::mmu::CLASSES;
use rustc_hash::FxHashSet;

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

/// One sample of the bytes buffered from one (ingress port, lossless class) of a switch.
#[derive(Clone, Debug)]
pub struct IngressSample {
    pub time: Ps,
    pub switch: u32,
    pub port: u32,
    pub class: u8,
    /// Bytes buffered that arrived on the port in the class, headroom included.
    pub bytes: u64,
    /// The part of them in the (port, class) headroom.
    pub headroom_bytes: u64,
}

/// Samples each queue that has ever held a packet, and each (ingress port, lossless
/// class) that has ever buffered a byte, every `interval` (`run.sample_interval`).
pub struct QueueSampler {
    pub interval: Ps,
    samples: Vec<Sample>,
    ingress: Vec<IngressSample>,
    /// The (switch, port, class) that have buffered a byte at a sample.
    ingress_seen: FxHashSet<(u32, u32, u8)>,
}

impl QueueSampler {
    pub fn new(interval: Ps) -> Self {
        QueueSampler { interval, samples: Vec::new(), ingress: Vec::new(), ingress_seen: FxHashSet::default() }
    }

    fn observe_ingress(&mut self, net: &NetView) {
        for (si, switch) in net.switches.iter().enumerate() {
            let (lossless, Some(accounts)) = (switch.lossless_classes(), switch.ingress.as_ref()) else { continue };
            for port in 0..switch.ports.len() {
                for class in (0..CLASSES).filter(|c| lossless & (1 << c) != 0) {
                    let bytes = accounts.bytes(port, class);
                    let key = (si as u32, port as u32, class as u8);
                    if bytes > 0 {
                        self.ingress_seen.insert(key);
                    } else if !self.ingress_seen.contains(&key) {
                        continue;
                    }
                    self.ingress.push(IngressSample {
                        time: net.now,
                        switch: key.0,
                        port: key.1,
                        class: key.2,
                        bytes,
                        headroom_bytes: switch.flow_control().headroom_used(port, class),
                    });
                }
            }
        }
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
        self.observe_ingress(net);
    }

    fn samples(&self) -> &[Sample] {
        &self.samples
    }

    fn ingress_samples(&self) -> &[IngressSample] {
        &self.ingress
    }
}
