//! The flows whose congestion state a run records over time (`run.series`): chosen as
//! they start, their senders wrapped in a `Traced` that keeps their rows until the flow
//! is released.

use super::Simulation;
use crate::config::run::SeriesConfig;
use crate::sim::{stream, Ps};
use crate::transport::{AnySender, SeriesRow, Traced};
use crate::workload::FlowSpec;

/// Which starting flows a run traces, and the rows of those already released.
///
/// Invariants: `ids` and `ranks` are ascending; `chosen` counts the flows started so far
/// that `ids` and the size bounds choose.
pub(super) struct Series {
    /// The flows chosen by id; empty: any.
    ids: Vec<u64>,
    min_bytes: u64,
    max_bytes: u64,
    /// With `sample`: the ranks among the chosen flows, in start order, that are traced.
    ranks: Option<Vec<u64>>,
    chosen: u64,
    interval: Ps,
    /// The rows of released traced flows, with their flow ids.
    released: Vec<(u64, SeriesRow)>,
}

impl Series {
    /// The flows `config` chooses, every one of them traced until `sample` draws.
    pub fn new(config: &SeriesConfig) -> Series {
        let mut ids = config.flows.clone();
        ids.sort_unstable();
        Series {
            ids,
            min_bytes: config.min_bytes.map_or(0, |b| b.0),
            max_bytes: config.max_bytes.map_or(u64::MAX, |b| b.0),
            ranks: None,
            chosen: 0,
            interval: config.interval.map_or(0, |t| t.0),
            released: Vec::new(),
        }
    }

    /// Traces `n` of the `candidates` chosen flows, drawn with `seed`.
    pub fn sample(&mut self, n: u64, seed: u64, candidates: u64) {
        let mut rng = stream(seed, "run.series", 0);
        let draw = rand::seq::index::sample(&mut rng, candidates as usize, n.min(candidates) as usize);
        let mut ranks: Vec<u64> = draw.into_iter().map(|r| r as u64).collect();
        ranks.sort_unstable();
        self.ranks = Some(ranks);
    }

    /// Whether a flow of `bytes` bytes is within the size bounds.
    pub fn chooses_size(&self, bytes: u64) -> bool {
        (self.min_bytes..=self.max_bytes).contains(&bytes)
    }

    /// Whether flow `spec` is chosen (before `sample` draws).
    pub fn chooses(&self, spec: &FlowSpec) -> bool {
        (self.ids.is_empty() || self.ids.binary_search(&spec.id).is_ok()) && self.chooses_size(spec.bytes)
    }

    /// Whether flow `spec`, starting now, is traced.
    fn traces(&mut self, spec: &FlowSpec) -> bool {
        if !self.chooses(spec) {
            return false;
        }
        self.chosen += 1;
        self.ranks.as_ref().is_none_or(|ranks| ranks.binary_search(&(self.chosen - 1)).is_ok())
    }
}

impl Simulation {
    /// `sender`, the sender of flow `spec` starting now, traced if the run traces it.
    pub(super) fn maybe_traced(&mut self, spec: &FlowSpec, sender: AnySender) -> AnySender {
        let Some(series) = &mut self.series else { return sender };
        match series.traces(spec) {
            true => AnySender::Traced(Box::new(Traced::new(sender, series.interval, self.now))),
            false => sender,
        }
    }

    /// Keeps the rows of flow `fi`, being released, if it is traced.
    pub(super) fn keep_series_of(&mut self, fi: u32) {
        let (Some(series), Some(flow)) = (&mut self.series, self.flows.get_mut_if_active(fi)) else { return };
        if let Some(AnySender::Traced(traced)) = flow.sender.as_mut().map(|s| &mut s.transport) {
            series.released.extend(traced.take_rows().into_iter().map(|row| (flow.spec.id, row)));
        }
    }

    /// Every row of the traced flows so far (released or not), by flow id, then time.
    pub fn series_rows(&self) -> Vec<(u64, SeriesRow)> {
        let Some(series) = &self.series else { return Vec::new() };
        let mut rows = series.released.clone();
        for (_, flow) in self.flows.active() {
            if let Some(AnySender::Traced(traced)) = flow.sender.as_ref().map(|s| &s.transport) {
                rows.extend(traced.rows().iter().map(|&row| (flow.spec.id, row)));
            }
        }
        rows.sort_by_key(|(id, row)| (*id, row.at));
        rows
    }
}
