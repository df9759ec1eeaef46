//! What the scenario's sections say together: the facts the schemes' checks see
//! (`CheckEnv`), the largest packets, and the reserves no packet uses.

use super::Scenario;
use crate::check_env::CheckEnv;
use crate::net::config::TopologyKind;
use crate::net::Packet;
use crate::switch::classify::Classify;
use crate::switch::config::ReservePer;
use crate::switch::flow_control::FlowControlConfig;
use crate::switch::scheduler::SchedulerConfig;
use crate::units::Rate;
use crate::workload::config::{FlowTransport, Pattern};

/// The share of a switch's buffer that reserves for unused queues may take before it is
/// warned about: beyond a tenth, the shared pool of a "same chip" comparison is visibly
/// not the chip's (a deliberate private buffer of a few KB per queue stays below it).
const UNUSED_RESERVE_WARNING: f64 = 0.1;

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
    pub(super) fn check_env(&self) -> CheckEnv<'_> {
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
    pub(super) fn priority_queues(&self) -> Vec<(u8, usize)> {
        let mut classify = self.switch.classifier().build(&());
        let used = self.workloads().flat_map(|w| w.classes().iter().copied()).chain(self.rdma.ack_priority);
        used.map(|p| (p, classify.queue(&Packet::template(0, 0, 0, p), self.switch.queues as usize))).collect()
    }

    /// A warning when `switch.buffer` (or a switch's own) holds reserves for queues that no
    /// packet of the scenario joins: the shared pool loses them, silently. The default
    /// reservation (8 queues of 128 KB) under `fifo`, which uses queue 0 alone, takes 7.2 MB
    /// of a 12 MB buffer of 8 ports. Without a buffer, `pool_size` is the shared pool and
    /// the reserves come on top: nothing is lost.
    pub(super) fn unused_reserve_warning(&self, env: &CheckEnv) -> Option<String> {
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
}
