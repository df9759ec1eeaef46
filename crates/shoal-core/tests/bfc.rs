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

/// What a flow resumed at the upstream sends before its pause takes effect: (HRTT + tau)
/// x mu = 3 us at 100 Gbps, 37.5 KB (the paused flow's threshold with one active queue).
const PAUSE_BURST: u64 = 37_500;

/// The same burst in whole packets of 1,036 B (1,000 B and `rdma.header`): the packets
/// a sender starts in 3 us, 82.88 ns each, are at most 37.
const PAUSE_BURST_PACKETS: u64 = PAUSE_BURST.div_ceil(1036) * 1036;

/// 25.6 MB in all from `flows` senders to one receiver, each its flow; returns the
/// sharpest p99 of the receiver's physical queues, having checked that nothing was lost
/// and that the link was full (the last flow finishes when it has sent every byte, to
/// within 2%).
fn fig10_p99(flows: u32, bfc: &str) -> u64 {
    let sim = incast(flows, 25_600_000 / flows as u64, bfc, 500);
    assert_eq!(sim.counters().total_dropped(), 0, "{flows} flows{bfc}");
    let last = sim.flow_records().iter().map(|r| r.finish.unwrap()).max().unwrap();
    // Every payload byte with its 36 B header (`rdma.header`) per 1000 B, at 100 Gbps
    // (80 ps a byte), after the first packet's path (two hops of 1 us).
    let expected: u64 = 25_600_000 * 1036 / 1000 * 80 + 2_000_000;
    let ratio = last as f64 / expected as f64;
    assert!((1.0..1.02).contains(&ratio), "{flows} flows{bfc}: the last finished at {ratio:.4} x {expected} ps");
    p99_physical_queue(&sim)
}

/// Fig. 10 of the preprint: 8 to 256 long flows to one receiver, 0.25 to 8 flows per
/// physical queue.
///
/// With a queue to itself a flow is paused at the threshold, and what its upstream sends
/// until the pause arrives adds at most PAUSE_BURST: within two hop-BDPs.
///
/// Sharing queues, the resume limit (one flow per queue per tick of tau = 1 us) holds
/// each queue to the bursts of the flows resumed before the first one's packets arrive,
/// a pause round trip after its filter: HRTT + tau = 3 us, plus the filter's and a
/// packet's serialization, so just after the tick at 3 tau. Those resumed at 0, tau, 2 tau
/// and 3 tau: four bursts at most, however many flows wait. (The preprint's "about twice
/// the per-hop BDP" counts a hop-BDP a burst; a burst here includes the wait for the next
/// filter.)
///
/// Without the limit (BFC-BufferOpt) every flow due resumes at once, and the queue
/// grows with the flows that share it.
#[test]
fn the_resume_limit_holds_each_queue_flat_as_the_flows_grow() {
    for flows in [8, 32] {
        let p99 = fig10_p99(flows, "");
        assert!(p99 <= 2 * HOP_BDP, "{flows} flows: p99 physical queue {p99} B");
    }
    let limited: Vec<u64> = [64, 128, 256].into_iter().map(|flows| fig10_p99(flows, "")).collect();
    for (flows, p99) in [64, 128, 256].iter().zip(&limited) {
        assert!(*p99 <= 4 * PAUSE_BURST_PACKETS, "{flows} flows: p99 physical queue {p99} B");
    }
    assert!(limited[2] * 4 <= limited[0] * 5, "flat from 2 to 8 flows a queue: {limited:?}");
    let unlimited: Vec<u64> = [64, 256].into_iter().map(|flows| fig10_p99(flows, ", resume_all = true")).collect();
    assert!(unlimited[1] >= 3 * limited[2], "BufferOpt at 8 flows a queue: {unlimited:?} against {limited:?}");
    assert!(unlimited[1] * 2 >= unlimited[0] * 3, "BufferOpt grows with the flows: {unlimited:?}");
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

/// A switch ticks at its shortest filter interval, so an interval shorter than a filter
/// frame takes on its link (a link without delay, by default) is refused, naming the key.
#[test]
fn a_filter_interval_shorter_than_a_filter_frame_is_refused() {
    let build = |delay: &str, bfc: &str| {
        let sc = shoal_core::Scenario::from_toml(&format!(
            r#"
            [topology]
            kind = "star"
            hosts = 4
            link_rate = "100Gbps"
            link_delay = "{delay}"
            [switch]
            queues = 35
            scheduler = {{ kind = "dwrr", strict_queues = 2 }}
            flow_control = {{ kind = "bfc" {bfc} }}
            [workload]
            transport = "rdma"
            flows = 10
            "#
        ))
        .unwrap();
        Simulation::new(&sc).map(|_| ()).map_err(|e| (e.path, e.message))
    };
    let (key, message) = build("0us", "").unwrap_err();
    assert_eq!(key, "switch.flow_control.interval");
    assert!(message.contains("146 B filter frame") && message.contains("(11.68 ns)"), "{message}");
    // 146 B at 100 Gbps is 11.68 ns: a 10 ns interval is refused, 12 ns accepted.
    assert_eq!(build("1us", ", interval = \"10ns\"").unwrap_err().0, "switch.flow_control.interval");
    assert!(build("1us", ", interval = \"12ns\"").is_ok());
    assert_eq!(build("1us", ", hop_rtt = \"20ns\"").unwrap_err().0, "switch.flow_control.hop_rtt");
    assert!(build("0us", ", hop_rtt = \"2us\"").is_ok(), "a hop RTT set for every port needs no link delay");
}
