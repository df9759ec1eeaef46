//! Simulation time, the event queue and seeded random streams.

mod event_queue;
mod rng;

pub use event_queue::{EventQueue, KeyedEvent};
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
    // In 64 bits whenever the product fits (any packet: up to 2.3 MB), the same quotient.
    match bytes.checked_mul(8 * PS_PER_S) {
        Some(bits) => bits.div_ceil(rate_bps),
        None => (bytes as u128 * 8 * PS_PER_S as u128).div_ceil(rate_bps as u128) as Ps,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_rounds_up_in_64_and_128_bits_alike() {
        let exact = |bytes: u64, rate: u64| (bytes as u128 * 8 * PS_PER_S as u128).div_ceil(rate as u128) as Ps;
        let fits = u64::MAX / (8 * PS_PER_S); // the largest byte count of the 64-bit path
        for bytes in [0, 1, 64, 1_500, 9_000, fits - 1, fits, fits + 1, 1 << 40] {
            for rate in [1, 3, 100_000_000, 25_000_000_000, 100_000_000_000, 99_999_999_999, u64::MAX] {
                assert_eq!(serialization(bytes, rate), exact(bytes, rate), "{bytes} B at {rate} b/s");
            }
        }
        assert_eq!(serialization(1_000, 100_000_000_000), 80_000); // 80 ps a byte at 100 Gbps
    }
}
