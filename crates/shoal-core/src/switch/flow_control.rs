//! The flow-control decision point: how a switch tells its neighbours to stop and start
//! sending (PFC, DSH, BFC), and how it obeys them (`[switch.flow_control]`). A scheme
//! acts only through `Effects`: frames out of a port, timers, and kicks of ports it
//! un-paused.
//!
//! A scheme may make some traffic classes lossless (`lossless_classes`). For their
//! packets, and only for them, the switch asks the scheme instead of its admission policy
//! (`admit`), never drops them by a WRED rule nor pushes them out, and tells the scheme
//! of each one it buffers and sends (`on_enqueue`, `on_dequeue`). A lossy switch pays one
//! bit test per packet for this.

pub mod bfc;
mod dsh;
mod pfc;

pub use bfc::{Bfc, BfcConfig};
pub use dsh::{Dsh, DshConfig};
pub use pfc::{
    pause_frame, quanta_time, read_pause_frame, HeadroomAdmission, HeadroomRule, Pause, PauseAt, PauseQuanta, Pfc,
    PfcConfig,
};

use super::admission::Verdict;
use super::mmu::{Charge, IngressAccounts, CLASSES};
use super::queue::PortQueue;
use crate::check_env::CheckEnv;
use crate::config::{ScenarioError, Warnings};
use crate::net::bloom::BloomFilter;
use crate::net::pause::{Obeyed, PauseGate};
use crate::net::{Effect, Effects, ExtStore, Packet};
use crate::registry::{keyless_scheme, registry, Scheme};
use crate::sim::{LinkRate, Ps};
use crate::stats::SchemeCounters;
use crate::units::{Bytes, Time};
use serde::{Deserialize, Serialize};

/// How deadlocks are watched for (`[switch.flow_control]`'s `deadlock_after` and
/// `stop_at_deadlock`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadlockWatch {
    /// How long every pause on a cycle must have lasted.
    pub after: Ps,
    /// End the run at the first deadlock.
    pub stop: bool,
}

pub use crate::net::pause::PORT_LEVEL;

/// Which egress queues of each port are held by a neighbour's pause, by class, or whole
/// (a port-level pause holds every queue), or by their head packet (a per-flow pause:
/// the neighbour paused the flow of the packet at the queue's head, BFC). What the
/// neighbour's frames said is each port's `PauseGate`.
///
/// Invariant: `queues[p]` is every queue while `gates[p]` holds the port, else the union
/// of `class_queues[c]` over the classes c it holds; `held_ports` counts the ports whose
/// gate holds a class or the port; `held[p]` is `queues[p] | heads[p]`, and
/// `gated_ports` counts the ports where it is not 0.
#[derive(Debug, Clone)]
pub struct PortPauses {
    gates: Vec<PauseGate>,
    /// By port: the link frames arrive on, which times their quanta.
    rates: Vec<LinkRate>,
    /// Bit q of `queues[p]`: queue q of port p may not send.
    queues: Vec<u64>,
    /// Bit q of `heads[p]`: the flow of the head packet of queue q of port p is paused.
    heads: Vec<u64>,
    /// Bit q of `held[p]`: queue q of port p may not send, for either reason (one word
    /// to read per departure).
    held: Vec<u64>,
    /// Bit q of `class_queues[c]`: queue q holds packets of class c (by the classifier).
    class_queues: [u64; CLASSES],
    held_ports: usize,
    gated_ports: usize,
}

impl PortPauses {
    /// The pauses of ports whose frames arrive on links of `rates_bps`.
    pub fn new(rates_bps: &[u64], class_queues: [u64; CLASSES]) -> Self {
        let ports = rates_bps.len();
        PortPauses {
            gates: vec![PauseGate::default(); ports],
            rates: rates_bps.iter().map(|&r| LinkRate::new(r)).collect(),
            queues: vec![0; ports],
            heads: vec![0; ports],
            held: vec![0; ports],
            class_queues,
            held_ports: 0,
            gated_ports: 0,
        }
    }

    /// Whether some port is paused for some class.
    pub fn any(&self) -> bool {
        self.held_ports != 0
    }

    /// Since when `class` of `port` has been paused, by a pause of the class or of the
    /// whole port (the earlier of the two in force); `None` while it is not.
    pub fn paused_since(&self, port: usize, class: usize) -> Option<Ps> {
        self.gates[port].paused_since(class)
    }

    /// The queues of `port` that hold packets of `class` (by the classifier).
    pub fn class_queues(&self, class: usize) -> u64 {
        self.class_queues[class]
    }

    /// What the neighbour on `port` said.
    pub fn gate(&self, port: usize) -> &PauseGate {
        &self.gates[port]
    }

    /// The queues of `port` that may not send. Reads nothing beyond `self` while no port
    /// is paused, so that a switch that is never paused pays no cache miss for it.
    #[inline]
    pub fn held_queues(&self, port: usize) -> u64 {
        if self.gated_ports == 0 {
            0
        } else {
            self.held[port]
        }
    }

    /// Holds (`held`) or releases queue `q` of `port` by its head packet's flow; returns
    /// whether that released it.
    pub fn set_head_held(&mut self, port: usize, q: usize, held: bool) -> bool {
        let before = self.heads[port];
        let after = if held { before | 1 << q } else { before & !(1 << q) };
        if after == before {
            return false;
        }
        let gated_before = self.is_gated(port);
        self.heads[port] = after;
        self.count_gated(port, gated_before);
        !held
    }

    fn is_gated(&self, port: usize) -> bool {
        self.held[port] != 0
    }

    /// Updates `held[port]` and `gated_ports` after `queues[port]` or `heads[port]`
    /// changed.
    fn count_gated(&mut self, port: usize, gated_before: bool) {
        self.held[port] = self.queues[port] | self.heads[port];
        match (gated_before, self.is_gated(port)) {
            (false, true) => self.gated_ports += 1,
            (true, false) => self.gated_ports -= 1,
            _ => {}
        }
    }

    /// Whether the neighbour on `port` paused `class`, or the whole port.
    pub fn is_paused(&self, port: usize, class: usize) -> bool {
        self.gates[port].is_paused(class)
    }

    /// Obeys a class or port-level frame (`read_pause_frame`) from the neighbour on
    /// `port` at `now` (`PauseGate::obey`).
    pub fn obey(&mut self, port: usize, class: u8, pause: Pause, now: Ps) -> Obeyed {
        let held_before = self.gates[port].holds_any();
        let obeyed = self.gates[port].obey(class, pause, now, &self.rates[port]);
        self.update(port, held_before);
        obeyed
    }

    /// The timed pause of `class` on `port` runs out at `now` (`PauseGate::expire`).
    pub fn expire(&mut self, port: usize, class: usize, now: Ps) -> Option<bool> {
        let held_before = self.gates[port].holds_any();
        let expired = self.gates[port].expire(class, now);
        self.update(port, held_before);
        expired
    }

    /// The link of `port` went down at `now` (`PauseGate::clear`); returns whether
    /// something was held.
    pub fn clear(&mut self, port: usize, now: Ps) -> bool {
        let held_before = self.gates[port].holds_any();
        let held = self.gates[port].clear(now);
        self.update(port, held_before);
        held
    }

    /// Keeps the filter frame's `filter` as the flows the neighbour on `port` paused.
    pub fn set_filter(&mut self, port: usize, filter: &BloomFilter) {
        self.gates[port].set_filter(filter);
    }

    /// Pauses or resumes `class` on `port` at `now`, as a frame would; returns whether
    /// that changed anything.
    #[cfg(test)]
    pub fn set(&mut self, port: usize, class: usize, paused: bool, now: Ps) -> bool {
        let pause = if paused { Pause::UntilResume } else { Pause::Resume };
        self.obey(port, class as u8, pause, now).changed
    }

    fn update(&mut self, port: usize, held_before: bool) {
        let gated_before = self.is_gated(port);
        self.queues[port] = self.gates[port].held_queues(|c| self.class_queues[c]);
        match (held_before, self.gates[port].holds_any()) {
            (false, true) => self.held_ports += 1,
            (true, false) => self.held_ports -= 1,
            _ => {}
        }
        self.count_gated(port, gated_before);
    }
}

/// The pauses a switch holds on its upstreams, by (ingress port, class) and for whole
/// ingress ports, and the PAUSE and RESUME frames it sent: what PFC and DSH keep alike.
///
/// Invariants: bit c of `classes[p]` is set exactly while this switch holds class c of
/// the upstream on port p paused, `ports[p]` while it holds the whole port;
/// `frames[p * CLASSES + c]` and `port_frames[p]` count the PAUSE and RESUME frames
/// sent for them (refreshes included).
#[derive(Debug, Clone)]
pub struct UpstreamPauses {
    classes: Vec<u8>,
    ports: Vec<bool>,
    frames: Vec<[u64; 2]>,
    port_frames: Vec<[u64; 2]>,
    frame_size: u32,
}

impl UpstreamPauses {
    /// No pause held on `ports` ingress ports, whose frames are `frame_size` bytes.
    pub fn new(ports: usize, frame_size: u32) -> Self {
        UpstreamPauses {
            classes: vec![0; ports],
            ports: vec![false; ports],
            frames: vec![[0; 2]; ports * CLASSES],
            port_frames: vec![[0; 2]; ports],
            frame_size,
        }
    }

    /// Whether this switch holds `class` of the upstream on `port` paused.
    pub fn holds(&self, port: usize, class: usize) -> bool {
        self.classes[port] & (1 << class) != 0
    }

    /// Whether this switch holds the whole upstream on `port` paused.
    pub fn holds_port(&self, port: usize) -> bool {
        self.ports[port]
    }

    /// The classes held paused on each ingress port (bit c: class c).
    pub fn classes(&self) -> &[u8] {
        &self.classes
    }

    /// Holds (`pause` other than RESUME) or releases `class` (or `PORT_LEVEL`) of the
    /// upstream on `port`, and sends it the frame: a PAUSE that refreshes one already
    /// held is sent and counted too.
    pub fn send(&mut self, port: usize, class: u8, pause: Pause, effects: &mut Effects) {
        let sent = if class == PORT_LEVEL {
            self.ports[port] = pause.pauses();
            &mut self.port_frames[port]
        } else {
            let bit = 1 << class;
            self.classes[port] = if pause.pauses() { self.classes[port] | bit } else { self.classes[port] & !bit };
            &mut self.frames[port * CLASSES + class as usize]
        };
        sent[!pause.pauses() as usize] += 1;
        effects.push(Effect::Frame { port: port as u16, frame: pause_frame(class, pause, self.frame_size) });
    }

    /// The PAUSE and RESUME frames sent upstream on `port` for `class`.
    pub fn frames_sent(&self, port: usize, class: usize) -> [u64; 2] {
        self.frames[port * CLASSES + class]
    }

    /// The port-level PAUSE and RESUME frames sent upstream on `port`.
    pub fn port_frames_sent(&self, port: usize) -> [u64; 2] {
        self.port_frames[port]
    }
}

/// What a flow-control scheme sees of the moment and may ask of the world.
pub struct FlowCx<'a> {
    pub now: Ps,
    pub effects: &'a mut Effects,
    /// The switch's egress pauses, which the scheme sets on a neighbour's frames.
    pub pauses: &'a mut PortPauses,
    /// The side table: the payloads of the frames the scheme reads and sends.
    pub exts: &'a mut ExtStore,
    /// The switch's egress ports, to read.
    pub ports: Ports<'a>,
}

/// An egress port as a scheme that steers flows (`FlowControl::steers_flows`) sees it
/// when it places or follows a packet.
#[derive(Clone, Copy)]
pub struct PortView<'a> {
    pub port: usize,
    pub queues: &'a [PortQueue],
    /// Bit q: queue q holds packets.
    pub active: u64,
    /// Bit q: queue q may not send (a neighbour's pause holds it).
    pub held: u64,
}

impl<'a> PortView<'a> {
    /// Port `port`, whose queues are `queues[first .. first + queues_per_port]`, bit q of
    /// `active` set where queue q holds packets, as `pauses` hold it.
    #[inline]
    pub fn of(port: usize, queues: &'a [PortQueue], queues_per_port: usize, active: u64, pauses: &PortPauses) -> Self {
        let first = port * queues_per_port;
        PortView { port, queues: &queues[first..first + queues_per_port], active, held: pauses.held_queues(port) }
    }
}

/// A switch's egress ports, as a flow control reads them on a frame or a timer.
pub struct Ports<'a> {
    /// The queues of every port, port after port (`queues_per_port` each).
    pub queues: &'a [PortQueue],
    pub queues_per_port: usize,
    /// Bit q of `active(port)`: queue q of the port holds packets.
    pub active: &'a dyn Fn(usize) -> u64,
}

impl<'a> Ports<'a> {
    /// Port `port` as a scheme that steers flows sees it, held by `pauses`.
    pub fn view(&self, port: usize, pauses: &PortPauses) -> PortView<'a> {
        PortView::of(port, self.queues, self.queues_per_port, (self.active)(port), pauses)
    }
}

/// What a scheme that steers flows may ask for while a packet enters or leaves.
pub struct StepCx<'a> {
    pub now: Ps,
    pub effects: &'a mut Effects,
}

/// The shared part of a buffer pool, as a flow control judges it.
#[derive(Clone, Copy, Debug)]
pub struct PoolState {
    /// The pool's index in its switch.
    pub index: usize,
    /// Its shared bytes (`switch.pool_size`).
    pub size: u64,
    /// Its shared bytes in use, the packets held in headroom included.
    pub shared_used: u64,
}

/// A lossless packet asking to enter the buffer, with the accounts a scheme needs.
#[derive(Clone, Copy, Debug)]
pub struct LosslessArrival {
    pub ingress: usize,
    pub class: usize,
    pub size: u64,
    /// Bytes buffered from (`ingress`, `class`), before this packet.
    pub ingress_bytes: u64,
    /// The ingress port's pool, whose free bytes the pause threshold scales.
    pub ingress_pool: PoolState,
    /// Shared bytes the packet takes in its egress queue (what its reserve does not cover).
    pub shared_needed: u64,
    /// Free shared bytes of the egress pool, and free shared and headroom bytes together.
    pub egress_pool_free: u64,
    pub egress_pool_free_with_headroom: u64,
}

/// What a scheme sees when a lossless packet entered or left the buffer: the ingress
/// accounts after the change, and the ingress port's pool.
pub struct IngressCx<'a> {
    pub now: Ps,
    pub effects: &'a mut Effects,
    pub ingress: &'a IngressAccounts,
    /// The ingress port's pool, after the change.
    pub ingress_pool: PoolState,
}

/// What a flow-control scheme is built for: the links that arrive at each port, and the
/// largest packet the scenario can send.
#[derive(Clone, Debug, Default)]
pub struct FlowControlEnv {
    /// By port: the link that arrives on it (its rate and one-way delay).
    pub ingress_links: Vec<IngressLink>,
    /// The largest packet in bytes, headers included.
    pub largest_packet: u64,
    /// Queues per port.
    pub queues: usize,
    /// Seeds the scheme's random choices (distinct per switch).
    pub seed: u64,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct IngressLink {
    pub rate_bps: u64,
    pub delay: Ps,
}

/// Bit c set for each class c of `classes`.
pub fn class_mask(classes: &[u8]) -> u8 {
    classes.iter().fold(0, |m, &c| m | 1 << c)
}

/// What a flow control that pauses (PFC, DSH) shares of its keys, checked alike: the
/// lossless classes, the threshold's alpha, the frame size and the deadlock watch; and
/// ports of at most 64 queues, which `scheme` names in its error.
pub fn check_pausing_keys(
    path: &str,
    scheme: &str,
    classes: &[u8],
    alpha: f64,
    frame_size: Bytes,
    deadlock_after: Time,
    env: &CheckEnv,
) -> Result<(), ScenarioError> {
    if let Some(c) = classes.iter().find(|&&c| c as usize >= CLASSES) {
        return Err(ScenarioError::not_accepted(path, "classes", c, "0 to 7"));
    }
    if !(alpha.is_finite() && alpha > 0.0) {
        return Err(ScenarioError::not_accepted(path, "alpha", alpha, "numbers > 0"));
    }
    if !(1..=9000).contains(&frame_size.0) {
        return Err(ScenarioError::not_accepted(path, "frame_size", frame_size, "1 B to 9000 B"));
    }
    env.check_timeout(&format!("{path}.deadlock_after"), deadlock_after)?;
    if env.queues > 64 {
        return Err(ScenarioError::new(
            "switch.queues",
            format!("{} queues per port; {scheme} pauses ports of at most 64", env.queues),
        ));
    }
    Ok(())
}

/// Warnings for the keys PFC and DSH share that are legal but almost surely a mistake:
/// no lossless class, or an alpha that puts the dynamic threshold T = alpha x free
/// shared bytes above the whole pool while one packet's room is free (the threshold
/// then stops nothing before the pool is full).
pub fn pausing_warnings(path: &str, scheme: &str, classes: &[u8], alpha: f64, env: &CheckEnv, warnings: &mut Warnings) {
    if classes.is_empty() {
        warnings.push(format!(
            "{path}.classes: [] makes no class lossless: {scheme} pauses nothing, and every packet is left to \
             switch.admission as on a lossy fabric"
        ));
    }
    let (pool, packet) = (env.largest_pool.0, env.largest_packet);
    if alpha * packet as f64 >= pool as f64 {
        // 1e30, not thirty-one digits.
        let alpha = if alpha >= 1e6 { format!("{alpha:e}") } else { alpha.to_string() };
        warnings.push(format!(
            "{path}.alpha: {alpha} puts the threshold (alpha x free shared bytes) above the whole {} pool while \
             one {packet} B packet's room is free (alpha >= {:.0}): queues pause only when the pool is all but \
             full, as with no dynamic threshold (1/16 to 8 are usual)",
            Bytes(pool),
            pool as f64 / packet as f64
        ));
    }
}

/// Warns of a resume offset `key` (a full key path) of `offset` bytes that is at least
/// `limit`, the largest threshold it is taken from (`what`): the offset's condition
/// never holds, and a paused queue resumes only `otherwise`.
pub fn resume_offset_warning(
    key: &str,
    offset: Bytes,
    limit: f64,
    what: &str,
    otherwise: &str,
    warnings: &mut Warnings,
) {
    if offset.0 as f64 >= limit && offset.0 > 0 {
        warnings.push(format!(
            "{key}: {offset} is at least {what} ({} B at most): a paused queue resumes only {otherwise}",
            limit.floor()
        ));
    }
}

/// One headroom episode of an (ingress port, lossless class): from its first byte in
/// headroom until its headroom is empty again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeadroomEpisode {
    pub port: u16,
    pub class: u8,
    /// When the headroom emptied.
    pub ended: Ps,
    /// The most bytes it held during the episode (the local maximum of its occupancy).
    pub peak: u64,
    /// The headroom the class has on this port.
    pub size: u64,
}

/// A switch's flow control, by role: the frames and timers it obeys here, and through its
/// supertraits the lossless classes it admits ([`Lossless`]), the flows it steers
/// ([`Steering`]) and what it reports ([`FlowControlReport`]). A scheme implements each
/// role; the defaults are those of a scheme without it, and the switch asks each role's
/// `lossless_classes` / `steers_flows` once, when it is built, before it calls the rest.
pub trait FlowControl: Lossless + Steering + FlowControlReport + Send {
    /// Whether the switch's ports obey class and port-level pause frames from their
    /// neighbours (a switch without lossless flow control ignores them). Asked once,
    /// when the switch is built.
    fn obeys_pause_frames(&self) -> bool {
        false
    }
    /// Whether the switch's ports keep the filter frames of their neighbours, which
    /// `holds_head` reads. Asked once, when the switch is built.
    fn obeys_filter_frames(&self) -> bool {
        false
    }
    /// A timer this scheme asked for (`Effect::Timer`) fired.
    fn on_timer(&mut self, _token: u32, _cx: &mut FlowCx) {}
}

/// Lossless admission: the classes whose packets the scheme admits in place of the
/// admission policy, and the ingress accounting (headroom, pauses) that goes with it.
pub trait Lossless {
    /// Whether the scheme reads the switch's ingress accounts (`Switch::ingress`). They
    /// cost a cache miss per packet in and out, so a switch keeps them only when its
    /// scheme says so.
    fn reads_ingress_accounts(&self) -> bool {
        false
    }
    /// Bit c set: class c is lossless, and its packets go to `admit`, `on_enqueue` and
    /// `on_dequeue` rather than the admission policy.
    fn lossless_classes(&self) -> u8 {
        0
    }
    /// The verdict on a packet of a class in `lossless_classes` (never `Evict`), which
    /// replaces the admission policy's. An `Admit` is final: the switch then buffers the
    /// packet and calls `on_enqueue`.
    fn admit(&mut self, _arrival: &LosslessArrival) -> Verdict {
        unreachable!("only a scheme with lossless classes is asked to admit")
    }
    /// A lossless packet admitted by `admit` was buffered.
    fn on_enqueue(&mut self, _charge: Charge, _cx: &mut IngressCx) {}
    /// A lossless packet left the buffer (sent: lossless packets are never pushed out).
    fn on_dequeue(&mut self, _charge: Charge, _cx: &mut IngressCx) {}
    /// Headroom bytes that packets from (`port`, `class`) hold.
    fn headroom_used(&self, _port: usize, _class: usize) -> u64 {
        0
    }
    /// Bytes of headroom the scheme keeps for lossless packets that arrive on `port`, over
    /// all classes; its pool holds them on top of its shared size.
    fn headroom_of_port(&self, _port: usize) -> u64 {
        0
    }
    /// Violations of the scheme's own accounting against the switch's ingress accounts.
    fn check_accounting(&self, _id: usize, _ingress: Option<&IngressAccounts>, _errors: &mut Vec<String>) {}
}

/// Per-flow steering: a scheme that picks each packet's egress queue and may hold a
/// queue's head (BFC), in place of the classifier.
pub trait Steering {
    /// Whether the scheme chooses each packet's egress queue (`assign_queue`) and follows
    /// each packet in and out (`on_buffered`, `on_sent`) and each queue's head
    /// (`holds_head`), instead of the classifier. Asked once, when the switch is built.
    fn steers_flows(&self) -> bool {
        false
    }
    /// The queue of `view`'s port that `pkt`, arrived on `ingress`, would join. Changes
    /// nothing: the packet may still be refused.
    fn assign_queue(&mut self, _pkt: &Packet, _ingress: usize, _view: &PortView) -> usize {
        unreachable!("only a scheme that steers flows assigns queues")
    }
    /// `pkt` joined queue `q` of `view`'s port (`view` shows the port after it).
    fn on_buffered(&mut self, _pkt: &Packet, _q: usize, _view: &PortView, _cx: &mut StepCx) {}
    /// `pkt` left queue `q` of `view`'s port to be sent (`view` shows the port after it).
    fn on_sent(&mut self, _pkt: &Packet, _q: usize, _view: &PortView, _cx: &mut StepCx) {}
    /// Whether `head`, at the head of queue `q` of an egress port, must wait: the
    /// neighbour there paused its flow, by what the port's `gate` kept of its frames.
    fn holds_head(&self, _q: usize, _head: &Packet, _gate: &PauseGate) -> bool {
        false
    }
}

/// What a flow-control scheme tells the run's results: its frames, its headroom episodes
/// and its own counters.
pub trait FlowControlReport {
    /// The PAUSE and RESUME frames (in that order) sent upstream on `port` for `class`.
    fn frames_sent(&self, _port: usize, _class: usize) -> [u64; 2] {
        [0, 0]
    }
    /// The port-level PAUSE and RESUME frames sent upstream on `port` (DSH).
    fn port_frames_sent(&self, _port: usize) -> [u64; 2] {
        [0, 0]
    }
    /// Every ended episode of a per-queue headroom (static headroom, PFC), in the order
    /// they ended; one still open at the end of the run is not among them.
    fn headroom_episodes(&self) -> &[HeadroomEpisode] {
        &[]
    }
    /// Adds the scheme's own counters to the run's (`SchemeCounters`).
    fn add_counters(&self, _out: &mut SchemeCounters) {}
}

/// What the rest of Shoal must know of a flow-control scheme beyond its `FlowControl`
/// methods, answered in its own file; the defaults are those of a scheme that pauses
/// nothing.
pub trait FlowControlFacts: Scheme {
    /// Whether it pauses traffic classes.
    fn pauses(_: &Self::Config) -> bool {
        false
    }

    /// The classes that pausing keeps lossless; `None` for a scheme that guards its flows
    /// by other means (BFC's own backpressure).
    fn paused_classes(_: &Self::Config) -> Option<&[u8]> {
        Some(&[])
    }

    /// How the run watches for deadlocks, for a scheme whose pauses can form one.
    fn deadlock_watch(_: &Self::Config) -> Option<DeadlockWatch> {
        None
    }

    /// Whether a pause it sends lasts until a frame of its own ends it (no timer runs it
    /// out): then a frame corrupted on a lossy link holds a pause for good.
    fn pauses_end_by_frame(_: &Self::Config) -> bool {
        false
    }

    /// For a scheme that pauses single flows: the virtual flow ids hosts' NICs hash their
    /// flows into to obey its filter frames.
    fn nic_filters(_: &Self::Config) -> Option<u32> {
        None
    }
}

registry! {
    /// The flow control of switches (`[switch.flow_control]`).
    pub enum FlowControlConfig => AnyFlowControl: FlowControl, env FlowControlEnv;
    "lossy" => Lossy(Lossy),
    "pfc" => Pfc(Pfc),
    "dsh" => Dsh(Dsh),
    "bfc" => Bfc(Bfc),
    facts FlowControlFacts {
        /// Whether the flow control pauses traffic classes (every scheme but `lossy`).
        fn pauses -> bool;
        /// The classes that pausing keeps lossless (none without flow control); `None`
        /// under BFC, which guards its flows by its own backpressure.
        fn paused_classes -> Option<&[u8]>;
        /// How the run watches for deadlocks: only under a flow control that pauses.
        fn deadlock_watch -> Option<DeadlockWatch>;
        /// Whether its pauses last until a frame ends them (a lost one holds them).
        fn pauses_end_by_frame -> bool;
        /// The virtual flow ids of the hosts' per-flow filters, under a scheme that
        /// pauses single flows (BFC).
        fn nic_filters -> Option<u32>;
    }
    forward {
        ref fn obeys_pause_frames() -> bool;
        ref fn obeys_filter_frames() -> bool;
        mut fn on_timer(token: u32, cx: &mut FlowCx);
    }
    forward Lossless {
        ref fn reads_ingress_accounts() -> bool;
        ref fn lossless_classes() -> u8;
        mut fn admit(arrival: &LosslessArrival) -> Verdict;
        mut fn on_enqueue(charge: Charge, cx: &mut IngressCx);
        mut fn on_dequeue(charge: Charge, cx: &mut IngressCx);
        ref fn headroom_used(port: usize, class: usize) -> u64;
        ref fn headroom_of_port(port: usize) -> u64;
        ref fn check_accounting(id: usize, ingress: Option<&IngressAccounts>, errors: &mut Vec<String>);
    }
    forward Steering {
        ref fn steers_flows() -> bool;
        mut fn assign_queue(pkt: &Packet, ingress: usize, view: &PortView) -> usize;
        mut fn on_buffered(pkt: &Packet, q: usize, view: &PortView, cx: &mut StepCx);
        mut fn on_sent(pkt: &Packet, q: usize, view: &PortView, cx: &mut StepCx);
        ref fn holds_head(q: usize, head: &Packet, gate: &PauseGate) -> bool;
    }
    forward FlowControlReport {
        ref fn frames_sent(port: usize, class: usize) -> [u64; 2];
        ref fn port_frames_sent(port: usize) -> [u64; 2];
        ref fn headroom_episodes() -> &[HeadroomEpisode];
        ref fn add_counters(out: &mut SchemeCounters);
    }
}

/// No flow control: a lossy switch drops what its buffer cannot hold. Frames it
/// receives are consumed without effect.
pub struct Lossy;

keyless_scheme!(Lossy, env FlowControlEnv);

impl FlowControlFacts for Lossy {}

impl FlowControl for Lossy {}

impl Lossless for Lossy {}

impl Steering for Lossy {}

impl FlowControlReport for Lossy {}
