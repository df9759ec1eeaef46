//! In-band network telemetry: what a switch port reports about itself to packets that
//! ask for it (HPCC-style INT), and what a congestion controller reads back from an ACK.

use crate::sim::Ps;

/// One hop's record: the state of the egress port a packet left by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    /// Bytes queued at the port when the packet left.
    pub queue_bytes: u64,
    /// Bytes the port had transmitted by then, ever (a running counter: two records of
    /// the same port give its throughput between them).
    pub tx_bytes: u64,
    /// When the record was taken.
    pub timestamp: Ps,
    /// The port's link rate, bits per second.
    pub rate_bps: u64,
}
