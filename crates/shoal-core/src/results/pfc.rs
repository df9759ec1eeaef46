//! PFC's tables: every frame received (`pfc.parquet`), the totals of each (node, port,
//! class) (`pfc_ports.parquet`), the sampled ingress bytes (`ingress.parquet`) and the
//! headroom episodes (`headroom.parquet`), with the columns of the Python API's
//! DataFrames.

use super::{ns, Column};
use crate::net::NodeId;
use crate::observe::IngressSample;
use crate::sim::Ps;
use crate::stats::{PauseEvent, PauseKey};
use crate::switch::flow_control::HeadroomEpisode;
use std::collections::BTreeMap;

/// The `node_kind` and `node` columns of a node.
fn node_columns(node: NodeId) -> (&'static str, u32) {
    match node {
        NodeId::Host(h) => ("host", h),
        NodeId::Switch(s) => ("switch", s),
    }
}

/// Where a frame took effect: the node, its port and the paused class, one entry per row.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KeyColumns {
    pub node_kind: Vec<&'static str>,
    pub node: Vec<u32>,
    pub port: Vec<u32>,
    pub class: Vec<u8>,
}

impl KeyColumns {
    fn push(&mut self, key: &PauseKey) {
        let (kind, node) = node_columns(key.node);
        self.node_kind.push(kind);
        self.node.push(node);
        self.port.push(key.port as u32);
        self.class.push(key.class);
    }

    fn named(&self) -> [(&'static str, Column<'_>); 4] {
        [
            ("node_kind", Column::Str(&self.node_kind)),
            ("node", Column::U32(&self.node)),
            ("port", Column::U32(&self.port)),
            ("class", Column::U8(&self.class)),
        ]
    }
}

/// Every PAUSE and RESUME received, in time order (`pfc.parquet`), where it took effect:
/// the upstream node whose egress queues of `class` on `port` it paused or resumed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PfcEventTable {
    pub time_ns: Vec<f64>,
    pub key: KeyColumns,
    pub pause: Vec<bool>,
}

impl PfcEventTable {
    /// The table of `events`, every frame received in time order.
    pub fn from_events(events: &[PauseEvent]) -> PfcEventTable {
        let mut table = PfcEventTable::default();
        for event in events {
            table.time_ns.push(ns(event.time));
            table.key.push(&event.key);
            table.pause.push(event.paused);
        }
        table
    }

    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    pub fn named_columns(&self) -> Vec<(&'static str, Column<'_>)> {
        let mut columns = vec![("time_ns", Column::F64(&self.time_ns))];
        columns.extend(self.key.named());
        columns.push(("pause", Column::Bool(&self.pause)));
        columns
    }
}

/// The PFC frames of one (node, port, class): sent by its flow control (switches only:
/// hosts have no MMU) and received from its neighbour, and the time the neighbour's
/// pauses held its egress queues of that class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PfcPortRecord {
    pub pauses_sent: u64,
    pub resumes_sent: u64,
    pub pauses_received: u64,
    pub resumes_received: u64,
    /// Timed pauses (`pause_quanta`) that ran out before a RESUME or refresh came.
    pub pauses_expired: u64,
    /// Up to the end of the run, counting a pause still in force.
    pub paused: Ps,
    /// The longest single pause (from a PAUSE to its RESUME or expiry, or to the end of
    /// the run).
    pub longest_pause: Ps,
}

/// One row per (node, port, class) that sent or received a PFC frame
/// (`pfc_ports.parquet`): frames sent upstream by its flow control, frames received from
/// downstream, and the time those held its egress queues.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PfcPortTable {
    pub key: KeyColumns,
    pub pauses_sent: Vec<u64>,
    pub resumes_sent: Vec<u64>,
    pub pauses_received: Vec<u64>,
    pub resumes_received: Vec<u64>,
    pub paused_ns: Vec<f64>,
}

impl PfcPortTable {
    /// The table of `rows`, in (node, port, class) order.
    pub fn from_rows(rows: &BTreeMap<PauseKey, PfcPortRecord>) -> PfcPortTable {
        let mut table = PfcPortTable::default();
        for (key, &row) in rows {
            // Expiries and the longest pause are not columns, so that the file is what it
            // was (the summary has the longest pause).
            let PfcPortRecord {
                pauses_sent,
                resumes_sent,
                pauses_received,
                resumes_received,
                pauses_expired: _,
                paused,
                longest_pause: _,
            } = row;
            table.key.push(key);
            table.pauses_sent.push(pauses_sent);
            table.resumes_sent.push(resumes_sent);
            table.pauses_received.push(pauses_received);
            table.resumes_received.push(resumes_received);
            table.paused_ns.push(ns(paused));
        }
        table
    }

    pub fn is_empty(&self) -> bool {
        self.paused_ns.is_empty()
    }

    pub fn named_columns(&self) -> Vec<(&'static str, Column<'_>)> {
        let mut columns: Vec<_> = self.key.named().into();
        columns.extend([
            ("pauses_sent", Column::U64(&self.pauses_sent)),
            ("resumes_sent", Column::U64(&self.resumes_sent)),
            ("pauses_received", Column::U64(&self.pauses_received)),
            ("resumes_received", Column::U64(&self.resumes_received)),
            ("paused_ns", Column::F64(&self.paused_ns)),
        ]);
        columns
    }
}

/// The bytes buffered from each (ingress port, lossless class) over time, and the part
/// in its headroom (`ingress.parquet`), when the run samples (`run.sample_interval`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IngressTable {
    pub time_ns: Vec<f64>,
    pub switch: Vec<u32>,
    pub port: Vec<u32>,
    pub class: Vec<u8>,
    pub bytes: Vec<u64>,
    pub headroom_bytes: Vec<u64>,
}

impl IngressTable {
    /// The table of `samples`.
    pub fn from_samples(samples: &[IngressSample]) -> IngressTable {
        IngressTable {
            time_ns: samples.iter().map(|s| ns(s.time)).collect(),
            switch: samples.iter().map(|s| s.switch).collect(),
            port: samples.iter().map(|s| s.port).collect(),
            class: samples.iter().map(|s| s.class).collect(),
            bytes: samples.iter().map(|s| s.bytes).collect(),
            headroom_bytes: samples.iter().map(|s| s.headroom_bytes).collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    pub fn named_columns(&self) -> Vec<(&'static str, Column<'_>)> {
        vec![
            ("time_ns", Column::F64(&self.time_ns)),
            ("switch", Column::U32(&self.switch)),
            ("port", Column::U32(&self.port)),
            ("class", Column::U8(&self.class)),
            ("bytes", Column::U64(&self.bytes)),
            ("headroom_bytes", Column::U64(&self.headroom_bytes)),
        ]
    }
}

/// Every ended headroom episode of every switch's (ingress port, lossless class)
/// (`headroom.parquet`): when it ended, the most bytes it held (the local maximum of the
/// headroom's occupancy) and the headroom it had. Static (per-queue) headroom only.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HeadroomTable {
    pub end_ns: Vec<f64>,
    pub switch: Vec<u32>,
    pub port: Vec<u32>,
    pub class: Vec<u8>,
    pub peak_bytes: Vec<u64>,
    pub headroom_bytes: Vec<u64>,
}

impl HeadroomTable {
    /// The table of each switch's ended episodes, by switch index.
    pub fn from_episodes<'a>(by_switch: impl Iterator<Item = (u32, &'a [HeadroomEpisode])>) -> HeadroomTable {
        let mut table = HeadroomTable::default();
        for (switch, episodes) in by_switch {
            for e in episodes {
                table.end_ns.push(ns(e.ended));
                table.switch.push(switch);
                table.port.push(e.port as u32);
                table.class.push(e.class);
                table.peak_bytes.push(e.peak);
                table.headroom_bytes.push(e.size);
            }
        }
        table
    }

    pub fn is_empty(&self) -> bool {
        self.end_ns.is_empty()
    }

    pub fn named_columns(&self) -> Vec<(&'static str, Column<'_>)> {
        vec![
            ("end_ns", Column::F64(&self.end_ns)),
            ("switch", Column::U32(&self.switch)),
            ("port", Column::U32(&self.port)),
            ("class", Column::U8(&self.class)),
            ("peak_bytes", Column::U64(&self.peak_bytes)),
            ("headroom_bytes", Column::U64(&self.headroom_bytes)),
        ]
    }
}

/// PFC's tables of a run with a lossless class.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PfcTables {
    pub events: PfcEventTable,
    pub ports: PfcPortTable,
    pub ingress: IngressTable,
    pub headroom: HeadroomTable,
}
