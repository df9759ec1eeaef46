//! Pause frames, and the gate with which a port obeys them. A node (switch port or host
//! NIC) that receives a frame from its neighbour holds its egress queues by it:
//!
//! - a class frame (PFC, IEEE 802.1Qbb) pauses or resumes one traffic class, ON/OFF (until
//!   the RESUME, as HPCC and ns3-datacenter send them) or for a number of quanta of 512
//!   bit times of the link, re-armed by a later PAUSE (lossless-facts §1.1);
//! - a port-level frame (DSH) pauses or resumes the whole port, independently of the
//!   class pauses;
//! - a filter frame (BFC, §3.6) names the paused flows by their virtual flow ids in a
//!   bloom filter (`net::bloom`); it replaces the filter before it.
//!
//! The gate keeps what the frames say; the node maps classes to its queues and carries
//! out what changed (timers, restarting its link).

use super::bloom::BloomFilter;
use super::{Packet, PacketKind};
use crate::sim::{mix_below, LinkRate, Ps};

/// The traffic classes pause frames name (802.1Qbb's eight).
pub const CLASSES: usize = 8;

/// The class number that names a whole port in pause frames and records (DSH's
/// port-level PAUSE and RESUME): one past the eight classes.
pub const PORT_LEVEL: u8 = CLASSES as u8;

/// `Packet::flow` of a class or port-level pause frame, which no flow has.
const PAUSE_FRAME: u32 = u32::MAX;

/// `Packet::flow` of a filter frame.
const FILTER_FRAME: u32 = u32::MAX - 1;

/// `Packet::seq` of an ON/OFF PAUSE: above every 802.1Qbb timer (16 bits), so that the
/// timers 0 (RESUME) to 65535 ride in `seq` as they are.
const UNTIL_RESUME: u32 = u32::MAX;

/// What a pause frame asks of the class (or port) it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pause {
    /// XON, a timer of 0: the class may send again.
    Resume,
    /// Stop until a RESUME (ON/OFF, as HPCC and N3DC: their timer field is ignored).
    UntilResume,
    /// Stop for this many quanta of 512 bit times of the link the frame came on, unless a
    /// later PAUSE re-arms the timer or a RESUME ends it first (802.1Qbb). Never 0.
    Quanta(u16),
}

impl Pause {
    /// Whether the frame pauses (PAUSE) rather than resumes (RESUME).
    pub fn pauses(self) -> bool {
        self != Pause::Resume
    }
}

/// The bytes of one pause quantum: 512 bit times (802.1Qbb).
pub const QUANTUM_BYTES: u64 = 64;

/// How long `quanta` pause quanta last on a link of `rate`: 5.12 ns each at 100 Gbps.
pub fn quanta_time(quanta: u64, rate: &LinkRate) -> Ps {
    rate.serialization(quanta * QUANTUM_BYTES)
}

/// A pause frame of `size` bytes for `class` (or `PORT_LEVEL`). The class rides in
/// `priority`, the timer in `seq`: 0 for RESUME, the quanta of a timed PAUSE,
/// `UNTIL_RESUME` for an ON/OFF PAUSE.
pub fn pause_frame(class: u8, pause: Pause, size: u32) -> Packet {
    let seq = match pause {
        Pause::Resume => 0,
        Pause::UntilResume => UNTIL_RESUME,
        Pause::Quanta(q) => {
            debug_assert!(q > 0, "a timer of 0 is a RESUME");
            q as u32
        }
    };
    Packet { kind: PacketKind::Control, size, seq, ..Packet::template(PAUSE_FRAME, 0, 0, class) }
}

/// The class of a pause frame and what it asks; `None` for any other control frame.
pub fn read_pause_frame(frame: &Packet) -> Option<(u8, Pause)> {
    (frame.kind == PacketKind::Control && frame.flow == PAUSE_FRAME).then(|| {
        let pause = match frame.seq {
            0 => Pause::Resume,
            q @ 1..=0xffff => Pause::Quanta(q as u16),
            _ => Pause::UntilResume,
        };
        (frame.priority, pause)
    })
}

/// A filter frame of `size` bytes whose filter is the side-table payload `ext` holds.
pub fn filter_frame(size: u32, ext: super::ExtId) -> Packet {
    Packet { kind: PacketKind::Control, size, ext: Some(ext), ..Packet::template(FILTER_FRAME, 0, 0, 0) }
}

/// Whether `frame` is a filter frame.
pub fn is_filter_frame(frame: &Packet) -> bool {
    frame.kind == PacketKind::Control && frame.flow == FILTER_FRAME
}

/// Mixed into a flow's 5-tuple hash to give its virtual flow id, so that the id is
/// independent of the ECMP path and of the fair-queueing hash.
const VFID_KEY: u64 = 0x9b1c_4d27_e083_6af5;

/// The virtual flow id (VFID) of a packet with 5-tuple hash `hash`, below `vfids`: the
/// same at every node (BFC §3.3), so that a filter names the same flow at both ends of
/// a link.
#[inline]
pub fn vfid(hash: u32, vfids: u32) -> u32 {
    mix_below(hash as u64, VFID_KEY, vfids as u64) as u32
}

/// `PauseGate::ends` of a class with no timed pause.
const NO_END: Ps = Ps::MAX;

/// What one port obeys of its neighbour's pause frames: which classes are paused,
/// whether the whole port is, until when a timed pause holds, since when each pause has
/// held, and the last filter of paused flows.
///
/// Invariants: `ends[c]` is when the timed PAUSE of class c runs out while one holds it
/// (`NO_END` otherwise); `since[c]` is when class c was paused, while it is, and
/// `port_since` when the port was; `filter` is the last non-empty filter received.
#[derive(Clone, Debug)]
pub struct PauseGate {
    classes: u8,
    port: bool,
    ends: [Ps; CLASSES],
    since: [Ps; CLASSES],
    port_since: Ps,
    filter: Option<BloomFilter>,
}

/// What obeying a frame did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Obeyed {
    /// The class (the frame's, at most the last class) or `PORT_LEVEL` it acted on.
    pub class: u8,
    /// Whether a pause began or ended (a repeated PAUSE or RESUME changes nothing,
    /// lossless-facts §1.4).
    pub changed: bool,
    /// When the timed pause it set runs out: the time of the timer to ask for.
    pub expires_at: Option<Ps>,
}

impl Default for PauseGate {
    fn default() -> Self {
        PauseGate { classes: 0, port: false, ends: [NO_END; CLASSES], since: [0; CLASSES], port_since: 0, filter: None }
    }
}

impl PauseGate {
    /// Obeys a class or port-level frame (`read_pause_frame`) arrived at `now` on a link
    /// of `rate` (which times its quanta). A class's pause and its port's are
    /// independent: resuming one leaves the other.
    pub fn obey(&mut self, class: u8, pause: Pause, now: Ps, rate: &LinkRate) -> Obeyed {
        if class == PORT_LEVEL {
            let changed = self.port != pause.pauses();
            if changed {
                self.port = pause.pauses();
                self.port_since = now;
            }
            return Obeyed { class, changed, expires_at: None };
        }
        let c = (class as usize).min(CLASSES - 1);
        let expires_at = match pause {
            Pause::Quanta(quanta) => Some(now + quanta_time(quanta as u64, rate)),
            Pause::Resume | Pause::UntilResume => None,
        };
        self.ends[c] = expires_at.unwrap_or(NO_END);
        Obeyed { class: c as u8, changed: self.set(c, pause.pauses(), now), expires_at }
    }

    /// A timer of `obey` fired at `now`: the timed pause of `class` runs out, unless a
    /// later frame re-armed or ended it (the timer is then stale: `None`). Returns
    /// whether the class was paused until now.
    pub fn expire(&mut self, class: usize, now: Ps) -> Option<bool> {
        if self.ends[class] != now {
            return None;
        }
        self.ends[class] = NO_END;
        Some(self.set(class, false, now))
    }

    /// Pauses or resumes `class` at `now`; returns whether that changed anything.
    pub fn set(&mut self, class: usize, paused: bool, now: Ps) -> bool {
        let before = self.classes;
        self.classes = if paused { before | 1 << class } else { before & !(1 << class) };
        if self.classes == before {
            return false;
        }
        self.since[class] = now;
        true
    }

    /// The link went down at `now`: what the neighbour said no longer holds anything
    /// (802.1Qbb's pause state lives no longer than the link). Returns whether something
    /// was held.
    pub fn clear(&mut self, now: Ps) -> bool {
        let held = self.holds_any() || self.filter.is_some();
        for class in 0..CLASSES {
            self.set(class, false, now);
        }
        self.ends = [NO_END; CLASSES];
        self.port = false;
        self.port_since = now;
        self.filter = None;
        held
    }

    /// Keeps `filter` (a filter frame's) as the paused flows; an empty one pauses none.
    pub fn set_filter(&mut self, filter: &BloomFilter) {
        self.filter = (!filter.is_empty()).then(|| filter.clone());
    }

    /// Bit c set: the neighbour paused class c (the port's pause aside).
    pub fn classes(&self) -> u8 {
        self.classes
    }

    /// Whether the neighbour paused the whole port.
    pub fn port_paused(&self) -> bool {
        self.port
    }

    /// The queues that may not send, as a bit set: those of the paused classes, where
    /// `queues_of_class(c)` are class c's, or every queue while the whole port is paused.
    pub fn held_queues(&self, queues_of_class: impl Fn(usize) -> u64) -> u64 {
        if self.port {
            return u64::MAX;
        }
        (0..CLASSES).filter(|c| self.classes & 1 << c != 0).fold(0, |held, c| held | queues_of_class(c))
    }

    /// Whether the neighbour paused `class`, or the whole port.
    pub fn is_paused(&self, class: usize) -> bool {
        self.classes & (1 << class) != 0 || self.port
    }

    /// Whether a class or the whole port is paused.
    pub fn holds_any(&self) -> bool {
        self.classes != 0 || self.port
    }

    /// Since when `class` has been paused, by a pause of the class or of the whole port
    /// (the earlier of the two in force); `None` while it is not.
    pub fn paused_since(&self, class: usize) -> Option<Ps> {
        let by_class = (self.classes & (1 << class) != 0).then(|| self.since[class]);
        let by_port = self.port.then_some(self.port_since);
        match (by_class, by_port) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether the last filter pauses the flows of virtual flow id `vfid`.
    pub fn holds_flow(&self, vfid: u32) -> bool {
        self.filter.as_ref().is_some_and(|f| f.matches(vfid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATE: u64 = 100_000_000_000;

    /// A class pause holds its class's queues, two classes the union of theirs, and a
    /// port-level pause every queue whatever the classes map to.
    #[test]
    fn held_queues_are_the_paused_classes_queues_or_all() {
        let (mut gate, rate) = (PauseGate::default(), LinkRate::new(RATE));
        let two_per_class = |c: usize| 0b11 << (2 * c);
        assert_eq!(gate.held_queues(two_per_class), 0);
        gate.obey(1, Pause::UntilResume, 0, &rate);
        assert_eq!(gate.held_queues(two_per_class), 0b1100);
        gate.obey(3, Pause::UntilResume, 0, &rate);
        assert_eq!(gate.held_queues(two_per_class), 0b1100_1100);
        gate.obey(PORT_LEVEL, Pause::UntilResume, 0, &rate);
        assert_eq!(gate.held_queues(|_| 0), u64::MAX);
        gate.obey(PORT_LEVEL, Pause::Resume, 0, &rate);
        gate.obey(1, Pause::Resume, 0, &rate);
        assert_eq!(gate.held_queues(two_per_class), 0b1100_0000);
    }

    /// A timed PAUSE holds for its quanta (5.12 ns each at 100 Gbps), a second one
    /// re-arms it and makes the first timer stale, and a RESUME ends it early.
    #[test]
    fn timed_pauses_run_out_unless_re_armed_or_resumed() {
        let (mut gate, rate) = (PauseGate::default(), LinkRate::new(RATE));
        let first = gate.obey(3, Pause::Quanta(100), 0, &rate);
        assert_eq!(first, Obeyed { class: 3, changed: true, expires_at: Some(512_000) });
        let again = gate.obey(3, Pause::Quanta(100), 1_000, &rate);
        assert_eq!(again, Obeyed { class: 3, changed: false, expires_at: Some(513_000) });
        assert_eq!(gate.expire(3, 512_000), None, "re-armed: stale");
        assert_eq!(gate.paused_since(3), Some(0), "held since the first PAUSE");
        assert_eq!(gate.expire(3, 513_000), Some(true));
        assert!(!gate.is_paused(3));
        gate.obey(3, Pause::Quanta(100), 2_000, &rate);
        assert!(gate.obey(3, Pause::Resume, 3_000, &rate).changed);
        assert_eq!(gate.expire(3, 514_000), None, "a RESUME ended it");
    }

    /// Class and port pauses are independent; a pause holds a class since the earlier of
    /// the two; a class number beyond the last class is the last class.
    #[test]
    fn class_and_port_pauses_are_independent() {
        let (mut gate, rate) = (PauseGate::default(), LinkRate::new(RATE));
        gate.obey(1, Pause::UntilResume, 10, &rate);
        gate.obey(PORT_LEVEL, Pause::UntilResume, 20, &rate);
        assert_eq!((gate.paused_since(1), gate.paused_since(2)), (Some(10), Some(20)));
        assert!(gate.obey(PORT_LEVEL, Pause::Resume, 30, &rate).changed);
        assert!(gate.is_paused(1) && !gate.is_paused(2), "the class stays paused");
        assert!(!gate.obey(PORT_LEVEL, Pause::Resume, 40, &rate).changed, "a repeated RESUME changes nothing");
        assert_eq!(gate.obey(11, Pause::UntilResume, 50, &rate).class, 7);
        assert_eq!(gate.classes(), 0b1000_0010);
    }

    /// Frames carry what they say, and the two kinds are told apart.
    #[test]
    fn frames_round_trip() {
        for pause in [Pause::Resume, Pause::UntilResume, Pause::Quanta(1), Pause::Quanta(65_535)] {
            let frame = pause_frame(5, pause, 64);
            assert_eq!(read_pause_frame(&frame), Some((5, pause)));
            assert!(!is_filter_frame(&frame));
        }
        assert_eq!(pause_frame(5, Pause::Quanta(65535), 31).size, 31, "the timer does not change the frame");
        let other = Packet { kind: PacketKind::Control, ..Packet::template(0, 0, 0, 0) };
        assert_eq!(read_pause_frame(&other), None);
        let ext = super::super::ExtStore::default().insert(super::super::Ext::Telemetry(Default::default()));
        let filter = filter_frame(64, ext);
        assert!(is_filter_frame(&filter) && read_pause_frame(&filter).is_none());
    }
}
