//! The traced flows' congestion state over time (`series.parquet`, `run.series`).

use super::{ns, Column};
use crate::transport::SeriesRow;

/// One row each time a traced flow's sender state changed (or an ACK measured a round
/// trip), by flow id, then time; NaN where its transport or controller has no such value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SeriesTable {
    pub flow: Vec<u64>,
    pub time_ns: Vec<f64>,
    pub cwnd_bytes: Vec<f64>,
    pub rate_bps: Vec<f64>,
    pub alpha: Vec<f64>,
    pub target_rate_bps: Vec<f64>,
    pub utilization: Vec<f64>,
    pub rtt_ns: Vec<f64>,
}

impl SeriesTable {
    /// The table of `rows` (flow id and row), in their order.
    pub fn from_rows(rows: &[(u64, SeriesRow)]) -> SeriesTable {
        let mut table = SeriesTable::default();
        for &(flow, row) in rows {
            let p = row.probe;
            table.flow.push(flow);
            table.time_ns.push(ns(row.at));
            table.cwnd_bytes.push(p.cwnd_bytes);
            table.rate_bps.push(p.rate_bps);
            table.alpha.push(p.alpha);
            table.target_rate_bps.push(p.target_rate_bps);
            table.utilization.push(p.utilization);
            table.rtt_ns.push(row.rtt.map_or(f64::NAN, ns));
        }
        table
    }

    pub fn is_empty(&self) -> bool {
        self.flow.is_empty()
    }

    /// Every column by name, in the order of `series.parquet`.
    pub fn named_columns(&self) -> Vec<(&'static str, Column<'_>)> {
        vec![
            ("flow", Column::U64(&self.flow)),
            ("time_ns", Column::F64(&self.time_ns)),
            ("cwnd_bytes", Column::F64(&self.cwnd_bytes)),
            ("rate_bps", Column::F64(&self.rate_bps)),
            ("alpha", Column::F64(&self.alpha)),
            ("target_rate_bps", Column::F64(&self.target_rate_bps)),
            ("utilization", Column::F64(&self.utilization)),
            ("rtt_ns", Column::F64(&self.rtt_ns)),
        ]
    }
}
