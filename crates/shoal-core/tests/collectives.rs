//! Collective traffic (`pattern = "collective"`) against theory. On a star of 100 Gbps
//! links of 1 us, RDMA at line rate (no congestion control) and one ACK per message
//! (`rdma.ack_interval` above its packets), a message of c bytes takes
//! `(c + P h) / B + 2 d + (last packet) / B` from its start to its arrival: its P packets
//! of header h back to back, the path's two delays, and the last packet stored and
//! forwarded at the switch. A step that starts at an arrival sends its first packet
//! behind the ACK of that arrival (48 B, 3.84 ns at 100 Gbps).

mod common;
use common::{refusal, ser, star_100g};
use shoal_core::workload::collective::IterationRecord;
use shoal_core::{Scenario, Simulation};

const MTU: u64 = 1000;
const HEADER: u64 = 36;
const ACK: u64 = 48;
const DELAY_PS: u64 = 1_000_000;

/// The time from a message's start to its arrival, alone on its path (ps).
fn message_time(bytes: u64) -> u64 {
    let packets = bytes.div_ceil(MTU);
    let last = bytes - (packets - 1) * MTU + HEADER;
    ser(bytes + packets * HEADER, 100) + 2 * DELAY_PS + ser(last, 100)
}

/// The RDMA line-rate settings of the module's theory, and `workload`.
fn collective(hosts: u32, workload: &str) -> Simulation {
    star_100g(
        hosts,
        &format!(
            "[rdma]\nack_interval = 100000\n[rdma.cc]\nkind = \"none\"\n[switch.flow_control]\nkind = \"pfc\"\n\
             [workload]\npattern = \"collective\"\ntransport = \"rdma\"\n{workload}"
        ),
    )
}

fn iterations(sim: &Simulation) -> Vec<IterationRecord> {
    sim.collectives().expect("a collective job").iterations()[0].clone()
}

/// A ring all-reduce of 8 MB over 8 hosts: 14 steps of one 1 MB chunk each, every host
/// sending to the next at once, so each link carries one message per step and the
/// iteration lasts 14 message times (the 13 later steps each behind an ACK). The next
/// iteration starts the compute gap after the last chunk arrived.
#[test]
fn a_ring_all_reduce_takes_2_n_minus_1_message_times() {
    let sim = collective(8, "collective = \"ring_all_reduce\"\nsize = \"8MB\"\nrepeats = 2\ncompute = \"10us\"\n");
    let step = message_time(1_000_000);
    let first = step + 13 * (step + ser(ACK, 100));
    let its = iterations(&sim);
    assert_eq!(its[0], IterationRecord { start: Some(0), end: Some(first), arrived: 8 * 14 });
    let second = its[1];
    assert_eq!(second.start, Some(first + 10_000_000), "the compute gap follows the last arrival");
    assert_eq!(second.end.unwrap() - second.start.unwrap(), first, "its first step follows no ACK either");
    assert_eq!(sim.flows_finished(), 2 * 8 * 14);
}

/// All-to-all of 8 MB over 8 hosts: each host sends a 1 MB block to each of the 7
/// others at once, and its NIC serves them in turn, so every downlink receives from the
/// 7 senders at 1/7 of the line rate each: the last block arrives 7 blocks' serialization
/// after the start, plus the delays and the last packet.
#[test]
fn all_to_all_keeps_every_link_busy() {
    let sim = collective(8, "collective = \"all_to_all\"\nsize = \"8MB\"\n");
    let block = 1_000_000 + 1000 * HEADER;
    let expected = 7 * ser(block, 100) + 2 * DELAY_PS + ser(MTU + HEADER, 100);
    assert_eq!(iterations(&sim)[0], IterationRecord { start: Some(0), end: Some(expected), arrived: 56 });
    // NCCL's bus bandwidth: 7/8 of 8 MB per iteration, at most the link rate.
    let busbw = 8e6 * 8.0 * 7.0 / 8.0 / (expected as f64 / 1e3);
    assert!((90.0..100.0).contains(&busbw), "{busbw} Gbps");
}

/// A parameter server with 4 workers of 1 MB: the workers' incast is bound by the
/// server's downlink (4 MB of it, PFC keeping it busy), its answer by the server's
/// uplink (4 MB more), about two times 4 message serializations and two paths' delays.
#[test]
fn a_parameter_server_iteration_is_bound_by_its_links() {
    let sim = collective(5, "collective = \"parameter_server\"\nsenders = \"0-3\"\nreceiver = 4\nsize = \"1MB\"\n");
    let wire = ser(1_000_000 + 1000 * HEADER, 100);
    let bound = 2 * (4 * wire + 2 * DELAY_PS);
    let end = iterations(&sim)[0].end.expect("the iteration finishes");
    assert!(end >= bound, "{end} ps is below the links' bound {bound} ps");
    assert!((end as f64) < 1.01 * bound as f64, "{end} ps is far above the links' bound {bound} ps");
}

/// Over TCP too, every message but an iteration's first starts the moment a message to
/// its sender arrived (whatever `run.fct_until` says a flow's end is), and a run with
/// two threads is the same run.
#[test]
fn each_step_starts_when_the_one_before_arrives() {
    let toml = "[topology]\nkind = \"star\"\nhosts = 4\nlink_rate = \"10Gbps\"\nlink_delay = \"2us\"\n\
                [workload]\npattern = \"collective\"\nsize = \"400KB\"\nrepeats = 3\ncompute = \"7us\"\n";
    let sc = Scenario::from_toml(toml).unwrap();
    let mut sim = Simulation::with_threads(&sc, 2).unwrap();
    sim.run();
    let flows = sim.flow_records();
    assert_eq!(flows.len(), 3 * 4 * 6);
    assert!(flows.iter().all(|f| f.finish.is_some()));
    for f in flows.iter().filter(|f| f.start > 0) {
        let trigger =
            flows.iter().any(|g| g.dst == f.src && g.finish.is_some_and(|t| t == f.start || t + 7_000_000 == f.start));
        assert!(trigger, "flow {} from host {} at {} ps follows no arrival there", f.id, f.src, f.start);
    }
    let acked = Scenario::from_toml(&format!("{toml}[run]\nfct_until = \"acked\"\n")).unwrap();
    let mut sim = Simulation::new(&acked).unwrap();
    sim.run();
    assert_eq!(sim.flows_finished(), 3 * 4 * 6);
    assert!(iterations(&sim).iter().all(|r| r.end.is_some()));
}

#[test]
fn bad_collectives_are_refused_naming_the_key() {
    let base = "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\npattern = \"collective\"\n";
    let (key, message) = refusal(&format!("{base}collective = \"broadcast\"\n"));
    assert!(key.contains("collective") && message.contains("ring_all_reduce"), "{key}: {message}");
    let (key, message) = refusal(&format!("{base}senders = \"2\"\n"));
    assert_eq!(key, "workload.senders", "{message}");
    let (key, message) = refusal(&format!("{base}size = \"3B\"\n"));
    assert!(key == "workload.size" && message.contains("at least 4 bytes"), "{key}: {message}");
    let (key, _) = refusal(&format!("{base}collective = \"parameter_server\"\nreceiver = 9\n"));
    assert_eq!(key, "workload.receiver");
    let (key, _) = refusal(&format!("{base}repeats = 0\n"));
    assert_eq!(key, "workload.repeats");
}
