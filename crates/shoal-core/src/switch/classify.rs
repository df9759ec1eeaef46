//! The classification decision point: which egress queue of a port an arriving packet
//! joins (`[switch.classifier]`).

use crate::check_env::CheckEnv;
use crate::config::{ScenarioError, Warnings};
use crate::net::Packet;
use crate::registry::{keyless_scheme, registry, Scheme};
use crate::sim::mix_below;
use serde::{Deserialize, Serialize};

pub trait Classify: Send {
    /// The queue (below `queues`) that `pkt` joins at its egress port.
    fn queue(&mut self, pkt: &Packet, queues: usize) -> usize;

    /// Bit q set: packets of `priority` may join queue q (what a pause of their class
    /// must hold). By default the queue of a data packet of that priority.
    fn queues_of_priority(&mut self, priority: u8, queues: usize) -> u64 {
        1 << self.queue(&Packet::template(0, 0, 0, priority), queues)
    }
}

registry! {
    /// How a switch picks a packet's egress queue (`[switch.classifier]`). Unset, it
    /// follows the scheduler: `single_queue` under `fifo`, else `by_priority`.
    pub enum ClassifierConfig => AnyClassifier: Classify, env ();
    "by_priority" => ByPriority(ByPriority),
    "single_queue" => SingleQueue(SingleQueue),
    "flow_hash" => FlowHash(FlowHash),
    forward {
        mut fn queue(pkt: &Packet, queues: usize) -> usize;
        mut fn queues_of_priority(priority: u8, queues: usize) -> u64;
    }
}

/// A switch's classifier: a registered scheme, dispatched by `match`, or one from outside
/// the registry (`Switch::set_classifier`, for benchmarks and tests), through a pointer.
pub enum Classifier {
    Scheme(AnyClassifier),
    Custom(Box<dyn Classify>),
}

impl Classify for Classifier {
    #[inline]
    fn queue(&mut self, pkt: &Packet, queues: usize) -> usize {
        match self {
            Classifier::Scheme(c) => c.queue(pkt, queues),
            Classifier::Custom(c) => c.queue(pkt, queues),
        }
    }

    fn queues_of_priority(&mut self, priority: u8, queues: usize) -> u64 {
        match self {
            Classifier::Scheme(c) => c.queues_of_priority(priority, queues),
            Classifier::Custom(c) => c.queues_of_priority(priority, queues),
        }
    }
}

/// Every packet in queue 0: one FIFO per port.
pub struct SingleQueue;

keyless_scheme!(SingleQueue);

impl Classify for SingleQueue {
    #[inline]
    fn queue(&mut self, _pkt: &Packet, _queues: usize) -> usize {
        0
    }
}

/// A packet joins the queue of its priority; priorities beyond the last queue share it.
pub struct ByPriority;

keyless_scheme!(ByPriority);

impl Classify for ByPriority {
    #[inline]
    fn queue(&mut self, pkt: &Packet, queues: usize) -> usize {
        (pkt.priority as usize).min(queues - 1)
    }
}

/// Stochastic fair queueing's classifier (McKenney, INFOCOM 1990): the payload packets of
/// a flow join one of the queues from `first_queue` on, chosen by a hash of the flow's
/// 5-tuple that is the same at every switch; other packets (ACKs, NACKs, CNPs) join the
/// queue of their priority, as under `by_priority`. With a round-robin scheduler over
/// those queues this shares a port fairly among flows that hash apart (BFC's
/// DCQCN+Win+SFQ baseline, §4.1; its straw proposal, §3.2).
///
/// Invariant: every payload packet of a flow, in one direction, joins the same queue.
pub struct FlowHash {
    first_queue: usize,
}

/// `flow_hash`'s keys.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FlowHashConfig {
    /// The queues below this index are left to packets without payload (by priority): 1
    /// keeps queue 0 for ACKs and control frames, served first under
    /// `scheduler.strict_queues = 1`.
    pub first_queue: u32,
}

/// Mixed into the 5-tuple hash so that the queue a flow takes is independent of its
/// ECMP path (`mix64(hash ^ ecmp_salt)`): with the same mix, flows that share a path
/// would also tend to share a queue.
const FLOW_QUEUE_KEY: u64 = 0x5f0a_9c3e_71d4_b826;

impl Scheme for FlowHash {
    type Config = FlowHashConfig;
    type Env = ();

    fn build(cfg: &FlowHashConfig, _: &()) -> Self {
        FlowHash { first_queue: cfg.first_queue as usize }
    }

    fn validate(cfg: &FlowHashConfig, path: &str, env: &CheckEnv, _: &mut Warnings) -> Result<(), ScenarioError> {
        let queues = env.queues;
        if cfg.first_queue >= queues {
            return Err(ScenarioError::queue_index(
                path,
                "first_queue",
                cfg.first_queue,
                queues,
                "at least one queue for the flows",
            ));
        }
        if env.single_queue_scheduler {
            return Err(ScenarioError::new(
                path.to_string(),
                format!(
                    "\"flow_hash\" needs a scheduler that serves several queues, not switch.scheduler = \"{}\" \
                     (accepted: \"dwrr\", \"strict_priority\")",
                    env.scheduler
                ),
            ));
        }
        Ok(())
    }
}

impl Classify for FlowHash {
    #[inline]
    fn queue(&mut self, pkt: &Packet, queues: usize) -> usize {
        if !pkt.kind.carries_payload() {
            return ByPriority.queue(pkt, queues);
        }
        let spread = (queues - self.first_queue) as u64;
        self.first_queue + mix_below(pkt.hash as u64, FLOW_QUEUE_KEY, spread) as usize
    }

    fn queues_of_priority(&mut self, priority: u8, queues: usize) -> u64 {
        let flows = (self.first_queue..queues).fold(0u64, |m, q| m | 1u64.checked_shl(q as u32).unwrap_or(0));
        flows | ByPriority.queues_of_priority(priority, queues)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::PacketKind;
    use crate::sim::stream;
    use rand::RngCore;

    #[test]
    fn flow_hash_keeps_a_flow_in_one_queue_and_spreads_flows_evenly() {
        let (queues, first) = (32, 1);
        let mut fq = FlowHash { first_queue: first };
        let mut rng = stream(7, "test.flow_hash", 0);
        let flows = 31_000;
        let mut count = vec![0u32; queues];
        for flow in 0..flows {
            let mut pkt = Packet::template(flow, 0, rng.next_u32(), 3);
            let q = fq.queue(&pkt, queues);
            for seq in 1..4 {
                pkt.seq = seq;
                assert_eq!(fq.queue(&pkt, queues), q, "flow {flow}: one queue for all its packets");
            }
            count[q] += 1;
            pkt.kind = PacketKind::Ack;
            assert_eq!(fq.queue(&pkt, queues), 3, "an ACK joins the queue of its priority");
        }
        assert_eq!(count[0], 0, "no flow in the queues below first_queue");
        // Uniform over the 31 others: each count is binomial(31,000, 1/31), mean 1,000,
        // sigma 31.1; allow 4.5 sigma.
        for (q, &n) in count.iter().enumerate().skip(first) {
            assert!((860..=1140).contains(&n), "queue {q}: {n} flows, expected 1000 +- 140");
        }
        assert_eq!(fq.queues_of_priority(3, queues), u32::MAX as u64 & !1, "class 3: queues 1-31 (its ACKs in 3)");
        assert_eq!(fq.queues_of_priority(0, queues), u32::MAX as u64, "class 0: its ACKs in queue 0 as well");
    }
}
