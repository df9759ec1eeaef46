//! The scenario: a serde schema with documented defaults (`defaults.toml`), and its
//! validation. Every error names the key path, the value and what is accepted.

use crate::check_env::CheckEnv;
pub use crate::config::run::{FctUntil, RunConfig};
pub use crate::config::{PerQueue, Probability, ScenarioError, Warnings};
pub use crate::host::config::{HostConfig, NicOrder};
pub use crate::net::config::{Topology, TopologyKind, MAX_HOSTS, MAX_SWITCH_PORTS};
use crate::net::Packet;
use crate::switch::classify::Classify;
pub use crate::switch::config::{EcnConfig, EcnScope, MarkPoint, NonEct, ReservePer, SwitchConfig, MAX_QUEUES};
use crate::switch::flow_control::FlowControlConfig;
use crate::switch::marking::{CutoffConfig, MarkerConfig};
use crate::switch::mmu::class_of;
use crate::switch::scheduler::SchedulerConfig;
use crate::transport::cc::{CcConfig, RdmaCcConfig};
pub use crate::transport::config::{
    EcnCapable, PartialAckRto, RdmaConfig, RdmaWindow, RestartAfter, RestartWindow, Rto, TransportConfig,
};
use crate::units::{Bytes, Rate, Time};
pub use crate::workload::config::{
    Arrival, FanInSizes, FlowTransport, HostSet, HostSetItem, LoadOn, Pacing, Pattern, Workload,
};
use serde::{Deserialize, Serialize};

/// The commented defaults file; `Scenario::default()` equals what it parses to.
pub const DEFAULTS_TOML: &str = include_str!("defaults.toml");

/// The share of a switch's buffer that reserves for unused queues may take before it is
/// warned about: beyond a tenth, the shared pool of a "same chip" comparison is visibly
/// not the chip's (a deliberate private buffer of a few KB per queue stays below it).
const UNUSED_RESERVE_WARNING: f64 = 0.1;

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
    /// The largest packet any transport of the scenario sends, headers included: the MTU
    /// in PFC's headroom (lossless-facts §1.3). Summed in u64: validation asks for it
    /// before it has checked the sizes.
    pub fn largest_packet(&self) -> u64 {
        let (tr, rdma) = (&self.transport, &self.rdma);
        let wide = |a: u32, b: u32| a as u64 + b as u64;
        [wide(tr.mss, tr.header), tr.ack_size as u64, wide(rdma.mtu, rdma.header), rdma.ack_size as u64]
            .into_iter()
            .max()
            .unwrap_or(0)
    }

    /// The facts the schemes' checks see (`CheckEnv`), the priorities' queues left empty
    /// (`priority_queues`). The switch's queues and alphas must be checked first.
    fn check_env(&self) -> CheckEnv<'_> {
        let s = &self.switch;
        CheckEnv {
            topology: &self.topology,
            queues: s.queues,
            ports_per_pool: s.ports_per_pool,
            pool_size: s.pool_size,
            reserved: s.reserved,
            largest_pool: s.buffer.unwrap_or(s.pool_size),
            alpha_min: (0..s.queues as usize).map(|q| s.alpha.get(q)).fold(f64::INFINITY, f64::min),
            scheduler: SchedulerConfig::kind(&s.scheduler),
            single_queue_scheduler: s.scheduler.single_queue(),
            dwrr_strict_queues: match &s.scheduler {
                SchedulerConfig::Dwrr(dwrr) => Some(dwrr.strict_queues),
                _ => None,
            },
            classifier_set: s.classifier.is_some(),
            classifier: s.classifier().kind(),
            priority_queues: Vec::new(),
            tcp_flows: self.workloads().any(|w| w.transport == FlowTransport::Tcp && w.pattern != Pattern::Udp),
            largest_packet: self.largest_packet(),
            fastest_link: self.fastest_link(),
            stop_time_set: self.run.stop_time.is_some(),
        }
    }

    /// The priorities the workloads and RDMA's ACKs use, each with the queue the switch's
    /// classifier gives it.
    fn priority_queues(&self) -> Vec<(u8, usize)> {
        let mut classify = self.switch.classifier().build(&());
        let used = self.workloads().flat_map(|w| w.classes().iter().copied()).chain(self.rdma.ack_priority);
        used.map(|p| (p, classify.queue(&Packet::template(0, 0, 0, p), self.switch.queues as usize))).collect()
    }

    /// A warning when `switch.buffer` (or a switch's own) holds reserves for queues that no
    /// packet of the scenario joins: the shared pool loses them, silently. The default
    /// reservation (8 queues of 128 KB) under `fifo`, which uses queue 0 alone, takes 7.2 MB
    /// of a 12 MB buffer of 8 ports. Without a buffer, `pool_size` is the shared pool and
    /// the reserves come on top: nothing is lost.
    fn unused_reserve_warning(&self, env: &CheckEnv) -> Option<String> {
        let s = &self.switch;
        if s.reserve_per == ReservePer::Port || s.reserved.0 == 0 || s.queues <= 1 {
            return None;
        }
        // The smallest buffer loses the largest share.
        let (key, buffer) = s
            .buffer
            .map(|b| ("switch.buffer".to_string(), b))
            .into_iter()
            .chain(s.buffer_of_node.iter().map(|(node, &b)| (format!("switch.buffer_of_node.{node}"), b)))
            .min_by_key(|(_, b)| b.0)?;
        let used = self.queues_in_use(env)?;
        let unused = s.queues as u64 - used.len() as u64;
        // The largest pool: ports_per_pool ports, or the largest switch's.
        let ports =
            self.topology.max_switch_ports().map_or(s.ports_per_pool as u64, |p| p.min(s.ports_per_pool as u64));
        let lost = ports * unused * s.reserved.0;
        if unused == 0 || (lost as f64) < UNUSED_RESERVE_WARNING * buffer.0 as f64 {
            return None;
        }
        let listed: Vec<String> = used.iter().map(|q| q.to_string()).collect();
        let only = match listed.len() {
            1 => format!("only queue {}", listed[0]),
            _ => format!("only queues {}", listed.join(", ")),
        };
        let fewer_queues = used.last().map_or(1, |&q| q + 1);
        let fix = if (fewer_queues as u32) < s.queues {
            format!(
                "set switch.queues = {fewer_queues}, or switch.reserve_per = \"port\", or a smaller switch.reserved"
            )
        } else {
            "set switch.reserve_per = \"port\", or a smaller switch.reserved".to_string()
        };
        let lost_mb = format!("{:.2} MB", lost as f64 / 1e6);
        Some(format!(
            "switch.reserved: {} is reserved per queue, but the workloads' packets join {only} of every port \
             (classifier \"{}\", scheduler \"{}\"): the reserves of the other {unused} of switch.queues = {} queues, \
             {} of each pool's {buffer} ({key}; {ports} ports x {unused} queues x {}), are never used, and the shared \
             pool is that much smaller; {fix}",
            s.reserved, env.classifier, env.scheduler, s.queues, lost_mb, s.reserved,
        ))
    }

    /// The egress queues the scenario's packets can join, in order; None where any queue may
    /// be: flows hashed over the queues (`flow_hash`), steered (BFC), tagged by the bytes
    /// they sent (PIAS), or given their priorities by a trace file.
    fn queues_in_use(&self, env: &CheckEnv) -> Option<Vec<usize>> {
        if matches!(self.switch.flow_control, FlowControlConfig::Bfc(_))
            || env.classifier == "flow_hash"
            || (env.tcp_flows && !self.transport.pias_thresholds.is_empty())
            || self.workloads().any(|w| w.pattern == Pattern::Trace)
        {
            return None;
        }
        let queues: std::collections::BTreeSet<usize> = env.priority_queues.iter().map(|&(_, q)| q).collect();
        Some(queues.into_iter().collect())
    }

    /// The rate of the fastest link (a star has no uplinks, whatever `uplink_rate` says).
    /// 0 for a topology that cannot be built, which validation refuses first.
    fn fastest_link(&self) -> Rate {
        match self.topology.kind {
            TopologyKind::Star => self.topology.link_rate,
            _ => self.topology.fastest_rate().unwrap_or_default(),
        }
    }

    /// The largest packet the scenario's workloads send, headers included, and the keys
    /// that size it: TCP's segments and ACKs for TCP flows, TCP's segments for UDP
    /// (which sends them), RDMA's packets and ACKs for RDMA flows. The least a buffer
    /// must hold.
    pub fn largest_packet_sent(&self) -> (u64, &'static str) {
        let (tr, rdma) = (&self.transport, &self.rdma);
        let tcp_data = (tr.mss as u64 + tr.header as u64, "transport.mss + transport.header");
        self.workloads()
            .flat_map(|w| match (w.pattern, w.transport) {
                (Pattern::Udp, _) => vec![tcp_data],
                (_, FlowTransport::Tcp) => vec![tcp_data, (tr.ack_size as u64, "transport.ack_size")],
                (_, FlowTransport::Rdma) => {
                    vec![
                        (rdma.mtu as u64 + rdma.header as u64, "rdma.mtu + rdma.header"),
                        (rdma.ack_size as u64, "rdma.ack_size"),
                    ]
                }
            })
            .max_by_key(|&(bytes, _)| bytes)
            .unwrap_or((0, ""))
    }

    /// Parses a scenario from TOML text; errors name the key path.
    pub fn from_toml(text: &str) -> Result<Scenario, ScenarioError> {
        let value: toml::Value = serde_path_to_error::deserialize(toml::Deserializer::new(text)).map_err(|e| {
            let path = e.path().to_string();
            ScenarioError::from_serde(path, e.into_inner().message())
        })?;
        // JSON has no NaN or infinity: converted, they would become null (and an optional
        // key's null reads as unset).
        if let Some((path, number)) = non_finite(&value, String::new()) {
            return Err(not_finite(path, &number));
        }
        Scenario::from_value(serde_json::to_value(value).expect("a TOML value of finite numbers is JSON"))
    }

    /// Parses a scenario from JSON text; errors name the key path.
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            // Python writes NaN and infinities as these words, which JSON does not have;
            // the error's column is at the word, or past the sign of "-Infinity".
            let line = text.lines().nth(inner.line().saturating_sub(1)).unwrap_or("");
            let column = inner.column().saturating_sub(1);
            let at = |start: usize| line.get(start..).unwrap_or("");
            let signed = column.checked_sub(1).is_some_and(|sign| at(sign).starts_with('-'));
            let word = match ["NaN", "Infinity"].into_iter().find(|w| at(column).starts_with(w)) {
                Some("Infinity") if signed => Some("-Infinity"),
                word => word,
            };
            if let Some(word) = word {
                return not_finite(if path == "." { String::new() } else { path }, word);
            }
            let message = inner.to_string();
            let message = message.find(" at line ").map_or(message.as_str(), |at| &message[..at]).to_string();
            ScenarioError::from_serde(path, &message)
        })?;
        Scenario::from_value(value)
    }

    /// Parses a scenario as written: old spellings are read as their new keys
    /// (`input_checks::upgrade`), then every table must be a table. An error inside a
    /// value written under an old key names that key.
    fn from_value(mut value: serde_json::Value) -> Result<Scenario, ScenarioError> {
        let upgrade = crate::input_checks::upgrade(&mut value)?;
        let as_written = |mut e: ScenarioError| {
            e.path = upgrade.as_written(&e.path);
            e
        };
        crate::presets::apply(&mut value)?;
        crate::input_checks::check_tables(&value).map_err(as_written)?;
        serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            as_written(point_to_the_other_transport(ScenarioError::from_serde(path, &e.into_inner().to_string())))
        })
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a scenario always serializes")
    }

    /// The scenario with its derived defaults filled in (what a run uses and what
    /// `scenario.json` shows): the classifier the scheduler implies, when none is set
    /// (`SwitchConfig::classifier`), and the ECN cut-off. TCP traffic whose transport reacts to ECN marks
    /// (DCTCP, ECN*) on a network where no marking rule is set at all gets the cut-off
    /// `switch.marking.cutoff.k = lambda x C x RTT` (BCC paper, section II-C; lambda = 0.72 for DCTCP,
    /// 1 for ECN*), C the host link rate (the fastest host link of a topology file) and RTT
    /// the base round trip of the longest path (`Topology::longest_path`) with one data
    /// packet and one ACK serialized per link. Without it DCTCP would never see a mark and
    /// behave as loss-based TCP filling the buffer. Fails only where the network must be
    /// built to know the path and cannot be (`net::build`).
    pub fn resolved(&self) -> Result<Scenario, ScenarioError> {
        let mut sc = self.clone();
        sc.switch.classifier = Some(sc.switch.classifier());
        let tr = &sc.transport;
        let (sw, host) = (&sc.switch, &sc.host);
        let Some(lambda) = tr.cc.ecn_lambda() else { return Ok(sc) };
        let marks = !sw.marking.is_empty() || host.ecn_k.0 > 0;
        let tcp = sc.workloads().any(|w| w.pattern != Pattern::Udp && w.transport == FlowTransport::Tcp);
        if marks || !tr.ect() || !tcp {
            return Ok(sc);
        }
        let (data, ack) = (tr.mss as u64 + tr.header as u64, tr.ack_size as u64);
        let round_trip = |rate: Rate, delay: Time| 2 * delay.0 + crate::sim::serialization(data + ack, rate.0);
        let rtt_ps: u64 =
            sc.topology.longest_path(round_trip)?.iter().map(|&(rate, delay)| round_trip(rate, delay)).sum();
        let bdp = sc.topology.host_rate()?.0 as f64 / 8.0 * rtt_ps as f64 / crate::sim::PS_PER_S as f64;
        let k = Bytes((lambda * bdp).round().max(1.0) as u64);
        sc.switch.marking.set(MarkerConfig::Cutoff(CutoffConfig { k }));
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
        self.check_round_trip(&mut warnings)?;
        let s = &self.switch;
        if s.queues == 0 || s.queues > MAX_QUEUES {
            return err("switch.queues", format!("{} is not accepted (accepted: 1 to {MAX_QUEUES})", s.queues));
        }
        if s.ports_per_pool == 0 {
            return err("switch.ports_per_pool", "must be at least 1".into());
        }
        let alphas = s.alpha.values();
        if alphas.is_empty() {
            return err("switch.alpha", "the list is empty (accepted: a number > 0 or one per queue)".into());
        }
        for a in &alphas {
            if !(a.is_finite() && *a > 0.0) {
                return err("switch.alpha", format!("{a} is not accepted (accepted: a number > 0)"));
            }
        }
        if alphas.len() > 1 && alphas.len() != s.queues as usize {
            return err(
                "switch.alpha",
                format!(
                    "has {} values but switch.queues = {} (accepted: one value, or one per queue)",
                    alphas.len(),
                    s.queues
                ),
            );
        }
        let mut env = self.check_env();
        s.admission.validate("switch.admission", &env, &mut warnings)?;
        s.scheduler.validate("switch.scheduler", &env, &mut warnings)?;
        s.classifier().validate("switch.classifier", &env, &mut warnings)?;
        // The classifier places the priorities only once its keys are known to be good.
        env.priority_queues = self.priority_queues();
        s.flow_control.validate("switch.flow_control", &env, &mut warnings)?;
        s.marking.validate("switch.marking", &env, &mut warnings)?;
        // Packet and header sizes, each (key, value, least, most) in bytes.
        let sizes = |checks: &[(&str, u32, u32, u32)]| -> Result<(), ScenarioError> {
            match checks.iter().find(|&&(_, v, lo, hi)| !(lo..=hi).contains(&v)) {
                Some(&(path, v, lo, hi)) => {
                    Err(ScenarioError::new(path, format!("{v} is not accepted (accepted: {lo} to {hi} bytes)")))
                }
                None => Ok(()),
            }
        };
        let tr = &self.transport;
        sizes(&[("transport.mss", tr.mss, 1, 65_000), ("transport.header", tr.header, 0, 1000)])?;
        let rdma = &self.rdma;
        sizes(&[
            ("transport.ack_size", tr.ack_size, 1, 10_000),
            ("rdma.mtu", rdma.mtu, 1, 65_000),
            ("rdma.header", rdma.header, 0, 1000),
            ("rdma.ack_size", rdma.ack_size, 1, 10_000),
        ])?;
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
        for (node, buffer) in &s.buffer_of_node {
            // A key TOML could write bare is named bare, another in quotes.
            let bare = !node.is_empty() && node.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            let key =
                if bare { format!("switch.buffer_of_node.{node}") } else { format!("switch.buffer_of_node.{node:?}") };
            if node.parse::<u32>().is_err() {
                return err(
                    &key,
                    format!("{node:?} is not a node id (accepted: a whole number, the id of a switch as topology.failed_links names nodes)"),
                );
            }
            if *buffer < packet {
                return err(
                    &key,
                    format!("{buffer} cannot hold one packet of {packet} ({sent_keys}); accepted: at least {packet}"),
                );
            }
        }
        if s.buffer.is_none() && Bytes(s.pool_size.0 + s.reserved.0) < packet {
            return err(
                "switch.pool_size",
                format!(
                    "{} plus switch.reserved = {} cannot hold one packet of {packet} ({sent_keys}); accepted: \
                     together at least {packet}",
                    s.pool_size, s.reserved
                ),
            );
        }
        warnings.extend(self.unused_reserve_warning(&env));
        rdma.cc.validate("rdma.cc", &env, &mut warnings)?;
        rdma.cc.line_rate_warnings("rdma.cc", &env, &mut warnings);
        rdma.validate(&mut warnings)?;
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
        if rdma_flows && s.ecn.non_ect == NonEct::Drop && !s.marking.rules().is_empty() && !acks_lossless() {
            warnings.push(
                "switch.ecn.non_ect = \"drop\" drops RDMA ACKs and NACKs (not ECN-capable) where a marking rule \
                 would mark them, and a connection that loses its last ACK never completes (RDMA has no \
                 retransmission timeout); set non_ect = \"pass\": ns3-datacenter's switches mark, never drop"
                    .into(),
            );
        }
        if let (true, Rto::After(rto)) = (rdma_flows, rdma.rto) {
            // One data packet out and its ACK back over every link of the longest route.
            let (data, ack) = (rdma.mtu as u64 + rdma.header as u64, rdma.ack_size as u64);
            let link = |rate: Rate, delay: Time| -> u64 { 2 * delay.0 + crate::sim::serialization(data + ack, rate.0) };
            let rtt: u64 = self.topology.longest_path(link)?.iter().map(|&(rate, delay)| link(rate, delay)).sum();
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
        if tr.init_cwnd == 0 {
            return err("transport.init_cwnd", "must be at least 1 packet".into());
        }
        env.check_timeout("transport.rto_min", tr.rto_min)?;
        env.check_timeout("transport.rto_init", tr.rto_init)?;
        if let Rto::After(rto) = rdma.rto {
            env.check_timeout("rdma.rto", rto)?;
        }
        if tr.rto_max < tr.rto_min {
            return err("transport.rto_max", format!("{} is below transport.rto_min = {}", tr.rto_max, tr.rto_min));
        }
        if tr.dupack_threshold == 0 {
            return err("transport.dupack_threshold", "must be at least 1".into());
        }
        tr.cc.validate("transport.cc", &env, &mut warnings)?;
        if tr.pias_thresholds.windows(2).any(|w| w[0] >= w[1]) || tr.pias_thresholds.first() == Some(&Bytes(0)) {
            return err("transport.pias_thresholds", "must be positive and increasing, e.g. [\"1MB\"]".into());
        }
        if tr.pias_thresholds.len() >= s.queues as usize && !s.scheduler.single_queue() {
            warnings.push(format!(
                "transport.pias_thresholds: {} thresholds make {} classes but switches have {} queues; the lowest classes share the last queue",
                tr.pias_thresholds.len(),
                tr.pias_thresholds.len() + 1,
                s.queues
            ));
        }
        if !tr.pias_thresholds.is_empty() && s.scheduler.single_queue() {
            warnings.push(
                "transport.pias_thresholds: tags have no effect with switch.scheduler.kind = \"fifo\" (one queue)"
                    .into(),
            );
        }
        if tr.max_cwnd.0 != 0 && tr.max_cwnd.0 < tr.mss as u64 {
            return err(
                "transport.max_cwnd",
                format!("{} is below one MSS ({} B); 0 means unlimited", tr.max_cwnd, tr.mss),
            );
        }
        self.workload.validate("workload", hosts, &self.topology, &mut warnings)?;
        if !self.workload.extra.is_empty() {
            for (i, w) in self.workload.extra.iter().enumerate() {
                let path = format!("workload.extra[{i}]");
                if !w.extra.is_empty() {
                    return err(&path, "extra workloads cannot nest further extra workloads".into());
                }
                w.validate(&path, hosts, &self.topology, &mut warnings)?;
            }
        }
        let r = &self.run;
        if r.stop_time == Some(Time(0)) {
            return err("run.stop_time", "must be positive".into());
        }
        if let Some(interval) = r.sample_interval.filter(|i| i.0 < 1_000) {
            return err("run.sample_interval", format!("{interval} is too short (accepted: 1ns or more)"));
        }
        if let Some(until) = r.occupancy_until {
            if !r.occupancy_cdf {
                return err(
                    "run.occupancy_until",
                    format!("{until} is set but run.occupancy_cdf is not (accepted: with occupancy_cdf = true)"),
                );
            }
            if until.0 == 0 {
                return err("run.occupancy_until", "must be positive (accepted: a time above 0, e.g. \"1ms\")".into());
            }
        }
        if r.size_buckets.len() != 2 || r.size_buckets[0] >= r.size_buckets[1] {
            return err("run.size_buckets", "must be two increasing sizes, e.g. [\"100KB\", \"10MB\"]".into());
        }
        let endless = self
            .workloads()
            .any(|w| w.pattern == Pattern::LongLived || (w.pattern == Pattern::Udp && w.stop.is_none()));
        if endless && r.stop_time.is_none() {
            return err("run.stop_time", "is required with long_lived traffic or udp without workload.stop".into());
        }
        Ok(warnings)
    }

    /// Refuses a topology whose longest route one packet and its ACK cannot cross and
    /// come back within Shoal's time limit (no flow could finish: a run would only reach
    /// the limit, hours later), and warns of one whose round trip is a second or more
    /// (datacenter round trips are microseconds: a unit mistake). The key named is the
    /// one that adds the most. A built-in kind's longest route is known without building
    /// the network (so a million hosts are refused at once); a file's links are judged
    /// one by one (a route's sum would need the routes).
    fn check_round_trip(&self, warnings: &mut Warnings) -> Result<(), ScenarioError> {
        const SECOND: u128 = crate::sim::PS_PER_S as u128;
        let packet = self.largest_packet();
        let link_round_trip =
            |rate: u64, delay: u64| 2 * (delay as u128 + crate::sim::serialization(packet, rate) as u128);
        let t = &self.topology;
        let (key, value, round_trip, what) = if t.kind == TopologyKind::File {
            let (net, ids) = crate::net::build_with_ids(t)?;
            let Some(slowest) = net.links.iter().max_by_key(|l| link_round_trip(l.rate_bps, l.delay)) else {
                return Ok(());
            };
            // The lower node id first, as a file line may give it.
            let mut ends = [slowest.from, slowest.to];
            ends.sort_by_key(|&n| ids.id(n));
            let value = format!(
                "{}: the link between {} and {} ({}, {})",
                t.path.as_deref().unwrap_or_default(),
                ids.describe(ends[0]),
                ids.describe(ends[1]),
                Rate(slowest.rate_bps),
                Time(slowest.delay)
            );
            ("topology.path".to_string(), value, link_round_trip(slowest.rate_bps, slowest.delay), "over it alone")
        } else {
            // The route as if no link had failed: failures only lengthen it.
            let whole = Topology { failed_links: Vec::new(), ..t.clone() };
            let route = whole.longest_path(|rate, delay| (link_round_trip(rate.0, delay.0) / 2) as u64)?;
            let uplinks = route.len().saturating_sub(2) as u128;
            let ser = |rate: Rate| crate::sim::serialization(packet, rate.0) as u128;
            // Each key's part of the round trip: 2 ways over the route's links of it (the
            // uplinks take link_delay unless uplink_delay is set).
            let (host_delay_links, uplink_delay) = match t.uplink_delay {
                Some(d) => (2, d),
                None => (2 + uplinks, Time(0)),
            };
            let parts = [
                ("topology.link_delay", t.link_delay.to_string(), 2 * host_delay_links * t.link_delay.0 as u128),
                ("topology.link_rate", t.link_rate.to_string(), 4 * ser(t.link_rate)),
                ("topology.uplink_delay", uplink_delay.to_string(), 2 * uplinks * uplink_delay.0 as u128),
                ("topology.uplink_rate", t.uplink_rate.to_string(), 2 * uplinks * ser(t.uplink_rate)),
            ];
            let round_trip = parts.iter().map(|p| p.2).sum();
            let (key, value, _) = parts.into_iter().max_by_key(|p| p.2).expect("four parts");
            (key.to_string(), value, round_trip, "over the longest route")
        };
        let seconds = round_trip as f64 / SECOND as f64;
        let journey = format!("a round trip of {seconds:.3} s {what} for one {packet} B packet and its answer");
        if round_trip > crate::sim::TIME_LIMIT as u128 {
            return Err(ScenarioError::new(
                key,
                format!(
                    "{value} makes {journey}, beyond Shoal's time limit of {} s: no flow could finish (accepted: \
                     links whose round trips fit the limit; datacenter links take nanoseconds to microseconds)",
                    crate::sim::TIME_LIMIT / crate::sim::PS_PER_S
                ),
            ));
        }
        if round_trip >= SECOND {
            warnings.push(format!(
                "{key}: {value} makes {journey}; every flow takes at least that, where datacenter round trips \
                 take microseconds (check the units: a plain rate is bits per second)"
            ));
        }
        Ok(())
    }

    /// The primary workload followed by the extra ones.
    pub fn workloads(&self) -> impl Iterator<Item = &Workload> {
        std::iter::once(&self.workload).chain(self.workload.extra.iter())
    }

    /// The workloads (as `workloads`) with their key paths: `workload`, then
    /// `workload.extra[0]`, ...
    pub fn workload_paths(&self) -> impl Iterator<Item = (String, &Workload)> {
        self.workloads().enumerate().map(|(i, w)| match i {
            0 => ("workload".to_string(), w),
            _ => (format!("workload.extra[{}]", i - 1), w),
        })
    }
}

/// `e`, or for a congestion control set in the other transport's section (`hpcc` in
/// `transport.cc`, `newreno` in `rdma.cc`), `e` with where it belongs.
fn point_to_the_other_transport(mut e: ScenarioError) -> ScenarioError {
    let sections = [
        ("transport.cc", "rdma.cc", RdmaCcConfig::KINDS, "RDMA connections", "rdma"),
        ("rdma.cc", "transport.cc", CcConfig::KINDS, "TCP flows", "tcp"),
    ];
    for (section, other, kinds, flows, transport) in sections {
        if e.path != section && e.path != format!("{section}.kind") {
            continue;
        }
        let kind = e.message.strip_prefix("unknown kind \"").and_then(|rest| rest.split('"').next());
        if let Some(kind) = kind.filter(|k| kinds.contains(k)) {
            e.message.push_str(&format!(
                "; \"{kind}\" is a congestion control of {flows}: set it in [{other}] (kind = \"{kind}\"), \
                 for workloads with transport = \"{transport}\""
            ));
        }
    }
    e
}

/// The first number of `value` (at `path`) that is NaN or infinite: its path (as
/// `serde_path_to_error` writes paths) and the number as written.
fn non_finite(value: &toml::Value, path: String) -> Option<(String, String)> {
    match value {
        toml::Value::Float(x) if !x.is_finite() => Some((path, x.to_string())),
        toml::Value::Table(table) => table
            .iter()
            .find_map(|(key, v)| non_finite(v, if path.is_empty() { key.clone() } else { format!("{path}.{key}") })),
        toml::Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| non_finite(v, format!("{path}[{i}]"))),
        _ => None,
    }
}

/// The error for a NaN or infinite `number` at `path`.
fn not_finite(path: String, number: &str) -> ScenarioError {
    ScenarioError::new(path, format!("{number} is not accepted (accepted: a finite number)"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
