use super::{Egress, LoadBalancer, LoadBalancerFacts};
use crate::check_env::CheckEnv;
use crate::config::{ScenarioError, Warnings};
use crate::net::{Hops, Packet};
use crate::registry::Scheme;
use crate::sim::{mix64, Ps};
use crate::units::Time;
use serde::{Deserialize, Serialize};

/// LetFlow (Vanini et al., "Let It Flow", NSDI 2017): flowlet switching with random
/// choice. A packet that follows its flow's previous one at this switch within `gap`
/// takes the same next hop; after a longer pause (a new flowlet) it draws one at random.
/// A pause longer than the difference between the paths' delays lets the flow move
/// without reordering; flowlets shrink on congested paths, which balances the load.
///
/// Flows are kept as a switch keeps them: in a table of `table` entries indexed by the
/// flow's hash, where flows that hash alike share a flowlet.
pub struct LetFlow {
    gap: Ps,
    flowlets: Box<[Flowlet]>,
}

/// The last packet that used a table entry: when it passed, and the port it took.
#[derive(Clone, Copy, Default)]
struct Flowlet {
    /// The time of the last packet plus one; 0 for an entry never used.
    last_plus_one: Ps,
    port: u16,
}

/// The keys of `[switch.load_balancing]` with `kind = "letflow"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LetFlowConfig {
    /// The idle time after which a flow's next packet starts a new flowlet. Default
    /// 100 us, the flowlet timeout of the LetFlow model in ConWeave's simulator (Song et
    /// al., SIGCOMM 2023, `letflow-routing.cc`) at 100 Gbps.
    pub gap: Time,
    /// Entries of each switch's flowlet table (a power of two). Default 4,096.
    pub table: u32,
}

impl Default for LetFlowConfig {
    fn default() -> Self {
        LetFlowConfig { gap: Time(100_000_000), table: 4096 }
    }
}

impl Scheme for LetFlow {
    type Config = LetFlowConfig;
    type Env = ();

    fn build(cfg: &LetFlowConfig, _: &()) -> Self {
        LetFlow { gap: cfg.gap.0, flowlets: vec![Flowlet::default(); cfg.table as usize].into_boxed_slice() }
    }

    fn validate(cfg: &LetFlowConfig, path: &str, env: &CheckEnv, _: &mut Warnings) -> Result<(), ScenarioError> {
        if !cfg.table.is_power_of_two() || cfg.table > 1 << 24 {
            return Err(ScenarioError::new(
                format!("{path}.table"),
                format!("{} is not accepted (accepted: a power of two from 1 to 16777216)", cfg.table),
            ));
        }
        env.check_timeout(&format!("{path}.gap"), cfg.gap)
    }
}

impl LoadBalancerFacts for LetFlow {
    fn splits_flows(_: &LetFlowConfig) -> bool {
        true
    }
}

impl LoadBalancer for LetFlow {
    fn pick(&mut self, hops: Hops, pkt: &Packet, now: Ps, egress: &Egress) -> u16 {
        let key = mix64(pkt.hash as u64 ^ egress.salt);
        let flowlet = &mut self.flowlets[(key as usize) & (self.flowlets.len() - 1)];
        let goes_on = flowlet.last_plus_one != 0 && now + 1 - flowlet.last_plus_one <= self.gap;
        // An entry shared with a flow to elsewhere may hold a port that is no next hop here.
        if !goes_on || !hops.contains(flowlet.port) {
            flowlet.port = hops.ecmp(egress.draw(pkt, now, 0));
        }
        flowlet.last_plus_one = now + 1;
        flowlet.port
    }
}
