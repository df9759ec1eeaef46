//! A constant-rate, non-responsive UDP source.

use super::{HostCx, Outcome, Stacks, Transport};
use crate::net::{Packet, PacketKind};
use crate::sim::{Ps, PS_PER_S};
use crate::workload::FlowSpec;

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

/// A UDP flow: its source at the sender and a byte count at the receiver.
pub struct UdpFlow {
    source: UdpSource,
    template: Packet,
    /// Header bytes of each packet (the rest is payload).
    header: u32,
    delivered_bytes: u64,
}

impl UdpFlow {
    /// Opens the flow; its first packet leaves at once, through the flow's timer. Packets
    /// are the size of a full TCP segment.
    pub fn open(spec: &FlowSpec, rate_bps: u64, stop: Option<Ps>, template: Packet, cx: &mut HostCx) -> UdpFlow {
        let (mss, header) = (cx.stacks.tcp.mss, cx.stacks.tcp.header);
        let packet_bytes = mss + header;
        let source = UdpSource {
            start: cx.now,
            stop: stop.unwrap_or(Ps::MAX),
            rate_bps,
            packet_bytes,
            packets_total: spec.bytes.div_ceil(mss as u64),
            sent: 0,
        };
        if let Some(t) = source.next_send() {
            cx.set_timer(t);
        }
        UdpFlow { source, template, header, delivered_bytes: 0 }
    }
}

impl Transport for UdpFlow {
    fn on_packet(&mut self, pkt: &Packet, _cx: &mut HostCx) {
        self.delivered_bytes += (pkt.size - self.header) as u64;
    }

    /// Sends the next packet; the timer for the one after is set first.
    fn on_timer(&mut self, cx: &mut HostCx) {
        let source = &mut self.source;
        let pkt = Packet {
            kind: PacketKind::Udp,
            seq: source.sent as u32,
            size: source.packet_bytes,
            timestamp: cx.now,
            ..self.template
        };
        source.sent += 1;
        if let Some(t) = source.next_send() {
            cx.set_timer(t);
        }
        cx.send(pkt);
    }

    fn outcome(&self, _stacks: &Stacks) -> Outcome {
        Outcome { delivered_bytes: self.delivered_bytes, datagram: true, ..Outcome::default() }
    }
}
