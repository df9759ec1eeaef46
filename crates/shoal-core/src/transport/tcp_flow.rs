//! A TCP flow as its hosts see it: at the source the sender, TCP small queues and
//! connection reuse; at the destination the receiver; and at each the completion rule
//! (`run.fct_until`) that end owns.

use super::cc;
use super::tcp::{TcpReceiver, TcpSender};
use super::{Framing, HostCx, Outcome, PathInfo, Probe, Receiver, Sender, Stacks, TransportKind};
use crate::config::run::FctUntil;
use crate::net::{Packet, PacketKind};
use crate::sim::Ps;
use crate::workload::FlowSpec;

/// TCP, as the flows' hosts run it.
pub struct TcpFlow;

/// A TCP flow's source: its sender, the completion rule at the last ACK
/// (`run.fct_until = "acked"`), TCP small queues and connection reuse.
pub struct TcpFlowSender {
    sender: TcpSender,
    /// The ECMP hash of the connection's ACKs (kept with the connection when it goes idle).
    ack_hash: u32,
    src: u32,
    dst: u32,
    finished_at: Option<Ps>,
    /// TCP small queues are on (`host.tsq`).
    tsq: bool,
}

/// A TCP flow's destination: its receiver, which answers every data packet, and the
/// completion rule at the last byte (`run.fct_until = "delivered"`).
pub struct TcpFlowReceiver {
    receiver: TcpReceiver,
    /// The template of packets back to the sender.
    reverse: Packet,
    bytes: u64,
}

/// The bytes a flow may add to its NIC queue under TCP small queues (`tsq` bytes per
/// flow; 0 = no limit).
#[inline]
fn tsq_budget(tsq: u64, nic_bytes: u64) -> u64 {
    if tsq == 0 {
        u64::MAX
    } else {
        tsq.saturating_sub(nic_bytes)
    }
}

impl TcpFlowSender {
    /// Asks for the earlier of the retransmission timer and the congestion controller's,
    /// after the packets of the call.
    #[inline]
    fn ask_for_timer(&self, cx: &mut HostCx) {
        let next = match (self.sender.deadline, self.sender.cc_timer()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(at) = next {
            cx.set_timer(at);
        }
    }
}

impl TransportKind for TcpFlow {
    type Sender = TcpFlowSender;
    type Receiver = TcpFlowReceiver;

    /// Opens the flow (on an idle connection between its hosts, when connections are
    /// reused and one is free: then on the connection's paths) and sends what it may.
    fn open(
        spec: &FlowSpec,
        mut forward: Packet,
        mut reverse: Packet,
        _path: Option<&PathInfo>,
        cx: &mut HostCx,
    ) -> (TcpFlowSender, TcpFlowReceiver) {
        let stacks = &mut *cx.stacks;
        let cfg = &stacks.tcp;
        let idle = stacks.idle_connections.get_mut(&(spec.src, spec.dst)).and_then(Vec::pop);
        let mut sender = match idle {
            Some(conn) => {
                (forward.hash, reverse.hash) = conn.hashes();
                TcpSender::reopen(cfg, spec.bytes, forward, conn, cx.now)
            }
            None => TcpSender::new(cfg, spec.bytes, forward, cc::build(&cfg.cc)),
        };
        let receiver = TcpFlowReceiver { receiver: TcpReceiver::new(cfg, spec.bytes), reverse, bytes: spec.bytes };
        sender.set_budget(tsq_budget(stacks.tsq, 0));
        let mut sender = TcpFlowSender {
            sender,
            ack_hash: reverse.hash,
            src: spec.src,
            dst: spec.dst,
            finished_at: None,
            tsq: stacks.tsq > 0,
        };
        sender.sender.start(&cx.stacks.tcp, cx.now, cx.actions);
        sender.ask_for_timer(cx);
        (sender, receiver)
    }

    const COMPLETES: bool = true;

    fn framing(stacks: &Stacks, bytes: u64) -> Framing {
        let c = &stacks.tcp;
        Framing {
            packets: c.segments(bytes),
            first_payload: c.payload(bytes, 0),
            header: c.header,
            ack_size: c.ack_size,
            handshake: c.handshake,
        }
    }
}

impl Sender for TcpFlowSender {
    fn probe(&self) -> Probe {
        self.sender.probe()
    }

    fn on_packet(&mut self, pkt: &Packet, cx: &mut HostCx) {
        let stacks = &mut *cx.stacks;
        let cfg = &stacks.tcp;
        debug_assert!(matches!(pkt.kind, PacketKind::Ack | PacketKind::SynAck), "a TCP sender hears ACKs");
        let was_done = self.sender.done();
        self.sender.set_budget(tsq_budget(stacks.tsq, cx.nic_bytes));
        let telemetry = cx.exts.telemetry(pkt.ext);
        self.sender.on_ack(cfg, pkt, telemetry, cx.now, cx.actions);
        if !was_done && self.sender.done() {
            if stacks.fct_until == FctUntil::Acked {
                self.finished_at = Some(cx.now);
                cx.finished = true;
            }
            if cfg.reuse_connections {
                let conn = self.sender.release(self.ack_hash);
                stacks.idle_connections.entry((self.src, self.dst)).or_default().push(conn);
            }
        }
        self.ask_for_timer(cx);
    }

    fn on_timer(&mut self, cx: &mut HostCx) {
        if self.sender.cc_timer().is_some_and(|t| t <= cx.now) {
            self.sender.set_budget(tsq_budget(cx.stacks.tsq, cx.nic_bytes));
            self.sender.on_cc_timer(&cx.stacks.tcp, cx.now, cx.actions);
        }
        if self.sender.deadline.is_some_and(|d| d <= cx.now) {
            self.sender.set_budget(tsq_budget(cx.stacks.tsq, cx.nic_bytes));
            self.sender.on_timeout(&cx.stacks.tcp, cx.now, cx.actions);
        }
        self.ask_for_timer(cx);
    }

    fn on_nic_drained(&mut self, cx: &mut HostCx) {
        if !self.sender.blocked {
            return;
        }
        self.sender.set_budget(tsq_budget(cx.stacks.tsq, cx.nic_bytes));
        self.sender.resume(&cx.stacks.tcp, cx.now, cx.actions);
        self.ask_for_timer(cx);
    }

    /// With neither a retransmission timer nor a congestion controller's armed,
    /// `on_timer` does nothing.
    fn wants_timer(&self) -> bool {
        self.sender.deadline.is_some() || self.sender.cc_timer().is_some()
    }

    /// Only TCP small queues hold a sender back until its NIC drains.
    fn wants_drain_notices(&self) -> bool {
        self.tsq
    }

    fn outcome(&self, _stacks: &Stacks) -> Outcome {
        Outcome {
            finished_at: self.finished_at,
            retransmits: self.sender.retransmits,
            timeouts: self.sender.timeouts,
            ..Outcome::default()
        }
    }
}

impl Receiver for TcpFlowReceiver {
    fn on_packet(&mut self, pkt: &Packet, cx: &mut HostCx) {
        debug_assert!(matches!(pkt.kind, PacketKind::Data | PacketKind::Syn), "a TCP receiver hears data");
        let was_done = self.receiver.finished_at.is_some();
        let reply = self.receiver.on_packet(&cx.stacks.tcp, pkt, self.reverse, cx.now);
        cx.send(reply);
        if !was_done && self.receiver.finished_at.is_some() {
            cx.delivered();
            cx.finished |= cx.stacks.fct_until == FctUntil::Delivered;
        }
    }

    fn outcome(&self, stacks: &Stacks) -> Outcome {
        Outcome {
            finished_at: self.receiver.finished_at.filter(|_| stacks.fct_until == FctUntil::Delivered),
            delivered_bytes: stacks.tcp.payload_between(self.bytes, 0, self.receiver.received_segments()),
            ..Outcome::default()
        }
    }
}
