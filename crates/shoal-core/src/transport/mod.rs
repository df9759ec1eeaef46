//! End-host transports behind one trait. A flow's transport holds both of its ends (the
//! sender at the source host, the receiver at the destination); the engine hands it the
//! packets that reach either host, its timer and its NIC's drain notifications, and
//! carries out what it asks for through `HostCx`.
//!
//! The transports: TCP (`tcp_flow`, built on the sender and receiver in `tcp` and the
//! congestion controllers in `cc`) and constant-rate UDP (`udp`).

pub mod cc;
pub mod config;
mod rdma;
pub mod sack;
mod tcp;
mod tcp_flow;
mod udp;

pub use cc::CongestionControl;
pub use rdma::{RdmaFlow, RdmaSettings};
pub use tcp::{IdleConnection, TcpConfig, TcpReceiver, TcpSender};
pub use tcp_flow::TcpFlow;
pub use udp::{UdpFlow, UdpSource};

use crate::config::run::FctUntil;
use crate::net::{ExtStore, Packet};
use crate::sim::{serialization, Ps};
use crate::stats::Counters;
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
    /// The flow is paced by its NIC: the NIC may `pull` its next packet, of priority
    /// `priority`, from `at` on (`None`: it has nothing to send).
    Pace { at: Option<Ps>, priority: u8 },
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
    /// The run's counters, read (by `network_idle`) only where a transport asks.
    pub counters: &'a Counters,
}

impl HostCx<'_> {
    /// No packet is anywhere in the network (queued or on a wire): nothing reaches a
    /// host again until some host sends. Read off conservation: every packet created is
    /// delivered, dropped or in the network.
    pub fn network_idle(&self) -> bool {
        let c = self.counters;
        c.created == c.delivered + c.total_dropped()
    }

    #[inline]
    pub fn send(&mut self, pkt: Packet) {
        self.actions.push(HostAction::Send(pkt));
    }

    #[inline]
    pub fn set_timer(&mut self, at: Ps) {
        self.actions.push(HostAction::Timer(at));
    }

    #[inline]
    pub fn pace(&mut self, at: Option<Ps>, priority: u8) {
        self.actions.push(HostAction::Pace { at, priority });
    }
}

/// A flow's transport.
pub trait Transport {
    /// A packet of this flow reached one of its hosts.
    fn on_packet(&mut self, pkt: &Packet, cx: &mut HostCx);
    /// The flow's timer fired.
    fn on_timer(&mut self, cx: &mut HostCx);
    /// One of the flow's data packets left its sender's NIC (called only for transports
    /// that `want_drain_notices`). Packets sent from here join the NIC queue behind those
    /// already there.
    fn on_nic_drained(&mut self, _cx: &mut HostCx) {}
    /// Whether the flow wants `on_nic_drained`; asked once, when the flow starts.
    fn wants_drain_notices(&self) -> bool {
        false
    }
    /// The NIC takes the next packet of a flow that paced itself (`HostCx::pace`) and
    /// whose time has come; the packet goes on the wire at once. The flow says when its
    /// next one may go.
    fn pull(&mut self, _cx: &mut HostCx) -> Option<Packet> {
        None
    }
    /// What the flow achieved so far.
    fn outcome(&self, stacks: &Stacks) -> Outcome;
    /// Whether a timer could still make it act: `on_timer` of a flow that says no does
    /// nothing, so a timer event pending for it need not be waited for.
    fn wants_timer(&self) -> bool {
        true
    }
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

/// What the engine needs of a transport besides its calls: how a flow of its kind opens,
/// and whether and how its flows complete.
pub trait TransportKind: Transport + Sized {
    /// Starts the flow `spec` at `cx.now`; `forward` and `reverse` are the templates of
    /// its packets in each direction (ids, ECMP hash, priority); `path` is the flow's base
    /// path, given exactly when `needs_path` says so.
    fn open(spec: &FlowSpec, forward: Packet, reverse: Packet, path: Option<&PathInfo>, cx: &mut HostCx) -> Self;
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

/// The transport registry: a transport is one file implementing `Transport` and
/// `TransportKind`, and one line here naming its `FlowKind` variant (the workload's
/// flows of that kind) and the flow table's `kind` for it. This generates `AnyTransport`
/// (static dispatch) and what the engine asks by kind.
macro_rules! transports {
    ($( $name:literal => $Variant:ident($Flow:ty), )+) => {
        /// Every transport of a run, by static dispatch. TCP's variant is the large one;
        /// boxing it measured no faster and 2 MiB heavier at 20,000 flows, so it stays
        /// inline.
        #[allow(clippy::large_enum_variant)]
        pub enum AnyTransport {
            $( $Variant($Flow), )+
        }

        crate::registry::registry!(@impl Transport for AnyTransport [$($Variant)+] {
            mut fn on_packet(pkt: &Packet, cx: &mut HostCx);
            mut fn on_timer(cx: &mut HostCx);
            mut fn on_nic_drained(cx: &mut HostCx);
            ref fn wants_drain_notices() -> bool;
            mut fn pull(cx: &mut HostCx) -> Option<Packet>;
            ref fn outcome(stacks: &Stacks) -> Outcome;
            ref fn wants_timer() -> bool;
        });

        impl AnyTransport {
            /// Starts the flow `spec` with the transport of its kind.
            pub fn open(
                spec: &FlowSpec,
                forward: Packet,
                reverse: Packet,
                path: Option<&PathInfo>,
                cx: &mut HostCx,
            ) -> AnyTransport {
                match spec.kind {
                    $( FlowKind::$Variant { .. } => AnyTransport::$Variant(<$Flow>::open(spec, forward, reverse, path, cx)), )+
                }
            }
        }

        impl FlowKind {
            /// Every transport's name, and whether its flows have a completion time.
            pub const TRANSPORTS: &'static [(&'static str, bool)] =
                &[$( ($name, <$Flow as TransportKind>::COMPLETES), )+];

            /// The transport's name (the `kind` column of the flow table).
            pub fn name(self) -> &'static str {
                match self {
                    $( FlowKind::$Variant { .. } => $name, )+
                }
            }

            /// Whether a flow of this kind needs its path to open (`TransportKind::needs_path`).
            pub fn needs_path(self, stacks: &Stacks) -> bool {
                match self {
                    $( FlowKind::$Variant { .. } => <$Flow as TransportKind>::needs_path(stacks), )+
                }
            }

            /// Whether flows of this kind have a completion time.
            pub fn completes(self) -> bool {
                match self {
                    $( FlowKind::$Variant { .. } => <$Flow as TransportKind>::COMPLETES, )+
                }
            }

            fn framing(self, stacks: &Stacks, bytes: u64) -> Framing {
                match self {
                    $( FlowKind::$Variant { .. } => <$Flow as TransportKind>::framing(stacks, bytes), )+
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
