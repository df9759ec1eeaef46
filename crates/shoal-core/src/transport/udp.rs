//! A constant-rate, non-responsive UDP source.

use super::{HostCx, Outcome, PathInfo, Receiver, Sender, Stacks, TransportKind};
use crate::net::{Packet, PacketKind};
use crate::sim::{serialization, Ps, PS_PER_S};
use crate::workload::config::Pacing;
use crate::workload::{FlowKind, FlowSpec};

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
        self.if_not_done(self.send_time(self.sent))
    }

    /// Under a NIC's rate limiter, the time of the next packet when the one before left
    /// at `sent_at`: one packet time later.
    pub fn next_after(&self, sent_at: Ps) -> Option<Ps> {
        self.if_not_done(sent_at + serialization(self.packet_bytes as u64, self.rate_bps))
    }

    /// `t`, unless every packet is sent or `t` is past the stop time.
    fn if_not_done(&self, t: Ps) -> Option<Ps> {
        (self.sent < self.packets_total && t < self.stop).then_some(t)
    }

    /// The next packet, which leaves now.
    fn packet(&mut self, template: Packet, now: Ps) -> Packet {
        let pkt = Packet {
            kind: PacketKind::Udp,
            seq: self.sent as u32,
            size: self.packet_bytes,
            timestamp: now,
            ..template
        };
        self.sent += 1;
        pkt
    }
}

/// Constant-rate UDP.
pub struct UdpFlow;

/// A UDP flow's source: sends by its timer or, paced by its NIC, when pulled.
pub struct UdpSender {
    source: UdpSource,
    template: Packet,
    pacing: Pacing,
}

/// A UDP flow's destination: counts the payload bytes that arrive.
pub struct UdpReceiver {
    /// Header bytes of each packet (the rest is payload).
    header: u32,
    delivered_bytes: u64,
}

impl TransportKind for UdpFlow {
    type Sender = UdpSender;
    type Receiver = UdpReceiver;

    /// Opens the flow; its first packet leaves at once, through the flow's timer or its
    /// NIC's rate limiter. Packets are the size of a full TCP segment.
    fn open(
        spec: &FlowSpec,
        forward: Packet,
        _reverse: Packet,
        _path: Option<&PathInfo>,
        cx: &mut HostCx,
    ) -> (UdpSender, UdpReceiver) {
        let FlowKind::Udp { rate_bps, stop, pacing } = spec.kind else { unreachable!("a UDP flow") };
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
        match pacing {
            Pacing::Host => {
                if let Some(t) = source.next_send() {
                    cx.set_timer(t);
                }
            }
            Pacing::Nic => cx.pace(source.next_send(), forward.priority),
        }
        (UdpSender { source, template: forward, pacing }, UdpReceiver { header, delivered_bytes: 0 })
    }

    const COMPLETES: bool = false;
}

impl Sender for UdpSender {
    fn on_packet(&mut self, _pkt: &Packet, _cx: &mut HostCx) {
        unreachable!("nothing answers a UDP flow")
    }

    /// Sends the next packet; the timer for the one after is set first.
    fn on_timer(&mut self, cx: &mut HostCx) {
        let pkt = self.source.packet(self.template, cx.now);
        if let Some(t) = self.source.next_send() {
            cx.set_timer(t);
        }
        cx.send(pkt);
    }

    fn pull(&mut self, cx: &mut HostCx) -> Option<Packet> {
        debug_assert_eq!(self.pacing, Pacing::Nic, "only NIC-paced flows are pulled");
        let pkt = self.source.packet(self.template, cx.now);
        cx.pace(self.source.next_after(cx.now), self.template.priority);
        Some(pkt)
    }

    fn outcome(&self, _stacks: &Stacks) -> Outcome {
        Outcome::default()
    }
}

impl Receiver for UdpReceiver {
    fn on_packet(&mut self, pkt: &Packet, _cx: &mut HostCx) {
        self.delivered_bytes += (pkt.size - self.header) as u64;
    }

    fn outcome(&self, _stacks: &Stacks) -> Outcome {
        Outcome { delivered_bytes: self.delivered_bytes, ..Outcome::default() }
    }
}
