use super::{Egress, LoadBalancer, LoadBalancerFacts};
use crate::net::{Hops, Packet};
use crate::registry::Scheme;
use crate::sim::Ps;
use serde::{Deserialize, Serialize};

/// Per-packet spraying: each packet takes a next hop of its own, at random or in turn,
/// whatever its flow (random packet spraying, Dixit et al., INFOCOM 2013). Load spreads
/// evenly at every timescale; packets of one flow take paths of different delays and
/// may arrive out of order.
pub struct Spray {
    order: SprayOrder,
    /// Next hops handed out so far (`round_robin`).
    turns: u64,
}

/// The keys of `[switch.load_balancing]` with `kind = "spray"`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SprayConfig {
    /// "random" (default): each packet draws its next hop; "round_robin": the switch hands
    /// its next hops out in turn, one packet each.
    pub order: SprayOrder,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SprayOrder {
    #[default]
    Random,
    RoundRobin,
}

impl Scheme for Spray {
    type Config = SprayConfig;
    type Env = ();

    fn build(cfg: &SprayConfig, _: &()) -> Self {
        Spray { order: cfg.order, turns: 0 }
    }
}

impl LoadBalancerFacts for Spray {
    fn splits_flows(_: &SprayConfig) -> bool {
        true
    }
}

impl LoadBalancer for Spray {
    fn pick(&mut self, hops: Hops, pkt: &Packet, now: Ps, egress: &Egress) -> u16 {
        match self.order {
            SprayOrder::Random => hops.ecmp(egress.draw(pkt, now, 0)),
            SprayOrder::RoundRobin => {
                self.turns += 1;
                hops.port(((self.turns - 1) % hops.count() as u64) as usize)
            }
        }
    }
}
