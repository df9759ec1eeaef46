//! Running the observers (queue sampling, the deadlock watch) and telling them when the
//! network has come to rest.

use super::{Event, Link, Simulation};
use crate::host::Nic;
use crate::observe::NetView;
use crate::sim::Ps;
use crate::switch::Switch;

impl Simulation {
    /// The network has no event left but observations, so nothing in it will change
    /// again: tells every observer (at each observation from then on, and at the stop
    /// time). Returns whether one wants the run to end now.
    pub(super) fn tell_observers_at_rest(&mut self) -> bool {
        let (links, nics) = (&self.links, &self.nics);
        let net = NetView {
            now: self.now,
            switches: &self.switches,
            link_tx_bytes: &|l| links[l as usize].tx_bytes,
            nothing_can_move: &|| true,
            held_nics: &|| held_nics(nics),
        };
        let mut stop = false;
        for observer in &mut self.observers {
            observer.at_rest(&net);
            stop |= observer.wants_stop();
        }
        stop
    }

    /// Runs observer `i`; returns whether it asks to end the run now.
    pub(super) fn on_observe(&mut self, i: u16) -> bool {
        self.observe(i);
        // Keep observing only while something else can still happen: an event that is
        // not another observer's next observation (nor an idle timer).
        self.observations_pending -= 1;
        let observer = &self.observers[i as usize];
        if self.pending_events() > 0 {
            self.events.push(self.now + observer.interval(), Event::Observe(i));
            self.observations_pending += 1;
        }
        observer.wants_stop()
    }

    /// Observer `i` looks at the network now.
    pub(super) fn observe(&mut self, i: u16) {
        let (links, switches, nics, now) = (&self.links, &self.switches, &self.nics, self.now);
        let net = NetView {
            now,
            switches,
            link_tx_bytes: &|l| links[l as usize].tx_bytes,
            nothing_can_move: &|| nothing_can_move(now, links, switches, nics),
            held_nics: &|| held_nics(nics),
        };
        self.observers[i as usize].observe(&net);
    }
}

/// Whether nothing in the network can move by itself at `now`: no link is serializing or
/// carrying anything, no switch queue that holds packets may send (pauses hold every
/// one), and no NIC may send a queued packet or start a paced one. Only a host's timer or
/// a new flow can then add packets, and those cannot drain what the pauses hold.
fn nothing_can_move(now: Ps, links: &[Link], switches: &[Switch], nics: &[Nic]) -> bool {
    links.iter().all(|l| l.busy_until <= now && l.wire.is_empty() && l.control.as_ref().is_none_or(|c| c.is_empty()))
        && switches.iter().all(|s| (0..s.ports.len()).all(|p| !s.has_queued(p)))
        && nics.iter().all(|n| !n.can_send() && !n.has_paced())
}

/// How many NICs hold packets while a pause holds some class.
pub(super) fn held_nics(nics: &[Nic]) -> usize {
    nics.iter().filter(|n| n.paused() != 0 && !n.is_empty()).count()
}
