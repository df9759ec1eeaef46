//! BFC (`[switch.flow_control] kind = "bfc"`) checked against its own arithmetic and the
//! preprint's claims that need no other simulator (issue 19, item 3).

mod common;
use common::scenario;
use shoal_core::Simulation;

/// `senders` hosts each send one flow of `bytes` to host 0 of a star at t = 0, under BFC
/// with `bfc` as its extra keys. Returns the simulation, run, with queue samples every
/// `sample` ns.
fn incast(senders: u32, bytes: u64, bfc: &str, sample_ns: u64) -> Simulation {
    incast_sampled(senders, bytes, bfc, "12MB", Some(sample_ns))
}

/// As `incast`, with a switch buffer of `buffer` and no samples.
fn incast_with_buffer(senders: u32, bytes: u64, bfc: &str, buffer: &str) -> Simulation {
    incast_sampled(senders, bytes, bfc, buffer, None)
}

fn incast_sampled(senders: u32, bytes: u64, bfc: &str, buffer: &str, sample_ns: Option<u64>) -> Simulation {
    let mut csv = String::from("id,src,dst,bytes,start_ns\n");
    for s in 1..=senders {
        csv += &format!("{},{s},0,{bytes},0\n", s - 1);
    }
    let trace = common::TempFile::new("bfc-flows.csv", &csv);
    let sc = scenario(&format!(
        r#"
        [topology]
        kind = "star"
        hosts = {}
        link_rate = "100Gbps"
        link_delay = "1us"
        [switch]
        buffer = "{buffer}"
        ports_per_pool = {}
        reserved = "0B"
        queues = 35
        scheduler = {{ kind = "dwrr", quantum = "1KB", strict_queues = 2 }}
        flow_control = {{ kind = "bfc" {bfc} }}
        [rdma]
        mtu = 1000
        [rdma.cc]
        kind = "none"
        [workload]
        pattern = "trace"
        trace = {:?}
        transport = "rdma"
        [run]
        stop_time = "3ms"
        {}
        "#,
        senders + 1,
        senders + 1,
        trace.path().to_str().unwrap(),
        sample_ns.map_or(String::new(), |ns| format!("sample_interval = \"{ns}ns\""))
    ));
    common::run(&sc)
}

/// The 99th percentile of the bytes of the physical queues (2 to 33) of the port to
/// host 0, over the samples where they hold packets.
fn p99_physical_queue(sim: &Simulation) -> u64 {
    let mut held: Vec<u64> = sim
        .samples()
        .iter()
        .filter(|s| {
            s.port == 0
                && (2..34).contains(&s.queue)
                && s.bytes > 0
                && s.time >= 1_000_000_000
                && s.time < 1_800_000_000
        })
        .map(|s| s.bytes)
        .collect();
    held.sort_unstable();
    held[held.len() * 99 / 100]
}

/// Hop round trip (2 x 1 us) times 100 Gbps, in bytes: one hop-BDP.
const HOP_BDP: u64 = 25_000;

/// Fig. 10 of the preprint, where each flow has a physical queue of its own: 8 and 32
/// long flows to one receiver fill the link (the last finishes when the link has sent
/// every byte, to within 2%), lose nothing, and hold each physical queue within two
/// hop-BDPs at the 99th percentile: the threshold plus what arrives during a pause's
/// round trip and interval ((HRTT + tau) x mu = 37.5 KB).
#[test]
fn long_flows_fill_the_link_and_hold_each_queue_within_two_hop_bdps() {
    for flows in [8, 32] {
        let bytes = 25_600_000 / flows as u64;
        let sim = incast(flows, bytes, "", 500);
        assert_eq!(sim.counters().total_dropped(), 0);
        let records = sim.flow_records();
        let last = records.iter().map(|r| r.finish.unwrap()).max().unwrap();
        // Every payload byte with its 36 B header (`rdma.header`) per 1000 B, at 100
        // Gbps (80 ps a byte), after the first packet's path (two hops of 1 us).
        let wire: u64 = 25_600_000 * 1036 / 1000;
        let expected = wire * 80 + 2_000_000;
        let ratio = last as f64 / expected as f64;
        assert!((1.0..1.02).contains(&ratio), "{flows} flows: the last finished at {last} ps, {ratio:.4} x {expected}");
        let p99 = p99_physical_queue(&sim);
        assert!(p99 <= 2 * HOP_BDP, "{flows} flows: p99 physical queue {p99} B");
    }
}

/// Pauses travel as one filter frame per interval (1 us) on each link with a paused
/// flow: with 8 flows paused most of the run, at most 8 frames per interval, each of
/// the 128 B filter and its 18 B header: 1.17% of 100 Gbps per link.
#[test]
fn filters_cost_one_frame_per_interval_per_link_with_a_paused_flow() {
    let sim = incast(8, 3_200_000, "", 500);
    let intervals = sim.now() / 1_000_000 + 1;
    let frames = sim.counters().frames_sent;
    assert!(frames <= 8 * intervals, "{frames} frames in {intervals} intervals");
    assert!(frames >= 8 * intervals / 2, "{frames} frames: the flows are paused most of the run");
}

/// A new flow always gets packets to the bottleneck before BFC can pause it (§3.9): 64
/// flows starting together, each sending up to (HRTT + tau) x mu = 37.5 KB before its
/// pause takes effect, into 600 KB of shared buffer, lose packets under BFC alone, and
/// none with PFC (on their class) beneath it, given its headroom (2.07 MB here) on top.
#[test]
fn the_pfc_backstop_makes_bfc_lossless() {
    let lossy = incast_with_buffer(64, 100_000, "", "600KB");
    assert!(lossy.counters().total_dropped() > 0, "the test needs an incast that BFC alone cannot hold");
    let lossless = incast_with_buffer(64, 100_000, ", backstop = { classes = [0] }", "2.7MB");
    assert_eq!(lossless.counters().total_dropped(), 0, "{:?}", lossless.counters().dropped);
    assert_eq!(lossless.flows_finished(), 64);
}
