//! End-host transports, each flow in two ends behind two traits: its `Sender` at the
//! source host and its `Receiver` at the destination. The ends talk only through packets
//! (a packet's kind says which end it is for: `PacketKind::is_forward`), so that they may
//! live apart. The engine hands each end the packets that reach its host, and the sender
//! its timer and its NIC's drain notifications and pulls; it carries out what an end asks
//! for through `HostCx`.
//!
//! The transports: TCP (`tcp_flow`, built on the sender and receiver in `tcp` and the
//! congestion controllers in `cc`), constant-rate UDP (`udp`) and RDMA (`rdma`).

pub mod cc;
pub mod config;
pub mod rdma;
pub mod sack;
mod tcp;
mod tcp_flow;
mod traced;
mod udp;

pub use cc::{CongestionControl, Probe};
pub use rdma::{RdmaFlow, RdmaReceiver, RdmaSender, RdmaSettings};
pub use tcp::{IdleConnection, TcpConfig, TcpReceiver, TcpSender};
pub use tcp_flow::{TcpFlow, TcpFlowReceiver, TcpFlowSender};
pub use traced::{SeriesRow, Traced};
pub use udp::{UdpFlow, UdpReceiver, UdpSender, UdpSource};

use crate::config::run::FctUntil;
use crate::net::{ExtStore, Packet};
use crate::sim::{serialization, Ps};
use crate::transport::config::TransportConfig;
use crate::workload::{FlowKind, FlowSpec, ENDLESS};
use rustc_hash::FxHashMap;

/// What a transport asks of the world during one call, carried out in order.
#[derive(Clone, Copy, Debug)]
pub enum HostAction {
    /// Hand a packet to the NIC of the host the packet leaves from.
    Send(Packet),
    /// Call the flow's `on_timer` at this time. A flow has one pending timer: a request
    /// later than the pending one is remembered by the transport, which asks again when
    /// the earlier one fires.
    Timer(Ps),
    /// As `Timer`, for a sender that can do nothing but wait for replies that may never
    /// come: the timer does not keep the run going. Once nothing but such timers (and
    /// observations) is left to happen, the run ends without them.
    IdleTimer(Ps),
    /// The flow is paced by its NIC: the NIC may `pull` its next packet, of priority
    /// `priority`, from `at` on (`None`: it has nothing to send).
    Pace { at: Option<Ps>, priority: u8 },
    /// The receiver has come to hold every byte of the flow, whatever the completion rule
    /// (`Stacks::fct_until`) says: what a collective's next step waits for.
    Delivered,
}

/// Where a sender puts the packets it sends.
pub trait Outbox {
    fn push(&mut self, pkt: Packet);
}

impl Outbox for Vec<Packet> {
    #[inline]
    fn push(&mut self, pkt: Packet) {
        Vec::push(self, pkt);
    }
}

impl Outbox for Vec<HostAction> {
    #[inline]
    fn push(&mut self, pkt: Packet) {
        Vec::push(self, HostAction::Send(pkt));
    }
}

/// The per-call context of a transport.
pub struct HostCx<'a> {
    pub now: Ps,
    pub stacks: &'a mut Stacks,
    pub actions: &'a mut Vec<HostAction>,
    /// The side table: the payloads of packets received (released after the call) and
    /// of packets sent (owned by them from then on).
    pub exts: &'a mut ExtStore,
    /// Data bytes of this flow waiting in its sender's NIC queue.
    pub nic_bytes: u64,
    /// Set by the transport when the flow completes (by its kind's completion rule).
    pub finished: bool,
}

impl<'a> HostCx<'a> {
    /// A call's context at `now`: `nic_bytes` of the flow wait in its sender's NIC queue.
    pub fn new(
        now: Ps,
        stacks: &'a mut Stacks,
        actions: &'a mut Vec<HostAction>,
        exts: &'a mut ExtStore,
        nic_bytes: u64,
    ) -> Self {
        HostCx { now, stacks, actions, exts, nic_bytes, finished: false }
    }

    #[inline]
    pub fn send(&mut self, pkt: Packet) {
        self.actions.push(HostAction::Send(pkt));
    }

    /// Tells the engine that the receiver holds every byte of the flow now
    /// (`HostAction::Delivered`).
    pub fn delivered(&mut self) {
        self.actions.push(HostAction::Delivered);
    }

    #[inline]
    pub fn set_timer(&mut self, at: Ps) {
        self.actions.push(HostAction::Timer(at));
    }

    #[inline]
    pub fn set_idle_timer(&mut self, at: Ps) {
        self.actions.push(HostAction::IdleTimer(at));
    }

    #[inline]
    pub fn pace(&mut self, at: Option<Ps>, priority: u8) {
        self.actions.push(HostAction::Pace { at, priority });
    }
}

/// The sending end of a flow, at its source host: it sends the data (queued at its NIC,
/// or pulled by the NIC when it paces itself), hears the replies (ACKs, NACKs, congestion
/// notifications) and owns the flow's timer.
pub trait Sender {
    /// A reply of this flow reached the source host.
    fn on_packet(&mut self, pkt: &Packet, cx: &mut HostCx);
    /// The flow's timer fired.
    fn on_timer(&mut self, cx: &mut HostCx);
    /// One of the flow's data packets left its NIC (called only for senders that
    /// `want_drain_notices`). Packets sent from here join the NIC queue behind those
    /// already there.
    fn on_nic_drained(&mut self, _cx: &mut HostCx) {}
    /// Whether the sender wants `on_nic_drained`; asked once, when the flow starts.
    fn wants_drain_notices(&self) -> bool {
        false
    }
    /// The NIC takes the next packet of a sender that paced itself (`HostCx::pace`) and
    /// whose time has come; the packet goes on the wire at once. The sender says when its
    /// next one may go.
    fn pull(&mut self, _cx: &mut HostCx) -> Option<Packet> {
        None
    }
    /// What the sender knows of the flow's results.
    fn outcome(&self, stacks: &Stacks) -> Outcome;
    /// Whether a timer could still make it act: `on_timer` of a sender that says no does
    /// nothing, so a timer event pending for it need not be waited for.
    fn wants_timer(&self) -> bool {
        true
    }
    /// Its congestion state now (`run.series`).
    fn probe(&self) -> Probe {
        Probe::EMPTY
    }
}

/// The receiving end of a flow, at its destination host: it hears the data and answers
/// with packets alone. It has no timer.
pub trait Receiver {
    /// A data packet (or handshake) of this flow reached the destination host.
    fn on_packet(&mut self, pkt: &Packet, cx: &mut HostCx);
    /// What the receiver knows of the flow's results.
    fn outcome(&self, stacks: &Stacks) -> Outcome;
}

/// A flow's results, as far as its transport knows them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// When the flow completed, if it did.
    pub finished_at: Option<Ps>,
    pub retransmits: u32,
    pub timeouts: u32,
    /// Congestion notifications the sender received: CNPs, or ACKs and NACKs that echo
    /// a mark, by how the congestion control is told (RDMA only).
    pub cnps: u32,
    /// Payload bytes delivered to the receiver (in order, for a stream).
    pub delivered_bytes: u64,
}

impl Outcome {
    /// The flow's results from what each of its ends knows (each reports what it owns
    /// and leaves the rest at its default).
    pub fn merge(self, other: Outcome) -> Outcome {
        Outcome {
            finished_at: self.finished_at.or(other.finished_at),
            retransmits: self.retransmits + other.retransmits,
            timeouts: self.timeouts + other.timeouts,
            cnps: self.cnps + other.cnps,
            delivered_bytes: self.delivered_bytes + other.delivered_bytes,
        }
    }
}

/// The one-way path of a flow: the propagation delays of its links added up, and their
/// rates in path order (the sender's link first).
pub struct PathInfo {
    pub delay: Ps,
    pub rates: Vec<u64>,
}

/// How a transport frames a message of a flow that completes: what its ideal FCT is
/// computed from.
pub struct Framing {
    pub packets: u32,
    /// Payload bytes of the first packet.
    pub first_payload: u64,
    /// Header bytes per data packet.
    pub header: u32,
    pub ack_size: u32,
    /// A SYN / SYN-ACK round trip comes first.
    pub handshake: bool,
}

/// A transport: how a flow of its kind opens, and whether and how its flows complete.
pub trait TransportKind {
    type Sender: Sender;
    type Receiver: Receiver;
    /// Starts the flow `spec` at `cx.now`, at its source host; `forward` and `reverse`
    /// are the templates of its packets in each direction (ids, ECMP hash, priority);
    /// `path` is the flow's base path, given exactly when `needs_path` says so. The
    /// receiving end is made here too, from what the source knows when it opens (a reused
    /// connection's paths, say), as a real connection's first packet tells its receiver;
    /// it reaches the destination host before any packet of the flow does, and acts only
    /// on packets.
    fn open(
        spec: &FlowSpec,
        forward: Packet,
        reverse: Packet,
        path: Option<&PathInfo>,
        cx: &mut HostCx,
    ) -> (Self::Sender, Self::Receiver);
    /// Whether `open` needs the flow's path (asked at every flow start: a path costs a
    /// walk through the routes).
    fn needs_path(_stacks: &Stacks) -> bool {
        false
    }
    /// Its flows have a completion time (a datagram flow has none).
    const COMPLETES: bool;
    /// The framing of a `bytes`-byte message (asked only of transports that complete).
    fn framing(_stacks: &Stacks, _bytes: u64) -> Framing {
        unreachable!("only transports whose flows complete are framed")
    }
}

/// The transport registry: a transport is one file implementing `TransportKind`, `Sender`
/// and `Receiver`, and one line here naming its `FlowKind` variant (the workload's
/// flows of that kind) and the flow table's `kind` for it. This generates `AnySender` and
/// `AnyReceiver` (static dispatch), `open`, and what the engine asks by kind.
macro_rules! transports {
    ($( $name:literal => $Variant:ident($Kind:ty), )+) => {
        /// Every transport's sending end, by static dispatch. TCP's variant is the large
        /// one; boxing it measured no faster and 2 MiB heavier at 20,000 flows, so it
        /// stays inline.
        #[allow(clippy::large_enum_variant)]
        pub enum AnySender {
            $( $Variant(<$Kind as TransportKind>::Sender), )+
            /// A sender of any kind whose state is recorded over time (`run.series`).
            Traced(Box<Traced>),
        }

        /// Every transport's receiving end, by static dispatch.
        pub enum AnyReceiver {
            $( $Variant(<$Kind as TransportKind>::Receiver), )+
        }

        crate::registry::registry!(@impl Sender for AnySender [$($Variant)+ Traced] {
            mut fn on_packet(pkt: &Packet, cx: &mut HostCx);
            mut fn on_timer(cx: &mut HostCx);
            mut fn on_nic_drained(cx: &mut HostCx);
            ref fn wants_drain_notices() -> bool;
            mut fn pull(cx: &mut HostCx) -> Option<Packet>;
            ref fn outcome(stacks: &Stacks) -> Outcome;
            ref fn wants_timer() -> bool;
            ref fn probe() -> Probe;
        });

        crate::registry::registry!(@impl Receiver for AnyReceiver [$($Variant)+] {
            mut fn on_packet(pkt: &Packet, cx: &mut HostCx);
            ref fn outcome(stacks: &Stacks) -> Outcome;
        });

        /// Starts the flow `spec` with the transport of its kind: its two ends
        /// (`TransportKind::open`).
        pub fn open(
            spec: &FlowSpec,
            forward: Packet,
            reverse: Packet,
            path: Option<&PathInfo>,
            cx: &mut HostCx,
        ) -> (AnySender, AnyReceiver) {
            match spec.kind {
                $( FlowKind::$Variant { .. } => {
                    let (sender, receiver) = <$Kind>::open(spec, forward, reverse, path, cx);
                    (AnySender::$Variant(sender), AnyReceiver::$Variant(receiver))
                } )+
            }
        }

        impl FlowKind {
            /// Every transport's name, and whether its flows have a completion time.
            pub const TRANSPORTS: &'static [(&'static str, bool)] =
                &[$( ($name, <$Kind as TransportKind>::COMPLETES), )+];

            /// The transport's name (the `kind` column of the flow table).
            pub fn name(self) -> &'static str {
                match self {
                    $( FlowKind::$Variant { .. } => $name, )+
                }
            }

            /// Whether a flow of this kind needs its path to open (`TransportKind::needs_path`).
            pub fn needs_path(self, stacks: &Stacks) -> bool {
                match self {
                    $( FlowKind::$Variant { .. } => <$Kind as TransportKind>::needs_path(stacks), )+
                }
            }

            /// Whether flows of this kind have a completion time.
            pub fn completes(self) -> bool {
                match self {
                    $( FlowKind::$Variant { .. } => <$Kind as TransportKind>::COMPLETES, )+
                }
            }

            fn framing(self, stacks: &Stacks, bytes: u64) -> Framing {
                match self {
                    $( FlowKind::$Variant { .. } => <$Kind as TransportKind>::framing(stacks, bytes), )+
                }
            }
        }
    };
}

transports! {
    "tcp" => Tcp(TcpFlow),
    "udp" => Udp(UdpFlow),
    "rdma" => Rdma(RdmaFlow),
}

/// What all flows of a run share, per transport: TCP's settings, its completion rule,
/// TCP small queues and the idle connections that later flows may reuse.
pub struct Stacks {
    pub tcp: TcpConfig,
    pub rdma: RdmaSettings,
    pub fct_until: FctUntil,
    /// TCP small queues: the bytes a flow may have in its NIC queue; 0 = unlimited.
    pub tsq: u64,
    /// Open connections without a flow, by (sender, receiver) host.
    pub idle_connections: FxHashMap<(u32, u32), Vec<IdleConnection>>,
}

impl Stacks {
    /// The stacks of a run's hosts: TCP's settings (`transport`), RDMA's, the completion
    /// rule and TCP small queues' limit per flow in bytes (0 = unlimited).
    pub fn new(transport: &TransportConfig, rdma: RdmaSettings, fct_until: FctUntil, tsq: u64) -> Stacks {
        Stacks {
            tcp: TcpConfig::from_scenario(transport),
            rdma,
            fct_until,
            tsq,
            idle_connections: FxHashMap::default(),
        }
    }

    /// The ideal FCT of a TCP or RDMA flow: the path's base one-way latency for the flow's
    /// first packet (every link's propagation delay plus its serialization at every hop),
    /// plus the serialization of the rest of the flow's bytes, headers included, at the
    /// host link rate; plus, with TCP's handshake, one SYN / SYN-ACK round trip; plus, when
    /// flows end at the last ACK, one ACK trip. It is exactly the FCT of the flow alone on an
    /// idle network with an unlimited window whenever the host link is the slowest on
    /// the path. Flows without a completion time have none (and `path`, the flow's path,
    /// is not asked for).
    pub fn ideal_fct(&self, spec: &FlowSpec, path: impl FnOnce() -> PathInfo) -> Option<Ps> {
        if !spec.kind.completes() || spec.bytes == ENDLESS {
            return None;
        }
        let path = path();
        let Framing { packets, first_payload, header, ack_size, handshake } = spec.kind.framing(self, spec.bytes);
        let wire = spec.bytes + packets as u64 * header as u64;
        let first = first_payload + header as u64;
        let mut t = path.delay + path.rates.iter().map(|&r| serialization(first, r)).sum::<Ps>();
        t += serialization(wire - first, path.rates[0]);
        let ack_trip = path.delay + path.rates.iter().map(|&r| serialization(ack_size as u64, r)).sum::<Ps>();
        if handshake {
            t += 2 * ack_trip;
        }
        if self.fct_until == FctUntil::Acked {
            t += ack_trip;
        }
        Some(t)
    }
}
