//! What the telemetry-driven controllers (HPCC, PowerTCP) keep of the last ACK's stack:
//! one record per hop, against which the next ACK's records measure each hop.

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
