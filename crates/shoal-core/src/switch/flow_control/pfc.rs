//! Priority flow control (IEEE 802.1Qbb) as the reference simulators implement it: the
//! HPCC code base and its descendant ns3-datacenter (N3DC), lossless-facts §1.
//!
//! Ingress accounting per (ingress port, class). A lossless packet stays out of headroom
//! while the bytes of its ingress queue outside headroom, with it, are at most the
//! dynamic threshold T = alpha * (free shared bytes of the ingress port's pool, the
//! bytes held in headroom not counted as used, as both references count them) and its
//! egress pool has shared room; otherwise it goes into the headroom of its ingress
//! queue, and is dropped (`HeadroomOverflow`) only when that headroom is full. By
//! default, as N3DC does, T is computed with the arrival counted, and once a queue uses
//! headroom every arrival goes there until it is empty (`headroom_admission`). After each
//! enqueue, a queue that uses headroom (or, with `pause_at = "threshold"`, holds T bytes
//! or more outside it) PAUSEs its upstream; after each dequeue of one of its packets, a
//! paused queue with no headroom in use and few bytes (below `xon_floor`, or
//! `xon_offset` under T) RESUMEs it. Departures release headroom first, as the
//! references do (N3DC and HPCC `switch-mmu.cc` `RemoveFromIngressAdmission`).
//!
//! Frames are ON/OFF by default (HPCC, N3DC): a PAUSE holds until its RESUME, and no
//! timer exists. With `pause_quanta`, every PAUSE carries an 802.1Qbb timer and the
//! paused side resumes by itself when it runs out; the switch re-sends the PAUSE every
//! `refresh_quanta` while it still holds the pause, as ns3-rdma does (lossless-facts
//! §1.1, "Pause semantics"; §1.2).

use super::{
    check_pausing_keys, class_mask, pausing_warnings, resume_offset_warning, FlowControl, FlowControlEnv,
    FlowControlFacts, FlowControlReport, HeadroomEpisode, IngressCx, Lossless, LosslessArrival, PoolState, Steering,
    UpstreamPauses,
};
use crate::check_env::CheckEnv;
use crate::config::{ScenarioError, Warnings};
use crate::net::config::{Topology, TopologyKind};
use crate::net::Effect;
use crate::registry::Scheme;
use crate::sim::{LinkRate, Ps};
use crate::stats::DropReason;
use crate::switch::admission::Verdict;
use crate::switch::flow_control::DeadlockWatch;
use crate::switch::mmu::{class_of, Charge, IngressAccounts, CLASSES};
use crate::units::{Bytes, Rate, Time};
use serde::{Deserialize, Serialize};

use crate::net::pause::QUANTUM_BYTES;
pub use crate::net::pause::{pause_frame, quanta_time, read_pause_frame, Pause};

/// `pause_quanta`: how long a PAUSE holds, `"none"` (until its RESUME) or a timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PauseQuanta {
    /// ON/OFF: a PAUSE holds until its RESUME, and no timer exists (HPCC, N3DC).
    #[default]
    OnOff,
    /// Every PAUSE carries this timer, 1 to 65535 quanta.
    Quanta(u16),
}

impl PauseQuanta {
    fn is_on_off(&self) -> bool {
        *self == PauseQuanta::OnOff
    }
}

impl Serialize for PauseQuanta {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PauseQuanta::OnOff => s.serialize_str("none"),
            PauseQuanta::Quanta(q) => s.serialize_u16(*q),
        }
    }
}

impl<'de> Deserialize<'de> for PauseQuanta {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        if value.as_str() == Some("none") {
            return Ok(PauseQuanta::OnOff);
        }
        match value.as_i64() {
            Some(q @ 1..=65535) => Ok(PauseQuanta::Quanta(q as u16)),
            _ => Err(serde::de::Error::custom(format!(
                "{value} is not accepted (accepted: \"none\", ON/OFF pauses that last until their RESUME, \
                 or a timer of 1 to 65535 quanta of 512 bit times)"
            ))),
        }
    }
}

/// How large the headroom of each (ingress port, lossless class) is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HeadroomRule {
    /// DSH Eq. 1: eta = 2(C*D + MTU) + 3840 B, from the ingress link's rate C and delay D
    /// and the largest packet (lossless-facts §1.3, §2.1). Enough for the worst case of
    /// the reference simulators, which have no processing delay.
    Eta,
    /// 3*C*D, as HPCC and N3DC size it (lossless-facts §1.1, "Headroom size"): no MTU
    /// term, too small on short links.
    ThreeCd,
    /// A fixed size.
    Size(Bytes),
}

impl HeadroomRule {
    /// Bytes for a port whose upstream link sends at `rate_bps` with a one-way delay of
    /// `delay_ps`, when the largest packet is `mtu` bytes.
    pub fn bytes(self, rate_bps: u64, delay_ps: u64, mtu: u64) -> u64 {
        // C*D in bytes, rounded up.
        let cd = (rate_bps as u128 * delay_ps as u128).div_ceil(8 * 1_000_000_000_000) as u64;
        match self {
            HeadroomRule::Eta => 2 * (cd + mtu) + 3840,
            HeadroomRule::ThreeCd => 3 * cd,
            HeadroomRule::Size(b) => b.0,
        }
    }
}

impl HeadroomRule {
    /// The bytes for each port of a switch built for `env`, by the link arriving on it.
    pub fn per_port(self, env: &FlowControlEnv) -> Vec<u64> {
        env.ingress_links.iter().map(|l| self.bytes(l.rate_bps, l.delay, env.largest_packet)).collect()
    }
}

impl Serialize for HeadroomRule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            HeadroomRule::Eta => s.serialize_str("eta"),
            HeadroomRule::ThreeCd => s.serialize_str("3cd"),
            HeadroomRule::Size(b) => b.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for HeadroomRule {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        match value.as_str() {
            Some("eta") => Ok(HeadroomRule::Eta),
            Some("3cd") => Ok(HeadroomRule::ThreeCd),
            _ => Bytes::deserialize(value).map(HeadroomRule::Size).map_err(|e| {
                serde::de::Error::custom(format!("{e}; or \"eta\" (2(C*D + MTU) + 3840 B) or \"3cd\" (3*C*D)"))
            }),
        }
    }
}

/// Where a lossless arrival goes while its ingress queue already holds headroom bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HeadroomAdmission {
    /// Into headroom, until the queue's headroom is empty again (N3DC,
    /// `switch-mmu.cc:881-884`).
    Sticky,
    /// Into the shared pool if it fits under the threshold, as any arrival (HPCC,
    /// `switch-mmu.cc` `UpdateIngressAdmission`).
    Threshold,
}

/// When a queue PAUSEs its upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PauseAt {
    /// Once it uses headroom (N3DC `CheckShouldPause`, `switch-mmu.cc:1010-1012`).
    Headroom,
    /// Once it uses headroom or its bytes outside headroom reach the threshold (HPCC
    /// `CheckShouldPause`, `switch-mmu.cc:76-78`).
    Threshold,
}

/// PFC's keys (`[switch.flow_control] kind = "pfc"`). Defaults follow the reference
/// simulators (lossless-facts §1.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PfcConfig {
    /// The lossless classes (priorities 0 to 7; higher priorities are class 7). Default:
    /// all eight.
    pub classes: Vec<u8>,
    /// Headroom per (ingress port, lossless class): "eta" (default, DSH Eq. 1), "3cd"
    /// (HPCC and N3DC) or a size.
    pub headroom: HeadroomRule,
    /// Dynamic pause threshold T = alpha * free shared bytes. Default 1/8, HPCC's
    /// `pfc_a_shift` 3 for links at the NIC rate (lossless-facts §1.1, "Xoff").
    pub alpha: f64,
    /// RESUME when the bytes outside headroom plus `xon_offset` are at most T. Default
    /// 2496 B, N3DC's (`switch-mmu.cc:1014-1020`); HPCC uses 3 KiB.
    pub xon_offset: Bytes,
    /// ... or when they are below `xon_floor`. Default 1248 B, N3DC's; HPCC resumes only
    /// at 0 (a floor of 1 B).
    pub xon_floor: Bytes,
    /// Bytes of a PAUSE or RESUME frame on the wire: 64 (802.1Qbb, default), or 31 to
    /// match HPCC and N3DC (lossless-facts §1.1, "Frame").
    pub frame_size: Bytes,
    /// A cycle of paused queues whose every pause lasted this long is reported as a
    /// deadlock (see `observe::DeadlockDetector`). Default 1 ms.
    pub deadlock_after: Time,
    /// End the run at the first deadlock. Default false.
    pub stop_at_deadlock: bool,
    /// Where an arrival goes while its queue holds headroom bytes: "sticky" (default,
    /// N3DC: into headroom) or "threshold" (HPCC: shared if under the threshold).
    pub headroom_admission: HeadroomAdmission,
    /// The threshold an arrival is judged by counts the arrival as used (N3DC adds the
    /// packet before computing it, `switch-mmu.cc:838-855`). Default true; false judges
    /// it by the buffer before the packet.
    pub threshold_counts_arrival: bool,
    /// When a queue PAUSEs: "headroom" (default, N3DC: once it uses headroom) or
    /// "threshold" (HPCC: also when its bytes outside headroom reach the threshold).
    pub pause_at: PauseAt,
    /// "none" (default): ON/OFF, a pause lasts until its RESUME. Or 1 to 65535: every
    /// PAUSE carries this timer, in quanta of 512 bit times of its link (802.1Qbb), and
    /// the paused side resumes by itself when it runs out.
    #[serde(skip_serializing_if = "PauseQuanta::is_on_off")]
    pub pause_quanta: PauseQuanta,
    /// With `pause_quanta`: while the switch still holds a pause, it re-sends the PAUSE
    /// every this many quanta of the link. Below `pause_quanta`; default half of it, as
    /// ns3-rdma (5 us pauses refreshed every 2.5 us). Unset while ON/OFF.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_quanta: Option<u64>,
}

impl PfcConfig {
    /// How the run watches for deadlocks.
    pub fn deadlock_watch(&self) -> DeadlockWatch {
        DeadlockWatch { after: self.deadlock_after.0, stop: self.stop_at_deadlock }
    }

    /// The refresh interval in quanta: `refresh_quanta`, or half of `pause_quanta`;
    /// `None` while ON/OFF.
    pub fn refresh(&self) -> Option<u64> {
        match self.pause_quanta {
            PauseQuanta::OnOff => None,
            PauseQuanta::Quanta(q) => Some(self.refresh_quanta.unwrap_or(q as u64 / 2)),
        }
    }
}

impl Default for PfcConfig {
    fn default() -> Self {
        PfcConfig {
            classes: (0..CLASSES as u8).collect(),
            headroom: HeadroomRule::Eta,
            alpha: 0.125,
            xon_offset: Bytes(2496),
            xon_floor: Bytes(1248),
            frame_size: Bytes(64),
            deadlock_after: Time(1_000_000_000),
            stop_at_deadlock: false,
            headroom_admission: HeadroomAdmission::Sticky,
            threshold_counts_arrival: true,
            pause_at: PauseAt::Headroom,
            pause_quanta: PauseQuanta::OnOff,
            refresh_quanta: None,
        }
    }
}

/// By (port, class): the time the one current timer of a kind fires, if one is. The
/// engine never cancels a timer, so one that fires at any other time is stale.
#[derive(Debug, Clone)]
struct Deadlines(Vec<Ps>);

impl Deadlines {
    /// No timer is current.
    const NONE: Ps = Ps::MAX;

    fn new(slots: usize) -> Self {
        Deadlines(vec![Self::NONE; slots])
    }

    fn set(&mut self, slot: usize, at: Ps) {
        self.0[slot] = at;
    }

    fn clear(&mut self, slot: usize) {
        self.0[slot] = Self::NONE;
    }

    /// Whether a timer of `slot` firing at `now` is the current one; it stops being so.
    fn take_due(&mut self, slot: usize, now: Ps) -> bool {
        let due = self.0[slot] == now;
        if due {
            self.clear(slot);
        }
        due
    }
}

/// What timed pauses (`pause_quanta`) add to a switch's PFC: the timer its PAUSEs carry
/// and when each is refreshed.
///
/// Invariant: `refresh_at` holds a time for (p, c) exactly while the switch holds class c
/// of the upstream on port p paused (`UpstreamPauses::holds`), the time of the next
/// refresh.
struct Refresh {
    quanta: u16,
    /// By ingress port: the refresh interval on its link.
    every: Vec<Ps>,
    refresh_at: Deadlines,
}

/// PFC at one switch.
///
/// Invariants: `headroom_used[p * CLASSES + c]` is at most `headroom[p]` and at most the
/// bytes buffered from (p, c), and is 0 for lossy classes.
pub struct Pfc {
    lossless: u8,
    alpha: f64,
    xon_offset: u64,
    xon_floor: u64,
    /// By ingress port: headroom bytes of each of its lossless classes.
    headroom: Vec<u64>,
    /// By (ingress port, class): headroom bytes in use.
    headroom_used: Vec<u64>,
    /// By pool: headroom bytes in use, which the threshold does not count as used.
    pool_headroom_used: Vec<u64>,
    /// By (ingress port, class): the most headroom bytes in use since the headroom was
    /// last empty (0 while it is).
    headroom_peak: Vec<u64>,
    headroom_episodes: Vec<HeadroomEpisode>,
    headroom_admission: HeadroomAdmission,
    threshold_counts_arrival: bool,
    pause_at: PauseAt,
    /// The pauses it holds upstream, by (ingress port, class), and their frames.
    upstream: UpstreamPauses,
    /// `None` while ON/OFF: no PAUSE this switch sends carries a timer. Boxed, as the
    /// next: only frames and timers read them.
    refresh: Option<Box<Refresh>>,
}

impl Scheme for Pfc {
    type Config = PfcConfig;
    type Env = FlowControlEnv;

    fn build(cfg: &PfcConfig, env: &FlowControlEnv) -> Self {
        let ports = env.ingress_links.len();
        Pfc {
            lossless: class_mask(&cfg.classes),
            alpha: cfg.alpha,
            xon_offset: cfg.xon_offset.0,
            xon_floor: cfg.xon_floor.0,
            headroom: cfg.headroom.per_port(env),
            headroom_used: vec![0; ports * CLASSES],
            pool_headroom_used: vec![0; ports],
            headroom_peak: vec![0; ports * CLASSES],
            headroom_episodes: Vec::new(),
            headroom_admission: cfg.headroom_admission,
            threshold_counts_arrival: cfg.threshold_counts_arrival,
            pause_at: cfg.pause_at,
            upstream: UpstreamPauses::new(ports, cfg.frame_size.0 as u32),
            refresh: match (cfg.pause_quanta, cfg.refresh()) {
                (PauseQuanta::Quanta(quanta), Some(every)) => Some(Box::new(Refresh {
                    quanta,
                    // A cable's two directions share a rate: the PAUSE goes out on the
                    // twin of the ingress link, and its receiver times it by that rate.
                    every: env.ingress_links.iter().map(|l| quanta_time(every, &LinkRate::new(l.rate_bps))).collect(),
                    refresh_at: Deadlines::new(ports * CLASSES),
                })),
                _ => None,
            },
        }
    }

    fn validate(cfg: &PfcConfig, path: &str, env: &CheckEnv, warnings: &mut Warnings) -> Result<(), ScenarioError> {
        check_pausing_keys(path, "PFC", &cfg.classes, cfg.alpha, cfg.frame_size, cfg.deadlock_after, env)?;
        if cfg.headroom == HeadroomRule::Size(Bytes(0)) && !cfg.classes.is_empty() {
            return Err(ScenarioError::new(
                format!("{path}.headroom"),
                "0 B leaves lossless packets in flight when a PAUSE leaves nowhere to go (accepted: \"eta\", \"3cd\" or a size > 0)",
            ));
        }
        pausing_warnings(path, "PFC", &cfg.classes, cfg.alpha, env, warnings);
        // RESUME needs the bytes outside headroom plus xon_offset at most T, or below
        // xon_floor; T is at most alpha x the pool.
        let largest_threshold = cfg.alpha * env.largest_pool.0 as f64;
        let threshold = "the largest pause threshold, alpha x the shared pool";
        let (offset, floor) = (format!("{path}.xon_offset"), format!("{path}.xon_floor"));
        resume_offset_warning(&offset, cfg.xon_offset, largest_threshold, threshold, "below xon_floor", warnings);
        resume_offset_warning(
            &floor,
            cfg.xon_floor,
            largest_threshold,
            threshold,
            "as it pauses: every departure finds it below xon_floor, so pauses hold a packet at most",
            warnings,
        );
        headroom_warnings(cfg, path, env, warnings);
        refresh_checks(cfg, path, env, warnings)
    }
}

impl FlowControlFacts for Pfc {
    fn pauses(_: &PfcConfig) -> bool {
        true
    }

    fn paused_classes(cfg: &PfcConfig) -> Option<&[u8]> {
        Some(&cfg.classes)
    }

    fn deadlock_watch(cfg: &PfcConfig) -> Option<DeadlockWatch> {
        Some(cfg.deadlock_watch())
    }

    /// ON/OFF pauses wait for their RESUME; timed ones run out.
    fn pauses_end_by_frame(cfg: &PfcConfig) -> bool {
        cfg.pause_quanta == PauseQuanta::OnOff
    }
}

/// `pause_quanta` and `refresh_quanta` together: a refresh below the timer, and set only
/// with one. Warns of a refresh that can come too late, or that fills the link.
fn refresh_checks(cfg: &PfcConfig, path: &str, env: &CheckEnv, warnings: &mut Warnings) -> Result<(), ScenarioError> {
    let quanta = match (cfg.pause_quanta, cfg.refresh_quanta) {
        (PauseQuanta::OnOff, None) => return Ok(()),
        (PauseQuanta::OnOff, Some(r)) => {
            return Err(ScenarioError::new(
                format!("{path}.refresh_quanta"),
                format!(
                    "{r} is set but pause_quanta is \"none\": ON/OFF pauses last until their RESUME and are \
                     never refreshed (accepted: no refresh_quanta, or pause_quanta = 2 to 65535 with it)"
                ),
            ))
        }
        (PauseQuanta::Quanta(q), _) => q as u64,
    };
    let refresh = cfg.refresh().expect("a timer has a refresh");
    // No refresh lies below a 1-quantum timer, whether refresh_quanta is set or not.
    if quanta == 1 {
        return Err(ScenarioError::new(
            format!("{path}.pause_quanta"),
            "1 leaves no refresh interval below it (refresh_quanta must be below pause_quanta and \
             defaults to half of it; accepted: 2 to 65535, or \"none\")",
        ));
    }
    if refresh == 0 || refresh >= quanta {
        return Err(ScenarioError::new(
            format!("{path}.refresh_quanta"),
            format!(
                "{refresh} is not accepted with pause_quanta = {quanta} (accepted: 1 to {}: a PAUSE must be \
                 refreshed before the last one runs out)",
                quanta - 1
            ),
        ));
    }
    // A refresh leaves at the next packet boundary, so it can wait behind one packet
    // more than the PAUSE it refreshes did.
    let margin = (quanta - refresh) * QUANTUM_BYTES;
    let late = env.largest_packet + cfg.frame_size.0;
    if margin < late {
        warnings.push(format!(
            "{path}.refresh_quanta: {refresh} quanta leaves {} quanta ({margin} B of the link) before a pause \
             of {quanta} runs out, less than one packet and a frame ({late} B) that a refresh can wait behind: \
             pauses may lapse between refreshes",
            quanta - refresh
        ));
    }
    if refresh * QUANTUM_BYTES <= cfg.frame_size.0 {
        warnings.push(format!(
            "{path}.refresh_quanta: a refresh every {refresh} quanta ({} B of the link) leaves a paused link \
             nothing but {} B PAUSE frames",
            refresh * QUANTUM_BYTES,
            cfg.frame_size.0
        ));
    }
    if !env.stop_time_set && !cfg.stop_at_deadlock {
        warnings.push(format!(
            "{path}.pause_quanta: switches refresh a pause for as long as they hold it, so a PFC deadlock \
             never goes quiet and, without run.stop_time or {path}.stop_at_deadlock = true, the run ends only \
             at Shoal's time limit"
        ));
    }
    Ok(())
}

/// The kinds of link of a topology, (name, rate, delay): a built-in kind's host links and
/// uplinks (a star has none); each (rate, delay) of a topology file's links (none when the
/// file cannot be read: validation reports why).
pub(super) fn link_classes(t: &Topology) -> Vec<(String, u64, u64)> {
    if t.kind == TopologyKind::Star {
        return vec![("host links".into(), t.link_rate.0, t.link_delay.0)];
    }
    if t.kind != TopologyKind::File {
        return vec![
            ("host links".into(), t.link_rate.0, t.link_delay.0),
            ("uplinks".into(), t.uplink_rate.0, t.uplink_delay.unwrap_or(t.link_delay).0),
        ];
    }
    let Ok(net) = crate::net::build(t) else { return Vec::new() };
    let kinds: std::collections::BTreeSet<(u64, u64)> = net.links.iter().map(|l| (l.rate_bps, l.delay)).collect();
    kinds
        .into_iter()
        .map(|(rate, delay)| (format!("links of {} and {}", Rate(rate), Time(delay)), rate, delay))
        .collect()
}

/// Warnings for a headroom that a PAUSE's worst case can overflow, or that dwarfs the
/// pool, and for classes that share one queue.
fn headroom_warnings(cfg: &PfcConfig, path: &str, env: &CheckEnv, warnings: &mut Warnings) {
    let t = env.topology;
    let mtu = env.largest_packet;
    let links = link_classes(t);
    for (name, rate, delay) in links.iter().cloned() {
        let bytes = cfg.headroom.bytes(rate, delay, mtu);
        // What arrives after the PAUSE is triggered: the packet the downstream is sending,
        // the frame, one way, the upstream's packet in flight, one way back (§1.3).
        let worst = 2 * (HeadroomRule::ThreeCd.bytes(rate, delay, mtu) / 3 + mtu) + cfg.frame_size.0;
        if bytes < worst {
            warnings.push(format!(
                "{path}.headroom: {bytes} B per port and class is below the {worst} B a PAUSE can take to stop \
                 the upstream on the {name} (2(C*D + MTU) + one frame); lossless packets may be dropped \
                 as headroom overflows (\"eta\" covers it)"
            ));
        }
    }
    // A host link's port; a file's largest.
    let one = match t.kind {
        TopologyKind::File => {
            links.iter().map(|&(_, rate, delay)| cfg.headroom.bytes(rate, delay, mtu)).max().unwrap_or(0)
        }
        _ => cfg.headroom.bytes(t.link_rate.0, t.link_delay.0, mtu),
    };
    if one > env.pool_size.0 {
        warnings.push(format!(
            "{path}.headroom: {one} B for one port and class is more than the whole shared pool \
             (switch.pool_size = {}); check the units",
            env.pool_size
        ));
    }
    // Lossless classes the workload uses that land in one queue: a PAUSE of one stops all.
    let mut by_queue: std::collections::BTreeMap<usize, std::collections::BTreeSet<u8>> = Default::default();
    for &(priority, queue) in env.priority_queues.iter().filter(|(p, _)| cfg.classes.contains(&class_of(*p))) {
        by_queue.entry(queue).or_default().insert(class_of(priority));
    }
    if let Some((queue, shared)) = by_queue.iter().find(|(_, c)| c.len() > 1) {
        warnings.push(format!(
            "{path}.classes: lossless classes {:?} of the workload share queue {queue} of every port \
             (switch.classifier {}), so a PAUSE of one stops them all; give them queues of their own \
             (switch.queues, a priority scheduler)",
            shared.iter().collect::<Vec<_>>(),
            env.classifier
        ));
    }
}

impl Pfc {
    /// The pause threshold of `pool` with `arriving` more bytes counted as used: alpha x
    /// its free shared bytes, the bytes in headroom not counted as used.
    #[inline]
    fn threshold(&self, pool: &PoolState, arriving: u64) -> f64 {
        let used = pool.shared_used.saturating_sub(self.pool_headroom_used[pool.index]) + arriving;
        self.alpha * pool.size.saturating_sub(used) as f64
    }

    /// Sends a PAUSE (`pause`) or RESUME for `class` upstream on `port` at `now`. A timed
    /// PAUSE schedules its refresh; a RESUME makes a pending one stale.
    fn send(&mut self, port: usize, class: usize, pause: bool, now: Ps, effects: &mut crate::net::Effects) {
        let slot = port * CLASSES + class;
        let frame = match &mut self.refresh {
            Some(refresh) if !pause => {
                refresh.refresh_at.clear(slot);
                Pause::Resume
            }
            Some(refresh) => {
                let at = now + refresh.every[port];
                refresh.refresh_at.set(slot, at);
                effects.push(Effect::Timer { at, token: slot as u32 });
                Pause::Quanta(refresh.quanta)
            }
            None if pause => Pause::UntilResume,
            None => Pause::Resume,
        };
        self.upstream.send(port, class as u8, frame, effects);
    }
}

impl FlowControl for Pfc {
    fn obeys_pause_frames(&self) -> bool {
        true
    }

    /// The PAUSE this switch sent upstream for (ingress port, class) slot `token` is due
    /// again.
    fn on_timer(&mut self, token: u32, cx: &mut super::FlowCx) {
        let Some(refresh) = &mut self.refresh else { return };
        let slot = token as usize;
        let (port, class) = (slot / CLASSES, slot % CLASSES);
        if refresh.refresh_at.take_due(slot, cx.now) && self.upstream.holds(port, class) {
            self.send(port, class, true, cx.now, cx.effects);
        }
    }
}

impl Lossless for Pfc {
    fn reads_ingress_accounts(&self) -> bool {
        true
    }

    fn lossless_classes(&self) -> u8 {
        self.lossless
    }

    fn headroom_used(&self, port: usize, class: usize) -> u64 {
        self.headroom_used[port * CLASSES + class]
    }

    fn headroom_of_port(&self, port: usize) -> u64 {
        self.headroom[port] * self.lossless.count_ones() as u64
    }

    fn admit(&mut self, a: &LosslessArrival) -> Verdict {
        let slot = a.ingress * CLASSES + a.class;
        let in_headroom = self.headroom_used[slot];
        let outside = a.ingress_bytes - in_headroom;
        let sticky = in_headroom > 0 && self.headroom_admission == HeadroomAdmission::Sticky;
        let arriving = if self.threshold_counts_arrival { a.size } else { 0 };
        // Shared while within the threshold, else headroom. Here the egress pool must
        // also have room.
        if !sticky
            && (outside + a.size) as f64 <= self.threshold(&a.ingress_pool, arriving)
            && a.shared_needed <= a.egress_pool_free
        {
            return Verdict::Admit;
        }
        if in_headroom + a.size > self.headroom[a.ingress] {
            return Verdict::Drop(DropReason::HeadroomOverflow);
        }
        if a.shared_needed > a.egress_pool_free_with_headroom {
            // The egress pool's headroom went to packets from other pools' ports.
            return Verdict::Drop(DropReason::PoolFull);
        }
        self.headroom_used[slot] += a.size;
        self.headroom_peak[slot] = self.headroom_peak[slot].max(self.headroom_used[slot]);
        self.pool_headroom_used[a.ingress_pool.index] += a.size;
        Verdict::Admit
    }

    fn on_enqueue(&mut self, charge: Charge, cx: &mut IngressCx) {
        let (port, class) = (charge.ingress as usize, charge.class as usize);
        if self.upstream.holds(port, class) {
            return;
        }
        let in_headroom = self.headroom_used[port * CLASSES + class];
        let at_threshold = || {
            let outside = cx.ingress.bytes(port, class) - in_headroom;
            outside as f64 >= self.threshold(&cx.ingress_pool, 0)
        };
        if in_headroom > 0 || (self.pause_at == PauseAt::Threshold && at_threshold()) {
            self.send(port, class, true, cx.now, cx.effects);
        }
    }

    fn on_dequeue(&mut self, charge: Charge, cx: &mut IngressCx) {
        let (port, class) = (charge.ingress as usize, charge.class as usize);
        let slot = port * CLASSES + class;
        let released = self.headroom_used[slot].min(charge.size as u64);
        self.headroom_used[slot] -= released;
        self.pool_headroom_used[cx.ingress_pool.index] -= released;
        if released > 0 && self.headroom_used[slot] == 0 {
            self.headroom_episodes.push(HeadroomEpisode {
                port: port as u16,
                class: class as u8,
                ended: cx.now,
                peak: std::mem::take(&mut self.headroom_peak[slot]),
                size: self.headroom[port],
            });
        }
        if !self.upstream.holds(port, class) || self.headroom_used[slot] > 0 {
            return;
        }
        let bytes = cx.ingress.bytes(port, class);
        // N3DC's resume rule (HPCC's with a floor of 1 B and a 3 KiB offset).
        if bytes < self.xon_floor || (bytes + self.xon_offset) as f64 <= self.threshold(&cx.ingress_pool, 0) {
            self.send(port, class, false, cx.now, cx.effects);
        }
    }

    fn check_accounting(&self, id: usize, ingress: Option<&IngressAccounts>, errors: &mut Vec<String>) {
        if let Some(refresh) = &self.refresh {
            for (port, &pausing) in self.upstream.classes().iter().enumerate() {
                for class in 0..CLASSES {
                    let pending = refresh.refresh_at.0[port * CLASSES + class] != Deadlines::NONE;
                    if pending != (pausing & (1 << class) != 0) {
                        errors.push(format!(
                            "switch {id} port {port} class {class}: a refresh is pending: {pending}, the pause held: {}",
                            !pending
                        ));
                    }
                }
            }
        }
        let Some(ingress) = ingress else {
            errors.push(format!("switch {id}: PFC runs without ingress accounts"));
            return;
        };
        for (port, &cap) in self.headroom.iter().enumerate() {
            for class in 0..CLASSES {
                let used = self.headroom_used(port, class);
                let lossless = self.lossless & (1 << class) != 0;
                if used > cap || used > ingress.bytes(port, class) || (!lossless && used > 0) {
                    errors.push(format!(
                        "switch {id} port {port} class {class}: {used} B of headroom in use, {cap} B of headroom, {} B buffered",
                        ingress.bytes(port, class)
                    ));
                }
            }
        }
    }
}

impl Steering for Pfc {}

impl FlowControlReport for Pfc {
    fn frames_sent(&self, port: usize, class: usize) -> [u64; 2] {
        self.upstream.frames_sent(port, class)
    }

    fn headroom_episodes(&self) -> &[HeadroomEpisode] {
        &self.headroom_episodes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    /// lossless-facts §1.3's check value: eta(100 G, 2 us, 1500 B) = 56,840 B.
    #[test]
    fn eta_matches_the_facts() {
        assert_eq!(HeadroomRule::Eta.bytes(100_000_000_000, 2_000_000, 1500), 56_840);
        assert_eq!(HeadroomRule::Eta.bytes(40_000_000_000, 1_500_000, 1500), 21_840);
        assert_eq!(HeadroomRule::ThreeCd.bytes(100_000_000_000, 2_000_000, 1500), 75_000);
    }

    /// The scenario's warnings, or its error, with PFC keys `pfc` on 100 Gbps links of
    /// `delay` and `extra` switch keys.
    fn check(pfc: &str, delay: &str, extra: &str) -> Result<Vec<String>, String> {
        let text = format!(
            "[topology]\nkind = \"star\"\nhosts = 4\nlink_delay = \"{delay}\"\n\
             [switch]\npool_size = \"1MB\"\n{extra}\n[switch.flow_control]\nkind = \"pfc\"\n{pfc}\n"
        );
        Scenario::from_toml(&text).and_then(|sc| sc.validate()).map_err(|e| e.to_string())
    }

    #[test]
    fn headroom_mistakes_are_named() {
        let no_headroom = check("headroom = \"0B\"", "1us", "").unwrap_err();
        assert!(no_headroom.contains("switch.flow_control.headroom") && no_headroom.contains("0 B"), "{no_headroom}");
        assert_eq!(check("", "1us", ""), Ok(vec![]), "eta warns of nothing");
        // 3*C*D covers 2(C*D + MTU) only for C*D >= 2 MTU: at 100 Gbps, not on 0.1 us.
        assert_eq!(check("headroom = \"3cd\"", "1us", ""), Ok(vec![]));
        let short = check("headroom = \"3cd\"", "100ns", "").unwrap();
        // One warning, for the star's host links: a star has no uplinks.
        assert!(short.len() == 1 && short[0].contains("3750 B per port and class is below"), "{short:?}");
        assert!(short[0].contains("on the host links"), "{short:?}");
        let huge = check("headroom = \"2MB\"", "1us", "").unwrap();
        assert!(huge.len() == 1 && huge[0].contains("more than the whole shared pool"), "{huge:?}");
        let two_classes = "[workload]\npriority = 1\n[[workload.extra]]\npriority = 2\n";
        let shared = check(two_classes, "1us", "scheduler = \"fifo\"").unwrap();
        assert!(shared.len() == 1 && shared[0].contains("[1, 2] of the workload share queue 0"), "{shared:?}");
        let own_queues = check(two_classes, "1us", "scheduler = \"strict_priority\"\nqueues = 4");
        assert_eq!(own_queues, Ok(vec![]));
        let one_lossless = check(&format!("classes = [1]\n{two_classes}"), "1us", "scheduler = \"fifo\"");
        assert_eq!(one_lossless, Ok(vec![]), "a lossy class may share the queue");
        let class = check("classes = [8]", "1us", "").unwrap_err();
        assert!(class.contains("switch.flow_control.classes") && class.contains("0 to 7"), "{class}");
    }

    /// A PFC of alpha 1/2 on two ports with 10 KB of headroom each, keys `keys` over
    /// the reference's defaults.
    fn pfc(keys: &str) -> Pfc {
        let cfg: PfcConfig =
            serde_json::from_str(&format!("{{\"alpha\": 0.5, \"headroom\": \"10KB\"{keys}}}")).unwrap();
        let env =
            FlowControlEnv { ingress_links: vec![Default::default(); 2], largest_packet: 1000, ..Default::default() };
        Pfc::build(&cfg, &env)
    }

    /// An arrival of 1,000 B on port 0, class 3, whose queue holds `ingress_bytes`, to a
    /// pool of 100,000 B with `shared_used` in use.
    fn arrival(ingress_bytes: u64, shared_used: u64) -> LosslessArrival {
        LosslessArrival {
            ingress: 0,
            class: 3,
            size: 1000,
            ingress_bytes,
            ingress_pool: PoolState { index: 0, size: 100_000, shared_used },
            shared_needed: 1000,
            egress_pool_free: 100_000 - shared_used,
            egress_pool_free_with_headroom: 120_000 - shared_used,
        }
    }

    /// The threshold with the arrival counted: the queue holds 30,800 B of the pool's
    /// 36,000 B in use; with the packet, 31,800 B against T = (100,000 - 37,000) / 2 =
    /// 31,500 B: headroom. Judged before the packet, T = 32,000 B: shared.
    #[test]
    fn the_threshold_counts_the_arrival_by_default() {
        let mut counting = pfc("");
        assert_eq!(counting.admit(&arrival(30_800, 36_000)), Verdict::Admit);
        assert_eq!(counting.headroom_used(0, 3), 1000, "into headroom");
        let mut before = pfc(", \"threshold_counts_arrival\": false");
        assert_eq!(before.admit(&arrival(30_800, 36_000)), Verdict::Admit);
        assert_eq!(before.headroom_used(0, 3), 0, "shared");
    }

    /// Headroom bytes are not counted as used by the threshold, and a queue that holds
    /// headroom takes every arrival into it ("sticky"), or only those over the threshold.
    #[test]
    fn headroom_is_sticky_and_outside_the_threshold() {
        for (keys, expected) in [("", 2000), (", \"headroom_admission\": \"threshold\"", 1000)] {
            let mut p = pfc(keys);
            // 1,000 B into headroom: the queue's 30,800 B + 1,000 B pass T = 31,500 B.
            p.admit(&arrival(30_800, 36_000));
            // A small queue now: 5,000 B with the 1,000 B in headroom, the pool's 37,000 B
            // in use of which 1,000 B are headroom: T = (100,000 - 36,000 - 1,000) / 2.
            p.admit(&arrival(5000, 37_000));
            assert_eq!(p.headroom_used(0, 3), expected, "{keys}");
        }
        // The threshold's free bytes leave headroom out: with 1,000 B of headroom in use
        // and 37,000 B used, an arrival to a queue of 31,400 B (1,000 B of it headroom, so
        // 30,400 B outside + 1,000 B) meets T = (100,000 - 36,000 - 1,000) / 2 = 31,500 B:
        // shared; counting the headroom as used, T would be 31,000 B: headroom.
        let mut p = pfc(", \"headroom_admission\": \"threshold\"");
        p.admit(&arrival(30_800, 36_000));
        p.admit(&arrival(31_400, 37_000));
        assert_eq!(p.headroom_used(0, 3), 1000, "the second arrival is shared");
    }

    /// N3DC pauses once headroom is used; HPCC also at the threshold.
    #[test]
    fn pause_at_headroom_or_at_the_threshold() {
        let mut ingress = IngressAccounts::new(2);
        ingress.charge(Charge { ingress: 0, class: 3, size: 40_000 });
        let pool = PoolState { index: 0, size: 100_000, shared_used: 40_000 };
        // 40,000 B outside headroom against T = 30,000 B: at the threshold, no headroom.
        for (keys, frames) in [("", 0), (", \"pause_at\": \"threshold\"", 1)] {
            let mut p = pfc(keys);
            let mut effects = Vec::new();
            let mut cx = IngressCx { now: 0, effects: &mut effects, ingress: &ingress, ingress_pool: pool };
            p.on_enqueue(Charge { ingress: 0, class: 3, size: 1000 }, &mut cx);
            assert_eq!(effects.len(), frames, "{keys}");
        }
    }

    /// The timer keys: a timer of 1 to 65535 quanta or "none"; a refresh below the timer
    /// and only with one; warnings for a refresh that can come too late (one quantum
    /// before the end, while a packet takes many) or fill the link.
    #[test]
    fn pause_timer_mistakes_are_named() {
        assert_eq!(check("pause_quanta = \"none\"", "1us", ""), Ok(vec![]));
        assert_eq!(check("pause_quanta = 65535\nstop_at_deadlock = true", "1us", ""), Ok(vec![]));
        for bad in ["0", "65536", "-3", "\"forever\"", "2.5"] {
            let e = check(&format!("pause_quanta = {bad}"), "1us", "").unwrap_err();
            assert!(e.contains("pause_quanta") && e.contains("1 to 65535") && e.contains("\"none\""), "{bad}: {e}");
        }
        let one = check("pause_quanta = 1", "1us", "").unwrap_err();
        assert!(one.contains("switch.flow_control.pause_quanta") && one.contains("no refresh interval"), "{one}");
        for (keys, value) in
            [("pause_quanta = 100\nrefresh_quanta = 0", "0"), ("pause_quanta = 100\nrefresh_quanta = 100", "100")]
        {
            let e = check(keys, "1us", "").unwrap_err();
            assert!(
                e.contains("switch.flow_control.refresh_quanta")
                    && e.contains(&format!("{value} is not accepted"))
                    && e.contains("1 to 99"),
                "{e}"
            );
        }
        let on_off = check("refresh_quanta = 10", "1us", "").unwrap_err();
        assert!(
            on_off.contains("switch.flow_control.refresh_quanta") && on_off.contains("pause_quanta is \"none\""),
            "{on_off}"
        );
        let stops = "stop_at_deadlock = true";
        let late = check(&format!("pause_quanta = 100\nrefresh_quanta = 99\n{stops}"), "1us", "").unwrap();
        assert!(late.len() == 1 && late[0].contains("pauses may lapse"), "{late:?}");
        assert_eq!(check(&format!("pause_quanta = 100\n{stops}"), "1us", ""), Ok(vec![]));
        let endless = check("pause_quanta = 100", "1us", "").unwrap();
        assert!(endless.len() == 1 && endless[0].contains("never goes quiet"), "{endless:?}");
        let full = check("pause_quanta = 3\nrefresh_quanta = 1", "1us", "").unwrap();
        assert!(full.iter().any(|w| w.contains("nothing but 64 B PAUSE frames")), "{full:?}");
    }

    /// Default refresh: half the timer (ns3-rdma's pausetime / 2).
    #[test]
    fn the_refresh_defaults_to_half_the_timer() {
        let cfg = |q| PfcConfig { pause_quanta: q, ..PfcConfig::default() };
        assert_eq!(cfg(PauseQuanta::Quanta(1000)).refresh(), Some(500));
        assert_eq!(cfg(PauseQuanta::Quanta(65535)).refresh(), Some(32767));
        assert_eq!(cfg(PauseQuanta::OnOff).refresh(), None);
    }

    #[test]
    fn headroom_reads_words_and_sizes() {
        let read = |s: &str| serde_json::from_str::<HeadroomRule>(s).unwrap();
        assert_eq!(read("\"eta\""), HeadroomRule::Eta);
        assert_eq!(read("\"3cd\""), HeadroomRule::ThreeCd);
        assert_eq!(read("\"10KB\""), HeadroomRule::Size(Bytes(10_000)));
        assert!(serde_json::from_str::<HeadroomRule>("\"lots\"").is_err());
    }
}
