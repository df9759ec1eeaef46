//! The capture file (`run.pcap`, `trace.pcap`), read back field by field: what is in it
//! is what the run sent, as the headers' standards lay it out.

mod common;
use common::{refusal, ser};
use shoal_core::net::NodeId;
use shoal_core::{Scenario, Simulation};

/// One record of a pcap file: its time (ns), captured bytes and original length.
struct Record {
    ns: u64,
    bytes: Vec<u8>,
    wire: u32,
}

/// The records of a nanosecond pcap file of Ethernet frames, checking its global header.
fn records(file: &[u8]) -> Vec<Record> {
    let u32_at = |at: usize| u32::from_le_bytes(file[at..at + 4].try_into().unwrap());
    assert_eq!(u32_at(0), 0xa1b2_3c4d, "nanosecond pcap");
    assert_eq!(u32_at(20), 1, "Ethernet");
    let (mut at, mut out) = (24, Vec::new());
    while at < file.len() {
        let (s, ns, caplen, wire) = (u32_at(at), u32_at(at + 4), u32_at(at + 8) as usize, u32_at(at + 12));
        out.push(Record {
            ns: s as u64 * 1_000_000_000 + ns as u64,
            bytes: file[at + 16..at + 16 + caplen].to_vec(),
            wire,
        });
        at += 16 + caplen;
    }
    out
}

fn run(toml: &str) -> Simulation {
    let mut sim = Simulation::new(&Scenario::from_toml(toml).unwrap()).unwrap();
    sim.run();
    sim
}

const STAR: &str = "[topology]\nkind = \"star\"\nhosts = 3\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n";

/// A 10-packet RDMA message: its 10 data packets reach the receiver as RoCEv2 (UDP to
/// 4791, BTH opcode SEND only, PSN 0 to 9 in order, 1,036 bytes on the wire), packet k
/// after k + 2 serializations (stored and forwarded once) and two delays; its 10 ACKs
/// reach the sender, RC Acknowledge with an AETH.
#[test]
fn an_rdma_message_is_roce_with_its_packet_sequence_numbers() {
    let sim = run(&format!(
        "{STAR}[rdma.cc]\nkind = \"none\"\n[workload]\npattern = \"incast\"\nsenders = \"0\"\nreceiver = 1\n\
         size = \"10KB\"\ntransport = \"rdma\"\n[run.pcap]\nflows = [0]\n"
    ));
    let all = records(sim.capture_file().expect("a capture"));
    let data: Vec<&Record> = all.iter().filter(|r| r.bytes[42] == 0x04).collect();
    let acks: Vec<&Record> = all.iter().filter(|r| r.bytes[42] == 0x11).collect();
    assert_eq!((data.len(), acks.len(), all.len()), (10, 10, 20));
    for (k, r) in data.iter().enumerate() {
        assert_eq!(&r.bytes[12..14], &[0x08, 0x00], "IPv4");
        assert_eq!(u16::from_be_bytes([r.bytes[36], r.bytes[37]]), 4791, "RoCEv2");
        assert_eq!(u32::from_be_bytes([0, r.bytes[51], r.bytes[52], r.bytes[53]]), k as u32, "PSN");
        assert_eq!(r.wire, 1036);
        // The file keeps nanoseconds.
        assert_eq!(r.ns, ((k as u64 + 2) * ser(1036, 100) + 2_000_000) / 1000);
    }
    // An ACK: Ethernet, IPv4, UDP, BTH, AETH and ICRC (more than its 48 bytes in Shoal),
    // from the receiver (10.0.0.2).
    assert!(acks.iter().all(|r| r.bytes.len() == 14 + 20 + 8 + 12 + 4 + 4 && r.bytes[26..30] == [10, 0, 0, 2]));
}

/// A PFC incast on a captured cable: its frames are 802.1Qbb PAUSEs and RESUMEs of
/// class 3 (MAC control, opcode 0x0101, class-enable bit 3, timer 0xffff or 0), as many
/// as the switch sent over it.
#[test]
fn pause_frames_are_pfc_mac_control_frames() {
    let sim = run("[topology]\nkind = \"star\"\nhosts = 5\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n\
         [switch]\npool_size = \"100KB\"\n[switch.flow_control]\nkind = \"pfc\"\nclasses = [3]\n\
         [rdma.cc]\nkind = \"none\"\n[workload]\npattern = \"incast\"\nsenders = \"0-3\"\nreceiver = 4\n\
         size = \"200KB\"\ntransport = \"rdma\"\npriority = 3\n[run.pcap]\nlinks = [[0, 5]]\n");
    let frames: Vec<Record> =
        records(sim.capture_file().unwrap()).into_iter().filter(|r| r.bytes[12..14] == [0x88, 0x08]).collect();
    assert!(!frames.is_empty(), "the incast pauses host 0");
    for f in &frames {
        assert_eq!(&f.bytes[..6], &[0x01, 0x80, 0xc2, 0x00, 0x00, 0x01]);
        assert_eq!(&f.bytes[14..18], &[0x01, 0x01, 0x00, 0x08], "PFC, class 3");
        let timer = u16::from_be_bytes([f.bytes[18 + 6], f.bytes[18 + 7]]);
        assert!(timer == 0xffff || timer == 0, "{timer}");
    }
    let pauses = frames.iter().filter(|f| f.bytes[24..26] == [0xff, 0xff]).count() as u64;
    let ports = sim.pause_ports();
    let sent: u64 = ports.iter().filter(|(k, _)| k.node == NodeId::Host(0)).map(|(_, r)| r.pauses_received).sum();
    assert_eq!(pauses, sent, "every PAUSE host 0 received is in the file");
}

/// TCP's sequence numbers count bytes: segment k starts at 1 + k x MSS; the capture
/// stops at `max_packets` and the summary says what it left out.
#[test]
fn tcp_sequence_numbers_count_bytes_and_the_file_stops_at_its_limit() {
    let sim = run(&format!(
        "{STAR}[workload]\npattern = \"incast\"\nsenders = \"0\"\nreceiver = 1\nsize = \"14600B\"\n\
         [run.pcap]\nflows = [0]\nmax_packets = 5\n"
    ));
    let all = records(sim.capture_file().unwrap());
    assert_eq!(all.len(), 5);
    let data: Vec<&Record> = all.iter().filter(|r| r.bytes[23] == 6 && r.bytes[47] & 0x08 != 0).collect();
    for (k, r) in data.iter().enumerate() {
        assert_eq!(u32::from_be_bytes(r.bytes[38..42].try_into().unwrap()), 1 + k as u32 * 1460);
    }
    assert!(sim.capture_left_out() > 0);
}

#[test]
fn bad_capture_settings_are_refused_naming_the_key() {
    let (key, _) = refusal(&format!("{STAR}[run.pcap]\n"));
    assert_eq!(key, "run.pcap");
    let (key, message) = refusal(&format!("{STAR}[run.pcap]\nlinks = [[0, 1]]\n"));
    assert_eq!(key, "run.pcap.links", "{message}");
}
