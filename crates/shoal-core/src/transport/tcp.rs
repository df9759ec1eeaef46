//! The TCP sender and receiver. Sequence numbers count segments of `mss` payload bytes
//! (the last one may be shorter); the receiver sends one cumulative ACK per data packet,
//! echoing the packet's CE mark (ECE) and its send timestamp.

use super::cc::{AnyCc, CcConfig, CongestionControl, Feedback, NewReno, Probe, SendState};
use super::sack::{OutOfOrder, SackBlock, Scoreboard};
use super::Outbox;
use crate::net::{IntHop, Packet, PacketKind};
use crate::sim::Ps;
use crate::transport::config::{PartialAckRto, RestartAfter, RestartWindow, TransportConfig};

/// Transport settings shared by every TCP flow of a run.
#[derive(Clone, Debug)]
pub struct TcpConfig {
    pub mss: u32,
    pub header: u32,
    pub ack_size: u32,
    pub init_cwnd: u32,
    /// 0 = unlimited.
    pub max_cwnd: u64,
    pub rto_min: Ps,
    pub rto_init: Ps,
    pub rto_max: Ps,
    pub dupack_threshold: u32,
    pub ect: bool,
    pub handshake: bool,
    pub cc: CcConfig,
    /// PIAS tagging thresholds in bytes, increasing; empty = off.
    pub pias_thresholds: Vec<u64>,
    /// Receive window until the first data ACK, bytes; 0 = none.
    pub initial_rwnd: u64,
    pub partial_ack_rto: PartialAckRto,
    /// SACK blocks on ACKs and RFC 6675 recovery; otherwise NewReno recovery.
    pub sack: bool,
    /// A new flow takes over an idle connection between the same hosts, if one exists.
    pub reuse_connections: bool,
    pub restart_window: RestartWindow,
    pub restart_after: RestartAfter,
}

impl TcpConfig {
    pub fn from_scenario(t: &TransportConfig) -> Self {
        TcpConfig {
            mss: t.mss,
            header: t.header,
            ack_size: t.ack_size,
            init_cwnd: t.init_cwnd,
            max_cwnd: t.max_cwnd.0,
            rto_min: t.rto_min.0,
            rto_init: t.rto_init.0,
            rto_max: t.rto_max.0,
            dupack_threshold: t.dupack_threshold,
            ect: t.ect(),
            handshake: t.handshake,
            cc: t.cc.clone(),
            pias_thresholds: t.pias_thresholds.iter().map(|b| b.0).collect(),
            initial_rwnd: t.initial_rwnd.0,
            partial_ack_rto: t.partial_ack_rto,
            sack: t.sack,
            reuse_connections: t.reuse_connections,
            restart_window: t.restart_window,
            restart_after: t.restart_after,
        }
    }

    /// Number of segments of a `bytes`-byte flow.
    pub fn segments(&self, bytes: u64) -> u32 {
        bytes.div_ceil(self.mss as u64).min(u32::MAX as u64) as u32
    }

    /// Payload bytes of segment `seg` of a `bytes`-byte flow.
    pub fn payload(&self, bytes: u64, seg: u32) -> u64 {
        (bytes - seg as u64 * self.mss as u64).min(self.mss as u64)
    }

    /// The PIAS tag of a packet sent after `bytes_sent` bytes: the number of thresholds
    /// already reached (0 = highest priority).
    #[inline]
    pub fn pias_priority(&self, bytes_sent: u64) -> u8 {
        self.pias_thresholds.iter().take_while(|&&t| bytes_sent >= t).count() as u8
    }

    /// Payload bytes in segments `from..to`.
    pub fn payload_between(&self, bytes: u64, from: u32, to: u32) -> u64 {
        let end = (to as u64 * self.mss as u64).min(bytes);
        end - (from as u64 * self.mss as u64).min(end)
    }
}

/// Granularity of the RTO estimate (RFC 6298's G).
const CLOCK_GRANULARITY: Ps = 1_000_000; // 1 us

/// What a TCP connection keeps between the flows it carries when connections are reused
/// (`transport.reuse_connections`): its congestion controller's learned state (DCTCP's
/// alpha), its window, ssthresh and RTT estimate, when it last sent data, and its
/// 5-tuple's ECMP hashes (data and ACKs), so that its flows keep its paths.
pub struct IdleConnection {
    cc: AnyCc,
    window: SendState,
    srtt: Option<Ps>,
    rttvar: Ps,
    last_sent: Ps,
    hashes: (u32, u32),
}

impl IdleConnection {
    /// The ECMP hashes of the connection's data packets and of its ACKs.
    pub fn hashes(&self) -> (u32, u32) {
        self.hashes
    }
}

/// A TCP sender with SACK-based (RFC 6675) or NewReno (RFC 6582) loss recovery; window
/// growth and ECN reaction are delegated to its `CongestionControl`.
pub struct TcpSender {
    bytes: u64,
    segments: u32,
    /// Oldest unacknowledged segment.
    pub snd_una: u32,
    /// Next segment to send.
    snd_nxt: u32,
    /// One past the highest segment ever sent.
    high_sent: u32,
    window: SendState,
    cc: AnyCc,
    dupacks: u32,
    in_recovery: bool,
    /// NewReno's "recover", RFC 6675's RecoveryPoint: the loss episode ends when snd_una
    /// reaches it.
    recover: u32,
    /// Partial ACKs seen in the current recovery.
    partial_acks: u32,
    /// What the receiver reported holding above snd_una (SACK only).
    scoreboard: Scoreboard,
    /// RFC 6675's HighRxt + 1: the lowest segment this recovery may still retransmit.
    rxt_next: u32,
    /// This recovery sent its rescue retransmission (RFC 6675, NextSeg rule 4).
    rescued: bool,
    established: bool,
    srtt: Option<Ps>,
    rttvar: Ps,
    backoff: u32,
    /// When the retransmission timer fires, if armed.
    pub deadline: Option<Ps>,
    pub retransmits: u32,
    pub timeouts: u32,
    /// Payload bytes sent so far, retransmissions included (PIAS tags by it).
    bytes_sent: u64,
    /// When the last data segment was sent.
    last_sent: Ps,
    /// Wire bytes the host lets this sender hand to its NIC now (TCP small queues).
    budget: u64,
    /// A send stopped because the budget ran out; resume when the NIC drains.
    pub blocked: bool,
    template: Packet,
}

impl TcpSender {
    /// Its congestion window and its controller's state (`run.series`).
    pub fn probe(&self) -> Probe {
        let mut p = Probe { cwnd_bytes: self.window.cwnd, ..Probe::EMPTY };
        self.cc.probe(&mut p);
        p
    }

    /// `template` carries the flow id, destination, ECMP hash and priority of data packets.
    pub fn new(cfg: &TcpConfig, bytes: u64, template: Packet, cc: AnyCc) -> Self {
        let mss = cfg.mss as f64;
        TcpSender {
            bytes,
            segments: cfg.segments(bytes),
            snd_una: 0,
            snd_nxt: 0,
            high_sent: 0,
            window: SendState::window(cfg.init_cwnd as f64 * mss, f64::INFINITY, mss),
            cc,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            partial_acks: 0,
            scoreboard: Scoreboard::default(),
            rxt_next: 0,
            rescued: false,
            established: !cfg.handshake,
            srtt: None,
            rttvar: 0,
            backoff: 0,
            deadline: None,
            retransmits: 0,
            timeouts: 0,
            bytes_sent: 0,
            last_sent: 0,
            budget: u64::MAX,
            blocked: false,
            template,
        }
    }

    /// A sender for a new flow on an idle, open connection, which needs no handshake. It
    /// keeps the connection's window, unless the connection sent nothing for longer than
    /// `cfg.restart_after` (an RTO, or ns-2's unfloored estimate of one): then the window
    /// restarts at `cfg.restart_window` (RFC 5681's min(initial window, cwnd), or ns-2's
    /// initial window); ssthresh is kept either way.
    pub fn reopen(cfg: &TcpConfig, bytes: u64, template: Packet, mut conn: IdleConnection, now: Ps) -> Self {
        conn.cc.on_new_flow();
        let mut sender = TcpSender::new(cfg, bytes, template, conn.cc);
        sender.srtt = conn.srtt;
        sender.rttvar = conn.rttvar;
        sender.established = true;
        let idle = now.saturating_sub(conn.last_sent);
        let restart_window = sender.window.cwnd;
        sender.window = conn.window;
        let silence = match cfg.restart_after {
            RestartAfter::Rto => sender.rto(cfg),
            RestartAfter::RtoEstimate => sender.rto_estimate().unwrap_or(cfg.rto_init),
        };
        if idle > silence {
            sender.window.cwnd = match cfg.restart_window {
                RestartWindow::Min => sender.window.cwnd.min(restart_window),
                RestartWindow::Initial => restart_window,
            };
        }
        sender
    }

    /// Hands the connection over for the next flow, with the ECMP hash of its ACKs. Only
    /// once every segment is acknowledged: the sender has no further use for its
    /// controller, which becomes a placeholder.
    pub fn release(&mut self, ack_hash: u32) -> IdleConnection {
        debug_assert!(self.done(), "a connection is released only when its flow is acknowledged");
        IdleConnection {
            cc: std::mem::replace(&mut self.cc, AnyCc::NewReno(NewReno)),
            window: self.window,
            srtt: self.srtt,
            rttvar: self.rttvar,
            last_sent: self.last_sent,
            hashes: (self.template.hash, ack_hash),
        }
    }

    /// Every segment has been acknowledged.
    pub fn done(&self) -> bool {
        self.snd_una >= self.segments
    }

    pub fn cwnd(&self) -> f64 {
        self.window.cwnd
    }

    /// Sets how many wire bytes new data may take before the next call (u64::MAX for no
    /// limit). Retransmissions of the oldest segment are always sent.
    pub fn set_budget(&mut self, bytes: u64) {
        self.budget = bytes;
    }

    /// Sends what the window and the budget allow (after the NIC drained).
    pub fn resume(&mut self, cfg: &TcpConfig, now: Ps, out: &mut impl Outbox) {
        if self.established && !self.done() {
            self.send_window(cfg, now, out);
        }
    }

    pub fn start(&mut self, cfg: &TcpConfig, now: Ps, out: &mut impl Outbox) {
        if self.established {
            self.send_window(cfg, now, out);
        } else {
            self.send_syn(cfg, now, out);
        }
    }

    fn send_syn(&mut self, cfg: &TcpConfig, now: Ps, out: &mut impl Outbox) {
        out.push(Packet {
            kind: PacketKind::Syn,
            size: cfg.ack_size,
            seq: 0,
            ect: cfg.ect,
            timestamp: now,
            ..self.template
        });
        self.deadline = Some(now + self.rto(cfg));
    }

    fn rto(&self, cfg: &TcpConfig) -> Ps {
        let base = self.rto_estimate().map_or(cfg.rto_init, |rto| rto.max(cfg.rto_min));
        base.saturating_mul(1u64 << self.backoff.min(30)).min(cfg.rto_max)
    }

    /// RFC 6298's srtt + max(G, 4 rttvar), before the floor and the backoff; none before
    /// the first RTT sample.
    fn rto_estimate(&self) -> Option<Ps> {
        self.srtt.map(|srtt| srtt + (4 * self.rttvar).max(CLOCK_GRANULARITY))
    }

    /// RFC 6298 estimator, fed by echoed timestamps (valid across retransmissions).
    fn rtt_sample(&mut self, rtt: Ps) {
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                self.rttvar = rtt / 2;
            }
            Some(srtt) => {
                self.rttvar = (3 * self.rttvar + srtt.abs_diff(rtt)) / 4;
                self.srtt = Some((7 * srtt + rtt) / 8);
            }
        }
    }

    fn send_segment(&mut self, cfg: &TcpConfig, seg: u32, now: Ps, out: &mut impl Outbox) {
        if seg < self.high_sent {
            self.retransmits += 1;
        }
        self.high_sent = self.high_sent.max(seg + 1);
        let payload = cfg.payload(self.bytes, seg);
        let priority =
            if cfg.pias_thresholds.is_empty() { self.template.priority } else { cfg.pias_priority(self.bytes_sent) };
        self.bytes_sent += payload;
        self.last_sent = now;
        let size = (payload + cfg.header as u64) as u32;
        self.budget = self.budget.saturating_sub(size as u64);
        out.push(Packet {
            kind: PacketKind::Data,
            seq: seg,
            size,
            ect: cfg.ect,
            timestamp: now,
            priority,
            ..self.template
        });
    }

    fn window_segments(&self, cfg: &TcpConfig) -> u32 {
        let mut cwnd = self.window.cwnd;
        if cfg.max_cwnd > 0 {
            cwnd = cwnd.min(cfg.max_cwnd as f64);
        }
        if cfg.initial_rwnd > 0 && self.snd_una == 0 {
            cwnd = cwnd.min(cfg.initial_rwnd as f64);
        }
        ((cwnd / self.window.mss) as u32).max(1)
    }

    fn send_window(&mut self, cfg: &TcpConfig, now: Ps, out: &mut impl Outbox) {
        self.blocked = false;
        if self.in_recovery && cfg.sack {
            self.send_sack_recovery(cfg, now, out);
        } else {
            let window = self.window_segments(cfg);
            while self.snd_nxt < self.segments && self.snd_nxt - self.snd_una < window {
                // After a timeout, go-back-N skips what the receiver has since reported.
                if self.snd_nxt < self.high_sent && self.scoreboard.is_sacked(self.snd_nxt) {
                    self.snd_nxt += 1;
                    continue;
                }
                if self.budget == 0 {
                    self.blocked = true;
                    break;
                }
                self.send_segment(cfg, self.snd_nxt, now, out);
                self.snd_nxt += 1;
            }
        }
        if self.deadline.is_none() && self.snd_nxt > self.snd_una {
            self.deadline = Some(now + self.rto(cfg));
        }
    }

    /// RFC 6675's NextSeg and transmission loop: while the window exceeds the estimate of
    /// segments in flight (`pipe`), send (1) the lowest lost segment not yet retransmitted,
    /// else (2) new data, else (3) the lowest unSACKed segment below the highest SACKed
    /// one, else (4) once per recovery, the highest outstanding segment (rescue).
    /// Retransmissions ignore the TSQ budget; new data waits for it.
    fn send_sack_recovery(&mut self, cfg: &TcpConfig, now: Ps, out: &mut impl Outbox) {
        let window = self.window_segments(cfg);
        loop {
            self.rxt_next = self.rxt_next.max(self.snd_una);
            let lost_below = self.lost_below(cfg);
            if self.pipe(lost_below) >= window {
                return;
            }
            if let Some(seg) = self.scoreboard.first_unsacked(self.rxt_next, lost_below) {
                self.send_segment(cfg, seg, now, out);
                self.rxt_next = seg + 1;
            } else if self.high_sent < self.segments {
                if self.budget == 0 {
                    self.blocked = true;
                    return;
                }
                self.send_segment(cfg, self.high_sent, now, out);
                self.snd_nxt = self.high_sent;
            } else if let Some(seg) = self.scoreboard.first_unsacked(self.rxt_next, self.scoreboard.high_sacked) {
                self.send_segment(cfg, seg, now, out);
                self.rxt_next = seg + 1;
            } else if !self.rescued && self.high_sent > self.rxt_next && !self.scoreboard.is_sacked(self.high_sent - 1)
            {
                self.send_segment(cfg, self.high_sent - 1, now, out);
                self.rescued = true;
            } else {
                return;
            }
        }
    }

    /// RFC 6675's IsLost: an unSACKed segment is deemed lost when at least DupThresh
    /// segments above it are SACKed, i.e. when it lies below the DupThresh-th highest
    /// SACKed segment. Returns that bound (snd_una when nothing is deemed lost).
    fn lost_below(&self, cfg: &TcpConfig) -> u32 {
        self.scoreboard.nth_highest(cfg.dupack_threshold, self.snd_una).unwrap_or(self.snd_una)
    }

    /// RFC 6675's pipe, in segments: each outstanding unSACKed segment counts once unless
    /// deemed lost, and once more if this recovery retransmitted it.
    fn pipe(&self, lost_below: u32) -> u32 {
        self.unsacked_below(self.high_sent) - self.unsacked_below(lost_below)
            + self.unsacked_below(self.rxt_next.max(self.snd_una))
    }

    /// Segments from snd_una up to `to` that the receiver has not SACKed.
    fn unsacked_below(&self, to: u32) -> u32 {
        (to - self.snd_una) - self.scoreboard.count(self.snd_una, to)
    }

    fn enter_recovery(&mut self, cfg: &TcpConfig, now: Ps, out: &mut impl Outbox) {
        self.window.ssthresh = self.cc.on_loss(&self.window, self.flight_bytes());
        self.recover = self.snd_nxt;
        self.in_recovery = true;
        self.partial_acks = 0;
        if cfg.sack {
            // RFC 6675, section 5, step 4: cwnd = ssthresh, retransmit the first segment
            // presumed lost, then let the transmission loop run.
            self.window.cwnd = self.window.ssthresh;
            self.rxt_next = self.snd_una + 1;
            self.rescued = false;
        } else {
            self.window.cwnd = self.window.ssthresh + cfg.dupack_threshold as f64 * self.window.mss;
        }
        self.send_segment(cfg, self.snd_una, now, out);
    }

    fn flight_bytes(&self) -> f64 {
        (self.snd_nxt - self.snd_una) as f64 * self.window.mss
    }

    /// What a timeout halves: the data in flight less what the receiver has SACKed (and,
    /// in SACK recovery, RFC 6675's pipe), as ns-3's `BytesInFlight` at `ReTxTimeout`.
    /// A retransmission lost in SACK recovery holds snd_una while SACKs let new data out,
    /// so the outstanding data can grow to many windows before the timer fires; half of it
    /// would be a slow-start threshold far above any window the path carried.
    fn unsacked_flight_bytes(&self, cfg: &TcpConfig) -> f64 {
        if !cfg.sack {
            return self.flight_bytes();
        }
        let segments =
            if self.in_recovery { self.pipe(self.lost_below(cfg)) } else { self.unsacked_below(self.snd_nxt) };
        segments as f64 * self.window.mss
    }

    /// When the congestion controller wants its timer, if it does.
    #[inline]
    pub fn cc_timer(&self) -> Option<Ps> {
        self.cc.next_timer()
    }

    /// The congestion controller's timer fired: it adjusts the window (or rate), and
    /// what the window now allows is sent.
    pub fn on_cc_timer(&mut self, cfg: &TcpConfig, now: Ps, out: &mut impl Outbox) {
        self.cc.on_timer(&mut self.window, now);
        if self.established && !self.done() && !self.in_recovery {
            self.send_window(cfg, now, out);
        }
    }

    /// Handles an ACK or SYN-ACK addressed to this sender; `telemetry` is what the ACK
    /// carries back of the acknowledged packet's path, if anything.
    pub fn on_ack(
        &mut self,
        cfg: &TcpConfig,
        ack: &Packet,
        telemetry: Option<&[IntHop]>,
        now: Ps,
        out: &mut impl Outbox,
    ) {
        if ack.kind == PacketKind::SynAck {
            if !self.established {
                self.established = true;
                self.rtt_sample(now - ack.timestamp);
                self.backoff = 0;
                self.deadline = None;
                self.send_window(cfg, now, out);
            }
            return;
        }
        if self.done() || !self.established {
            return;
        }
        let ackno = ack.seq;
        if cfg.sack {
            self.scoreboard.mark(SackBlock { start: ack.sack_start, len: ack.sack_len }, self.segments);
        }
        if ackno > self.snd_una {
            self.rtt_sample(now - ack.timestamp);
            self.backoff = 0;
            let acked_bytes = cfg.payload_between(self.bytes, self.snd_una, ackno);
            self.snd_una = ackno;
            self.scoreboard.forget_below(ackno);
            self.snd_nxt = self.snd_nxt.max(ackno);
            let mut restart_timer = true;
            if self.in_recovery {
                if ackno >= self.recover {
                    self.in_recovery = false;
                    self.window.cwnd = self.window.ssthresh;
                } else if cfg.sack {
                    // RFC 6675: a partial ACK just shrinks the pipe; the timer restarts
                    // as for any new data (RFC 6298).
                } else {
                    // Partial ACK: retransmit the next hole, deflate by what was acked.
                    self.send_segment(cfg, self.snd_una, now, out);
                    self.window.cwnd = (self.window.cwnd - acked_bytes as f64 + self.window.mss).max(self.window.mss);
                    self.partial_acks += 1;
                    // RFC 6582's Impatient variant restarts the timer on the first partial
                    // ACK only, so a long run of losses ends in a timeout.
                    restart_timer = cfg.partial_ack_rto == PartialAckRto::Every || self.partial_acks == 1;
                }
            } else {
                let info = Feedback {
                    now,
                    acked_bytes,
                    ece: ack.ece,
                    snd_una: self.snd_una,
                    snd_nxt: self.snd_nxt,
                    rtt: Some(now - ack.timestamp),
                    telemetry,
                };
                self.cc.on_ack(&mut self.window, &info);
            }
            self.dupacks = 0;
            if self.done() {
                self.deadline = None;
                self.scoreboard = Scoreboard::default();
                return;
            }
            if restart_timer || self.deadline.is_none() {
                self.deadline = Some(now + self.rto(cfg));
            }
        } else if ackno == self.snd_una && self.snd_nxt > self.snd_una {
            self.dupacks += 1;
            if self.in_recovery {
                if !cfg.sack {
                    self.window.cwnd += self.window.mss; // NewReno's inflation
                }
            } else if self.snd_una >= self.recover
                && (self.dupacks == cfg.dupack_threshold || (cfg.sack && self.lost_below(cfg) > self.snd_una))
            {
                self.enter_recovery(cfg, now, out);
            }
        }
        self.send_window(cfg, now, out);
    }

    /// The retransmission timer fired (the caller checked `deadline <= now`).
    pub fn on_timeout(&mut self, cfg: &TcpConfig, now: Ps, out: &mut impl Outbox) {
        self.deadline = None;
        if self.done() {
            return;
        }
        self.timeouts += 1;
        self.backoff += 1;
        if !self.established {
            self.retransmits += 1;
            self.send_syn(cfg, now, out);
            return;
        }
        self.window.ssthresh = self.cc.on_loss(&self.window, self.unsacked_flight_bytes(cfg));
        self.cc.on_timeout();
        self.window.cwnd = self.window.mss;
        self.recover = self.high_sent;
        self.in_recovery = false;
        self.dupacks = 0;
        // The scoreboard is kept (as Linux does; RFC 6675, section 5.1, allows it where
        // receivers do not renege, and Shoal's never do): go-back-N skips SACKed segments.
        self.snd_nxt = self.snd_una;
        self.send_window(cfg, now, out);
    }
}

/// A TCP receiver: reassembles segments and acknowledges every data packet.
pub struct TcpReceiver {
    segments: u32,
    /// Next segment expected in order.
    rcv_nxt: u32,
    out_of_order: OutOfOrder,
    /// When the last missing byte arrived.
    pub finished_at: Option<Ps>,
}

impl TcpReceiver {
    pub fn new(cfg: &TcpConfig, bytes: u64) -> Self {
        TcpReceiver {
            segments: cfg.segments(bytes),
            rcv_nxt: 0,
            out_of_order: OutOfOrder::default(),
            finished_at: None,
        }
    }

    /// Segments received in order so far.
    pub fn received_segments(&self) -> u32 {
        self.rcv_nxt
    }

    /// Handles a data packet or SYN; returns the ACK (or SYN-ACK) to send back.
    pub fn on_packet(&mut self, cfg: &TcpConfig, pkt: &Packet, reverse: Packet, now: Ps) -> Packet {
        let reply = Packet { size: cfg.ack_size, ect: cfg.ect, ce: false, timestamp: pkt.timestamp, ..reverse };
        if pkt.kind == PacketKind::Syn {
            return Packet { kind: PacketKind::SynAck, seq: 0, ece: false, ..reply };
        }
        let seg = pkt.seq;
        let mut sack = SackBlock::default();
        if seg == self.rcv_nxt {
            self.rcv_nxt += 1;
            if let Some(end) = self.out_of_order.take_run_at(self.rcv_nxt) {
                self.rcv_nxt = end;
            }
        } else if seg > self.rcv_nxt {
            sack = self.out_of_order.insert(seg);
        }
        if self.rcv_nxt >= self.segments && self.finished_at.is_none() {
            self.finished_at = Some(now);
        }
        Packet {
            kind: PacketKind::Ack,
            seq: self.rcv_nxt,
            ece: pkt.ce,
            sack_start: sack.start,
            sack_len: sack.len,
            ..reply
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc;
    use crate::transport::config::TransportConfig;
    use crate::units::Time;

    /// A connection that finished a flow with window `cwnd`, 30 KB ssthresh and an RTT
    /// estimate of 80 +- 5 us, whose last data left at t = 0.
    fn idle_connection(cfg: &TcpConfig, cwnd: f64) -> IdleConnection {
        let template = Packet::template(0, 1, 0, 0);
        let mut first = TcpSender::new(cfg, 100_000, template, cc::build(&cfg.cc));
        first.window = SendState::window(cwnd, 30_000.0, cfg.mss as f64);
        first.srtt = Some(80_000_000);
        first.rttvar = 5_000_000;
        first.snd_una = first.segments;
        first.release(0)
    }

    /// RFC 5681, section 4.1: a connection idle for longer than an RTO restarts its window
    /// at min(IW, cwnd); a shorter pause keeps the window. Either way it keeps ssthresh
    /// and its RTT estimate and needs no handshake.
    #[test]
    fn a_reopened_connection_restarts_its_window_only_after_an_rto_of_idleness() {
        let rto: Ps = 1_000_000_000; // rto_min, above srtt + 4 rttvar = 100 us
        let t = TransportConfig { init_cwnd: 10, handshake: true, rto_min: Time(rto), ..Default::default() };
        let cfg = TcpConfig::from_scenario(&t);
        let iw = 10.0 * cfg.mss as f64;
        let template = Packet::template(0, 1, 0, 0);
        let reopen = |cwnd: f64, at: Ps| TcpSender::reopen(&cfg, 50_000, template, idle_connection(&cfg, cwnd), at);

        let after_long_idle = reopen(80_000.0, rto + 1);
        assert_eq!(after_long_idle.window.cwnd, iw);
        assert_eq!(after_long_idle.window.ssthresh, 30_000.0);
        assert_eq!(
            (after_long_idle.srtt, after_long_idle.rttvar, after_long_idle.established),
            (Some(80_000_000), 5_000_000, true)
        );
        assert_eq!(reopen(80_000.0, rto / 2).window.cwnd, 80_000.0, "a short pause keeps the window");
        assert_eq!(reopen(3_000.0, rto + 1).window.cwnd, 3_000.0, "RW = min(IW, cwnd)");
    }

    /// ns-2's `slow_start_restart_` (`slowdown(CLOSE_CWND_INIT)`: cwnd_ = windowInit_)
    /// raises a window smaller than the initial one back to it after an RTO of silence,
    /// and lowers a larger one; a shorter pause keeps either.
    #[test]
    fn an_ns2_restart_returns_to_the_initial_window_from_either_side() {
        let rto: Ps = 1_000_000_000;
        let t = TransportConfig {
            init_cwnd: 10,
            handshake: true,
            rto_min: Time(rto),
            restart_window: RestartWindow::Initial,
            ..Default::default()
        };
        let cfg = TcpConfig::from_scenario(&t);
        let iw = 10.0 * cfg.mss as f64;
        let template = Packet::template(0, 1, 0, 0);
        let reopen = |cwnd: f64, at: Ps| TcpSender::reopen(&cfg, 50_000, template, idle_connection(&cfg, cwnd), at);
        assert_eq!(reopen(3_000.0, rto + 1).window.cwnd, iw);
        assert_eq!(reopen(80_000.0, rto + 1).window.cwnd, iw);
        assert_eq!(reopen(3_000.0, rto / 2).window.cwnd, 3_000.0);
        assert_eq!(reopen(3_000.0, rto + 1).window.ssthresh, 30_000.0, "ssthresh is kept");
    }

    /// ns-2 compares the silence with the RTO estimate before its floor: with an 80 +- 5 us
    /// estimate (100 us) and a 1 ms rto_min, 150 us of silence restarts the window under
    /// `restart_after = "rto_estimate"` but not under the RFC's full RTO.
    #[test]
    fn an_ns2_restart_needs_only_the_unfloored_rto_of_silence() {
        let rto_min: Ps = 1_000_000_000;
        let restart = |after: RestartAfter, idle: Ps| {
            let t = TransportConfig {
                init_cwnd: 10,
                handshake: true,
                rto_min: Time(rto_min),
                restart_window: RestartWindow::Initial,
                restart_after: after,
                ..Default::default()
            };
            let cfg = TcpConfig::from_scenario(&t);
            let template = Packet::template(0, 1, 0, 0);
            TcpSender::reopen(&cfg, 50_000, template, idle_connection(&cfg, 3_000.0), idle).window.cwnd
        };
        let iw = 10.0 * TcpConfig::from_scenario(&TransportConfig::default()).mss as f64;
        assert_eq!(restart(RestartAfter::RtoEstimate, 150_000_000), iw);
        assert_eq!(restart(RestartAfter::RtoEstimate, 90_000_000), 3_000.0, "within the estimate");
        assert_eq!(restart(RestartAfter::Rto, 150_000_000), 3_000.0, "within rto_min");
        assert_eq!(restart(RestartAfter::Rto, rto_min + 1), iw);
    }

    /// Runs one flow through a lossless, reordering-free path in round trips: the packets
    /// one round sends are delivered (except the first transmission of each segment in
    /// `drop`), the receiver's ACKs go back in order, and what the sender sends in response
    /// makes the next round. Returns, per round, the retransmitted segments; `None` if
    /// the sender stalled (only a timeout could go on).
    fn rounds(sack: bool, segments: u32, init_cwnd: u32, drop: &[u32]) -> Option<Vec<Vec<u32>>> {
        let t = TransportConfig { cc: CcConfig::NewReno(Default::default()), init_cwnd, sack, ..Default::default() };
        let cfg = TcpConfig::from_scenario(&t);
        let bytes = segments as u64 * cfg.mss as u64;
        let template = Packet::template(0, 1, 0, 0);
        let mut sender = TcpSender::new(&cfg, bytes, template, cc::build(&cfg.cc));
        let mut receiver = TcpReceiver::new(&cfg, bytes);
        let mut in_flight: Vec<Packet> = Vec::new();
        sender.start(&cfg, 0, &mut in_flight);
        let mut sent_once = std::collections::HashSet::new();
        let mut log = Vec::new();
        for round in 1..100u64 {
            let now = round * 1_000_000;
            let mut retransmitted = Vec::new();
            let mut next = Vec::new();
            for pkt in in_flight.drain(..) {
                if !sent_once.insert(pkt.seq) {
                    retransmitted.push(pkt.seq);
                } else if drop.contains(&pkt.seq) {
                    continue;
                }
                let ack = receiver.on_packet(&cfg, &pkt, template, now);
                sender.on_ack(&cfg, &ack, None, now, &mut next);
            }
            log.push(retransmitted);
            if sender.done() {
                return Some(log);
            }
            if next.is_empty() {
                return None;
            }
            in_flight = next;
        }
        None
    }

    #[test]
    fn sack_repairs_every_hole_of_a_window_in_one_round_trip() {
        // 20 segments in flight, three non-adjacent losses. RFC 6675: every hole is deemed
        // lost once three segments above it are SACKed, so all three are retransmitted in
        // the round trip that detects them, each once.
        let log = rounds(true, 60, 20, &[3, 7, 11]).expect("SACK recovery needs no timeout");
        let retransmitted: Vec<u32> = log.concat();
        assert_eq!(retransmitted, vec![3, 7, 11]);
        assert_eq!(log[1], vec![3, 7, 11], "all holes repaired in the round after the loss: {log:?}");
        // A lossless transfer takes 2 rounds (20 then 40 segments in slow start); the
        // losses cost the recovery round and the halved window.
        assert!(log.len() <= 5, "{log:?}");
    }

    #[test]
    fn newreno_repairs_one_hole_per_round_trip() {
        let log = rounds(false, 60, 20, &[3, 7, 11]).expect("NewReno recovery needs no timeout here");
        let holes: Vec<Vec<u32>> = log.into_iter().filter(|r| !r.is_empty()).collect();
        assert_eq!(holes, vec![vec![3], vec![7], vec![11]]);
    }

    #[test]
    fn sack_loses_the_last_segments_without_a_timeout_when_enough_follow() {
        // A lost tail with fewer than three segments behind it cannot be detected by
        // duplicate ACKs; with three behind, it can.
        assert!(rounds(true, 20, 20, &[16]).is_some());
        assert!(rounds(true, 20, 20, &[18]).is_none());
    }
}
