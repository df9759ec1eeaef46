//! Links and switches out of service during a run (`topology.outages`). A cable that goes
//! down loses what crosses it from then on, packets already on its wire included, and the
//! pauses its far end had sent end (802.1Qbb's state lives no longer than the link). The
//! switches keep routing by what they knew until `topology.reconvergence` has passed, so
//! they send into the down link, and keep off a restored one, for that long; then every
//! switch routes by shortest paths over the links up at that moment, as a routing protocol
//! that has converged would.
//!
//! The steps of the schedule are events like any other: a run lasts until its last one
//! (an outage's end, plus the reconvergence) at least. A run with outages runs on one
//! thread.

use super::{Event, Simulation};
use crate::net::{CableOutage, NetworkSpec, NodeId, Packet, Routes, Wiring};
use crate::sim::Ps;
use crate::stats::DropReason;

/// What happens at a step of the schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Change {
    Down(Vec<u32>),
    Up(Vec<u32>),
    /// Routing catches up with the links up now.
    Reroute,
}

/// The schedule of a run's outages and the state of its cables.
pub(super) struct Outages {
    /// In time order (ties in the order of the outages).
    steps: Vec<(Ps, Change)>,
    /// By cable: how many outages hold it down now.
    holding: Vec<u32>,
    spec: NetworkSpec,
    wiring: Wiring,
}

impl Outages {
    pub(super) fn new(spec: &NetworkSpec, outages: &[CableOutage], reconvergence: Ps) -> Outages {
        let mut steps = Vec::new();
        for o in outages {
            steps.push((o.at, Change::Down(o.cables.clone())));
            steps.push((o.at.saturating_add(reconvergence), Change::Reroute));
            if let Some(until) = o.until {
                steps.push((until, Change::Up(o.cables.clone())));
                steps.push((until.saturating_add(reconvergence), Change::Reroute));
            }
        }
        steps.sort_by_key(|(at, _)| *at);
        Outages { steps, holding: vec![0; spec.links.len() / 2], spec: spec.clone(), wiring: Wiring::of(spec) }
    }

    /// The times of the steps, by step index.
    pub(super) fn times(&self) -> impl Iterator<Item = Ps> + '_ {
        self.steps.iter().map(|(at, _)| *at)
    }

    /// One more outage holds cable `c` down (`down`), or one fewer; returns whether that
    /// took it down or brought it back.
    fn hold(&mut self, c: u32, down: bool) -> bool {
        let holding = &mut self.holding[c as usize];
        if down {
            *holding += 1;
            *holding == 1
        } else {
            *holding -= 1;
            *holding == 0
        }
    }

    /// Whether link `link` is down now.
    pub(super) fn is_down(&self, link: u32) -> bool {
        self.holding[link as usize / 2] > 0
    }
}

impl Simulation {
    /// Step `step` of the outage schedule is due.
    pub(super) fn on_outage_step(&mut self, step: u32) {
        let outages = self.outages.as_mut().expect("an outage step has a schedule");
        match outages.steps[step as usize].1.clone() {
            Change::Down(cables) => {
                for c in cables {
                    if self.outages.as_mut().expect("a schedule").hold(c, true) {
                        self.cable_down(c);
                    }
                }
            }
            Change::Up(cables) => {
                for c in cables {
                    if self.outages.as_mut().expect("a schedule").hold(c, false) {
                        for link in [2 * c, 2 * c + 1] {
                            let captured = self.capture.as_ref().is_some_and(|cap| cap.watches(link));
                            let l = &mut self.links[link as usize];
                            l.watched = l.error_threshold > 0 || captured;
                        }
                    }
                }
            }
            Change::Reroute => {
                let o = self.outages.as_ref().expect("a schedule");
                let down: Vec<bool> = o.holding.iter().map(|&n| n > 0).collect();
                self.routes = Routes::compute_without(&o.spec, &o.wiring, &down);
            }
        }
    }

    /// Cable `c` goes down now: both its links lose what crosses them, and the switches at
    /// its ends forget the pauses the other sent.
    fn cable_down(&mut self, c: u32) {
        for link in [2 * c, 2 * c + 1] {
            self.links[link as usize].watched = true;
            let (from, port) = (self.links[link as usize].from, self.links[link as usize].from_port as usize);
            if let NodeId::Switch(s) = from {
                let mut effects = std::mem::take(&mut self.effects);
                self.switches[s as usize].on_link_down(port, self.now, &mut effects);
                self.carry_out_effects(from, effects);
            }
        }
    }

    /// Whether `link` is down; if so, `pkt` is counted as lost to it.
    pub(super) fn lost_to_outage(&mut self, link: u32, pkt: &Packet) -> bool {
        if !self.outages.as_ref().is_some_and(|o| o.is_down(link)) {
            return false;
        }
        self.lose_on_link(pkt, DropReason::LinkDown);
        true
    }

    /// Puts the outage schedule's steps in the event queue.
    pub(super) fn schedule_outages(&mut self) {
        let times: Vec<Ps> = self.outages.as_ref().map_or(Vec::new(), |o| o.times().collect());
        for (i, at) in times.into_iter().enumerate() {
            self.events.push_far(at, Event::Outage(i as u32));
        }
    }
}
