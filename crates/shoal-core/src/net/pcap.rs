//! Packets as a capture file that Wireshark opens (`run.pcap`, `trace.pcap`): pcap with
//! nanosecond timestamps, each packet's headers synthesized from what the simulation
//! knows of it: Ethernet, IPv4 (the ECN bits as marked), then TCP (sequence numbers in
//! bytes), UDP, or RoCEv2's UDP port 4791 with an InfiniBand BTH (the packet sequence
//! number) and, for ACKs and NACKs, an AETH. Pause frames are MAC control frames: a
//! class frame is 802.1Qbb PFC, a port-level one 802.3x PAUSE. Payloads are zeros, as
//! long as the packet is on the wire.

use super::pause::{read_pause_frame, Pause, PORT_LEVEL};
use super::{Packet, PacketKind};
use crate::sim::Ps;

/// The transport of the flow a packet belongs to, as the headers show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// TCP, whose segments carry `mss` payload bytes (sequence numbers count bytes).
    Tcp { mss: u32 },
    /// RoCEv2: UDP to port 4791 and a BTH.
    Rdma,
    /// Plain UDP.
    Udp,
}

/// The ends of a packet: the hosts it goes between and its flow's connection number.
#[derive(Clone, Copy, Debug)]
pub struct Ends {
    pub src_host: u32,
    pub dst_host: u32,
    /// The flow's index, which numbers its ports (TCP, UDP) or queue pair (RDMA).
    pub flow: u32,
}

const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;
/// The IEEE 802 local experimental ethertype: BFC's filter frames, which no standard
/// frame carries.
const ETHERTYPE_EXPERIMENTAL: u16 = 0x88b5;
const ROCE_PORT: u16 = 4791;
const PFC_DESTINATION: [u8; 6] = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x01];

/// A locally administered MAC address for host `h` (switches forward frames unchanged).
fn host_mac(h: u32) -> [u8; 6] {
    let b = h.to_be_bytes();
    [0x02, 0x00, b[0], b[1], b[2], b[3]]
}

/// Host `h`'s IPv4 address, in 10.0.0.0/8.
fn host_ip(h: u32) -> [u8; 4] {
    let b = (h + 1).to_be_bytes();
    [10, b[1], b[2], b[3]]
}

/// The bytes after the Ethernet and IPv4 headers that `pkt`'s own headers take, and
/// the trailer after its payload (RoCEv2's ICRC).
fn transport_lengths(pkt: &Packet, framing: Framing) -> (u32, u32) {
    match framing {
        Framing::Tcp { .. } => (20, 0),
        Framing::Udp => (8, 0),
        Framing::Rdma if matches!(pkt.kind, PacketKind::Ack | PacketKind::Nack) => (8 + 12 + 4, 4),
        Framing::Rdma => (8 + 12, 4),
    }
}

/// The frame of `pkt` (going between `ends`, of a flow framed as `framing`), appended to
/// `out`: its headers, then zeros for its payload, as long as the packet is on the wire
/// (or its headers, for a reply smaller than they are).
pub fn frame(pkt: &Packet, ends: Ends, framing: Framing, out: &mut Vec<u8>) {
    if pkt.kind == PacketKind::Control {
        return control_frame(pkt, out);
    }
    let start = out.len();
    let (transport, trailer) = transport_lengths(pkt, framing);
    let len = pkt.size.max(14 + 20 + transport + trailer).min(0xffff + 14);
    let forward = pkt.kind.is_forward();
    let (src, dst) = if forward { (ends.src_host, ends.dst_host) } else { (ends.dst_host, ends.src_host) };
    out.extend(host_mac(dst));
    out.extend(host_mac(src));
    out.extend(ETHERTYPE_IPV4.to_be_bytes());
    let ecn = match (pkt.ce, pkt.ect) {
        (true, _) => 0b11,
        (false, true) => 0b10,
        (false, false) => 0,
    };
    let protocol = if matches!(framing, Framing::Tcp { .. }) { 6 } else { 17 };
    // What a packet without payload has beyond its headers is Ethernet padding.
    let ip_len = match pkt.kind.carries_payload() {
        true => (len - 14) as u16,
        false => (20 + transport + trailer) as u16,
    };
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[1] = (pkt.priority.min(63) << 2) | ecn;
    ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
    ip[6] = 0x40; // don't fragment
    ip[8] = 64;
    ip[9] = protocol;
    ip[12..16].copy_from_slice(&host_ip(src));
    ip[16..20].copy_from_slice(&host_ip(dst));
    let checksum = internet_checksum(&ip);
    ip[10..12].copy_from_slice(&checksum.to_be_bytes());
    out.extend(ip);
    let port = 10_000 + (ends.flow % 50_000) as u16;
    let (sport, dport) = if forward { (port, 80) } else { (80, port) };
    match framing {
        Framing::Tcp { mss } => tcp_header(pkt, mss, sport, dport, out),
        Framing::Udp => udp_header(sport, dport, ip_len - 20, out),
        Framing::Rdma => {
            udp_header(port, ROCE_PORT, ip_len - 20, out);
            bth(pkt, ends.flow, out);
        }
    }
    out.resize(start + len.max(60) as usize, 0);
}

fn udp_header(sport: u16, dport: u16, len: u16, out: &mut Vec<u8>) {
    out.extend(sport.to_be_bytes());
    out.extend(dport.to_be_bytes());
    out.extend(len.max(8).to_be_bytes());
    out.extend([0, 0]); // no checksum (IPv4 allows it)
}

/// TCP's header: sequence and acknowledgment numbers in bytes (segment k starts at byte
/// k x mss, after an initial sequence number of 0), SYN, ACK, ECE as the packet says.
fn tcp_header(pkt: &Packet, mss: u32, sport: u16, dport: u16, out: &mut Vec<u8>) {
    let bytes = |segment: u32| (segment as u64 * mss as u64) as u32;
    let (seq, ack, mut flags): (u32, u32, u8) = match pkt.kind {
        PacketKind::Syn => (0, 0, 0x02),
        PacketKind::SynAck => (0, 1, 0x12),
        PacketKind::Ack => (1, bytes(pkt.seq).wrapping_add(1), 0x10),
        _ => (bytes(pkt.seq).wrapping_add(1), 1, 0x18),
    };
    if pkt.ece {
        flags |= 0x40;
    }
    out.extend(sport.to_be_bytes());
    out.extend(dport.to_be_bytes());
    out.extend(seq.to_be_bytes());
    out.extend(ack.to_be_bytes());
    out.extend([0x50, flags]);
    out.extend(0xffffu16.to_be_bytes()); // window
    out.extend([0, 0, 0, 0]); // checksum (not computed), urgent pointer
}

/// InfiniBand's BTH (and an AETH for ACKs and NACKs): RC SEND only for data, RC
/// Acknowledge for replies, CNP for congestion notifications; the PSN is the packet's
/// sequence number (an ACK's: the next one expected, less one, as an RC ACK names the
/// last packet received).
fn bth(pkt: &Packet, flow: u32, out: &mut Vec<u8>) {
    let opcode = match pkt.kind {
        PacketKind::Ack | PacketKind::Nack => 0x11,
        PacketKind::Cnp => 0x81,
        _ => 0x04,
    };
    let psn = match pkt.kind {
        PacketKind::Ack | PacketKind::Nack => pkt.seq.wrapping_sub(1),
        _ => pkt.seq,
    } & 0x00ff_ffff;
    out.extend([opcode, 0x00]);
    out.extend(0xffffu16.to_be_bytes()); // partition key
    let qp = (flow & 0x00ff_ffff).to_be_bytes();
    out.extend([0, qp[1], qp[2], qp[3]]);
    let psn = psn.to_be_bytes();
    out.extend([if opcode == 0x04 { 0x80 } else { 0 }, psn[1], psn[2], psn[3]]);
    if matches!(pkt.kind, PacketKind::Ack | PacketKind::Nack) {
        // AETH: syndrome (0: ACK; 0x60: NAK, PSN sequence error), then the MSN.
        let syndrome = if pkt.kind == PacketKind::Nack { 0x60 } else { 0x00 };
        let msn = pkt.seq.to_be_bytes();
        out.extend([syndrome, msn[1], msn[2], msn[3]]);
    }
}

/// A MAC control frame: PFC (802.1Qbb, opcode 0x0101: the class's bit and its timer,
/// 0xffff for a PAUSE that lasts until the RESUME), a port-level 802.3x PAUSE (opcode
/// 0x0001), or BFC's filter frame under the local experimental ethertype.
fn control_frame(pkt: &Packet, out: &mut Vec<u8>) {
    let start = out.len();
    control_fields(pkt, out);
    // Padded to Ethernet's shortest frame (60 bytes before the FCS), or the frame's size.
    out.resize(start + (pkt.size as usize).max(60), 0);
}

fn control_fields(pkt: &Packet, out: &mut Vec<u8>) {
    out.extend(PFC_DESTINATION);
    out.extend([0x02, 0, 0, 0, 0, 0]);
    let Some((class, pause)) = read_pause_frame(pkt) else {
        out.extend(ETHERTYPE_EXPERIMENTAL.to_be_bytes());
        return;
    };
    out.extend(ETHERTYPE_MAC_CONTROL.to_be_bytes());
    let time = match pause {
        Pause::Resume => 0,
        Pause::UntilResume => 0xffff,
        Pause::Quanta(q) => q,
    };
    if class == PORT_LEVEL {
        out.extend(0x0001u16.to_be_bytes());
        out.extend(time.to_be_bytes());
        return;
    }
    out.extend(0x0101u16.to_be_bytes());
    out.extend((1u16 << class).to_be_bytes());
    for c in 0..8 {
        out.extend(if c == class { time } else { 0 }.to_be_bytes());
    }
}

fn internet_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header.chunks(2).map(|w| u16::from_be_bytes([w[0], w[1]]) as u32).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// A capture file being written: pcap's global header (nanosecond timestamps,
/// Ethernet), then one record per packet.
pub struct PcapFile {
    bytes: Vec<u8>,
    packets: u64,
}

impl Default for PcapFile {
    fn default() -> Self {
        let mut bytes = Vec::new();
        bytes.extend(0xa1b2_3c4du32.to_le_bytes()); // nanosecond-resolution magic
        bytes.extend(2u16.to_le_bytes());
        bytes.extend(4u16.to_le_bytes());
        bytes.extend([0u8; 8]); // time zone, accuracy
        bytes.extend(65_535u32.to_le_bytes()); // snap length
        bytes.extend(1u32.to_le_bytes()); // Ethernet
        PcapFile { bytes, packets: 0 }
    }
}

impl PcapFile {
    /// Appends a record at time `at` holding `frame`, of `wire_len` bytes on the wire.
    pub fn record(&mut self, at: Ps, frame: &[u8], wire_len: u32) {
        let ns = at / 1_000;
        self.bytes.extend(((ns / 1_000_000_000) as u32).to_le_bytes());
        self.bytes.extend(((ns % 1_000_000_000) as u32).to_le_bytes());
        self.bytes.extend((frame.len() as u32).to_le_bytes());
        self.bytes.extend(wire_len.max(frame.len() as u32).to_le_bytes());
        self.bytes.extend(frame);
        self.packets += 1;
    }

    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::pause::pause_frame;

    /// A header holding its own checksum (RFC 1071) sums to 0xffff, whose complement is 0.
    #[test]
    fn an_ipv4_header_checks_out() {
        let pkt = Packet { size: 1036, ect: true, ce: true, ..Packet::template(7, 1, 0, 3) };
        let mut out = Vec::new();
        frame(&pkt, Ends { src_host: 0, dst_host: 1, flow: 7 }, Framing::Rdma, &mut out);
        let ip = &out[14..34];
        assert_eq!(internet_checksum(ip), 0, "a header with its checksum sums to 0xffff");
        assert_eq!(ip[1] & 0b11, 0b11, "CE");
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 1036 - 14);
        assert_eq!(u16::from_be_bytes([out[36], out[37]]), ROCE_PORT);
        assert_eq!(out.len(), 1036, "headers, payload and ICRC fill the packet's wire size");
    }

    #[test]
    fn a_pfc_pause_names_its_class_and_timer() {
        let mut out = Vec::new();
        control_frame(&pause_frame(3, Pause::Quanta(100), 64), &mut out);
        assert_eq!(&out[..6], &PFC_DESTINATION);
        assert_eq!(&out[12..18], &[0x88, 0x08, 0x01, 0x01, 0x00, 0x08]);
        assert_eq!(u16::from_be_bytes([out[18 + 6], out[18 + 7]]), 100, "class 3's timer");
    }
}
