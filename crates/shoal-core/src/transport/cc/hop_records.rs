//! What the telemetry-driven controllers (HPCC, PowerTCP) share: the record of each hop
//! at the last ACK, against which the next ACK's records measure the hop, and the update
//! loop around it (`TelemetryLoop`); each controller gives its per-hop signal and its
//! rate rule.

use super::{Feedback, SendState};
use crate::config::ScenarioError;
use crate::net::{IntFormat, IntHop, WIRE_HOP_SLOTS};
use crate::sim::Ps;
use crate::units::Rate;

/// The most hops whose records a controller keeps: the reference's stack (a longer one
/// makes it skip the update, as the reference does for `nhop > maxHop`).
pub const HOPS: usize = WIRE_HOP_SLOTS as usize;

/// Checks the keys both controllers steer by: the target utilization `eta` in (0, 1] and
/// a positive rate floor `min_rate`.
pub fn check_target(path: &str, eta: f64, min_rate: Rate) -> Result<(), ScenarioError> {
    if !(eta > 0.0 && eta <= 1.0) {
        return Err(ScenarioError::not_accepted(path, "eta", eta, "0 < eta <= 1"));
    }
    if min_rate.0 == 0 {
        return Err(ScenarioError::not_accepted(path, "min_rate", "0", "a positive rate"));
    }
    Ok(())
}

/// The record of each hop at the previous ACK, written in `format`.
pub struct HopRecords {
    hops: [IntHop; HOPS],
    format: IntFormat,
}

impl HopRecords {
    /// All-zero records (what a first ACK is measured against when it is not only
    /// stored).
    pub fn new(format: IntFormat) -> Self {
        HopRecords { hops: [IntHop::default(); HOPS], format }
    }

    /// How the records were written (their differences wrap when quantized).
    pub fn format(&self) -> IntFormat {
        self.format
    }

    /// Keeps the records of `stack`, up to `HOPS` of them.
    pub fn store(&mut self, stack: &[IntHop]) {
        let n = stack.len().min(HOPS);
        self.hops[..n].copy_from_slice(&stack[..n]);
    }

    /// The largest `value(stored, record, tau)` over the hops of `stack` whose two
    /// records span time (tau > 0), and that hop's tau; keeps the new records. The first
    /// such hop is taken even at 0 with a tau of 0, as the reference's `u > U` from U = 0
    /// leaves dt at 0 (the EWMA does not move). None when no hop spans time: a hop whose
    /// records are at the same instant (an ACK echoing a stack already seen) is left
    /// out, where the reference would divide by zero.
    pub fn max_since(
        &mut self,
        stack: &[IntHop],
        mut value: impl FnMut(&IntHop, &IntHop, Ps) -> f64,
    ) -> Option<(f64, Ps)> {
        let mut max: Option<(f64, Ps)> = None;
        for (hop, stored) in stack.iter().zip(&mut self.hops) {
            let tau = self.format.time_between(stored, hop);
            if tau > 0 {
                let v = value(stored, hop, tau);
                if max.is_none_or(|(best, _)| v > best) {
                    max = Some((v, if v > 0.0 { tau } else { 0 }));
                }
            }
            *stored = *hop;
        }
        max
    }
}

/// The controllers' EWMA over a period T: (u (T - dt) + sample dt) / T, dt at most T;
/// `u` unchanged when T is 0.
pub fn ewma(u: f64, sample: f64, dt: Ps, period: Ps) -> f64 {
    if period == 0 {
        return u;
    }
    let (t, dt) = (period as f64, dt.min(period) as f64);
    (u * (t - dt) + sample * dt) / t
}

/// The update loop of HPCC and PowerTCP as the reference runs them (`UpdateRateHp` /
/// `UpdateRatePower` and their fast reactions): the first ACK with telemetry only stores
/// its records (unless the loop starts with a full update due); a later one makes a full
/// update when it acknowledges beyond the packet next to send at the last full update,
/// and, with fast reaction, every ACK in between reacts too. A reaction folds the
/// largest per-hop signal into `u` (an EWMA over the base RTT) and sets the rate from
/// `u` and the reference rate R_c; a full update also commits the rate as R_c.
///
/// Invariant: `committed_bps` is 0 until the first ACK with telemetry, then the line
/// rate or a committed rate (at least the controller's positive rate floor).
pub struct TelemetryLoop {
    /// The EWMA's period, the connection's base RTT.
    pub base_rtt: Ps,
    /// The smoothed signal, from 1.
    pub u: f64,
    /// The reference rate R_c.
    pub committed_bps: f64,
    /// A full update happens at an ACK beyond this packet (None: no ACK yet).
    pub last_update_seq: Option<u32>,
    pub hops: HopRecords,
    fast_react: bool,
}

impl TelemetryLoop {
    /// A loop whose first ACK is measured against zeroed records when `first_update_due`
    /// (PowerTCP f542a97), else only stored.
    pub fn new(base_rtt: Ps, format: IntFormat, fast_react: bool, first_update_due: bool) -> Self {
        TelemetryLoop {
            base_rtt,
            u: 1.0,
            committed_bps: 0.0,
            last_update_seq: first_update_due.then_some(0),
            hops: HopRecords::new(format),
            fast_react,
        }
    }

    /// Runs the loop for the ACK `f`. `signal(stored, record, tau)` is a hop's signal
    /// between its two records; `rate(u, R_c, full)` is the new rate (`full`: at a full
    /// update), bounded then by `min_rate` and the line rate.
    pub fn on_ack(
        &mut self,
        s: &mut SendState,
        f: &Feedback,
        min_rate: Rate,
        signal: impl FnMut(&IntHop, &IntHop, Ps) -> f64,
        rate: impl FnOnce(f64, f64, bool) -> f64,
    ) {
        let Some(stack) = f.telemetry else { return };
        if self.committed_bps == 0.0 {
            self.committed_bps = s.line_rate_bps;
        }
        let Some(last_update_seq) = self.last_update_seq else {
            self.last_update_seq = Some(f.snd_nxt);
            self.hops.store(stack);
            return;
        };
        let full = f.snd_una > last_update_seq;
        if !full && !self.fast_react {
            return;
        }
        if stack.len() <= HOPS {
            if let Some((sample, tau)) = self.hops.max_since(stack, signal) {
                self.u = ewma(self.u, sample, tau, self.base_rtt);
                s.rate_bps = s.bounded_rate(rate(self.u, self.committed_bps, full), min_rate);
                if full {
                    self.committed_bps = s.rate_bps;
                }
            }
        }
        if full {
            self.last_update_seq = Some(last_update_seq.max(f.snd_nxt));
        }
    }
}
