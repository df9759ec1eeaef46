//! Reliable RDMA connections as a RoCE NIC runs them, after ns3-datacenter's `RdmaHw`
//! (the HPCC code base; `rdma-hw.cc`, `rdma-queue-pair.cc`). Sequence numbers count
//! packets of `mtu` payload bytes (the last may be shorter).
//!
//! - The sender queues nothing: its NIC pulls the next packet when the link is free and
//!   the connection's rate limiter allows, one packet time at the connection's rate after
//!   the packet before (`nextAvail`).
//! - The receiver ACKs packets that arrive in order (every `ack_interval`-th and the
//!   last), drops a packet beyond a gap and NACKs the packet it expects, at most once
//!   per `nack_interval` for the same expected packet; duplicates are dropped silently
//!   (ACKed when there is a timeout, since a lost ACK is then repaired by resending).
//! - The receiver notifies congestion as the congestion control's model has it: each ACK
//!   and NACK echoes the CE mark of the packet it answers, or (DCQCN's paper model) a
//!   CNP goes back at a marked packet, at most one per interval.
//! - An ACK or NACK acknowledges everything before its sequence number; a NACK also sends
//!   the sender back to the first unacknowledged packet (go-back-N).
//! - By default there is no retransmission timeout, as in the reference: a connection
//!   whose last packets are all lost stalls. Lossless classes (PFC) are what RDMA runs
//!   on. With `rto` set, a sender whose unacknowledged packets see no ACK progress for
//!   that long goes back to the first of them.
//!
//! That is go-back-N, the default loss recovery; `[rdma.loss_recovery]` chooses another
//! (`recovery`): IRN's selective repeat keeps packets beyond a gap, NACKs each with a
//! SACK, resends only what was lost and times out on its own.

pub mod recovery;

use super::cc::{AnyRdmaCc, CongestionControl, Feedback, Notification, Probe, RdmaCcConfig, RdmaCcEnv, SendState};
use super::sack::OutOfOrder;
use super::{Framing, HostCx, Outcome, PathInfo, Receiver, Sender, Stacks, TransportKind};
use crate::config::run::FctUntil;
use crate::net::config::Topology;
use crate::net::{Ext, IntFormat, Packet, PacketKind, ACK_UNPADDED_BYTES, WIRE_STACK_BYTES};
use crate::sim::{serialization, Ps, PS_PER_S};
use crate::transport::config::{RdmaConfig, RdmaWindow, Rto};
use crate::workload::FlowSpec;
use recovery::{AnyLossRecovery, LossRecovery, LossRecoveryConfig};

/// The RDMA settings every connection of a run shares.
#[derive(Clone, Debug)]
pub struct RdmaSettings {
    pub mtu: u32,
    pub header: u32,
    pub ack_size: u32,
    pub ack_interval: u32,
    pub nack_interval: Ps,
    /// The retransmission timeout, if any (go-back-N's; a scheme may time out on its own).
    pub rto: Option<Ps>,
    /// How senders recover lost packets.
    pub loss_recovery: LossRecoveryConfig,
    /// Whether senders time out (`RdmaConfig::times_out`), read on every packet sent.
    pub times_out: bool,
    /// How a connection's window is sized when it opens.
    pub window: WindowSize,
    pub window_scales_with_rate: bool,
    /// The rate of each host's link: a connection starts at its sender's and never
    /// exceeds it.
    pub line_rates_bps: Vec<u64>,
    pub ack_priority: Option<u8>,
    pub cc: RdmaCcConfig,
    /// How receivers notify congestion (from `cc`).
    pub notification: Notification,
    /// Whether a rate change moves the pending packet's send time (from `cc`).
    pub shifts_pending_packet: bool,
    /// The base RTT of the longest path between two hosts, when the run needs it (a
    /// `max_bdp` window, or a controller that needs a base RTT).
    pub longest_base_rtt: Option<Ps>,
    /// Whether data packets carry a telemetry stack for the switches to stamp, which
    /// their ACKs and NACKs echo (from `cc`; see `set_telemetry`).
    pub telemetry: bool,
    /// Wire bytes the telemetry stack adds to a data packet (0 without telemetry).
    pub stack_bytes: u32,
    /// How switches write the records (exact or quantized).
    pub int_format: IntFormat,
}

impl RdmaSettings {
    /// The settings of `rdma` on `topology`, whose hosts' links run at `line_rates_bps`.
    pub fn new(rdma: &RdmaConfig, topology: &Topology, line_rates_bps: Vec<u64>) -> Self {
        let RdmaConfig {
            mtu,
            header,
            ack_size,
            ack_interval,
            nack_interval,
            rto,
            window,
            window_scales_with_rate,
            ack_priority,
            int_values,
            int_multi,
            loss_recovery,
            cc,
        } = rdma.clone();
        let line_rate_bps = line_rates_bps.iter().copied().max().unwrap_or(topology.link_rate.0);
        let longest_base_rtt = (window == RdmaWindow::MaxBdp || cc.needs_base_rtt()).then(|| {
            let longest = topology.longest_path(|_, delay| delay.0).unwrap_or_default();
            let delay = longest.iter().map(|(_, d)| d.0).sum();
            base_rtt(mtu, delay, longest.iter().map(|(r, _)| r.0))
        });
        let window = match window {
            RdmaWindow::Bytes(b) => WindowSize::Fixed(b.0),
            RdmaWindow::Bdp => WindowSize::PathBdp,
            RdmaWindow::MaxBdp => WindowSize::Fixed(bdp(line_rate_bps, longest_base_rtt.unwrap_or_default())),
        };
        RdmaSettings {
            mtu,
            header,
            ack_size,
            ack_interval,
            nack_interval: nack_interval.0,
            rto: match rto {
                Rto::None => None,
                Rto::After(t) => Some(t.0),
            },
            times_out: rdma.times_out(),
            loss_recovery,
            window,
            window_scales_with_rate,
            line_rates_bps,
            ack_priority,
            notification: cc.notification(),
            shifts_pending_packet: cc.shifts_pending_packet(),
            longest_base_rtt,
            telemetry: false,
            stack_bytes: 0,
            int_format: IntFormat { values: int_values, multi: int_multi as u64 },
            cc: cc.clone(),
        }
        .with_telemetry(cc.wants_telemetry())
    }

    /// These settings with data packets carrying a telemetry stack (`on`) or not. The
    /// stack is the reference's INT header, of a fixed size on the wire whatever the hops
    /// stamped (`WIRE_STACK_BYTES`, 42 B), in data packets and, echoed, in ACKs and NACKs,
    /// which are then no longer padded: 76 B rather than 48 (`ACK_UNPADDED_BYTES`).
    pub fn with_telemetry(mut self, on: bool) -> Self {
        self.telemetry = on;
        self.stack_bytes = if on { WIRE_STACK_BYTES } else { 0 };
        self
    }

    /// Header bytes of a data packet, its telemetry stack included.
    pub fn data_header(&self) -> u32 {
        self.header + self.stack_bytes
    }

    /// Wire bytes of an ACK or NACK, its echoed telemetry stack included.
    pub fn reply_size(&self) -> u32 {
        if self.telemetry {
            self.ack_size.max(ACK_UNPADDED_BYTES + self.stack_bytes)
        } else {
            self.ack_size
        }
    }

    /// One bandwidth-delay product (`bdp`) of a path whose links run at `rates`, the
    /// first its sender's, at the sender's line rate.
    pub fn bdp(&self, delay: Ps, rates: impl Iterator<Item = u64> + Clone) -> u64 {
        let line_rate_bps = rates.clone().next().unwrap_or(0);
        bdp(line_rate_bps, base_rtt(self.mtu, delay, rates))
    }

    /// The base RTT a connection's controller starts from: its own path's with a window
    /// of its path's BDP (the reference's `GLOBAL_T 0`), else the longest path's (`GLOBAL_T
    /// 1`, its examples' setting: `powertcp-evaluation-burst.cc:153`), as for the window.
    fn cc_env(&self, path: Option<&PathInfo>) -> RdmaCcEnv {
        let own = path.filter(|_| self.window == WindowSize::PathBdp);
        let base_rtt = match own {
            Some(path) => base_rtt(self.mtu, path.delay, path.rates.iter().copied()),
            None => self.longest_base_rtt.unwrap_or_default(),
        };
        let window = match (self.window, own) {
            (WindowSize::Fixed(bytes), _) => bytes,
            (WindowSize::PathBdp, Some(path)) => self.bdp(path.delay, path.rates.iter().copied()),
            (WindowSize::PathBdp, None) => 0,
        };
        RdmaCcEnv { base_rtt, window, int_format: self.int_format }
    }

    /// Packets of a `bytes`-byte message.
    pub fn packets(&self, bytes: u64) -> u32 {
        bytes.div_ceil(self.mtu as u64).min(u32::MAX as u64) as u32
    }

    /// Payload bytes of packet `seq` of a `bytes`-byte message.
    pub fn payload(&self, bytes: u64, seq: u32) -> u64 {
        (bytes - seq as u64 * self.mtu as u64).min(self.mtu as u64)
    }

    /// Whether the receiver ACKs when `received` of a message's `packets` packets have
    /// arrived in order: at every multiple of `ack_interval`, and at the last packet.
    ///
    /// The reference's rule (ns3-datacenter 6ddb4a4, `rdma-hw.cc:472-484`) ACKs when the
    /// next expected byte reaches a milestone, which then moves on by `L2_ACK_INTERVAL`
    /// bytes, or reaches a multiple of `L2_CHUNK_SIZE` (4,000 B). Its receiver resets the
    /// milestone to `L2_ACK_INTERVAL` at every packet (`rdma-hw.cc:330`), so past the
    /// first interval it ACKs every packet; and it does not know the message's length.
    /// Here the milestone moves as the rule intends, counted in packets, and the last
    /// packet is always ACKed: without a retransmission timeout a connection whose last
    /// ACK never comes would never complete. With the reference's interval, 1 (its example
    /// configurations' `L2_ACK_INTERVAL 1`, in bytes: less than a packet), every packet
    /// is ACKed either way.
    pub fn acks(&self, received: u32, packets: u32) -> bool {
        received.is_multiple_of(self.ack_interval) || received == packets
    }
}

/// The base RTT of a path of one-way propagation delay `delay` and link rates `rates`,
/// as the reference computes it for windows and controllers: twice the delay plus one
/// `mtu` payload's serialization per link (ns3-datacenter 6ddb4a4,
/// `examples/PowerTCP/powertcp-evaluation-burst.cc:265,1029`). It leaves out headers and
/// the ACK's way back: with 1,000 B payloads and 100 Gbps links of 1 us, 4.16 us where an
/// ACK really takes 4.17 us.
fn base_rtt(mtu: u32, delay: Ps, rates: impl Iterator<Item = u64>) -> Ps {
    2 * delay + rates.map(|r| serialization(mtu as u64, r)).sum::<Ps>()
}

/// One bandwidth-delay product, as the reference sizes a window: the sender's line rate
/// times the base RTT (`rdma-hw.cc:257-258`; bytes rounded down). The window, counted in
/// payload bytes, still covers the true RTT the base RTT falls short of.
fn bdp(line_rate_bps: u64, base_rtt: Ps) -> u64 {
    (line_rate_bps as u128 * base_rtt as u128 / (8 * PS_PER_S as u128)) as u64
}

/// How the run sizes a connection's window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowSize {
    /// The same for every connection (0: none).
    Fixed(u64),
    /// One bandwidth-delay product of the connection's own path.
    PathBdp,
}

/// A connection's cap on bytes in flight (payload bytes, counted in whole packets of
/// `mtu`, as the reference counts sequence numbers), checked before each packet:
/// the sender may send while fewer bytes are in flight than the cap. The cap is `bytes`
/// or, when it scales with the rate, bytes x rate / line rate rounded down but at least 1,
/// so that one packet may always be in flight (ns3-datacenter 6ddb4a4,
/// `rdma-queue-pair.cc:121-144`, `VAR_WIN`).
#[derive(Clone, Copy, Debug)]
struct InFlightCap {
    /// 0: no cap.
    bytes: u64,
    scales_with_rate: bool,
}

impl InFlightCap {
    /// Whether `in_flight` bytes leave no room at the sender's current rate. A controller
    /// that sizes a scaling window by its own round trip (`window_rtt`, PowerTCP's rule)
    /// caps it at rate x that RTT (bytes rounded down, at least 1) instead.
    fn is_full(&self, in_flight: u64, s: &SendState, window_rtt: Option<Ps>) -> bool {
        if self.bytes == 0 {
            return false;
        }
        in_flight >= self.bytes_at(s, window_rtt).unwrap_or(u64::MAX)
    }

    /// The cap at the sender's current rate, or None: no cap.
    #[inline]
    fn bytes_at(&self, s: &SendState, window_rtt: Option<Ps>) -> Option<u64> {
        if self.bytes == 0 {
            return None;
        }
        Some(match (self.scales_with_rate, window_rtt) {
            (true, Some(rtt)) => ((s.rate_bps * rtt as f64 / 8e12) as u64).max(1),
            (true, None) => ((self.bytes as f64 * s.rate_bps / s.line_rate_bps) as u64).max(1),
            (false, _) => self.bytes,
        })
    }
}

/// Reliable RDMA connections.
pub struct RdmaFlow;

/// A connection's sender: the queue pair at the source, paced by its NIC.
pub struct RdmaSender {
    data: Packet,
    bytes: u64,
    packets: u32,
    /// First packet not yet acknowledged.
    snd_una: u32,
    /// The next new packet to send (go-back-N moves it back to resend; a recovery that
    /// resends selectively sends its packets ahead of it).
    snd_nxt: u32,
    /// Packets ever sent once (anything below that sent again is a retransmission).
    sent_max: u32,
    cc: AnyRdmaCc,
    /// What the sender sends again after a NACK or a timeout.
    recovery: AnyLossRecovery,
    /// The recovery may have packets to send again (a NACK or a timeout told it of
    /// losses, and it has not said it is done): only then is it asked. Go-back-N goes
    /// back by moving `snd_nxt` and never sets it.
    resending: bool,
    window: InFlightCap,
    /// The sender's link rate, which the rate never exceeds.
    line_rate_bps: u64,
    /// The rate congestion control sets (`rate_bps`).
    send: SendState,
    /// When the rate limiter lets the next packet go.
    next_avail: Ps,
    /// Wire bytes of the last packet sent (whose packet time `next_avail` counts).
    last_size: u32,
    /// The ready time last told to the NIC.
    paced: Option<Ps>,
    /// When the retransmission timer expires: set exactly while the sender times out and
    /// a packet sent is unacknowledged, the timeout after `progress_at`.
    rto_at: Option<Ps>,
    /// The last progress: the send of a packet while none was unacknowledged, an ACK of
    /// new packets, or a timeout.
    progress_at: Ps,
    retransmits: u32,
    timeouts: u32,
    /// Congestion notifications received (`Outcome::cnps`).
    cnps: u32,
    /// When the last packet was acknowledged (`run.fct_until = "acked"`).
    finished_at: Option<Ps>,
}

/// A connection's receiver: ACKs, NACKs and congestion notifications back to the sender.
pub struct RdmaReceiver {
    /// The template of packets back to the sender.
    reverse: Packet,
    bytes: u64,
    packets: u32,
    /// The next packet expected in order.
    expected: u32,
    /// The packets beyond a gap that the receiver kept (selective repeat), or None: it
    /// drops them (go-back-N).
    held: Option<OutOfOrder>,
    /// The expected packet last NACKed, and until when it is not NACKed again.
    last_nack: Option<(u32, Ps)>,
    /// When the receiver last sent a CNP (`Notification::Cnp`).
    last_cnp: Option<Ps>,
    /// When the last packet arrived (`run.fct_until = "delivered"`).
    finished_at: Option<Ps>,
}

/// Sets `finished_at` to now and tells the engine, the first time.
fn finish(finished_at: &mut Option<Ps>, cx: &mut HostCx) {
    if finished_at.is_none() {
        *finished_at = Some(cx.now);
        cx.finished = true;
    }
}

impl TransportKind for RdmaFlow {
    type Sender = RdmaSender;
    type Receiver = RdmaReceiver;

    fn open(
        spec: &FlowSpec,
        data: Packet,
        reverse: Packet,
        path: Option<&PathInfo>,
        cx: &mut HostCx,
    ) -> (RdmaSender, RdmaReceiver) {
        let rdma = &cx.stacks.rdma;
        let window = match rdma.window {
            WindowSize::Fixed(bytes) => bytes,
            WindowSize::PathBdp => {
                let path = path.expect("a window of the path's BDP needs the path");
                rdma.bdp(path.delay, path.rates.iter().copied())
            }
        };
        let line_rate_bps = rdma.line_rates_bps[spec.src as usize];
        let packets = rdma.packets(spec.bytes);
        let receiver = RdmaReceiver {
            reverse: Packet { priority: rdma.ack_priority.unwrap_or(reverse.priority), ..reverse },
            bytes: spec.bytes,
            packets,
            expected: 0,
            held: rdma.loss_recovery.keeps_out_of_order().then(OutOfOrder::default),
            last_nack: None,
            last_cnp: None,
            finished_at: None,
        };
        let mut sender = RdmaSender {
            data: Packet { ect: true, ..data },
            bytes: spec.bytes,
            packets,
            snd_una: 0,
            snd_nxt: 0,
            sent_max: 0,
            cc: rdma.cc.build(&rdma.cc_env(path)),
            recovery: rdma.loss_recovery.build(&()),
            resending: false,
            window: InFlightCap { bytes: window, scales_with_rate: rdma.window_scales_with_rate },
            line_rate_bps,
            send: SendState {
                cwnd: 0.0,
                ssthresh: 0.0,
                rate_bps: line_rate_bps as f64,
                line_rate_bps: line_rate_bps as f64,
                mss: rdma.mtu as f64,
            },
            next_avail: cx.now,
            last_size: 0,
            paced: None,
            rto_at: None,
            progress_at: 0,
            retransmits: 0,
            timeouts: 0,
            cnps: 0,
            finished_at: None,
        };
        sender.tell_nic(cx, false);
        (sender, receiver)
    }

    const COMPLETES: bool = true;

    fn needs_path(stacks: &Stacks) -> bool {
        stacks.rdma.window == WindowSize::PathBdp
    }

    fn framing(stacks: &Stacks, bytes: u64) -> Framing {
        let r = &stacks.rdma;
        Framing {
            packets: r.packets(bytes),
            first_payload: r.payload(bytes, 0),
            header: r.data_header(),
            ack_size: r.reply_size(),
            handshake: false,
        }
    }
}

impl RdmaReceiver {
    /// A reply of `kind` carrying `seq`, without telemetry.
    #[inline(always)]
    fn reply(&self, kind: PacketKind, seq: u32, stacks: &Stacks) -> Packet {
        Packet { kind, seq, size: stacks.rdma.ack_size, ..self.reverse }
    }

    /// An ACK or NACK for data packet `pkt`: it echoes the packet's telemetry stack in a
    /// copy of its own (the reference copies the INT header into both, `rdma-hw.cc:339`).
    #[inline(always)]
    fn echo(&self, kind: PacketKind, seq: u32, pkt: &Packet, cx: &mut HostCx) -> Packet {
        let ext = pkt.ext.map(|id| cx.exts.insert(cx.exts.get(id).clone()));
        let size = if ext.is_some() { cx.stacks.rdma.reply_size() } else { cx.stacks.rdma.ack_size };
        Packet { size, ext, ..self.reply(kind, seq, cx.stacks) }
    }
}

impl RdmaReceiver {
    /// Keeps packet `seq`, which arrived beyond a gap, if the receiver keeps such packets
    /// (selective repeat); returns whether it did.
    #[inline(never)]
    fn keep(&mut self, seq: u32) -> bool {
        self.held.as_mut().map(|held| held.insert(seq)).is_some()
    }
}

impl Receiver for RdmaReceiver {
    fn on_packet(&mut self, pkt: &Packet, cx: &mut HostCx) {
        debug_assert_eq!(pkt.kind, PacketKind::Data, "an RDMA receiver hears data");
        let ece = match cx.stacks.rdma.notification {
            Notification::EchoInAcks => pkt.ce,
            Notification::Cnp { interval } => {
                if pkt.ce && self.last_cnp.is_none_or(|at| cx.now >= at + interval) {
                    self.last_cnp = Some(cx.now);
                    cx.send(self.reply(PacketKind::Cnp, pkt.seq, cx.stacks));
                }
                false
            }
        };
        if pkt.seq == self.expected {
            self.expected += 1;
            // The gap is filled: the packets kept beyond it are in order now, and the ACK
            // that says so ends the sender's recovery.
            let filled = self.held.as_mut().and_then(|held| held.take_run_at(self.expected));
            if let Some(end) = filled {
                self.expected = end;
            }
            if filled.is_some() || cx.stacks.rdma.acks(self.expected, self.packets) {
                let ack =
                    Packet { timestamp: pkt.timestamp, ece, ..self.echo(PacketKind::Ack, self.expected, pkt, cx) };
                cx.send(ack);
            }
            if self.expected == self.packets {
                cx.delivered();
                if cx.stacks.fct_until == FctUntil::Delivered {
                    finish(&mut self.finished_at, cx);
                }
            }
        } else if pkt.seq > self.expected {
            let expected = self.expected;
            if self.keep(pkt.seq) {
                // Selective repeat: every packet beyond the gap is NACKed, with its own
                // sequence number as the SACK.
                let nack =
                    Packet { ece, sack_start: pkt.seq, sack_len: 1, ..self.echo(PacketKind::Nack, expected, pkt, cx) };
                cx.send(nack);
            } else if self.last_nack.is_none_or(|(seq, until)| seq != expected || cx.now >= until) {
                self.last_nack = Some((expected, cx.now + cx.stacks.rdma.nack_interval));
                let nack = Packet { ece, ..self.echo(PacketKind::Nack, expected, pkt, cx) };
                cx.send(nack);
            }
        } else if cx.stacks.rdma.times_out {
            // A duplicate: the reference drops it silently, which only a sender with a
            // timeout can tell from a loss. Its ACK may have been lost, and the timeout
            // resends packets already here: answering them is what ends the resending.
            let ack = Packet { timestamp: pkt.timestamp, ece, ..self.echo(PacketKind::Ack, self.expected, pkt, cx) };
            cx.send(ack);
        }
    }

    fn outcome(&self, stacks: &Stacks) -> Outcome {
        let delivered = (self.expected as u64 * stacks.rdma.mtu as u64).min(self.bytes);
        Outcome { finished_at: self.finished_at, delivered_bytes: delivered, ..Outcome::default() }
    }
}

impl RdmaSender {
    /// When the sender may send its next packet: never while everything is sent or the
    /// window is full.
    fn ready_at(&self, rdma: &RdmaSettings) -> Option<Ps> {
        let in_flight = (self.snd_nxt - self.snd_una) as u64 * rdma.mtu as u64;
        let full = self.window.is_full(in_flight, &self.send, self.cc.window_rtt());
        // A packet sent again does not widen what is in flight: the window does not hold
        // it back.
        ((self.snd_nxt < self.packets && !full) || (self.resending && self.resends())).then_some(self.next_avail)
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

    fn receive_ack(&mut self, pkt: &Packet, cx: &mut HostCx) {
        if pkt.ece {
            self.notified(cx);
        }
        let acked_before = self.acked_bytes(cx.stacks.rdma.mtu);
        if pkt.seq > self.snd_una {
            self.snd_una = pkt.seq;
            self.snd_nxt = self.snd_nxt.max(pkt.seq);
            self.restart_rto(cx);
        }
        if pkt.kind == PacketKind::Nack {
            self.resending = self.recovery.on_nack(pkt, self.snd_una, &mut self.snd_nxt, self.packets);
        }
        // The controller sees every ACK and NACK after the sequence state moved, as the
        // reference's `ReceiveAck` runs it (`rdma-hw.cc:408-457`). An ACK measures the
        // RTT of the packet it answers, whose send time it echoes; a NACK echoes none.
        let feedback = Feedback {
            now: cx.now,
            acked_bytes: self.acked_bytes(cx.stacks.rdma.mtu) - acked_before,
            ece: pkt.ece,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            rtt: (pkt.kind == PacketKind::Ack).then(|| cx.now.saturating_sub(pkt.timestamp)),
            telemetry: cx.exts.telemetry(pkt.ext),
        };
        let rate_before = self.send.rate_bps;
        self.cc.on_ack(&mut self.send, &feedback);
        if cx.stacks.rdma.shifts_pending_packet && self.send.rate_bps != rate_before {
            self.shift_pending_packet(rate_before);
        }
        if self.sender_done() && cx.stacks.fct_until == FctUntil::Acked {
            finish(&mut self.finished_at, cx);
        }
        self.tell_nic(cx, false);
    }

    /// A congestion notification reached the sender: its controller reacts while it has
    /// work.
    fn notified(&mut self, cx: &mut HostCx) {
        self.cnps += 1;
        if !self.sender_done() {
            self.cc.on_cnp(&mut self.send, cx.now);
            self.ask_for_timer(cx);
        }
    }

    /// Payload bytes acknowledged.
    fn acked_bytes(&self, mtu: u32) -> u64 {
        (self.snd_una as u64 * mtu as u64).min(self.bytes)
    }

    /// The rate moved from `old_bps`: the packet waiting for `next_avail` goes the
    /// difference in the last packet's time at the two rates earlier or later, as the
    /// reference's `ChangeRate` does (`rdma-hw.cc:636-647`).
    fn shift_pending_packet(&mut self, old_bps: f64) {
        let packet_time = |bps: f64| serialization(self.last_size as u64, self.limited(bps)) as i128;
        let shifted = self.next_avail as i128 + packet_time(self.send.rate_bps) - packet_time(old_bps);
        self.next_avail = shifted.max(0) as Ps;
    }

    /// The rate the limiter paces at for a controller's `bps`: whole bits per second, at
    /// least 1, at most the line rate.
    fn limited(&self, bps: f64) -> u64 {
        (bps.round() as u64).clamp(1, self.line_rate_bps)
    }

    /// Sends packet `seq` (a new one at `snd_nxt`, or one the recovery sends again).
    #[inline(always)]
    fn send(&mut self, seq: u32, cx: &mut HostCx) -> Packet {
        let rdma = &cx.stacks.rdma;
        let size = (rdma.payload(self.bytes, seq) + rdma.data_header() as u64) as u32;
        // A stack for the switches to stamp: a slot of the side table, reused once a
        // packet before this one left the network.
        let ext = rdma.telemetry.then(|| cx.exts.insert(Ext::Telemetry(Default::default())));
        let pkt = Packet { kind: PacketKind::Data, seq, size, timestamp: cx.now, ext, ..self.data };
        if seq < self.sent_max {
            self.retransmits += 1;
        }
        if seq == self.snd_nxt {
            self.snd_nxt += 1;
            self.sent_max = self.sent_max.max(self.snd_nxt);
        }
        if self.rto_at.is_none() {
            self.restart_rto(cx);
        } else {
            self.stretch_rto(&cx.stacks.rdma);
        }
        self.next_avail = cx.now + serialization(size as u64, self.limited(self.send.rate_bps));
        self.last_size = size;
        // A byte counter's increase applies from the packet after next, as the pacing
        // gap after this one is already set (ns3-rdma's transmit path does the same).
        self.cc.on_send(&mut self.send, size as u64, cx.now);
        self.tell_nic(cx, true);
        pkt
    }

    /// More in flight may call for a longer timeout (IRN's RTO_high): the deadline moves
    /// to that after the last progress. The timer asked for earlier fires first and finds
    /// it not due.
    #[inline(never)]
    fn stretch_rto(&mut self, rdma: &RdmaSettings) {
        if let Some(rto) = self.timeout(rdma) {
            self.rto_at = Some(self.progress_at + rto);
        }
    }

    /// The packet the recovery sends again now, if any; once it has none, it is not asked
    /// again until a NACK or a timeout.
    #[inline(never)]
    fn resend(&mut self) -> Option<u32> {
        let seq = self.recovery.resend(self.snd_una);
        self.resending = seq.is_some();
        seq
    }

    /// Whether the recovery has a packet to send again now.
    #[inline(never)]
    fn resends(&self) -> bool {
        self.recovery.resends(self.snd_una)
    }

    /// Every packet is acknowledged: the sender's work (and its timers) is over.
    fn sender_done(&self) -> bool {
        self.snd_una == self.packets
    }

    /// Asks for the earlier of the congestion controller's next tick and the
    /// retransmission timeout while the sender has work it can still do (the engine
    /// keeps one timer per flow: the earliest asked for; `on_timer` asks again for what
    /// is left). A sender that only waits asks for an idle timer.
    fn ask_for_timer(&self, cx: &mut HostCx) {
        let next = [self.cc.next_timer(), self.rto_at].into_iter().flatten().min();
        match next.filter(|_| !self.sender_done()) {
            Some(at) if self.only_waits(&cx.stacks.rdma) => cx.set_idle_timer(at),
            Some(at) => cx.set_timer(at),
            None => {}
        }
    }

    /// Whether the sender can do nothing but wait for ACKs: it has no retransmission
    /// timeout, and it can send nothing (every packet is sent, or a window that no rate
    /// change widens is full). Its controller's ticks then matter only if an ACK or NACK
    /// comes, and none may: a connection whose last packets or their ACKs were dropped
    /// would tick forever (DCQCN's increase timer kept a run whose every flow had finished
    /// from ever ending, with 10 KB ACKs overflowing a lossy fabric). So its timer does not
    /// keep the run going (`HostCx::set_idle_timer`).
    fn only_waits(&self, rdma: &RdmaSettings) -> bool {
        let in_flight = (self.snd_nxt - self.snd_una) as u64 * rdma.mtu as u64;
        let window_stuck = !self.window.scales_with_rate && self.window.is_full(in_flight, &self.send, None);
        !rdma.times_out && (self.snd_nxt >= self.packets || window_stuck)
    }

    /// The retransmission timeout with what is in flight now, if the sender times out.
    fn timeout(&self, rdma: &RdmaSettings) -> Option<Ps> {
        self.recovery.timeout(self.snd_nxt - self.snd_una, rdma.rto)
    }

    /// Progress at `cx.now`: the retransmission timer (if there is one) runs the timeout
    /// from now while a packet sent is unacknowledged, and stops otherwise.
    fn restart_rto(&mut self, cx: &mut HostCx) {
        if !cx.stacks.rdma.times_out {
            return;
        }
        let Some(rto) = self.timeout(&cx.stacks.rdma) else { return };
        self.progress_at = cx.now;
        self.rto_at = (self.sent_max > self.snd_una).then_some(cx.now + rto);
        if let Some(at) = self.rto_at {
            cx.set_timer(at);
        }
    }
}

impl Sender for RdmaSender {
    /// Its rate, its cap on bytes in flight (if it has one), and its controller's state.
    fn probe(&self) -> Probe {
        let mut p = Probe { rate_bps: self.send.rate_bps, ..Probe::EMPTY };
        if let Some(cap) = self.window.bytes_at(&self.send, self.cc.window_rtt()) {
            p.cwnd_bytes = cap as f64;
        }
        self.cc.probe(&mut p);
        p
    }

    /// Once every packet is acknowledged, `on_timer` does nothing.
    fn wants_timer(&self) -> bool {
        !self.sender_done()
    }

    fn on_packet(&mut self, pkt: &Packet, cx: &mut HostCx) {
        match pkt.kind {
            PacketKind::Ack | PacketKind::Nack => self.receive_ack(pkt, cx),
            PacketKind::Cnp => {
                self.notified(cx);
                // A window that scales with the rate may have shrunk.
                self.tell_nic(cx, false);
            }
            _ => unreachable!("an RDMA sender hears ACKs, NACKs and CNPs"),
        }
    }

    /// The congestion controller's tick (its rate applies from the next packet on; a
    /// controller runs what is due by now, so a call at another time is harmless) or the
    /// retransmission timeout: go back to the first unacknowledged packet.
    fn on_timer(&mut self, cx: &mut HostCx) {
        if !self.wants_timer() {
            return;
        }
        self.cc.on_timer(&mut self.send, cx.now);
        if self.rto_at.is_some_and(|at| at <= cx.now) {
            self.timeouts += 1;
            self.resending = self.recovery.on_timeout(self.snd_una, &mut self.snd_nxt);
            self.restart_rto(cx);
        }
        self.ask_for_timer(cx);
        self.tell_nic(cx, false);
    }

    fn pull(&mut self, cx: &mut HostCx) -> Option<Packet> {
        if self.resending {
            if let Some(seq) = self.resend() {
                return Some(self.send(seq, cx));
            }
        }
        let seq = self.snd_nxt;
        Some(self.send(seq, cx))
    }

    fn outcome(&self, _stacks: &Stacks) -> Outcome {
        Outcome {
            finished_at: self.finished_at,
            retransmits: self.retransmits,
            timeouts: self.timeouts,
            cnps: self.cnps,
            ..Outcome::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::ExtStore;
    use crate::scenario::Scenario;
    use crate::transport::HostAction;
    use crate::workload::FlowKind;
    use recovery::LossRecoveryConfig;

    /// A host's side of a call: the actions a flow asked for.
    struct Host {
        stacks: Stacks,
        exts: ExtStore,
        actions: Vec<HostAction>,
        /// The timers flows asked for, in order.
        timers: Vec<Ps>,
    }

    impl Host {
        fn new() -> Host {
            Host {
                stacks: Scenario::default().stacks(vec![100_000_000_000; 2]),
                exts: ExtStore::default(),
                actions: Vec::new(),
                timers: Vec::new(),
            }
        }

        /// Runs `f` at `now`; returns the packets sent, the ready times told to the NIC
        /// and whether the flow finished.
        fn call<T>(&mut self, now: Ps, f: impl FnOnce(&mut HostCx) -> T) -> (T, Vec<Packet>, Vec<Option<Ps>>, bool) {
            let mut cx = HostCx::new(now, &mut self.stacks, &mut self.actions, &mut self.exts, 0);
            let out = f(&mut cx);
            let finished = cx.finished;
            let (mut sent, mut paced) = (Vec::new(), Vec::new());
            for a in self.actions.drain(..) {
                match a {
                    HostAction::Send(p) => sent.push(p),
                    HostAction::Pace { at, .. } => paced.push(at),
                    HostAction::Timer(at) | HostAction::IdleTimer(at) => self.timers.push(at),
                    HostAction::Delivered => {}
                }
            }
            (out, sent, paced, finished)
        }
    }

    /// A connection's two ends in one place: packets go to the end their kind is for.
    struct Ends {
        tx: RdmaSender,
        rx: RdmaReceiver,
    }

    impl Ends {
        fn open(spec: &FlowSpec, data: Packet, reverse: Packet, path: Option<&PathInfo>, cx: &mut HostCx) -> Ends {
            let (tx, rx) = RdmaFlow::open(spec, data, reverse, path, cx);
            Ends { tx, rx }
        }

        fn on_packet(&mut self, pkt: &Packet, cx: &mut HostCx) {
            match pkt.kind.is_forward() {
                true => self.rx.on_packet(pkt, cx),
                false => self.tx.on_packet(pkt, cx),
            }
        }

        fn pull(&mut self, cx: &mut HostCx) -> Option<Packet> {
            self.tx.pull(cx)
        }

        fn on_timer(&mut self, cx: &mut HostCx) {
            self.tx.on_timer(cx)
        }

        fn outcome(&self, stacks: &Stacks) -> Outcome {
            self.tx.outcome(stacks).merge(self.rx.outcome(stacks))
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
        let (mut flow, _, _, _) = host.call(0, |cx| Ends::open(&spec(4500), template, template, None, cx));
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
        let (mut flow, _, paced, _) = host.call(0, |cx| Ends::open(&spec(4500), template, template, None, cx));
        assert_eq!(paced, [Some(0)], "ready at once");
        let mut t = 0;
        let mut pull = |flow: &mut Ends, host: &mut Host| {
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
        let (mut flow, _, _, _) = host.call(0, |cx| Ends::open(&spec(10_000), template, template, None, cx));
        let data = |seq| Packet { kind: PacketKind::Data, seq, size: 1036, ..template };
        let mut reply = |flow: &mut Ends, t: Ps, seq: u32| {
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

    /// With `ack_interval = 4` a 10-packet message is ACKed at 4, 8 and, the last
    /// packet, 10; a NACK still answers a gap at once, and a retransmission that
    /// completes an interval is ACKed.
    #[test]
    fn acks_every_interval_and_the_last_packet() {
        let mut host = Host::new();
        host.stacks.rdma.ack_interval = 4;
        let template = Packet::template(0, 0, 7, 0);
        let (mut flow, _, _, _) = host.call(0, |cx| Ends::open(&spec(10_000), template, template, None, cx));
        let data = |seq| Packet { kind: PacketKind::Data, seq, size: 1036, ..template };
        let mut replies = Vec::new();
        for seq in [0, 1, 2, 3, 4, 5, 7, 6, 7, 8, 9] {
            let (_, sent, _, _) = host.call(0, |cx| flow.on_packet(&data(seq), cx));
            replies.extend(sent.iter().map(|p| (p.kind, p.seq)));
        }
        assert_eq!(replies, [(PacketKind::Ack, 4), (PacketKind::Nack, 6), (PacketKind::Ack, 8), (PacketKind::Ack, 10)]);
    }

    /// A lost tail: of three packets the last is lost, the first two are ACKed. Without a
    /// timeout the sender waits forever (no timer, nothing ready); with `rto` it goes back
    /// at the last ACK plus `rto` (a timer that fires earlier, for an ACK's older
    /// deadline, does nothing), resends packet 2 and completes.
    #[test]
    fn a_lost_tail_needs_the_timeout() {
        const RTO: Ps = 10_000_000;
        for rto in [None, Some(RTO)] {
            let mut host = Host::new();
            host.stacks.rdma.rto = rto;
            host.stacks.rdma.times_out = rto.is_some();
            host.stacks.fct_until = FctUntil::Acked;
            let template = Packet::template(0, 0, 7, 0);
            let (mut flow, _, _, _) = host.call(0, |cx| Ends::open(&spec(3000), template, template, None, cx));
            let sent: Vec<Packet> = (0..3).map(|i| host.call(i * 100_000, |cx| flow.pull(cx)).0.unwrap()).collect();
            for (t, pkt) in [(1_000_000, sent[0]), (1_100_000, sent[1])] {
                let (_, acks, _, _) = host.call(t, |cx| flow.on_packet(&pkt, cx));
                let (_, _, paced, _) = host.call(t + 1_000_000, |cx| flow.on_packet(&acks[0], cx));
                assert!(paced.iter().all(Option::is_none), "nothing to send while waiting");
            }
            let Some(rto) = rto else {
                assert!(host.timers.is_empty(), "no timeout, no timer");
                assert_eq!(flow.outcome(&host.stacks).finished_at, None);
                continue;
            };
            let last_ack = 2_100_000;
            assert_eq!(
                host.timers,
                [rto, 1_000_000 + 1_000_000 + rto, last_ack + rto],
                "armed at the first send, pushed back by each ACK"
            );
            let (_, _, paced, _) = host.call(rto, |cx| flow.on_timer(cx));
            assert_eq!((paced, flow.tx.timeouts), (vec![], 0), "an old deadline: nothing happens");
            let (_, _, paced, _) = host.call(last_ack + rto, |cx| flow.on_timer(cx));
            assert_eq!((paced, flow.tx.timeouts), (vec![Some(sent[2].timestamp + 82_880)], 1), "back to packet 2");
            let again = host.call(last_ack + rto, |cx| flow.pull(cx)).0.unwrap();
            assert_eq!(again.seq, 2);
            let (_, acks, _, _) = host.call(last_ack + rto + 1_000_000, |cx| flow.on_packet(&again, cx));
            let (_, _, _, done) = host.call(last_ack + rto + 2_000_000, |cx| flow.on_packet(&acks[0], cx));
            assert!(done);
            let outcome = flow.outcome(&host.stacks);
            assert_eq!((outcome.retransmits, outcome.timeouts, outcome.delivered_bytes), (1, 1, 3000));
        }
    }

    /// A window that scales with the rate: 10,000 B at line rate, so at rate r the sender
    /// sends while fewer than 10,000 x r / line bytes are in flight: 10, 5, 3 and (the
    /// cap never below 1 B) 1 packets at 100, 50, 25 and 0.1 Gbps. It is never more than
    /// one packet over the cap.
    #[test]
    fn a_scaled_window_caps_what_is_in_flight_by_the_rate() {
        for (rate, packets) in [(100e9, 10), (50e9, 5), (25e9, 3), (1e8, 1)] {
            let mut host = Host::new();
            host.stacks.rdma.window = WindowSize::Fixed(10_000);
            host.stacks.rdma.window_scales_with_rate = true;
            let template = Packet::template(0, 0, 7, 0);
            let (mut flow, _, _, _) = host.call(0, |cx| Ends::open(&spec(100_000), template, template, None, cx));
            flow.tx.send.rate_bps = rate;
            let mut sent = 0;
            while flow.tx.ready_at(&host.stacks.rdma).is_some() {
                host.call(0, |cx| flow.pull(cx));
                sent += 1;
            }
            let cap = (10_000.0 * rate / 100e9) as u64;
            assert_eq!(sent, packets, "at {rate}");
            assert!(sent * 1000 < cap.max(1) + 1000, "at {rate}: {sent} packets in flight, cap {cap} B");
        }
    }

    /// A controller that sizes a scaling window by its own RTT (PowerTCP's rule): the cap
    /// is rate x that RTT, not the configured window x rate / line rate. At 10 Gbps of a
    /// 25 Gbps line with 90,500 B configured: 10e9 x 5 us / 8 = 6,250 B with a 5 us RTT
    /// (90,500 x 10/25 = 36,200 B without one); 1 B at least; a fixed window ignores it;
    /// no window stays none.
    #[test]
    fn a_controller_s_window_rtt_sizes_the_scaled_window() {
        let s = SendState { cwnd: 0.0, ssthresh: 0.0, rate_bps: 10e9, line_rate_bps: 25e9, mss: 1000.0 };
        let scaled = InFlightCap { bytes: 90_500, scales_with_rate: true };
        let rtt = Some(5_000_000);
        assert!(!scaled.is_full(6_249, &s, rtt) && scaled.is_full(6_250, &s, rtt));
        assert!(!scaled.is_full(36_199, &s, None) && scaled.is_full(36_200, &s, None));
        assert!(!scaled.is_full(0, &s, Some(1)) && scaled.is_full(1, &s, Some(1)));
        let fixed = InFlightCap { bytes: 90_500, scales_with_rate: false };
        assert!(!fixed.is_full(90_499, &s, rtt) && fixed.is_full(90_500, &s, rtt));
        let none = InFlightCap { bytes: 0, scales_with_rate: true };
        assert!(!none.is_full(1 << 40, &s, rtt));
    }

    /// One BDP as the reference computes it: 100 Gbps times 2 x 2 us plus two 1,000 B
    /// payload times (80 ns each), 4.16 us: 52,000 B. `max_bdp` takes the longest path:
    /// in a fat tree, six links of 1 us (12.48 us, 156,000 B).
    #[test]
    fn a_bdp_window_is_the_reference_s() {
        let sc = Scenario::default();
        let rdma = RdmaSettings::new(&sc.rdma, &sc.topology, vec![100_000_000_000; 2]);
        assert_eq!(rdma.bdp(2_000_000, [100_000_000_000, 100_000_000_000].into_iter()), 52_000);
        let toml = "[topology]\nkind = \"fat_tree\"\nk = 4\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n[rdma]\nwindow = \"max_bdp\"";
        let sc = Scenario::from_toml(toml).unwrap();
        let rdma = RdmaSettings::new(&sc.rdma, &sc.topology, vec![100_000_000_000; 16]);
        assert_eq!(rdma.window, WindowSize::Fixed(156_000));
    }

    /// DCQCN's paper model: the receiver answers marked packets with a CNP, at most one
    /// per 50 us (at 0, not at 10 or 49.999 us, at 50 us, not for an unmarked packet at
    /// 120 us, at 130 us), and its ACKs echo no mark; the sender cuts its rate at each
    /// CNP (the first halves it).
    #[test]
    fn the_paper_model_sends_a_cnp_at_most_once_per_interval() {
        use crate::transport::cc::{DcqcnConfig, PaperConfig};
        let mut host = Host::new();
        host.stacks.rdma.cc = RdmaCcConfig::Dcqcn(DcqcnConfig::Paper(PaperConfig::default()));
        host.stacks.rdma.notification = host.stacks.rdma.cc.notification();
        let template = Packet::template(0, 0, 7, 0);
        let (mut flow, _, _, _) = host.call(0, |cx| Ends::open(&spec(10_000), template, template, None, cx));
        let mut cnps = Vec::new();
        for (seq, t, ce) in
            [(0, 0, true), (1, 10, true), (2, 49_999, true), (3, 50_000, true), (4, 120_000, false), (5, 130_000, true)]
        {
            let data = Packet { kind: PacketKind::Data, seq, size: 1036, ce, ..template };
            let (_, sent, _, _) = host.call(t * 1000, |cx| flow.on_packet(&data, cx));
            assert!(sent.iter().all(|p| !p.ece), "no echo in the paper model");
            cnps.extend(sent.iter().filter(|p| p.kind == PacketKind::Cnp).map(|_| t));
        }
        assert_eq!(cnps, [0, 50_000, 130_000]);
        let cnp = Packet { kind: PacketKind::Cnp, size: 48, ..template };
        host.call(140_000_000, |cx| flow.on_packet(&cnp, cx));
        assert_eq!(flow.tx.send.rate_bps, 50e9);
        assert_eq!(flow.outcome(&host.stacks).cnps, 1, "the sender counts the CNP it received");
    }

    /// Host `Host::new`'s stacks with IRN's selective repeat and its default timeouts
    /// (100 us below 3 packets in flight, else 320 us).
    fn irn_host() -> Host {
        irn_host_with(recovery::IrnConfig::default())
    }

    fn irn_host_with(irn: recovery::IrnConfig) -> Host {
        let mut sc = Scenario::default();
        sc.rdma.loss_recovery = LossRecoveryConfig::Irn(irn);
        let mut host = Host::new();
        host.stacks = sc.stacks(vec![100_000_000_000; 2]);
        host.stacks.fct_until = FctUntil::Acked;
        host
    }

    /// A 10-packet message sent whole with packet 2 lost: the connection and the
    /// receiver's replies to the other nine, in order.
    fn ten_sent_two_lost(host: &mut Host) -> (Ends, Vec<Packet>) {
        let template = Packet::template(0, 0, 7, 0);
        let (mut flow, _, _, _) = host.call(0, |cx| Ends::open(&spec(10_000), template, template, None, cx));
        let sent: Vec<Packet> = (0..10).map(|i| host.call(i * 100_000, |cx| flow.pull(cx)).0.unwrap()).collect();
        let mut replies = Vec::new();
        for pkt in sent.iter().filter(|p| p.seq != 2) {
            let (_, sent, _, _) = host.call(2_000_000, |cx| flow.on_packet(pkt, cx));
            replies.extend(sent);
        }
        (flow, replies)
    }

    const RTO_LOW: Ps = 100_000_000;
    const RTO_HIGH: Ps = 320_000_000;

    /// IRN, one packet lost of ten (section 3.1's example): the receiver keeps 3 to 9 and
    /// NACKs each with the expected packet 2 and its own number as the SACK; the first
    /// NACK has the sender resend 2, and only 2 (go-back-N would resend 2 to 9); the
    /// later NACKs add nothing to resend; 2's arrival fills the gap and one ACK covers
    /// all ten.
    #[test]
    fn irn_resends_only_the_lost_packet() {
        let mut host = irn_host();
        let (mut flow, replies) = ten_sent_two_lost(&mut host);
        let summary: Vec<(PacketKind, u32, u32)> = replies.iter().map(|p| (p.kind, p.seq, p.sack_start)).collect();
        let nacks: Vec<(PacketKind, u32, u32)> = (3..10).map(|s| (PacketKind::Nack, 2, s)).collect();
        assert_eq!(summary[..2], [(PacketKind::Ack, 1, 0), (PacketKind::Ack, 2, 0)]);
        assert_eq!(summary[2..], nacks[..]);
        for reply in &replies[..3] {
            host.call(3_000_000, |cx| flow.on_packet(reply, cx));
        }
        let resent = host.call(3_000_000, |cx| flow.pull(cx)).0.expect("the lost packet goes again");
        assert_eq!(resent.seq, 2);
        for reply in &replies[3..] {
            let (_, _, paced, _) = host.call(3_100_000, |cx| flow.on_packet(reply, cx));
            assert!(paced.iter().all(Option::is_none), "nothing else is lost: nothing to send");
        }
        let (_, acks, _, _) = host.call(4_000_000, |cx| flow.on_packet(&resent, cx));
        assert_eq!(acks.iter().map(|p| (p.kind, p.seq)).collect::<Vec<_>>(), [(PacketKind::Ack, 10)]);
        let (_, _, _, done) = host.call(5_000_000, |cx| flow.on_packet(&acks[0], cx));
        let outcome = flow.outcome(&host.stacks);
        assert!(done);
        assert_eq!((outcome.retransmits, outcome.timeouts, outcome.delivered_bytes), (1, 0, 10_000));
    }

    /// ConWeave's IRN (`resend = "unsacked"`), the same loss: the first NACK SACKs 3 and
    /// sends the sender back to 2, from where it resends everything not SACKed by then
    /// (2 and 4 to 9, still in flight), then nothing more.
    #[test]
    fn irn_as_conweave_runs_it_resends_all_it_has_not_seen_sacked() {
        let irn = recovery::IrnConfig { resend: recovery::IrnResend::Unsacked, ..Default::default() };
        let mut host = irn_host_with(irn);
        let (mut flow, replies) = ten_sent_two_lost(&mut host);
        for reply in &replies[..3] {
            host.call(3_000_000, |cx| flow.on_packet(reply, cx));
        }
        let mut resent = Vec::new();
        for i in 0..7 {
            let (pkt, _, paced, _) = host.call(3_000_000 + i, |cx| flow.pull(cx));
            resent.push(pkt.expect("a packet to send again").seq);
            assert_eq!(paced.iter().all(Option::is_none), i == 6, "ready for more until 9 is resent");
        }
        assert_eq!(resent, [2, 4, 5, 6, 7, 8, 9]);
    }

    /// IRN's two timeouts. A lost last packet, the rest acknowledged: one packet is in
    /// flight at the last ACK, so the sender times out RTO_low after it and resends it.
    /// Ten packets all lost: RTO_low was armed at the first send, but with three or more
    /// in flight the deadline is RTO_high after it; the timeout resends all ten, in order.
    #[test]
    fn irn_times_out_low_with_few_in_flight_and_high_with_many() {
        let template = Packet::template(0, 0, 7, 0);
        let mut host = irn_host();
        let (mut flow, _, _, _) = host.call(0, |cx| Ends::open(&spec(10_000), template, template, None, cx));
        let sent: Vec<Packet> = (0..10).map(|i| host.call(i * 100_000, |cx| flow.pull(cx)).0.unwrap()).collect();
        let last_ack = 2_000_000;
        for pkt in &sent[..9] {
            let (_, acks, _, _) = host.call(1_000_000, |cx| flow.on_packet(pkt, cx));
            host.call(last_ack, |cx| flow.on_packet(&acks[0], cx));
        }
        assert_eq!(*host.timers.last().unwrap(), last_ack + RTO_LOW);
        host.call(last_ack + RTO_LOW - 1, |cx| flow.on_timer(cx));
        assert_eq!(flow.tx.timeouts, 0);
        host.call(last_ack + RTO_LOW, |cx| flow.on_timer(cx));
        assert_eq!(flow.tx.timeouts, 1);
        assert_eq!(host.call(last_ack + RTO_LOW, |cx| flow.pull(cx)).0.map(|p| p.seq), Some(9));

        let mut host = irn_host();
        let (mut flow, _, _, _) = host.call(0, |cx| Ends::open(&spec(10_000), template, template, None, cx));
        for i in 0..10 {
            host.call(i * 100_000, |cx| flow.pull(cx));
        }
        assert_eq!(host.timers, [RTO_LOW], "armed at the first send, one packet in flight");
        host.call(RTO_LOW, |cx| flow.on_timer(cx));
        assert_eq!(flow.tx.timeouts, 0, "ten in flight: RTO_high applies");
        assert_eq!(*host.timers.last().unwrap(), RTO_HIGH);
        host.call(RTO_HIGH, |cx| flow.on_timer(cx));
        assert_eq!(flow.tx.timeouts, 1);
        let pulls: Vec<(u32, Vec<Option<Ps>>)> = (0..10)
            .map(|_| host.call(RTO_HIGH, |cx| flow.pull(cx)))
            .map(|(p, _, paced, _)| (p.unwrap().seq, paced))
            .collect();
        assert_eq!(pulls.iter().map(|(seq, _)| *seq).collect::<Vec<_>>(), (0..10).collect::<Vec<_>>());
        assert_eq!(pulls[9].1, [None], "nothing more to send after the tenth");
        assert_eq!(flow.outcome(&host.stacks).retransmits, 10);
    }
}
