//! Simulation time, the event queue and seeded random streams.

mod event_queue;
mod rng;

pub use event_queue::{EventQueue, PackedEvent};
pub use rng::{mix64, mix_below, stream, Rng};

/// Simulated time in picoseconds. Never a float in the core.
pub type Ps = u64;

pub const PS_PER_NS: Ps = 1_000;
pub const PS_PER_US: Ps = 1_000_000;
pub const PS_PER_S: Ps = 1_000_000_000_000;

/// Simulated time at which every run stops: four times the largest time a scenario may
/// name (`units::MAX_TIME`, 10^6 s), and far enough below 2^64 ps that adding any
/// delay, timeout or serialization time a scenario allows cannot overflow the clock.
pub const TIME_LIMIT: Ps = 4 * crate::units::MAX_TIME;

/// Serialization time of `bytes` at `rate_bps`, rounded up to a whole picosecond.
#[inline]
pub fn serialization(bytes: u64, rate_bps: u64) -> Ps {
    let bits = bytes as u128 * 8 * PS_PER_S as u128;
    bits.div_ceil(rate_bps as u128) as Ps
}

/// A link rate with its serialization time precomputed when a byte takes a whole number
/// of picoseconds (every common rate: 80 ps at 100 Gbps), avoiding a 128-bit division
/// per packet.
#[derive(Clone, Copy, Debug)]
pub struct LinkRate {
    pub bps: u64,
    ps_per_byte: Option<u64>,
}

impl LinkRate {
    pub fn new(bps: u64) -> Self {
        let per_byte = 8 * PS_PER_S;
        LinkRate { bps, ps_per_byte: per_byte.is_multiple_of(bps).then(|| per_byte / bps) }
    }

    /// Same as `serialization(bytes, self.bps)`.
    #[inline]
    pub fn serialization(&self, bytes: u64) -> Ps {
        match self.ps_per_byte {
            Some(ps) => bytes * ps,
            None => serialization(bytes, self.bps),
        }
    }
}
