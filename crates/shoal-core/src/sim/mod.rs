//! Simulation time, the event queue and seeded random streams.

mod event_queue;
mod rng;

pub use event_queue::EventQueue;
pub use rng::{mix64, stream, Rng};

/// Simulated time in picoseconds. Never a float in the core.
pub type Ps = u64;

pub const PS_PER_NS: Ps = 1_000;
pub const PS_PER_US: Ps = 1_000_000;
pub const PS_PER_S: Ps = 1_000_000_000_000;

/// Serialization time of `bytes` at `rate_bps`, rounded up to a whole picosecond.
#[inline]
pub fn serialization(bytes: u64, rate_bps: u64) -> Ps {
    let bits = bytes as u128 * 8 * PS_PER_S as u128;
    bits.div_ceil(rate_bps as u128) as Ps
}
