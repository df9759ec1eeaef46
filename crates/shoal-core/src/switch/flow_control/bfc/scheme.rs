//! BFC as a switch's flow control (`[switch.flow_control] kind = "bfc"`): `Decide` steers
//! and pauses flows; this sends the filters every interval while any flow is paused,
//! holds queue heads by the filters received, and hands PFC frames to the PFC backstop.

use super::decide::{Assignment, Decide, Setup, FIRST_PHYSICAL};
use super::{BloomShape, FlowTable};
use crate::check_env::CheckEnv;
use crate::config::{ScenarioError, Warnings};
use crate::net::pause::{filter_frame, PauseGate};
use crate::net::{Effect, Ext, Packet};
use crate::registry::Scheme;
use crate::sim::{stream, Ps};
use crate::stats::SchemeCounters;
use crate::switch::admission::Verdict;
use crate::switch::flow_control::{
    DeadlockWatch, FlowControl, FlowControlEnv, FlowControlFacts, FlowControlReport, FlowCx, HeadroomEpisode,
    IngressCx, Lossless, LosslessArrival, Pfc, PfcConfig, PortView, Steering, StepCx,
};
use crate::switch::mmu::{Charge, IngressAccounts};
use crate::units::{Bytes, Time};
use serde::{Deserialize, Serialize};

/// The timer token of the interval tick (the PFC backstop's tokens stay below it).
const TICK: u32 = 1 << 30;

/// BFC's keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BfcConfig {
    /// Virtual flow ids, the buckets of the flow table. Default 16,384 (§3.8).
    pub vfids: u32,
    /// Entries of the flow table's overflow cache. Default 100 (§3.8).
    pub overflow_cache: u32,
    /// Bytes of a filter. Default 128 (§3.6).
    pub filter_bytes: u32,
    /// Hashes (stages) of a filter. Default 4 (§3.6).
    pub filter_hashes: u32,
    /// Bytes of a filter frame besides the filter: Ethernet header and check sequence.
    /// Default 18 B.
    pub frame_header: Bytes,
    /// The round trip of a pause to a neighbour and back, for every port. Default, by
    /// port: twice the delay of its link (2 us on 1 us links, §4.1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hop_rtt: Option<Time>,
    /// Time between the filters sent on a port, for every port. Default, by port: half
    /// of its hop RTT (§3.3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<Time>,
    /// Resume every due flow of a queue at each interval (BFC-BufferOpt) instead of one.
    /// Default false.
    pub resume_all: bool,
    /// How a flow gets its physical queue: "dynamic" (default, BFC) or "hash" (the
    /// queue its VFID hashes to, BFC-VFID).
    pub assignment: Assignment,
    /// Flows' first packets go to a high-priority queue that is never paused (§3.7).
    /// Default true; false leaves queue 1 unused (fig. 11's "without HPQ").
    pub first_packet_queue: bool,
    /// PFC beneath BFC, for the packets BFC cannot stop in time (§3.9): its keys, as
    /// `[switch.flow_control]` of kind "pfc" takes them. Default: none (BFC may drop).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backstop: Option<PfcConfig>,
}

impl Default for BfcConfig {
    fn default() -> Self {
        BfcConfig {
            vfids: 16_384,
            overflow_cache: 100,
            filter_bytes: 128,
            filter_hashes: 4,
            frame_header: Bytes(18),
            hop_rtt: None,
            interval: None,
            resume_all: false,
            assignment: Assignment::Dynamic,
            first_packet_queue: true,
            backstop: None,
        }
    }
}

impl BfcConfig {
    /// The bytes BFC keeps at a switch of `ports` ports of `queues` queues each, by the
    /// key that sizes them: the flow table's buckets (`vfids`) and overflow cache
    /// (`overflow_cache`), and by port a counting filter of its paused flows, the filter
    /// last received and each queue's lists of flows to resume (`filter_bytes`).
    pub fn switch_bytes(&self, ports: u64, queues: u64) -> [(&'static str, u64); 3] {
        let filter_bits = self.filter_bytes as u64 * 8;
        let counting = filter_bits * std::mem::size_of::<u32>() as u64 + self.filter_bytes as u64;
        let per_queue = (std::mem::size_of::<std::collections::VecDeque<u32>>()
            + std::mem::size_of::<Vec<u32>>()
            + std::mem::size_of::<Ps>()) as u64;
        [
            ("vfids", FlowTable::bytes(self.vfids, 0)),
            ("overflow_cache", FlowTable::bytes(0, self.overflow_cache as usize)),
            ("filter_bytes", ports * (counting + self.filter_bytes as u64 + queues * per_queue)),
        ]
    }

    /// How the run watches for deadlocks: only with the PFC backstop.
    pub fn deadlock_watch(&self) -> Option<DeadlockWatch> {
        self.backstop.as_ref().map(PfcConfig::deadlock_watch)
    }
}

/// BFC at one switch.
///
/// Invariant: `ticking` while a tick is pending; one is pending whenever `decide` is not
/// idle or a port's last filter sent was not empty.
pub struct Bfc {
    decide: Box<Decide>,
    backstop: Option<Pfc>,
    frame_size: u32,
    ticking: bool,
    /// By port: the last filter sent there held a flow.
    sent_nonempty: Vec<bool>,
    /// By port: when its next filter is due.
    next_filter: Vec<Ps>,
    /// Filter frames sent.
    pub filters_sent: u64,
}

impl Scheme for Bfc {
    type Config = BfcConfig;
    type Env = FlowControlEnv;

    fn build(cfg: &BfcConfig, env: &FlowControlEnv) -> Self {
        let (hop_rtt, interval): (Vec<Ps>, Vec<Ps>) =
            env.ingress_links.iter().map(|l| Self::hop_rtt_and_interval(cfg, l.delay)).unzip();
        // Scenarios are refused below a frame's time (`check_intervals`); a switch built
        // without link delays (`Switch::new`) still needs a filter period.
        let interval = interval.into_iter().map(|i| i.max(1)).collect();
        let ports = env.ingress_links.len();
        let setup = Setup {
            queues: env.queues,
            vfids: cfg.vfids,
            overflow_cache: cfg.overflow_cache as usize,
            shape: BloomShape::new(cfg.filter_bytes, cfg.filter_hashes).expect("validated"),
            hop_rtt,
            interval,
            rates: env.ingress_links.iter().map(|l| l.rate_bps).collect(),
            resume_all: cfg.resume_all,
            assignment: cfg.assignment,
            first_packet_queue: cfg.first_packet_queue,
        };
        Bfc {
            decide: Box::new(Decide::new(setup, stream(env.seed, "bfc", 0))),
            backstop: cfg.backstop.as_ref().map(|pfc| Pfc::build(pfc, env)),
            frame_size: cfg.filter_bytes + cfg.frame_header.0 as u32,
            ticking: false,
            sent_nonempty: vec![false; ports],
            next_filter: vec![0; ports],
            filters_sent: 0,
        }
    }

    fn validate(cfg: &BfcConfig, path: &str, env: &CheckEnv, warnings: &mut Warnings) -> Result<(), ScenarioError> {
        // The table is sized by these (`BfcConfig::switch_bytes`), and the memory estimate
        // counts it at every switch.
        if !(1..=1 << 20).contains(&cfg.vfids) {
            return Err(ScenarioError::not_accepted(path, "vfids", cfg.vfids, "1 to 1,048,576"));
        }
        if cfg.overflow_cache > 1 << 20 {
            return Err(ScenarioError::not_accepted(path, "overflow_cache", cfg.overflow_cache, "0 to 1,048,576"));
        }
        if !(1..=4096).contains(&cfg.filter_bytes) {
            return Err(ScenarioError::not_accepted(path, "filter_bytes", cfg.filter_bytes, "1 to 4096"));
        }
        if BloomShape::new(cfg.filter_bytes, cfg.filter_hashes).is_none() {
            return Err(ScenarioError::not_accepted(
                path,
                "filter_hashes",
                cfg.filter_hashes,
                "at least 1, dividing the filter's bits (filter_bytes x 8)",
            ));
        }
        if cfg.frame_header.0 > 9000 {
            return Err(ScenarioError::not_accepted(path, "frame_header", cfg.frame_header, "0 B to 9000 B"));
        }
        for (key, t) in [("hop_rtt", cfg.hop_rtt), ("interval", cfg.interval)] {
            if t.is_some_and(|t| t.0 == 0) {
                return Err(ScenarioError::not_accepted(path, key, t.unwrap(), "a time > 0, such as \"1us\""));
            }
        }
        Self::check_intervals(cfg, path, env, warnings)?;
        let queues = env.queues;
        if !(FIRST_PHYSICAL as u32 + 2..=64).contains(&queues) {
            return Err(ScenarioError::new(
                "switch.queues",
                format!(
                    "{queues} queues per port; BFC needs 4 to 64: the ACK queue, the first-packet queue, the physical queues and the overflow queue (35 for the paper's 32 physical queues)"
                ),
            ));
        }
        match env.dwrr_strict_queues {
            Some(strict) if strict == FIRST_PHYSICAL as u32 => {}
            _ => {
                return Err(ScenarioError::new(
                    "switch.scheduler",
                    "BFC serves its ACK and first-packet queues first and the others by deficit round robin (accepted: { kind = \"dwrr\", strict_queues = 2 })",
                ))
            }
        }
        if let Some(pfc) = &cfg.backstop {
            Pfc::validate(pfc, &format!("{path}.backstop"), env, warnings)?;
        }
        if env.classifier_set {
            warnings.push("switch.classifier has no effect under BFC, which steers flows to queues itself".to_string());
        }
        if env.tcp_flows {
            warnings.push(
                "under BFC only paced (RDMA) flows wait at their NIC for a pause; TCP packets queued at a NIC do not (workload.transport = \"rdma\")"
                    .to_string(),
            );
        }
        Ok(())
    }
}

impl FlowControlFacts for Bfc {
    /// Its PFC backstop, when set, pauses classes.
    fn pauses(_: &BfcConfig) -> bool {
        true
    }

    fn paused_classes(_: &BfcConfig) -> Option<&[u8]> {
        None
    }

    fn deadlock_watch(cfg: &BfcConfig) -> Option<DeadlockWatch> {
        cfg.deadlock_watch()
    }

    fn nic_filters(cfg: &BfcConfig) -> Option<u32> {
        Some(cfg.vfids)
    }

    /// A flow stays filtered until a filter without it arrives: the empty filter that
    /// ends a port's pauses is sent once.
    fn pauses_end_by_frame(_: &BfcConfig) -> bool {
        true
    }
}

impl Bfc {
    /// The hop RTT and filter interval of a port whose link has one-way `delay`:
    /// `hop_rtt` else twice the delay, and `interval` else half the hop RTT.
    fn hop_rtt_and_interval(cfg: &BfcConfig, delay: Ps) -> (Ps, Ps) {
        let hop_rtt = cfg.hop_rtt.map_or(2 * delay, |t| t.0);
        (hop_rtt, cfg.interval.map_or(hop_rtt / 2, |t| t.0))
    }

    /// Refuses a filter interval shorter than a filter frame takes on its link: the filters
    /// alone would fill it, and a switch ticks at its shortest interval (a link without
    /// delay would make it tick every picosecond).
    ///
    /// Warns of an interval set longer than a port's hop RTT: a flow's pause reaches the
    /// upstream a whole interval late, more than a round trip, where §3.3 sends filters
    /// every half hop RTT.
    fn check_intervals(
        cfg: &BfcConfig,
        path: &str,
        env: &CheckEnv,
        warnings: &mut Warnings,
    ) -> Result<(), ScenarioError> {
        // An unbuildable topology is reported where the network is built.
        let Ok((net, ids)) = crate::net::build_with_ids(env.topology) else { return Ok(()) };
        let frame_bytes = cfg.filter_bytes as u64 + cfg.frame_header.0;
        let mut warned = false;
        for link in net.links.iter().filter(|l| matches!(l.to, crate::net::NodeId::Switch(_))) {
            let (hop_rtt, interval) = Self::hop_rtt_and_interval(cfg, link.delay);
            if interval > hop_rtt && !warned {
                warned = true;
                let set = if cfg.hop_rtt.is_some() { "hop_rtt" } else { "twice its link's delay" };
                warnings.push(format!(
                    "{path}.interval: {} is longer than the hop RTT ({}, {set}) of the link from {} to {}: a \
                     pause reaches the upstream a whole interval late, more than a round trip (§3.3 sends \
                     filters every half hop RTT, the default)",
                    Time(interval),
                    Time(hop_rtt),
                    ids.describe(link.from),
                    ids.describe(link.to),
                ));
            }
            let frame_time = crate::sim::serialization(frame_bytes, link.rate_bps);
            if interval < frame_time {
                let (key, set) = match (cfg.interval, cfg.hop_rtt) {
                    (Some(_), _) => ("interval", "as set"),
                    (None, Some(_)) => ("hop_rtt", "half of hop_rtt"),
                    (None, None) => ("interval", "by default its link's one-way delay"),
                };
                let ns = |t: Ps| format!("{} ns", t as f64 / 1e3);
                return Err(ScenarioError::new(
                    format!("{path}.{key}"),
                    format!(
                        "BFC would send filters every {} ({set}) on the {} Gbps link from {} to {} (delay {}), \
                         less than one {} B filter frame takes there ({}); accepted: an interval of at least that, \
                         from a link delay of at least it or {path}.interval",
                        ns(interval),
                        link.rate_bps as f64 / 1e9,
                        ids.describe(link.from),
                        ids.describe(link.to),
                        ns(link.delay),
                        frame_bytes,
                        ns(frame_time),
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Sends each port with a paused flow its filter, and an empty one to a port whose
    /// last filter held a flow, when the port's interval has passed since its last;
    /// then ticks again while anything is paused or due, or an empty filter is owed.
    fn tick(&mut self, cx: &mut FlowCx) {
        let (ports, pauses) = (&cx.ports, &*cx.pauses);
        self.decide.tick(|port| ports.view(port, pauses));
        for port in 0..self.sent_nonempty.len() {
            let nonempty = self.decide.paused_at(port) > 0;
            if !nonempty && !self.sent_nonempty[port] || cx.now < self.next_filter[port] {
                continue;
            }
            self.next_filter[port] = cx.now + self.decide.setup().interval[port];
            self.sent_nonempty[port] = nonempty;
            let ext = cx.exts.insert(Ext::Filter(self.decide.filter(port).clone()));
            cx.effects.push(Effect::Frame { port: port as u16, frame: filter_frame(self.frame_size, ext) });
            self.filters_sent += 1;
        }
        self.ticking = !self.decide.is_idle() || self.sent_nonempty.contains(&true);
        if self.ticking {
            cx.effects.push(Effect::Timer { at: cx.now + self.decide.setup().tick(), token: TICK });
        }
    }

    /// Makes sure a tick is pending: at the next multiple of the interval.
    fn start_ticking(&mut self, now: Ps, cx: &mut StepCx) {
        if !self.ticking {
            self.ticking = true;
            let tick = self.decide.setup().tick();
            cx.effects.push(Effect::Timer { at: (now / tick + 1) * tick, token: TICK });
        }
    }

    /// The switch's BFC decisions.
    pub fn decide(&self) -> &Decide {
        &self.decide
    }
}

impl FlowControl for Bfc {
    /// Its PFC backstop's, when it has one.
    fn obeys_pause_frames(&self) -> bool {
        self.backstop.is_some()
    }

    fn obeys_filter_frames(&self) -> bool {
        true
    }

    fn on_timer(&mut self, token: u32, cx: &mut FlowCx) {
        if token == TICK {
            self.tick(cx);
        } else if let Some(pfc) = &mut self.backstop {
            pfc.on_timer(token, cx);
        }
    }
}

impl Lossless for Bfc {
    fn reads_ingress_accounts(&self) -> bool {
        self.backstop.as_ref().is_some_and(Pfc::reads_ingress_accounts)
    }

    fn lossless_classes(&self) -> u8 {
        self.backstop.as_ref().map_or(0, Pfc::lossless_classes)
    }

    fn headroom_used(&self, port: usize, class: usize) -> u64 {
        self.backstop.as_ref().map_or(0, |pfc| pfc.headroom_used(port, class))
    }

    fn headroom_of_port(&self, port: usize) -> u64 {
        self.backstop.as_ref().map_or(0, |pfc| pfc.headroom_of_port(port))
    }

    fn admit(&mut self, arrival: &LosslessArrival) -> Verdict {
        self.backstop.as_mut().expect("lossless classes come from the backstop").admit(arrival)
    }

    fn on_enqueue(&mut self, charge: Charge, cx: &mut IngressCx) {
        if let Some(pfc) = &mut self.backstop {
            pfc.on_enqueue(charge, cx);
        }
    }

    fn on_dequeue(&mut self, charge: Charge, cx: &mut IngressCx) {
        if let Some(pfc) = &mut self.backstop {
            pfc.on_dequeue(charge, cx);
        }
    }

    fn check_accounting(&self, id: usize, ingress: Option<&IngressAccounts>, errors: &mut Vec<String>) {
        if let Some(pfc) = &self.backstop {
            pfc.check_accounting(id, ingress, errors);
        }
    }
}

impl Steering for Bfc {
    fn steers_flows(&self) -> bool {
        true
    }

    fn assign_queue(&mut self, pkt: &Packet, ingress: usize, view: &PortView) -> usize {
        self.decide.assign(pkt, ingress, view)
    }

    fn on_buffered(&mut self, pkt: &Packet, q: usize, view: &PortView, cx: &mut StepCx) {
        if self.decide.buffered(pkt, q, view) {
            self.start_ticking(cx.now, cx);
        }
    }

    fn on_sent(&mut self, pkt: &Packet, q: usize, view: &PortView, _cx: &mut StepCx) {
        self.decide.sent(pkt, q, view);
    }

    fn holds_head(&self, q: usize, head: &Packet, gate: &PauseGate) -> bool {
        self.decide.holds(q, head, gate)
    }
}

impl FlowControlReport for Bfc {
    fn add_counters(&self, out: &mut SchemeCounters) {
        let d = &self.decide;
        for (key, value) in [
            ("pauses", d.pauses),
            ("resumes", d.resumes),
            ("filter_frames_sent", self.filters_sent),
            ("placements", d.placements),
            ("collisions", d.collisions),
            ("overflowed", d.overflowed),
            ("shared_vfid", d.shared_vfid),
        ] {
            out.add("bfc", key, value);
        }
    }

    fn frames_sent(&self, port: usize, class: usize) -> [u64; 2] {
        self.backstop.as_ref().map_or([0, 0], |pfc| pfc.frames_sent(port, class))
    }

    fn headroom_episodes(&self) -> &[HeadroomEpisode] {
        self.backstop.as_ref().map_or(&[], Pfc::headroom_episodes)
    }
}
