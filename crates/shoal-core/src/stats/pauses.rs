//! The PFC frames each node received, and the time its queues spent paused.
//!
//! Recorded where a frame takes effect, at the paused (upstream) side, as the reference
//! simulators trace it (lossless-facts §1.1, "What is counted"): one row per received
//! PAUSE or RESUME, in time order. A timed pause that runs out (`pause_quanta`) ends the
//! paused time like a RESUME but is no frame: it is counted apart and has no row.

use crate::net::NodeId;
use crate::sim::Ps;
use std::collections::BTreeMap;

/// The egress queues of one class on one port of one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PauseKey {
    pub node: NodeId,
    pub port: u16,
    pub class: u8,
}

/// A PAUSE (`paused`) or RESUME received at `time`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PauseEvent {
    pub time: Ps,
    pub key: PauseKey,
    pub paused: bool,
}

/// What the frames one (node, port, class) received add up to.
///
/// Invariant: `paused_since` is `Some` exactly while the last frame received was a PAUSE
/// and its timer, if any, has not run out; `paused_ps` sums the closed pauses (a repeated
/// PAUSE or RESUME changes nothing, as at the receiver).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PauseTally {
    pub pauses: u64,
    pub resumes: u64,
    /// Pauses that ended by their timer rather than a RESUME.
    pub expiries: u64,
    pub paused_ps: Ps,
    /// The longest closed pause.
    pub longest_ps: Ps,
    paused_since: Option<Ps>,
}

impl PauseTally {
    /// Time paused up to `now`, counting a pause still in force.
    pub fn paused_until(&self, now: Ps) -> Ps {
        self.paused_ps + self.paused_since.map_or(0, |since| now - since)
    }

    /// The longest single pause up to `now`, counting a pause still in force.
    pub fn longest_until(&self, now: Ps) -> Ps {
        self.longest_ps.max(self.paused_since.map_or(0, |since| now - since))
    }

    /// The pause in force, if any, ends at `time`.
    fn close(&mut self, time: Ps) {
        if let Some(since) = self.paused_since.take() {
            self.paused_ps += time - since;
            self.longest_ps = self.longest_ps.max(time - since);
        }
    }
}

/// Every PFC frame received in a run, and the tally per (node, port, class).
#[derive(Clone, Debug, Default)]
pub struct PauseLog {
    events: Vec<PauseEvent>,
    tallies: BTreeMap<PauseKey, PauseTally>,
}

impl PauseLog {
    pub fn record(&mut self, time: Ps, key: PauseKey, paused: bool) {
        debug_assert!(self.events.last().is_none_or(|e| e.time <= time), "frames are recorded in time order");
        self.events.push(PauseEvent { time, key, paused });
        let tally = self.tallies.entry(key).or_default();
        match (paused, tally.paused_since) {
            (true, since) => {
                tally.pauses += 1;
                tally.paused_since = since.or(Some(time));
            }
            (false, _) => {
                tally.resumes += 1;
                tally.close(time);
            }
        }
    }

    /// The timed pause of `key` ran out at `time`: the paused time ends as at a RESUME,
    /// but no frame is counted or logged.
    pub fn expire(&mut self, time: Ps, key: PauseKey) {
        let tally = self.tallies.entry(key).or_default();
        debug_assert!(tally.paused_since.is_some(), "only a pause in force runs out");
        tally.expiries += 1;
        tally.close(time);
    }

    /// Adds `other`'s frames (another partition's of the same run, whose nodes are not
    /// this log's), keeping the frames in the order they arrived: by time, then by
    /// `order` (of the event that delivered each).
    pub fn merge(&mut self, other: PauseLog, order: impl Fn(&PauseEvent) -> u64) {
        self.events.extend(other.events);
        self.events.sort_by_cached_key(|e| (e.time, order(e)));
        self.tallies.extend(other.tallies);
    }

    pub fn events(&self) -> &[PauseEvent] {
        &self.events
    }

    /// The tally of every (node, port, class) that received a frame, in key order.
    pub fn tallies(&self) -> impl Iterator<Item = (&PauseKey, &PauseTally)> {
        self.tallies.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paused_time_sums_the_intervals_and_ignores_repeats() {
        let key = PauseKey { node: NodeId::Host(3), port: 0, class: 2 };
        let mut log = PauseLog::default();
        for (t, paused) in [(10, true), (15, true), (40, false), (45, false), (100, true)] {
            log.record(t, key, paused);
        }
        let (_, tally) = log.tallies().next().unwrap();
        assert_eq!((tally.pauses, tally.resumes), (3, 2));
        assert_eq!(tally.paused_ps, 30, "10 to 40; the PAUSE at 15 and the RESUME at 45 repeat");
        assert_eq!(tally.paused_until(130), 60, "and 100 to 130, still paused");
        assert_eq!(tally.longest_until(130), 30, "the longest single pause, not the sum");
        assert_eq!(tally.longest_until(150), 50, "the pause still in force, once it is longer");
        assert_eq!(log.events().len(), 5);
    }

    /// An expiry closes the pause like a RESUME, without counting or logging a frame; the
    /// next PAUSE opens a new one.
    #[test]
    fn an_expiry_ends_the_paused_time_without_a_frame() {
        let key = PauseKey { node: NodeId::Switch(1), port: 4, class: 3 };
        let mut log = PauseLog::default();
        log.record(10, key, true);
        log.record(20, key, true);
        log.expire(70, key);
        log.record(100, key, true);
        log.record(130, key, false);
        let (_, tally) = log.tallies().next().unwrap();
        assert_eq!((tally.pauses, tally.resumes, tally.expiries), (3, 1, 1));
        assert_eq!(tally.paused_ps, 60 + 30);
        assert_eq!(tally.longest_ps, 60, "an expiry closes a pause too");
        assert_eq!(log.events().len(), 4, "the expiry is no frame");
    }
}
