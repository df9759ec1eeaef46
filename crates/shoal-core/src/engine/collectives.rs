//! The collective jobs of a run (`workload::collective`): their messages start as the
//! arrivals they wait for come in.

use super::{Event, Simulation};
use crate::sim::Ps;
use crate::workload::collective::Collectives;

/// A run's collective jobs, and the start event pending for them.
pub(super) struct CollectiveRun {
    pub state: Collectives,
    /// The time of the `CollectiveStart` event that is current, if any; others are stale.
    event_at: Option<Ps>,
}

impl CollectiveRun {
    pub fn new(state: Collectives) -> CollectiveRun {
        CollectiveRun { state, event_at: None }
    }
}

impl Simulation {
    /// The run's collective jobs and their iterations so far, if it has any.
    pub fn collectives(&self) -> Option<&Collectives> {
        self.collectives.as_ref().map(|run| &run.state)
    }

    /// Starts every collective message due by now, each numbered as the next flow.
    pub(super) fn on_collective_start(&mut self) {
        let run = self.collectives.as_mut().expect("a collective start has collectives");
        if run.event_at != Some(self.now) {
            return; // stale: an earlier start took its place
        }
        run.event_at = None;
        while let Some((mut spec, message)) = self.collectives.as_mut().and_then(|r| r.state.take_due(self.now)) {
            spec.id = self.upcoming.take_id();
            let fi = self.start_flow(spec);
            self.collectives.as_mut().expect("collectives").state.started(fi, message, self.now);
        }
        let next = self.collectives.as_ref().and_then(|r| r.state.next_due());
        if let Some(at) = next {
            self.schedule_collective_start(at);
        }
    }

    /// Flow `fi` arrived whole at its destination `h`: the steps of a collective it
    /// completes start.
    #[inline(never)]
    pub(super) fn on_message_arrived(&mut self, fi: u32, h: u32) {
        let Some(run) = self.collectives.as_mut() else { return };
        if let Some(at) = run.state.arrived(fi, h, self.now) {
            self.schedule_collective_start(at);
        }
    }

    /// Makes sure a `CollectiveStart` event is pending at `at` or earlier.
    pub(super) fn schedule_collective_start(&mut self, at: Ps) {
        let run = self.collectives.as_mut().expect("collectives");
        if run.event_at.is_none_or(|t| at < t) {
            run.event_at = Some(at);
            self.events.push(at, Event::CollectiveStart);
        }
    }
}
