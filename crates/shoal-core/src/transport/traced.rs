//! The senders whose congestion state is recorded over time (`run.series`,
//! `series.parquet`).

use super::cc::Probe;
use super::{AnySender, HostCx, Outcome, Sender, Stacks};
use crate::net::{Packet, PacketKind};
use crate::sim::Ps;

/// One row of a flow's time series: its state at `at`, and the RTT an ACK just measured.
#[derive(Clone, Copy, Debug)]
pub struct SeriesRow {
    pub at: Ps,
    pub probe: Probe,
    /// The round trip of the ACK that arrived at `at` (now minus the send time it
    /// echoes), if one did.
    pub rtt: Option<Ps>,
}

/// A sender whose state is recorded after each of its calls: a row whenever it changed
/// or an ACK measured a round trip, at most one per `interval` (0: every one).
///
/// Invariant: `rows` is in time order.
pub struct Traced {
    pub inner: AnySender,
    interval: Ps,
    rows: Vec<SeriesRow>,
}

impl Traced {
    /// `inner`, traced from `now` on (its first row is its state now).
    pub fn new(inner: AnySender, interval: Ps, now: Ps) -> Traced {
        let mut traced = Traced { inner, interval, rows: Vec::new() };
        traced.record(now, None);
        traced
    }

    /// The rows so far.
    pub fn rows(&self) -> &[SeriesRow] {
        &self.rows
    }

    /// The rows so far, taken out.
    pub fn take_rows(&mut self) -> Vec<SeriesRow> {
        std::mem::take(&mut self.rows)
    }

    fn record(&mut self, at: Ps, rtt: Option<Ps>) {
        let probe = self.inner.probe();
        if let Some(last) = self.rows.last() {
            if rtt.is_none() && last.probe.bits() == probe.bits() {
                return;
            }
            if at < last.at.saturating_add(self.interval) {
                return;
            }
        }
        self.rows.push(SeriesRow { at, probe, rtt });
    }
}

impl Sender for Traced {
    #[inline(never)]
    fn on_packet(&mut self, pkt: &Packet, cx: &mut HostCx) {
        self.inner.on_packet(pkt, cx);
        let rtt = (pkt.kind == PacketKind::Ack).then(|| cx.now.saturating_sub(pkt.timestamp));
        self.record(cx.now, rtt);
    }

    #[inline(never)]
    fn on_timer(&mut self, cx: &mut HostCx) {
        self.inner.on_timer(cx);
        self.record(cx.now, None);
    }

    #[inline(never)]
    fn on_nic_drained(&mut self, cx: &mut HostCx) {
        self.inner.on_nic_drained(cx);
        self.record(cx.now, None);
    }

    #[inline(never)]
    fn wants_drain_notices(&self) -> bool {
        self.inner.wants_drain_notices()
    }

    #[inline(never)]
    fn pull(&mut self, cx: &mut HostCx) -> Option<Packet> {
        let pkt = self.inner.pull(cx);
        self.record(cx.now, None);
        pkt
    }

    #[inline(never)]
    fn outcome(&self, stacks: &Stacks) -> Outcome {
        self.inner.outcome(stacks)
    }

    #[inline(never)]
    fn wants_timer(&self) -> bool {
        self.inner.wants_timer()
    }

    #[inline(never)]
    fn probe(&self) -> Probe {
        self.inner.probe()
    }
}
