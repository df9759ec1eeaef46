//! The defaults a scenario derives from what it says elsewhere (`Scenario::resolved`).

use super::Scenario;
use crate::config::ScenarioError;
use crate::switch::marking::{CutoffConfig, MarkerConfig};
use crate::workload::config::{FlowTransport, Pattern};

/// A default derived from what the scenario says elsewhere, filled in in place.
type Derive = fn(&mut Scenario) -> Result<(), ScenarioError>;

/// The derived defaults, in the order `Scenario::resolved` fills them in; each sees the
/// scenario as the ones before it left it.
pub(super) const DEFAULTS: [Derive; 2] = [implied_classifier, ecn_cutoff];

/// The classifier the scheduler implies, when none is set (`SwitchConfig::classifier`).
fn implied_classifier(sc: &mut Scenario) -> Result<(), ScenarioError> {
    sc.switch.classifier = Some(sc.switch.classifier());
    Ok(())
}

/// TCP traffic whose transport reacts to ECN marks (DCTCP, ECN*) on a network where no
/// marking rule is set at all gets the cut-off `switch.marking.cutoff.k = lambda x C x
/// RTT` (`CutoffConfig::lambda_bdp`), C the host link rate (the fastest host link of a
/// topology file) and RTT the base round trip of the longest path with one data packet
/// and one ACK serialized per link (`Scenario::tcp_round_trip_path`).
fn ecn_cutoff(sc: &mut Scenario) -> Result<(), ScenarioError> {
    let tr = &sc.transport;
    let Some(lambda) = tr.cc.ecn_lambda() else { return Ok(()) };
    let marks = !sc.switch.marking.is_empty() || sc.host.ecn_k.0 > 0;
    let tcp = sc.workloads().any(|w| w.pattern != Pattern::Udp && w.transport == FlowTransport::Tcp);
    if marks || !tr.ect() || !tcp {
        return Ok(());
    }
    let (_, round_trip) = sc.tcp_round_trip_path()?;
    let cutoff = CutoffConfig::lambda_bdp(lambda, sc.topology.host_rate()?, round_trip);
    sc.switch.marking.set(MarkerConfig::Cutoff(cutoff));
    Ok(())
}
