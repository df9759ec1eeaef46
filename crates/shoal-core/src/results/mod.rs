//! A run's results as tables and files: the flow table and the queue samples (the columns
//! of `flows.parquet` / `queues.parquet` and of the Python API's DataFrames), the headline
//! metrics (`summary.json`), and the run directory, written atomically.
//!
//! A run directory holds `flows.parquet`, `queues.parquet` (when the run sampled queues),
//! `pfc.parquet` and `pfc_ports.parquet` (when a class is lossless; with `ingress.parquet`
//! when it also sampled), `occupancy.parquet` (with `run.occupancy_cdf`), `scenario.json` (the
//! resolved scenario) and `summary.json`. Everything is written into
//! a hidden temporary directory next to the target, which is renamed into place only
//! once complete; the same results always give the same bytes.

mod collectives;
pub mod counters;
pub(crate) mod json;
pub mod parquet;
mod pfc;
mod run_dir;
pub mod schema;
mod series;
pub mod summary;

pub use collectives::CollectiveTable;
pub use pfc::{HeadroomTable, IngressTable, PfcEventTable, PfcPortRecord, PfcPortTable, PfcTables};
use run_dir::write_atomically;
pub use run_dir::{check_run_dir_target, FileError};
pub use series::SeriesTable;
pub use summary::{CollectiveSummary, Summary};

use crate::observe::Sample;
use crate::sim::Ps;
use crate::stats::OccupancyDistribution;
use crate::workload::FlowSpec;
pub use parquet::Column;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

fn ns(ps: u64) -> f64 {
    ps as f64 / 1e3
}

/// A missing time in the flow table: the finish of an unfinished flow, the ideal FCT of a
/// datagram or endless flow.
pub const NO_TIME: Ps = Ps::MAX;

/// Runs `$op` on every column of flow table `$table` (`|$column| $op`): the one list of its
/// fields, for what is done to every column alike.
macro_rules! for_each_column {
    ($table:expr, |$column:ident| $op:expr) => {{
        let table: &mut FlowTable = $table;
        for_each_column!(@each table, $column, $op,
            id src dst bytes start finish ideal_fct retransmits timeouts priority kind datagram delivered_bytes query);
    }};
    (@each $table:ident, $column:ident, $op:expr, $($field:ident)+) => {
        $({
            let $column = &mut $table.$field;
            $op;
        })+
    };
}

/// One row of the per-flow results.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowRecord {
    pub id: u64,
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    pub start: Ps,
    pub finish: Option<Ps>,
    pub ideal_fct: Option<Ps>,
    pub retransmits: u32,
    pub timeouts: u32,
    pub priority: u8,
    /// Its transport: `tcp`, `udp` or `rdma`.
    pub kind: &'static str,
    /// A datagram flow: it has no completion time.
    pub datagram: bool,
    pub delivered_bytes: u64,
    /// The query (incast round) the flow answers, if any.
    pub query: Option<u64>,
}

impl FlowRecord {
    /// The record of `spec` before it started (no outcome), with its ideal FCT.
    pub fn unstarted(spec: &FlowSpec, ideal_fct: Option<Ps>) -> FlowRecord {
        FlowRecord {
            id: spec.id,
            src: spec.src,
            dst: spec.dst,
            bytes: spec.bytes,
            start: spec.start,
            finish: None,
            ideal_fct,
            retransmits: 0,
            timeouts: 0,
            priority: spec.priority,
            kind: spec.kind.name(),
            datagram: !spec.kind.completes(),
            delivered_bytes: 0,
            query: spec.query,
        }
    }
}

/// The flow table: one row per flow, in the core's flow order (start order). It keeps the
/// core's exact values (times in picoseconds, `NO_TIME` when missing); the columns in
/// nanoseconds that `flows.parquet` and the DataFrame show (`named_columns`), where NaN
/// marks a missing value (`finish_ns`, `fct_ns` and `slowdown` of an unfinished flow,
/// `ideal_fct_ns` and `slowdown` of a UDP or endless flow), are worked out from them as
/// they are written, so a large run holds one copy of its flows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowTable {
    pub id: Vec<u64>,
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    pub bytes: Vec<u64>,
    pub start: Vec<Ps>,
    pub finish: Vec<Ps>,
    pub ideal_fct: Vec<Ps>,
    pub retransmits: Vec<u32>,
    pub timeouts: Vec<u32>,
    pub priority: Vec<u8>,
    /// The `kind` column: the flow's transport (`tcp`, `udp`, `rdma`).
    pub kind: Vec<&'static str>,
    /// Datagram flows (no completion time).
    pub datagram: Vec<bool>,
    pub delivered_bytes: Vec<u64>,
    /// The query (incast round) a flow answers; -1 for other flows.
    pub query: Vec<i64>,
}

impl FlowTable {
    pub fn from_records(records: &[FlowRecord]) -> FlowTable {
        let mut table = FlowTable::default();
        for r in records {
            table.push(r);
        }
        table
    }

    /// Appends `r` as the last row.
    pub fn push(&mut self, r: &FlowRecord) {
        let time = |t: Option<Ps>| {
            debug_assert_ne!(t, Some(NO_TIME), "NO_TIME is no time");
            t.unwrap_or(NO_TIME)
        };
        self.id.push(r.id);
        self.src.push(r.src);
        self.dst.push(r.dst);
        self.bytes.push(r.bytes);
        self.start.push(r.start);
        self.finish.push(time(r.finish));
        self.ideal_fct.push(time(r.ideal_fct));
        self.retransmits.push(r.retransmits);
        self.timeouts.push(r.timeouts);
        self.priority.push(r.priority);
        self.kind.push(r.kind);
        self.datagram.push(r.datagram);
        self.delivered_bytes.push(r.delivered_bytes);
        self.query.push(r.query.map_or(-1, |q| q as i64));
    }

    /// Row `i` becomes `r`: `r` is appended, then takes row `i`'s place.
    pub fn set(&mut self, i: usize, r: &FlowRecord) {
        self.push(r);
        for_each_column!(self, |column| {
            column.swap_remove(i);
        });
    }

    /// Keeps the first `len` rows.
    pub fn truncate(&mut self, len: usize) {
        for_each_column!(self, |column| column.truncate(len));
    }

    /// Row `i`, with the core's exact values.
    pub fn record(&self, i: usize) -> FlowRecord {
        let time = |t: Ps| (t != NO_TIME).then_some(t);
        FlowRecord {
            id: self.id[i],
            src: self.src[i],
            dst: self.dst[i],
            bytes: self.bytes[i],
            start: self.start[i],
            finish: time(self.finish[i]),
            ideal_fct: time(self.ideal_fct[i]),
            retransmits: self.retransmits[i],
            timeouts: self.timeouts[i],
            priority: self.priority[i],
            kind: self.kind[i],
            datagram: self.datagram[i],
            delivered_bytes: self.delivered_bytes[i],
            query: u64::try_from(self.query[i]).ok(),
        }
    }

    pub fn len(&self) -> usize {
        self.id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.id.is_empty()
    }

    pub fn finished(&self, i: usize) -> bool {
        self.finish[i] != NO_TIME
    }

    pub fn start_ns(&self, i: usize) -> f64 {
        ns(self.start[i])
    }

    /// NaN for an unfinished flow.
    pub fn finish_ns(&self, i: usize) -> f64 {
        if self.finished(i) {
            ns(self.finish[i])
        } else {
            f64::NAN
        }
    }

    /// NaN for an unfinished flow.
    pub fn fct_ns(&self, i: usize) -> f64 {
        if self.finished(i) {
            ns(self.finish[i] - self.start[i])
        } else {
            f64::NAN
        }
    }

    /// NaN for a flow without one.
    pub fn ideal_fct_ns(&self, i: usize) -> f64 {
        match self.ideal_fct[i] {
            NO_TIME => f64::NAN,
            ideal => ns(ideal),
        }
    }

    /// FCT / ideal FCT; NaN for an unfinished flow or one without an ideal FCT.
    pub fn slowdown(&self, i: usize) -> f64 {
        match self.ideal_fct[i] {
            ideal if self.finished(i) && ideal != NO_TIME && ideal > 0 => {
                (self.finish[i] - self.start[i]) as f64 / ideal as f64
            }
            _ => f64::NAN,
        }
    }

    /// Writes `flows.parquet`: the table's columns in order, `kind` as text.
    pub fn write_parquet<W: std::io::Write + Send>(&self, out: W) -> std::io::Result<()> {
        parquet::write_table(out, &self.named_columns())
    }

    /// Every column by name, in the order of `flows.parquet` and the Python DataFrame.
    /// The one place the columns are listed.
    pub fn named_columns(&self) -> Vec<(&'static str, Column<'_>)> {
        let derived = |value: fn(&FlowTable, usize) -> f64| Column::Derived {
            rows: self.len(),
            value: Box::new(move |i| value(self, i)),
        };
        vec![
            ("id", Column::U64(&self.id)),
            ("src", Column::U32(&self.src)),
            ("dst", Column::U32(&self.dst)),
            ("bytes", Column::U64(&self.bytes)),
            ("start_ns", derived(FlowTable::start_ns)),
            ("finish_ns", derived(FlowTable::finish_ns)),
            ("fct_ns", derived(FlowTable::fct_ns)),
            ("ideal_fct_ns", derived(FlowTable::ideal_fct_ns)),
            ("slowdown", derived(FlowTable::slowdown)),
            ("retransmits", Column::U32(&self.retransmits)),
            ("timeouts", Column::U32(&self.timeouts)),
            ("priority", Column::U8(&self.priority)),
            ("kind", Column::Str(&self.kind)),
            ("delivered_bytes", Column::U64(&self.delivered_bytes)),
            ("finished", Column::DerivedBool { rows: self.len(), value: Box::new(|i| self.finished(i)) }),
            ("query", Column::I64(&self.query)),
        ]
    }
}

/// The flows a workload generates, without simulating them (`shoal trace`): the columns
/// of a trace file, which `workload.pattern = "trace"` reads back.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceTable {
    pub id: Vec<u64>,
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    pub bytes: Vec<u64>,
    pub start_ns: Vec<f64>,
    pub priority: Vec<u8>,
}

impl TraceTable {
    pub fn from_flows(flows: &[FlowSpec]) -> TraceTable {
        TraceTable {
            id: flows.iter().map(|f| f.id).collect(),
            src: flows.iter().map(|f| f.src).collect(),
            dst: flows.iter().map(|f| f.dst).collect(),
            bytes: flows.iter().map(|f| f.bytes).collect(),
            start_ns: flows.iter().map(|f| ns(f.start)).collect(),
            priority: flows.iter().map(|f| f.priority).collect(),
        }
    }

    /// Every column by name, in the order of a trace file.
    pub fn named_columns(&self) -> Vec<(&'static str, Column<'_>)> {
        vec![
            ("id", Column::U64(&self.id)),
            ("src", Column::U32(&self.src)),
            ("dst", Column::U32(&self.dst)),
            ("bytes", Column::U64(&self.bytes)),
            ("start_ns", Column::F64(&self.start_ns)),
            ("priority", Column::U8(&self.priority)),
        ]
    }
}

/// Queue occupancy samples, one row per sample (`queues.parquet`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SampleTable {
    pub time_ns: Vec<f64>,
    pub switch: Vec<u32>,
    pub port: Vec<u32>,
    pub queue: Vec<u32>,
    pub bytes: Vec<u64>,
    pub pool_bytes: Vec<u64>,
    /// Bytes the port's link has sent since the start.
    pub tx_bytes: Vec<u64>,
}

impl SampleTable {
    pub fn from_samples(samples: &[Sample]) -> SampleTable {
        SampleTable {
            time_ns: samples.iter().map(|s| ns(s.time)).collect(),
            switch: samples.iter().map(|s| s.switch).collect(),
            port: samples.iter().map(|s| s.port).collect(),
            queue: samples.iter().map(|s| s.queue).collect(),
            bytes: samples.iter().map(|s| s.bytes).collect(),
            pool_bytes: samples.iter().map(|s| s.pool_bytes).collect(),
            tx_bytes: samples.iter().map(|s| s.tx_bytes).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    pub fn write_parquet<W: std::io::Write + Send>(&self, out: W) -> std::io::Result<()> {
        parquet::write_table(out, &self.named_columns())
    }

    /// Every column by name, in the order of `queues.parquet` and the Python DataFrame.
    pub fn named_columns(&self) -> Vec<(&'static str, Column<'_>)> {
        vec![
            ("time_ns", Column::F64(&self.time_ns)),
            ("switch", Column::U32(&self.switch)),
            ("port", Column::U32(&self.port)),
            ("queue", Column::U32(&self.queue)),
            ("bytes", Column::U64(&self.bytes)),
            ("pool_bytes", Column::U64(&self.pool_bytes)),
            ("tx_bytes", Column::U64(&self.tx_bytes)),
        ]
    }
}

/// Each switch pool's time-weighted occupancy distribution (`occupancy.parquet`, with
/// `run.occupancy_cdf`): one row per (switch, pool) and non-empty bucket of
/// `OccupancyDistribution`, buckets in increasing order. The pool held between
/// `min_bytes` and `max_bytes` (inclusive) for `time_ns` of the window, and at most
/// `max_bytes` for the fraction `cdf` of it, exactly (the last row of a pool has `cdf` 1).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OccupancyTable {
    pub switch: Vec<u32>,
    pub pool: Vec<u32>,
    pub min_bytes: Vec<u64>,
    pub max_bytes: Vec<u64>,
    pub time_ns: Vec<f64>,
    pub cdf: Vec<f64>,
}

impl OccupancyTable {
    /// The table of each (switch, pool, distribution), in that order.
    pub fn from_distributions(pools: &[(u32, u32, &OccupancyDistribution)]) -> OccupancyTable {
        let mut table = OccupancyTable::default();
        for &(switch, pool, distribution) in pools {
            let total = distribution.total();
            let mut below: Ps = 0;
            for (low, high, time) in distribution.buckets() {
                below += time;
                table.switch.push(switch);
                table.pool.push(pool);
                table.min_bytes.push(low);
                table.max_bytes.push(high);
                table.time_ns.push(ns(time));
                table.cdf.push(below as f64 / total as f64);
            }
        }
        table
    }

    pub fn is_empty(&self) -> bool {
        self.switch.is_empty()
    }

    /// Every column by name, in the order of `occupancy.parquet`.
    pub fn named_columns(&self) -> Vec<(&'static str, Column<'_>)> {
        vec![
            ("switch", Column::U32(&self.switch)),
            ("pool", Column::U32(&self.pool)),
            ("min_bytes", Column::U64(&self.min_bytes)),
            ("max_bytes", Column::U64(&self.max_bytes)),
            ("time_ns", Column::F64(&self.time_ns)),
            ("cdf", Column::F64(&self.cdf)),
        ]
    }
}

/// A table's name and its columns, in order.
pub type NamedTable<'a> = (&'static str, Vec<(&'static str, Column<'a>)>);

/// A run's tables: the flows, and the others when the run made them.
pub struct RunTables {
    pub flows: Arc<FlowTable>,
    pub samples: SampleTable,
    /// Each switch pool's occupancy distribution, when the run kept them.
    pub occupancy: OccupancyTable,
    /// Each collective job's iterations, when a workload runs one.
    pub collectives: CollectiveTable,
    /// The traced flows' state over time, when the run traces some (`run.series`).
    pub series: SeriesTable,
    /// The pause frames, their totals per (node, port, class), the ingress samples and
    /// the headroom episodes: made when a class is lossless (`lossless`).
    pub pfc: PfcTables,
    pub lossless: bool,
}

impl RunTables {
    /// Every table by name (the file is `<name>.parquet`), with its columns and whether
    /// the run made it: the one list of a run's tables (`schema::run_tables`).
    pub fn all(&self) -> Vec<(NamedTable<'_>, bool)> {
        let (p, lossless) = (&self.pfc, self.lossless);
        vec![
            (("flows", self.flows.named_columns()), true),
            (("queues", self.samples.named_columns()), !self.samples.is_empty()),
            (("pfc", p.events.named_columns()), lossless),
            (("pfc_ports", p.ports.named_columns()), lossless),
            (("ingress", p.ingress.named_columns()), lossless && !p.ingress.is_empty()),
            (("headroom", p.headroom.named_columns()), lossless && !p.headroom.is_empty()),
            (("occupancy", self.occupancy.named_columns()), !self.occupancy.is_empty()),
            (("collectives", self.collectives.named_columns()), !self.collectives.is_empty()),
            (("series", self.series.named_columns()), !self.series.is_empty()),
        ]
    }

    /// The tables the run made, by name, with their columns.
    pub fn present(&self) -> Vec<NamedTable<'_>> {
        self.all().into_iter().filter(|(_, made)| *made).map(|(table, _)| table).collect()
    }

    /// Empty tables (for the schema).
    pub(crate) fn with_every_table() -> RunTables {
        RunTables {
            flows: Arc::default(),
            samples: SampleTable::default(),
            occupancy: OccupancyTable::default(),
            collectives: CollectiveTable::default(),
            series: SeriesTable::default(),
            pfc: PfcTables::default(),
            lossless: true,
        }
    }
}

/// Everything a finished (or stopped) run's directory holds.
pub struct RunFiles {
    pub tables: RunTables,
    /// `summary.json` and `scenario.json` (see [`json`] for their spelling).
    pub summary_json: String,
    pub scenario_json: String,
    /// `trace.pcap`, when the run captures packets (`run.pcap`).
    pub pcap: Option<Vec<u8>>,
}

impl RunFiles {
    /// Writes the run directory `target` atomically: it appears only complete, and an
    /// existing directory there is replaced only once the new one is complete.
    pub fn write(&self, target: &Path) -> Result<(), FileError> {
        write_atomically(target, |dir| {
            for (name, columns) in self.tables.present() {
                let path = dir.join(format!("{name}.parquet"));
                File::create(&path).and_then(|f| parquet::write_table(f, &columns)).map_err(FileError::at(&path))?;
            }
            for (name, text) in [("scenario.json", &self.scenario_json), ("summary.json", &self.summary_json)] {
                let path = dir.join(name);
                std::fs::write(&path, text).map_err(FileError::at(&path))?;
            }
            if let Some(pcap) = &self.pcap {
                let path = dir.join("trace.pcap");
                std::fs::write(&path, pcap).map_err(FileError::at(&path))?;
            }
            Ok(())
        })
    }
}
