use super::{Egress, LoadBalancer, LoadBalancerFacts};
use crate::check_env::CheckEnv;
use crate::config::{ScenarioError, Warnings};
use crate::net::{Hops, Packet};
use crate::registry::Scheme;
use crate::sim::Ps;
use serde::{Deserialize, Serialize};

/// DRILL (Ghorbani et al., "Drill: Micro Load Balancing for Low-latency Data Center
/// Networks", SIGCOMM 2017): each packet goes to the least loaded of `samples` next hops
/// drawn at random and the `memory` least loaded ones of the switch's last choice, load
/// being the bytes queued at the port. The power of two choices keeps the queues of a
/// switch's next hops within a few packets of each other; the packets of a flow take
/// paths of different delays and may arrive out of order.
pub struct Drill {
    samples: u32,
    /// How many ports `memory` keeps.
    remembers: usize,
    memory: Vec<u16>,
    /// The candidates of one choice (kept to spare an allocation a packet).
    candidates: Vec<(u64, u16)>,
}

/// The keys of `[switch.load_balancing]` with `kind = "drill"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DrillConfig {
    /// Next hops drawn at random for each packet (DRILL's d). Default 2, the paper's.
    pub samples: u32,
    /// Least loaded next hops remembered from the last choice (DRILL's m). Default 1, the
    /// paper's.
    pub memory: u32,
}

impl Default for DrillConfig {
    fn default() -> Self {
        DrillConfig { samples: 2, memory: 1 }
    }
}

impl Scheme for Drill {
    type Config = DrillConfig;
    type Env = ();

    fn build(cfg: &DrillConfig, _: &()) -> Self {
        Drill {
            samples: cfg.samples,
            remembers: cfg.memory as usize,
            memory: Vec::with_capacity(cfg.memory as usize),
            candidates: Vec::with_capacity((cfg.samples + cfg.memory) as usize),
        }
    }

    fn validate(cfg: &DrillConfig, path: &str, _: &CheckEnv, _: &mut Warnings) -> Result<(), ScenarioError> {
        for (key, value, least) in [("samples", cfg.samples, 1), ("memory", cfg.memory, 0)] {
            if !(least..=64).contains(&value) {
                return Err(ScenarioError::new(
                    format!("{path}.{key}"),
                    format!("{value} is not accepted (accepted: a whole number from {least} to 64)"),
                ));
            }
        }
        Ok(())
    }
}

impl LoadBalancerFacts for Drill {
    fn splits_flows(_: &DrillConfig) -> bool {
        true
    }
}

impl LoadBalancer for Drill {
    fn pick(&mut self, hops: Hops, pkt: &Packet, now: Ps, egress: &Egress) -> u16 {
        self.candidates.clear();
        for i in 0..self.samples {
            let port = hops.ecmp(egress.draw(pkt, now, i as u64));
            self.candidates.push((egress.queued_bytes(port), port));
        }
        // A remembered port that is no next hop here (one chosen for another destination)
        // is no candidate.
        for &port in self.memory.iter().filter(|&&p| hops.contains(p)) {
            self.candidates.push((egress.queued_bytes(port), port));
        }
        // Least loaded first; among equals, the first drawn (a stable sort).
        self.candidates.sort_by_key(|&(bytes, _)| bytes);
        self.memory.clear();
        for &(_, port) in &self.candidates {
            if self.memory.len() == self.remembers {
                break;
            }
            if !self.memory.contains(&port) {
                self.memory.push(port);
            }
        }
        self.candidates[0].1
    }
}
