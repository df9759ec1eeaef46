//! Reliable RDMA connections as a RoCE NIC runs them, after ns3-datacenter's `RdmaHw`
//! (the HPCC code base; `rdma-hw.cc`, `rdma-queue-pair.cc`). Sequence numbers count
//! packets of `mtu` payload bytes (the last may be shorter).
//!
//! - The sender queues nothing: its NIC pulls the next packet when the link is free and
//!   the connection's rate limiter allows, one packet time at the connection's rate after
//!   the packet before (`nextAvail`).
//! - The receiver ACKs every packet that arrives in order (echoing its CE mark), drops a
//!   packet beyond a gap and NACKs the packet it expects, at most once per
//!   `nack_interval` for the same expected packet; duplicates are dropped silently.
//! - An ACK or NACK acknowledges everything before its sequence number; a NACK also sends
//!   the sender back to the first unacknowledged packet (go-back-N).
//! - There is no retransmission timeout, as in the reference: a connection whose last
//!   packets are all lost stalls. Lossless classes (PFC) are what RDMA runs on.

use super::cc::{AnyRdmaCc, CongestionControl, RdmaCcConfig, SendState};
use super::{Framing, HostCx, Outcome, Stacks, Transport, TransportKind};
use crate::net::{Packet, PacketKind};
use crate::scenario::{FctUntil, RdmaConfig, Scenario};
use crate::sim::{serialization, Ps};
use crate::workload::FlowSpec;

/// The RDMA settings every connection of a run shares.
#[derive(Clone, Debug)]
pub struct RdmaSettings {
    pub mtu: u32,
    pub header: u32,
    pub ack_size: u32,
    pub nack_interval: Ps,
    /// Most bytes in flight; 0 = no window.
    pub window: u64,
    /// The rate of each host's link: a connection starts at its sender's and never
    /// exceeds it.
    pub line_rates_bps: Vec<u64>,
    pub ack_priority: Option<u8>,
    pub cc: RdmaCcConfig,
}

impl RdmaSettings {
    /// The settings of `sc`, whose hosts' links run at `line_rates_bps`.
    pub fn new(sc: &Scenario, line_rates_bps: Vec<u64>) -> Self {
        let RdmaConfig { mtu, header, ack_size, nack_interval, window, ack_priority, cc } = sc.rdma.clone();
        RdmaSettings {
            mtu,
            header,
            ack_size,
            nack_interval: nack_interval.0,
            window: window.0,
            line_rates_bps,
            ack_priority,
            cc,
        }
    }

    /// Packets of a `bytes`-byte message.
    pub fn packets(&self, bytes: u64) -> u32 {
        bytes.div_ceil(self.mtu as u64).min(u32::MAX as u64) as u32
    }

    /// Payload bytes of packet `seq` of a `bytes`-byte message.
    pub fn payload(&self, bytes: u64, seq: u32) -> u64 {
        (bytes - seq as u64 * self.mtu as u64).min(self.mtu as u64)
    }
}

/// One connection: its sender (the queue pair at the source) and its receiver.
pub struct RdmaFlow {
    data: Packet,
    reverse: Packet,
    bytes: u64,
    packets: u32,
    // Sender.
    /// First packet not yet acknowledged.
    snd_una: u32,
    /// Next packet to send.
    snd_nxt: u32,
    /// Packets ever sent once (anything below that sent again is a retransmission).
    sent_max: u32,
    cc: AnyRdmaCc,
    /// The sender's link rate, which the rate never exceeds.
    line_rate_bps: u64,
    /// The rate congestion control sets (`rate_bps`).
    send: SendState,
    /// When the rate limiter lets the next packet go.
    next_avail: Ps,
    /// The ready time last told to the NIC.
    paced: Option<Ps>,
    retransmits: u32,
    // Receiver.
    expected: u32,
    /// The expected packet last NACKed, and until when it is not NACKed again.
    last_nack: Option<(u32, Ps)>,
    finished_at: Option<Ps>,
}

impl TransportKind for RdmaFlow {
    fn open(spec: &FlowSpec, data: Packet, reverse: Packet, cx: &mut HostCx) -> RdmaFlow {
        let rdma = &cx.stacks.rdma;
        let line_rate_bps = rdma.line_rates_bps[spec.src as usize];
        let mut flow = RdmaFlow {
            data: Packet { ect: true, ..data },
            reverse: Packet { priority: rdma.ack_priority.unwrap_or(reverse.priority), ..reverse },
            bytes: spec.bytes,
            packets: rdma.packets(spec.bytes),
            snd_una: 0,
            snd_nxt: 0,
            sent_max: 0,
            cc: rdma.cc.build(&()),
            line_rate_bps,
            send: SendState {
                cwnd: 0.0,
                ssthresh: 0.0,
                rate_bps: line_rate_bps as f64,
                line_rate_bps: line_rate_bps as f64,
                mss: rdma.mtu as f64,
            },
            next_avail: cx.now,
            paced: None,
            retransmits: 0,
            expected: 0,
            last_nack: None,
            finished_at: None,
        };
        flow.tell_nic(cx, false);
        flow
    }

    const COMPLETES: bool = true;

    fn framing(stacks: &Stacks, bytes: u64) -> Framing {
        let r = &stacks.rdma;
        Framing {
            packets: r.packets(bytes),
            first_payload: r.payload(bytes, 0),
            header: r.header,
            ack_size: r.ack_size,
            handshake: false,
        }
    }
}

impl RdmaFlow {
    /// When the sender may send its next packet: never while everything is sent or the
    /// window is full.
    fn ready_at(&self, rdma: &RdmaSettings) -> Option<Ps> {
        let in_flight = (self.snd_nxt - self.snd_una) as u64 * rdma.mtu as u64;
        let window_full = rdma.window > 0 && in_flight >= rdma.window;
        (self.snd_nxt < self.packets && !window_full).then_some(self.next_avail)
    }

    /// Tells the NIC when the next packet may go, if that changed (or `always`: after a
    /// pull, the NIC holds a time that has passed).
    fn tell_nic(&mut self, cx: &mut HostCx, always: bool) {
        let ready = self.ready_at(&cx.stacks.rdma);
        if always || ready != self.paced {
            self.paced = ready;
            cx.pace(ready, self.data.priority);
        }
    }

    fn receive_data(&mut self, pkt: &Packet, cx: &mut HostCx) {
        let (ack_size, reverse) = (cx.stacks.rdma.ack_size, self.reverse);
        let reply = |kind, seq| Packet { kind, seq, size: ack_size, ..reverse };
        if pkt.seq == self.expected {
            self.expected += 1;
            let ack = Packet { timestamp: pkt.timestamp, ece: pkt.ce, ..reply(PacketKind::Ack, self.expected) };
            cx.send(ack);
            if self.expected == self.packets && cx.stacks.fct_until == FctUntil::Delivered {
                self.finish(cx);
            }
        } else if pkt.seq > self.expected {
            let expected = self.expected;
            if self.last_nack.is_none_or(|(seq, until)| seq != expected || cx.now >= until) {
                self.last_nack = Some((expected, cx.now + cx.stacks.rdma.nack_interval));
                cx.send(Packet { ece: pkt.ce, ..reply(PacketKind::Nack, expected) });
            }
        }
    }

    fn receive_ack(&mut self, pkt: &Packet, cx: &mut HostCx) {
        if pkt.ece && !self.sender_done() {
            self.cc.on_cnp(&mut self.send, cx.now);
            self.ask_for_timer(cx);
        }
        if pkt.seq > self.snd_una {
            self.snd_una = pkt.seq;
            self.snd_nxt = self.snd_nxt.max(pkt.seq);
        }
        if pkt.kind == PacketKind::Nack {
            self.snd_nxt = self.snd_una;
        }
        if self.sender_done() && cx.stacks.fct_until == FctUntil::Acked {
            self.finish(cx);
        }
        self.tell_nic(cx, false);
    }

    /// Every packet is acknowledged: the sender's work (and its timers) is over.
    fn sender_done(&self) -> bool {
        self.snd_una == self.packets
    }

    /// Asks for the congestion controller's next tick while the sender has work.
    fn ask_for_timer(&self, cx: &mut HostCx) {
        if let Some(at) = self.cc.next_timer().filter(|_| !self.sender_done()) {
            cx.set_timer(at);
        }
    }

    fn finish(&mut self, cx: &mut HostCx) {
        if self.finished_at.is_none() {
            self.finished_at = Some(cx.now);
            cx.finished = true;
        }
    }
}

impl Transport for RdmaFlow {
    fn on_packet(&mut self, pkt: &Packet, cx: &mut HostCx) {
        match pkt.kind {
            PacketKind::Data => self.receive_data(pkt, cx),
            PacketKind::Ack | PacketKind::Nack => self.receive_ack(pkt, cx),
            _ => unreachable!("an RDMA connection carries data, ACKs and NACKs"),
        }
    }

    /// The congestion controller's tick: its rate applies from the next packet on.
    fn on_timer(&mut self, cx: &mut HostCx) {
        if self.sender_done() {
            return;
        }
        self.cc.on_timer(&mut self.send, cx.now);
        self.ask_for_timer(cx);
    }

    fn pull(&mut self, cx: &mut HostCx) -> Option<Packet> {
        let rdma = &cx.stacks.rdma;
        let seq = self.snd_nxt;
        let size = (rdma.payload(self.bytes, seq) + rdma.header as u64) as u32;
        let pkt = Packet { kind: PacketKind::Data, seq, size, timestamp: cx.now, ..self.data };
        if seq < self.sent_max {
            self.retransmits += 1;
        }
        self.snd_nxt += 1;
        self.sent_max = self.sent_max.max(self.snd_nxt);
        let rate = (self.send.rate_bps.round() as u64).clamp(1, self.line_rate_bps);
        self.next_avail = cx.now + serialization(size as u64, rate);
        self.tell_nic(cx, true);
        Some(pkt)
    }

    fn outcome(&self, stacks: &Stacks) -> Outcome {
        let delivered = (self.expected as u64 * stacks.rdma.mtu as u64).min(self.bytes);
        Outcome {
            finished_at: self.finished_at,
            retransmits: self.retransmits,
            timeouts: 0,
            delivered_bytes: delivered,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::ExtStore;
    use crate::transport::HostAction;
    use crate::workload::FlowKind;

    /// A host's side of a call: the actions a flow asked for.
    struct Host {
        stacks: Stacks,
        exts: ExtStore,
        actions: Vec<HostAction>,
    }

    impl Host {
        fn new() -> Host {
            Host {
                stacks: Stacks::new(&Scenario::default(), vec![100_000_000_000; 2]),
                exts: ExtStore::default(),
                actions: Vec::new(),
            }
        }

        /// Runs `f` at `now`; returns the packets sent, the ready times told to the NIC
        /// and whether the flow finished.
        fn call<T>(&mut self, now: Ps, f: impl FnOnce(&mut HostCx) -> T) -> (T, Vec<Packet>, Vec<Option<Ps>>, bool) {
            let mut cx = HostCx {
                now,
                stacks: &mut self.stacks,
                actions: &mut self.actions,
                exts: &mut self.exts,
                nic_bytes: 0,
                finished: false,
            };
            let out = f(&mut cx);
            let finished = cx.finished;
            let (mut sent, mut paced) = (Vec::new(), Vec::new());
            for a in self.actions.drain(..) {
                match a {
                    HostAction::Send(p) => sent.push(p),
                    HostAction::Pace { at, .. } => paced.push(at),
                    HostAction::Timer(_) => panic!("RDMA sets no timers"),
                }
            }
            (out, sent, paced, finished)
        }
    }

    fn spec(bytes: u64) -> FlowSpec {
        FlowSpec { id: 0, src: 1, dst: 0, bytes, start: 0, priority: 0, kind: FlowKind::Rdma, query: None }
    }

    /// A connection paces at its own sender's link rate (host 1's 25 Gbps, not host
    /// 0's 100 Gbps): the packet after a full one is ready 1,036 B at 25 Gbps later.
    #[test]
    fn a_connection_starts_at_its_senders_link_rate() {
        let mut host = Host::new();
        host.stacks.rdma.line_rates_bps = vec![100_000_000_000, 25_000_000_000];
        let template = Packet::template(0, 0, 7, 0);
        let (mut flow, _, _, _) = host.call(0, |cx| RdmaFlow::open(&spec(4500), template, template, cx));
        let (_, _, paced, _) = host.call(0, |cx| flow.pull(cx));
        assert_eq!(paced, [Some(1036 * 8 * 40)]);
    }

    /// Go-back-N as the reference runs it: packet 2 of 5 is lost; the receiver ACKs 0
    /// and 1, NACKs 2 once for packets 3 and 4 (within the NACK interval), the sender goes
    /// back to 2 and sends 2, 3, 4 again; the flow completes at the last ACK.
    #[test]
    fn a_lost_packet_is_recovered_by_going_back() {
        let mut host = Host::new();
        host.stacks.fct_until = FctUntil::Acked;
        let template = Packet::template(0, 0, 7, 0);
        let (mut flow, _, paced, _) = host.call(0, |cx| RdmaFlow::open(&spec(4500), template, template, cx));
        assert_eq!(paced, [Some(0)], "ready at once");
        let mut t = 0;
        let mut pull = |flow: &mut RdmaFlow, host: &mut Host| {
            let (pkt, _, paced, _) = host.call(t, |cx| flow.pull(cx));
            let pkt = pkt.unwrap();
            t += serialization(pkt.size as u64, 100_000_000_000);
            (pkt, paced)
        };
        let (first, paced): (Vec<Packet>, Vec<Vec<Option<Ps>>>) = (0..5).map(|_| pull(&mut flow, &mut host)).unzip();
        let sizes: Vec<(u32, u32)> = first.iter().map(|p| (p.seq, p.size)).collect();
        assert_eq!(sizes, [(0, 1036), (1, 1036), (2, 1036), (3, 1036), (4, 536)]);
        // Each packet makes the next ready one packet time later, at line rate; after the
        // last, nothing is ready until feedback.
        assert_eq!(paced[0], [Some(82_880)]);
        assert_eq!(paced[4], [None]);
        let mut replies = Vec::new();
        for pkt in first.iter().filter(|p| p.seq != 2) {
            let (_, sent, _, _) = host.call(1_000_000, |cx| flow.on_packet(pkt, cx));
            replies.extend(sent.iter().map(|p| (p.kind, p.seq)));
        }
        assert_eq!(replies, [(PacketKind::Ack, 1), (PacketKind::Ack, 2), (PacketKind::Nack, 2)]);
        let nack = Packet { kind: PacketKind::Nack, seq: 2, size: 48, ..template };
        let (_, _, paced, _) = host.call(2_000_000, |cx| flow.on_packet(&nack, cx));
        assert!(paced.last().unwrap().is_some(), "ready again after going back");
        let again: Vec<u32> = (0..3).map(|_| pull(&mut flow, &mut host).0.seq).collect();
        assert_eq!(again, [2, 3, 4]);
        assert_eq!(flow.outcome(&host.stacks).retransmits, 3);
        let mut finished = false;
        for seq in 2..5 {
            let data = Packet { kind: PacketKind::Data, seq, size: 1036, ..template };
            let (_, acks, _, _) = host.call(3_000_000, |cx| flow.on_packet(&data, cx));
            assert_eq!(acks.iter().map(|p| (p.kind, p.seq)).collect::<Vec<_>>(), [(PacketKind::Ack, seq + 1)]);
            let (_, _, _, done) = host.call(4_000_000, |cx| flow.on_packet(&acks[0], cx));
            finished |= done;
        }
        assert!(finished && flow.outcome(&host.stacks).finished_at == Some(4_000_000));
        assert_eq!(flow.outcome(&host.stacks).delivered_bytes, 4500);
    }

    /// A gap NACKs its expected packet once per interval, again after the interval or for
    /// a new expected packet; duplicates get no reply.
    #[test]
    fn nacks_are_paced_by_the_interval() {
        let mut host = Host::new();
        let template = Packet::template(0, 0, 7, 0);
        let (mut flow, _, _, _) = host.call(0, |cx| RdmaFlow::open(&spec(10_000), template, template, cx));
        let data = |seq| Packet { kind: PacketKind::Data, seq, size: 1036, ..template };
        let mut reply = |flow: &mut RdmaFlow, t: Ps, seq: u32| {
            let (_, sent, _, _) = host.call(t, |cx| flow.on_packet(&data(seq), cx));
            sent.iter().map(|p| (p.kind, p.seq)).collect::<Vec<_>>()
        };
        let interval = 500_000_000;
        assert_eq!(reply(&mut flow, 0, 3), [(PacketKind::Nack, 0)]);
        assert_eq!(reply(&mut flow, interval - 1, 4), []);
        assert_eq!(reply(&mut flow, interval, 5), [(PacketKind::Nack, 0)]);
        assert_eq!(reply(&mut flow, interval + 1, 0), [(PacketKind::Ack, 1)]);
        assert_eq!(reply(&mut flow, interval + 2, 6), [(PacketKind::Nack, 1)], "a new expected packet");
        assert_eq!(reply(&mut flow, interval + 3, 0), [], "a duplicate");
    }
}
