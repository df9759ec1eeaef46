//! The scenario: a serde schema with documented defaults (`defaults.toml`), and its
//! validation. Every error names the key path, the value and what is accepted.

mod derived;
mod facts;
pub mod input_checks;
mod network_facts;
mod parse;
pub mod presets;

pub use crate::config::run::{FctUntil, RunConfig};
pub use crate::config::{PerQueue, Probability, ScenarioError, Warnings};
pub use crate::host::config::{HostConfig, NicOrder};
pub use crate::net::config::{Topology, TopologyKind, MAX_HOSTS, MAX_SWITCH_PORTS};
pub use crate::switch::config::{EcnConfig, EcnScope, MarkPoint, NonEct, ReservePer, SwitchConfig, MAX_QUEUES};
use crate::switch::mmu::class_of;
pub use crate::transport::config::{
    EcnCapable, PartialAckRto, RdmaConfig, RdmaWindow, RestartAfter, RestartWindow, Rto, TransportConfig,
};
use crate::transport::{RdmaSettings, Stacks};
use crate::units::Bytes;
use crate::workload::collective::CollectiveJob;
pub use crate::workload::config::{
    Arrival, FanInSizes, FlowTransport, HostSet, HostSetItem, LoadOn, Pacing, Pattern, Workload,
};
pub use network_facts::{Hop, NetworkFacts, Peer, Port};
use serde::{Deserialize, Serialize};

/// The commented defaults file; `Scenario::default()` equals what it parses to.
pub const DEFAULTS_TOML: &str = include_str!("defaults.toml");

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub struct Scenario {
    /// The named preset laid under the scenario's keys (`presets.toml`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    pub topology: Topology,
    pub host: HostConfig,
    pub switch: SwitchConfig,
    pub transport: TransportConfig,
    pub rdma: RdmaConfig,
    pub workload: Workload,
    pub run: RunConfig,
}

impl Scenario {
    /// The scenario with its derived defaults filled in (what a run uses and what
    /// `scenario.json` shows): each of `derived::DEFAULTS` in turn. Fails only where the
    /// network must be built to know a path and cannot be (`net::build`).
    pub fn resolved(&self) -> Result<Scenario, ScenarioError> {
        let mut sc = self.clone();
        for derive in derived::DEFAULTS {
            derive(&mut sc)?;
        }
        Ok(sc)
    }

    /// Why the scenario's RDMA flows (if any) are not kept lossless: no flow control, or
    /// RDMA classes outside PFC's or DSH's `classes`; `None` when they are (BFC guards
    /// its flows by its own backpressure).
    pub fn rdma_not_lossless(&self) -> Option<String> {
        let lossless = self.switch.flow_control.paused_classes()?;
        let mut exposed: Vec<u8> = self
            .workloads()
            .filter(|w| w.transport == FlowTransport::Rdma && w.pattern != Pattern::Udp)
            .flat_map(|w| w.classes().iter().map(|&p| class_of(p)))
            .filter(|c| !lossless.contains(c))
            .collect();
        exposed.sort_unstable();
        exposed.dedup();
        match (exposed.is_empty(), lossless.is_empty()) {
            (true, _) => None,
            (false, true) => Some("switch.flow_control.kind = \"lossy\": nothing keeps the fabric lossless".into()),
            (false, false) => {
                Some(format!("their classes {exposed:?} are not in switch.flow_control.classes = {lossless:?}"))
            }
        }
    }

    /// Checks every value against its accepted range; returns warnings for legal but
    /// suspicious settings.
    pub fn validate(&self) -> Result<Warnings, ScenarioError> {
        let mut warnings = Vec::new();
        let err = |path: &str, msg: String| Err(ScenarioError::new(path, msg));
        let hosts = self.topology.check()?;
        self.topology.check_round_trip(self.largest_packet(), &mut warnings)?;
        let s = &self.switch;
        s.check_queues()?;
        let mut env = self.check_env();
        s.admission.validate("switch.admission", &env, &mut warnings)?;
        s.scheduler.validate("switch.scheduler", &env, &mut warnings)?;
        s.classifier().validate("switch.classifier", &env, &mut warnings)?;
        // The classifier places the priorities only once its keys are known to be good.
        env.priority_queues = self.priority_queues();
        s.flow_control.validate("switch.flow_control", &env, &mut warnings)?;
        s.marking.validate("switch.marking", &env, &mut warnings)?;
        s.load_balancing.validate("switch.load_balancing", &env, &mut warnings)?;
        let (tr, rdma) = (&self.transport, &self.rdma);
        tr.check_sizes()?;
        rdma.check_sizes()?;
        // Buffers that cannot hold one packet of those the workloads send drop every one:
        // the run could never finish.
        let (sent, sent_keys) = self.largest_packet_sent();
        let packet = Bytes(sent);
        if self.host.nic_buffer < packet {
            return err(
                "host.nic_buffer",
                format!(
                    "{} cannot hold one packet of {packet} ({sent_keys}); accepted: at least {packet}",
                    self.host.nic_buffer
                ),
            );
        }
        s.check_buffers(packet, sent_keys)?;
        warnings.extend(self.unused_reserve_warning(&env));
        rdma.validate(&env, &mut warnings)?;
        let rdma_flows = self.workloads().any(|w| w.transport == FlowTransport::Rdma && w.pattern != Pattern::Udp);
        // Lossless packets are not WRED's to drop: the ACKs are safe where PFC or DSH
        // covers their class (the flows' own, or rdma.ack_priority's).
        let acks_lossless = || {
            self.rdma_not_lossless().is_none()
                && match (s.flow_control.paused_classes(), rdma.ack_priority) {
                    (None, _) => false,
                    (Some(lossless), Some(p)) => lossless.contains(&class_of(p)),
                    (Some(_), None) => true,
                }
        };
        if rdma_flows
            && s.ecn.non_ect == NonEct::Drop
            && !s.marking.rules().is_empty()
            && !acks_lossless()
            && !rdma.loss_recovery.times_out()
        {
            warnings.push(
                "switch.ecn.non_ect = \"drop\" drops RDMA ACKs and NACKs (not ECN-capable) where a marking rule \
                 would mark them, and a connection that loses its last ACK never completes (RDMA has no \
                 retransmission timeout); set non_ect = \"pass\": ns3-datacenter's switches mark, never drop"
                    .into(),
            );
        }
        if let (true, Rto::After(rto)) = (rdma_flows, rdma.rto) {
            let rtt = self.topology.base_round_trip(rdma.mtu as u64 + rdma.header as u64, rdma.ack_size as u64)?;
            if rto.0 < rtt {
                warnings.push(format!(
                    "rdma.rto: {rto} is shorter than the base round trip of the longest route ({:.3} us for a \
                     packet and its ACK): its senders go back to their first unacknowledged packet before an ACK \
                     can return, and resend what is on its way",
                    rtt as f64 / 1e6
                ));
            }
        }
        if rdma_flows && rdma.cc.reacts_to_marks() && s.marking.is_empty() && self.host.ecn_k.0 == 0 {
            warnings.push(format!(
                "rdma.cc: {} reacts to ECN marks, and no switch.marking rule (nor host.ecn_k) marks any: its \
                 connections run at line rate as with kind = \"none\" (TCP's ECN controllers get a default \
                 cut-off, RDMA's do not; ns3-datacenter's at 100 Gbps: [switch.marking.red] kmin = \"400KB\", \
                 kmax = \"1600KB\", pmax = 0.2, with [switch.ecn] non_ect = \"pass\")",
                rdma.cc.kind()
            ));
        }
        if let Some(key) = self.topology.corrupting_key()? {
            if s.flow_control.pauses_end_by_frame() {
                warnings.push(format!(
                    "{key}: links corrupt frames as well as packets, and a pause of switch.flow_control.kind = \"{}\" \
                     lasts until a frame ends it: a corrupted RESUME (or BFC's last filter) leaves what it paused \
                     paused for good, as in ns3-datacenter (PFC's timed pauses recover: \
                     switch.flow_control.pause_quanta)",
                    s.flow_control.kind()
                ));
            }
            if rdma_flows && !rdma.times_out() {
                warnings.push(format!(
                    "{key}: links corrupt packets, and RDMA connections have no retransmission timeout \
                     (rdma.rto = \"none\", as in ns3-datacenter): one whose last packets or their ACKs are \
                     corrupted waits for good; set rdma.rto (for example \"1ms\")"
                ));
            }
        }
        tr.validate(&env, &mut warnings)?;
        self.workload.validate_all(hosts, &self.topology, &mut warnings)?;
        for (path, w) in self.workload_paths().filter(|(_, w)| w.pattern == Pattern::Collective) {
            CollectiveJob::of(w, hosts as u32, &path)?;
        }
        let endless = self
            .workloads()
            .any(|w| w.pattern == Pattern::LongLived || (w.pattern == Pattern::Udp && w.stop.is_none()));
        self.run.validate(endless)?;
        Ok(warnings)
    }

    /// The transports' shared state for a run of this scenario whose hosts' links run at
    /// `host_rates_bps`.
    pub fn stacks(&self, host_rates_bps: Vec<u64>) -> Stacks {
        let rdma = RdmaSettings::new(&self.rdma, &self.topology, host_rates_bps);
        Stacks::new(&self.transport, rdma, self.run.fct_until, self.host.tsq.0)
    }

    /// The primary workload followed by the extra ones.
    pub fn workloads(&self) -> impl Iterator<Item = &Workload> {
        self.workload.all()
    }

    /// The workloads (as `workloads`) with their key paths: `workload`, then
    /// `workload.extra[0]`, ...
    pub fn workload_paths(&self) -> impl Iterator<Item = (String, &Workload)> {
        self.workload.with_paths()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::marking::MarkerConfig;
    use crate::transport::cc::CcConfig;
    use crate::units::{Rate, Time};

    #[test]
    fn defaults_file_matches_default() {
        let parsed = Scenario::from_toml(DEFAULTS_TOML).unwrap();
        assert_eq!(parsed, Scenario::default());
        assert!(parsed.validate().is_ok());
    }

    #[test]
    fn workload_classes_are_checked() {
        let check = |toml: &str| Scenario::from_toml(toml).unwrap().validate().unwrap_err();
        let e = check("[workload]\npriorities = [1, 64]\n");
        assert_eq!((e.path.as_str(), e.message.contains("64 is not accepted")), ("workload.priorities", true));
        let e = check("[workload]\npriority = 2\npriorities = [1, 3]\n");
        assert_eq!((e.path.as_str(), e.message.contains("priority = 2")), ("workload.priorities", true));
        let e = check("[workload]\npattern = \"fan_in\"\nfan_in = 0\n");
        assert_eq!(e.path, "workload.fan_in");
        let e = check("[workload]\npattern = \"fan_in\"\nfan_in = 4\nfan_in_max = 3\n");
        assert_eq!(e.path, "workload.fan_in_max");
        assert_eq!(e.message, "3 is not accepted (accepted: at least fan_in = 4)");
        let e = check("[switch]\nqueues = 4\nscheduler = { kind = \"dwrr\", strict_queues = 4 }\n");
        assert_eq!(e.path, "switch.scheduler.strict_queues");
        assert_eq!(
            e.message,
            "4 is not accepted with switch.queues = 4 (accepted: 0 to 3: at least one queue takes part in the round robin)"
        );
        let e = check(
            "[switch]\nqueues = 4\nscheduler = \"dwrr\"\nclassifier = { kind = \"flow_hash\", first_queue = 4 }\n",
        );
        assert_eq!(e.path, "switch.classifier.first_queue");
        assert!(e.message.ends_with("(accepted: 0 to 3: at least one queue for the flows)"), "{e}");
    }

    #[test]
    fn unknown_key_names_path() {
        let e = Scenario::from_toml("[switch.ecnn]\nk = 1\n").unwrap_err();
        assert!(e.to_string().contains("switch"), "{e}");
        assert!(e.message.contains("ecnn"), "{e}");
    }

    #[test]
    fn json_syntax_errors_name_the_path() {
        let e = Scenario::from_json(r#"{"topology": {"kind": "star"}, "run": Infinity}"#).unwrap_err();
        assert_eq!(e.path, "run");
    }

    #[test]
    fn bad_unit_names_path() {
        let e = Scenario::from_toml("[topology]\nlink_rate = \"100Gbs\"\n").unwrap_err();
        assert_eq!(e.path, "topology.link_rate");
    }

    #[test]
    fn core_loads_need_core_links() {
        for (value, name) in [(LoadOn::Core, "\"core\""), (LoadOn::CoreNominal, "\"core_nominal\"")] {
            let mut sc = Scenario::default();
            sc.workload.load_on = value;
            let e = sc.validate().unwrap_err();
            assert_eq!(e.path, "workload.load_on");
            assert!(e.message.starts_with(&format!("{name} needs a topology with core links")), "{e}");
        }
    }

    #[test]
    fn ecn_transports_without_marking_get_lambda_c_rtt() {
        // Default star: two 1 us links at 100 Gbps; per link a 1,514 B packet and a 64 B
        // ACK take 126.24 ns, so RTT = 2 x (2 us + 126.24 ns) = 4.25248 us; C x RTT =
        // 12.5 GB/s x 4.25248 us = 53,156 B; DCTCP's lambda 0.72 gives 38,272.3 B.
        let cutoff = |sc: &Scenario| match sc.resolved().unwrap().switch.marking.rules() {
            [MarkerConfig::Cutoff(c)] => Some(c.k),
            _ => None,
        };
        let sc = Scenario::default();
        assert_eq!(cutoff(&sc), Some(Bytes(38_272)));
        let mut ecn_star = sc.clone();
        ecn_star.transport.cc = CcConfig::EcnStar(Default::default());
        assert_eq!(cutoff(&ecn_star), Some(Bytes(53_156)));
        // Leaf-spine, 10 Gbps hosts, 40 Gbps uplinks, 2 us links, host-leaf-spine-leaf-host:
        // RTT = 2 x (4 us + 1,262.4 ns) + 2 x (4 us + 315.6 ns) = 19.156 us; 1.25 GB/s x
        // 19.156 us = 23,945 B; x 0.72 = 17,240.4 B.
        let mut ls = sc.clone();
        ls.topology = Topology {
            kind: TopologyKind::LeafSpine,
            link_rate: Rate(10_000_000_000),
            uplink_rate: Rate(40_000_000_000),
            link_delay: Time(2_000_000),
            ..Topology::default()
        };
        assert_eq!(cutoff(&ls), Some(Bytes(17_240)));
        // Any marking rule, a transport that ignores marks, non-ECT packets or no TCP
        // traffic: unchanged.
        let mut variants: Vec<Scenario> = vec![sc.clone(); 4];
        variants[0].workload.pattern = Pattern::Udp;
        variants[1].host.ecn_k = Bytes(1);
        variants[2].transport.cc = CcConfig::NewReno(Default::default());
        variants[3].transport.ecn = EcnCapable::Off;
        for kind in MarkerConfig::KINDS {
            let mut v = sc.clone();
            v.switch.marking.set(MarkerConfig::of_kind(kind).unwrap());
            variants.push(v);
        }
        for v in variants {
            let resolved = v.resolved().unwrap();
            assert_eq!(resolved.switch.marking, v.switch.marking);
        }
    }

    /// Failed links lengthen the longest route, and with it the derived cut-off: leaf 0
    /// (node 12) without spine 0 (node 15) and leaf 1 (node 13) without spine 1 (node 16)
    /// reach each other through leaf 2 and both spines, 6 links instead of 4.
    /// A host set of the wrong type says what a host set is, under its key.
    #[test]
    fn a_bad_host_set_names_the_accepted_forms() {
        let err = Scenario::from_toml("[workload]\npattern = \"many_to_few\"\nsenders = 2\n").unwrap_err().to_string();
        assert!(err.contains("workload.senders") && err.contains("a set of hosts"), "{err}");
    }

    #[test]
    fn failed_links_lengthen_the_longest_path() {
        let topology =
            Topology { kind: TopologyKind::LeafSpine, leaves: 3, spines: 2, hosts_per_leaf: 4, ..Topology::default() };
        let mut sc = Scenario { topology, ..Scenario::default() };
        let hops = |sc: &Scenario| sc.topology.longest_path(|_, d| d.0).unwrap().len();
        let k = |sc: &Scenario| match sc.resolved().unwrap().switch.marking.rules() {
            [MarkerConfig::Cutoff(c)] => c.k.0,
            other => panic!("{other:?}"),
        };
        let intact = sc.clone();
        sc.topology.failed_links = vec![[12, 15], [13, 16]];
        assert_eq!((hops(&intact), hops(&sc)), (4, 6));
        // Every link the same: the round trip grows by half (each K rounded once).
        assert!((k(&sc) as f64 - k(&intact) as f64 * 1.5).abs() <= 1.0, "{} {}", k(&sc), k(&intact));
    }

    #[test]
    fn host_sets() {
        let s = HostSet::Text("0-3, 7".into());
        assert_eq!(s.resolve(8, "x").unwrap(), vec![0, 1, 2, 3, 7]);
        assert!(s.resolve(7, "x").is_err());
        assert!(HostSet::Text("3-1".into()).resolve(8, "x").is_err());
    }
}
