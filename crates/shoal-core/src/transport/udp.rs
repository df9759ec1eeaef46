//! A constant-rate, non-responsive UDP source.

use crate::sim::{Ps, PS_PER_S};

/// Sends fixed-size packets at `rate_bps` from `start` until `stop` or until `bytes` are
/// sent. Packet k leaves at start + k * size * 8 / rate (exact, no drift).
pub struct UdpSource {
    pub start: Ps,
    pub stop: Ps,
    pub rate_bps: u64,
    pub packet_bytes: u32,
    pub packets_total: u64,
    pub sent: u64,
}

impl UdpSource {
    /// Send time of packet `k`.
    pub fn send_time(&self, k: u64) -> Ps {
        let bits = k as u128 * self.packet_bytes as u128 * 8 * PS_PER_S as u128;
        self.start + (bits / self.rate_bps as u128) as Ps
    }

    /// The time of the next packet, if the source has one.
    pub fn next_send(&self) -> Option<Ps> {
        if self.sent >= self.packets_total {
            return None;
        }
        let t = self.send_time(self.sent);
        (t < self.stop).then_some(t)
    }
}
