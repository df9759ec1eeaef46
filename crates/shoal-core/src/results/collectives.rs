//! The collective jobs' iterations (`collectives.parquet`); each job's headline is
//! `summary::CollectiveSummary`.

use super::{ns, Column};
use crate::workload::collective::IterationRecord;

/// Every iteration of every collective job (`collectives.parquet`): `job` numbers the
/// collective workloads in order; an iteration's time runs from the start of its first
/// message to the arrival of its last (NaN when it did not start or finish).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CollectiveTable {
    pub job: Vec<u32>,
    pub iteration: Vec<u32>,
    pub start_ns: Vec<f64>,
    pub end_ns: Vec<f64>,
    pub time_ns: Vec<f64>,
}

impl CollectiveTable {
    /// The table of each job's `iterations`.
    pub fn from_iterations(iterations: &[Vec<IterationRecord>]) -> CollectiveTable {
        let mut table = CollectiveTable::default();
        for (job, records) in iterations.iter().enumerate() {
            for (i, r) in records.iter().enumerate() {
                let (start, end) = (r.start.map_or(f64::NAN, ns), r.end.map_or(f64::NAN, ns));
                table.job.push(job as u32);
                table.iteration.push(i as u32);
                table.start_ns.push(start);
                table.end_ns.push(end);
                table.time_ns.push(end - start);
            }
        }
        table
    }

    pub fn is_empty(&self) -> bool {
        self.job.is_empty()
    }

    /// Every column by name, in the order of `collectives.parquet`.
    pub fn named_columns(&self) -> Vec<(&'static str, Column<'_>)> {
        vec![
            ("job", Column::U32(&self.job)),
            ("iteration", Column::U32(&self.iteration)),
            ("start_ns", Column::F64(&self.start_ns)),
            ("end_ns", Column::F64(&self.end_ns)),
            ("time_ns", Column::F64(&self.time_ns)),
        ]
    }
}
