//! RDMA connections through whole networks: the FCT of a lone connection is its ideal
//! FCT exactly, connections of one host share its link packet by packet, and go-back-N
//! recovers from switch drops with every invariant held.

mod common;
use common::star_100g;
use shoal_core::results::{FlowTable, Summary};
use shoal_core::{Scenario, ScenarioError, Simulation};

/// A star of 100 Gbps links of 1 us carrying the RDMA workloads `workloads`.
fn rdma_star(hosts: u32, switch: &str, workloads: &str) -> Simulation {
    star_100g(hosts, &format!("[switch]\n{switch}\n{workloads}"))
}

/// Alone on an idle network a connection sends back to back at line rate: its FCT is
/// its ideal FCT, under both completion rules, and its packets are 1,036 B.
#[test]
fn a_lone_connection_takes_its_ideal_fct() {
    for fct_until in ["delivered", "acked"] {
        let sim = rdma_star(
            2,
            "",
            &format!(
                "[run]\nfct_until = \"{fct_until}\"\n[workload]\npattern = \"incast\"\nsenders = \"1\"\nreceiver = 0\nsize = \"100KB\"\ntransport = \"rdma\"\n"
            ),
        );
        let r = &sim.flow_records()[0];
        assert_eq!(r.kind, "rdma");
        let fct = r.finish.expect("finished") - r.start;
        assert_eq!(Some(fct), r.ideal_fct, "{fct_until}");
        // Hand-computed: 100 packets of 1,036 B at 80 ps/B, the first across two links,
        // two 1 us delays; acked adds an ACK trip (48 B twice, two delays).
        let packet = 1036 * 80;
        let delivered = 2_000_000 + 2 * packet + 99 * packet;
        let expected = if fct_until == "acked" { delivered + 2_000_000 + 2 * 48 * 80 } else { delivered };
        assert_eq!(fct, expected, "{fct_until}");
    }
}

/// With `ack_interval = 4` a lone 100-packet connection is ACKed 25 times (every fourth
/// packet, the last among them) and still takes its ideal FCT under both completion
/// rules: the last packet is always ACKed at once.
#[test]
fn an_ack_interval_thins_the_acks_but_not_the_fct() {
    for fct_until in ["delivered", "acked"] {
        let mut sim = rdma_star(
            2,
            "",
            &format!(
                "[rdma]\nack_interval = 4\n[run]\nfct_until = \"{fct_until}\"\n[workload]\npattern = \"incast\"\nsenders = \"1\"\nreceiver = 0\nsize = \"100KB\"\ntransport = \"rdma\"\n"
            ),
        );
        let r = &sim.flow_records()[0];
        assert_eq!(r.finish.map(|f| f - r.start), r.ideal_fct, "{fct_until}");
        assert_eq!(sim.counters_json()["packets"]["sent"].as_u64(), Some(100 + 25), "{fct_until}");
    }
}

/// A lone connection with a window of one BDP (the reference's 52,000 B here: 2 x 2 us
/// plus two 80 ns payload times at 100 Gbps) never waits for an ACK: an ACK returns
/// 2 x 2 us + two 82.88 ns packet times + two 3.84 ns ACK times = 4,173.44 ns after its
/// packet left, when 50.4 packets have gone, fewer than 52. So its FCT is the ideal, for
/// its own path's BDP and for the longest path's (the same in a star).
#[test]
fn a_one_bdp_window_keeps_a_lone_connection_at_line_rate() {
    for window in ["bdp", "max_bdp"] {
        let sim = rdma_star(2, "", &lone_connection(&format!("window = \"{window}\""), "1MB"));
        let r = &sim.flow_records()[0];
        assert_eq!(r.finish.map(|f| f - r.start), r.ideal_fct, "{window}");
    }
}

/// With half a BDP (26,000 B: 26 packets) a lone 10 MB connection sends 26 packets back
/// to back, then each ACK, R = 4,173.44 ns after its packet, releases the next: packet
/// k leaves at floor(k / 26) R + (k mod 26) P (P = 82.88 ns a packet) and the last,
/// k = 9,999, arrives 2 P + 2 us later. Its FCT is that exactly, R / 26 P = 1.94 times
/// the ideal FCT (not 2: the reference's BDP leaves headers and the ACK's way back out).
#[test]
fn a_half_bdp_window_halves_a_lone_connection_s_rate() {
    let sim = rdma_star(2, "", &lone_connection("window = \"26000B\"", "10MB"));
    let r = &sim.flow_records()[0];
    let (p, rtt, k) = (1036 * 80, 4_173_440, 9_999);
    let expected = k / 26 * rtt + k % 26 * p + 2 * p + 2_000_000;
    let fct = r.finish.unwrap() - r.start;
    assert_eq!(fct, expected);
    let ratio = fct as f64 / r.ideal_fct.unwrap() as f64;
    assert!((ratio - rtt as f64 / (26 * p) as f64).abs() < 0.01, "{ratio}");
}

/// One `size` connection from host 1 to host 0 with `rdma` in `[rdma]`.
fn lone_connection(rdma: &str, size: &str) -> String {
    format!(
        "[rdma]\n{rdma}\n[workload]\npattern = \"incast\"\nsenders = \"1\"\nreceiver = 0\nsize = \"{size}\"\ntransport = \"rdma\"\n"
    )
}

/// Two 1 MB connections from one host to two receivers: the NIC alternates them, the
/// link never idles, so the later one ends exactly one 1 MB transfer (1,000 packets)
/// after a lone connection would.
#[test]
fn connections_of_one_host_share_its_link_in_turn() {
    let flow = |receiver| {
        format!("pattern = \"incast\"\nsenders = \"1\"\nreceiver = {receiver}\nsize = \"1MB\"\ntransport = \"rdma\"\n")
    };
    let sim = rdma_star(3, "", &format!("[workload]\n{}[[workload.extra]]\n{}", flow(0), flow(2)));
    let records = sim.flow_records();
    let fcts: Vec<u64> = records.iter().map(|r| r.finish.unwrap() - r.start).collect();
    let ideal = records[0].ideal_fct.unwrap();
    let packet = 1036 * 80;
    assert_eq!(*fcts.iter().max().unwrap(), ideal + 1000 * packet, "{fcts:?}");
    assert!(fcts.iter().min().unwrap() >= &(ideal + 998 * packet), "{fcts:?}");
}

/// Random RDMA traffic (web search at 90% load, eight hosts) through a 100 KB buffer
/// drops packets; the receivers NACK the gaps and the senders go back: there are
/// retransmissions, packets and bytes are conserved (checked by `run`), and a connection
/// that finished delivered all its bytes. (A connection whose last packets are all
/// dropped stalls, as in the reference: there is no timeout by default; see
/// `a_timeout_completes_the_connections_whose_tail_was_lost`.)
#[test]
fn go_back_n_recovers_from_switch_drops() {
    let mut sim = lossy_rdma("");
    let records = sim.flow_records();
    let retransmits: u32 = records.iter().map(|r| r.retransmits).sum();
    let c = sim.counters_json();
    assert!(c["drops"]["dynamic_threshold"].as_u64().unwrap() > 0, "{c}");
    assert!(retransmits > 0, "{c}");
    let finished: Vec<_> = records.iter().filter(|r| r.finish.is_some()).collect();
    assert!(finished.len() > records.len() / 2, "{} of {} finished", finished.len(), records.len());
    assert!(finished.iter().all(|r| r.delivered_bytes == r.bytes));
    assert!(records.iter().all(|r| r.delivered_bytes <= r.bytes));
}

/// Random RDMA traffic (web search at 90% load, eight hosts) through a 100 KB buffer,
/// with `rdma` added to `[rdma]`.
fn lossy_rdma(rdma: &str) -> Simulation {
    rdma_star(
        8,
        "pool_size = \"100KB\"\nreserved = \"0B\"",
        &format!(
            "[rdma]\n{rdma}\n[workload]\npattern = \"all_to_all\"\nload = 0.9\nflows = 300\ntransport = \"rdma\"\n"
        ),
    )
}

/// The lossy run above leaves connections whose last packets were dropped stalled, with
/// no timer; with `rdma.rto` every connection completes, some through timeouts, with
/// all its bytes.
#[test]
fn a_timeout_completes_the_connections_whose_tail_was_lost() {
    let stalled = lossy_rdma("").flow_records().iter().filter(|r| r.finish.is_none()).count();
    assert!(stalled > 0, "no connection lost its tail");
    let records = lossy_rdma("rto = \"100us\"").flow_records();
    let timeouts: u32 = records.iter().map(|r| r.timeouts).sum();
    assert!(timeouts > 0);
    assert!(records.iter().all(|r| r.finish.is_some() && r.delivered_bytes == r.bytes), "{stalled} stalled before");
}

/// The same lossy run as a user sees it: the summary warns that nothing kept its RDMA
/// flows lossless, and says that the unfinished connections stalled (the network came to
/// rest), not that the run stopped early, and points to `rdma.rto`. A run cut short by
/// its stop time says that instead; under PFC (all classes by default) there is nothing
/// to warn of, nor where a deep buffer drops nothing, nor under IRN, which is meant to
/// run lossy.
#[test]
fn lossy_rdma_is_warned_of_and_its_stalled_connections_named() {
    let stalled_run = "[switch]\npool_size = \"100KB\"\nreserved = \"0B\"\n[workload]\npattern = \"all_to_all\"\n\
                       load = 0.9\nflows = 150\ntransport = \"rdma\"\n";
    let summary_warnings = |toml: &str| {
        let sc = common::scenario(&format!(
            "[topology]\nkind = \"star\"\nhosts = 8\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n{toml}"
        ));
        let mut sim = Simulation::new(&sc).unwrap();
        sim.run();
        let table = FlowTable::from_records(&sim.flow_records());
        Summary::of_simulation(&mut sim, &sc, &table, Vec::new(), None).warnings
    };
    let summary = summary_warnings(stalled_run);
    assert!(summary.iter().any(|w| w.starts_with("RDMA flows ran lossy") && w.contains("\"lossy\"")), "{summary:?}");
    let stalled = summary.iter().find(|w| w.contains("did not finish")).unwrap_or_else(|| panic!("{summary:?}"));
    assert!(stalled.contains("stalled") && stalled.contains("rdma.rto"), "{stalled}");

    let cut_short = summary_warnings(&format!("{stalled_run}[run]\nstop_time = \"20us\"\n"));
    let early = cut_short.iter().find(|w| w.contains("did not finish")).unwrap_or_else(|| panic!("{cut_short:?}"));
    assert!(early.contains("before the run stopped") && !early.contains("stalled"), "{early}");

    let outside =
        summary_warnings(&format!("{stalled_run}priority = 2\n[switch.flow_control]\nkind = \"pfc\"\nclasses = [3]\n"));
    assert!(
        outside.iter().any(|w| w.contains("classes [2] are not in switch.flow_control.classes = [3]")),
        "{outside:?}"
    );
    let covered = summary_warnings(&format!("{stalled_run}[switch.flow_control]\nkind = \"pfc\"\n"));
    assert!(!covered.iter().any(|w| w.contains("RDMA flows ran lossy")), "{covered:?}");
    // IRN is meant to run lossy: its drops are no warning.
    let irn = summary_warnings(&format!("{stalled_run}[rdma]\nloss_recovery = \"irn\"\nwindow = \"max_bdp\"\n"));
    assert!(!irn.iter().any(|w| w.contains("RDMA flows ran lossy")), "{irn:?}");
    let deep = summary_warnings(&stalled_run.replace("100KB", "32MB").replace("load = 0.9", "load = 0.3"));
    assert!(deep.is_empty(), "{deep:?}");
}

/// DCQCN against ns3-datacenter (6ddb4a4, `powertcp-evaluation-burst`, cc mode 1 with the
/// DCQCN values of its `config-burst.txt`, no window, 4 MB buffer, runs 1 to 10 with
/// `RngRun`): two 4 MB connections into one 100 Gbps port, RED at dequeue (400 KB,
/// 1,600 KB, 0.2). There the 20 FCTs have mean 1,426.9 us (sd 126.2, 1,044 to 1,557 us)
/// and no PFC frame is sent. Shoal's mean over ten seeds lies within 5% of it, with no
/// drop and the queue below Kmax; without congestion control the same incast fills the
/// buffer.
#[test]
fn dcqcn_incast_matches_ns3_datacenter() {
    let incast = |cc: &str, seed: u64| {
        let mut sim = rdma_star(
            3,
            "pool_size = \"4MB\"\nports_per_pool = 4\nreserved = \"0B\"\nalpha = 1000\n\
             [switch.ecn]\nat = \"dequeue\"\nnon_ect = \"pass\"\n[switch.marking.red]\nkmin = \"400KB\"\nkmax = \"1600KB\"\npmax = 0.2",
            &format!(
                "[rdma]\ncc = \"{cc}\"\n[run]\nfct_until = \"acked\"\nseed = {seed}\n[workload]\npattern = \"incast\"\n\
                 senders = \"1-2\"\nreceiver = 0\nsize = \"4000000B\"\ntransport = \"rdma\"\n"
            ),
        );
        let c = sim.counters_json();
        // Every marked data packet is answered by an ACK that echoes its mark: the
        // senders count exactly as many notifications as the switch made marks.
        assert_eq!(c["cnps"], c["ecn_marks"], "{cc}, seed {seed}");
        let fcts: Vec<f64> =
            sim.flow_records().iter().filter_map(|r| r.finish.map(|f| (f - r.start) as f64 / 1e6)).collect();
        (fcts, c["queues"][0]["max"].as_u64().unwrap(), c["packets"]["dropped"].as_u64().unwrap())
    };
    let mut all = Vec::new();
    for seed in 1..=10 {
        let (fcts, queue_max, dropped) = incast("dcqcn", seed);
        assert_eq!((fcts.len(), dropped), (2, 0), "seed {seed}");
        assert!(queue_max < 1_600_000, "seed {seed}: queue {queue_max}");
        all.extend(fcts);
    }
    let mean = all.iter().sum::<f64>() / all.len() as f64;
    assert!((mean / 1426.9 - 1.0).abs() < 0.05, "mean FCT {mean} us vs ns3-datacenter's 1426.9 us");
    let (_, queue_max, _) = incast("none", 1);
    assert!(queue_max > 3_000_000, "without congestion control the queue reaches {queue_max}");
}

/// DCQCN's paper model on the same 2-to-1 incast (RED 400 KB / 1,600 KB / 0.2 at
/// dequeue, non-ECT packets passed): no drop; the receivers send CNPs (the only packets besides the 4,000 data
/// packets and 4,000 ACKs of each connection), at most one per 50 us per connection, so
/// at most (FCT / 50 us + 1) each; and with its 55 us increase timer the port stays busy:
/// the later connection ends within 20% of the 8,000 packet times (663 us) both need.
#[test]
fn dcqcn_paper_model_incast() {
    let mut sim = rdma_star(
        3,
        "pool_size = \"4MB\"\nports_per_pool = 4\nreserved = \"0B\"\nalpha = 1000\n\
         [switch.ecn]\nat = \"dequeue\"\nnon_ect = \"pass\"\n[switch.marking.red]\nkmin = \"400KB\"\nkmax = \"1600KB\"\npmax = 0.2",
        "[rdma.cc]\nkind = \"dcqcn\"\nmodel = \"paper\"\n[run]\nfct_until = \"acked\"\n[workload]\npattern = \"incast\"\n\
         senders = \"1-2\"\nreceiver = 0\nsize = \"4000000B\"\ntransport = \"rdma\"\n",
    );
    let fcts: Vec<u64> = sim.flow_records().iter().map(|r| r.finish.expect("finished") - r.start).collect();
    let c = sim.counters_json();
    assert_eq!(c["packets"]["dropped"].as_u64(), Some(0));
    let cnps = c["packets"]["sent"].as_u64().unwrap() - 16_000;
    let most = fcts.iter().map(|f| f / 50_000_000 + 1).sum::<u64>();
    assert!(cnps > 0 && cnps <= most, "{cnps} CNPs, at most {most}");
    assert_eq!(c["cnps"].as_u64(), Some(cnps), "every CNP sent is received and counted");
    let both = 8_000 * 1036 * 80;
    assert!(*fcts.iter().max().unwrap() < both * 12 / 10, "{fcts:?} vs {both}");
}

/// ACK priority: a 100 KB connection from host 1 to host 2 while two line-rate
/// connections fill host 1's downlink (strict priority, data at priority 1). ACKs of
/// their connection's class wait behind that queue, and the connection ends microseconds
/// late; ACKs at priority 0 overtake it and wait at most for the packet being sent, so
/// the connection takes its ideal FCT plus at most a packet time per ACK hop and the
/// 48-byte ACKs host 1 itself sends for the data it receives, which its NIC puts ahead of
/// paced packets (about one per data packet it sends: 100 x 3.84 ns).
#[test]
fn high_priority_acks_overtake_the_data_queue() {
    let fct = |ack_priority: &str| {
        let sim = rdma_star(
            4,
            "queues = 2\npool_size = \"32MB\"\nports_per_pool = 4\nreserved = \"0B\"\nalpha = 1000\n\
             [switch.scheduler]\nkind = \"strict_priority\"",
            &format!(
                "[rdma]\n{ack_priority}\n[rdma.cc]\nkind = \"none\"\n[run]\nfct_until = \"acked\"\n\
                 [workload]\npattern = \"incast\"\nsenders = \"1\"\nreceiver = 2\nsize = \"100KB\"\n\
                 transport = \"rdma\"\npriority = 1\n\
                 [[workload.extra]]\npattern = \"incast\"\nsenders = \"0,3\"\nreceiver = 1\nsize = \"4MB\"\n\
                 transport = \"rdma\"\npriority = 1\n"
            ),
        );
        let r = sim.flow_records().into_iter().find(|r| r.src == 1).unwrap();
        (r.finish.unwrap() - r.start, r.ideal_fct.unwrap())
    };
    let packet = 1036 * 80;
    let (shared, ideal) = fct("");
    let (high, _) = fct("ack_priority = 0");
    let own_acks = 101 * 48 * 80;
    assert!(high <= ideal + 2 * packet + own_acks, "high-priority ACKs: {high} vs ideal {ideal}");
    assert!(shared > ideal + 5_000_000, "ACKs behind the data queue: {shared} vs ideal {ideal}");
}

/// The error of reading and checking a scenario with `rdma` in `[rdma]`.
fn refused(rdma: &str) -> ScenarioError {
    match Scenario::from_toml(&format!("[rdma]\n{rdma}")) {
        Ok(sc) => sc.validate().err().unwrap_or_else(|| panic!("accepted: {rdma}")),
        Err(e) => e,
    }
}

/// A bad `[rdma]` value is refused naming its key, the value and what is accepted.
#[test]
fn bad_rdma_values_are_refused_with_their_key() {
    for (rdma, key, words) in [
        ("ack_interval = 0", "rdma.ack_interval", &["0 is not accepted", "1 or more packets"][..]),
        ("rto = \"soon\"", "rdma.rto", &["\"soon\"", "\"none\""]),
        ("rto = \"0us\"", "rdma.rto", &["0ps is too short", "at least 121120ps"]),
        ("window = \"half\"", "rdma.window", &["\"half\"", "\"bdp\"", "\"max_bdp\""]),
        (
            "ack_interval = 4\nwindow = \"3000B\"",
            "rdma.window",
            &["3KB holds fewer than rdma.ack_interval = 4", "at least 3001 B"],
        ),
        (
            "[rdma.cc]\nkind = \"dcqcn\"\nmodel = \"qcn\"",
            "rdma.cc.model",
            &["unknown model \"qcn\"", "\"ns3_datacenter\", \"paper\""],
        ),
        (
            "[rdma.cc]\nkind = \"dcqcn\"\nbyte_counter = \"10MB\"",
            "rdma.cc.byte_counter",
            &["a key of model = \"paper\""],
        ),
        (
            "[rdma.cc]\nkind = \"dcqcn\"\nmodel = \"paper\"\ncnp_interval = \"0us\"",
            "rdma.cc.cnp_interval",
            &["0ps is too short", "at least 5120ps"],
        ),
        ("[rdma.cc]\nkind = \"timely\"\nbeta = 1.5", "rdma.cc.beta", &["1.5 is not accepted", "0 < beta <= 1"]),
        ("[rdma.cc]\nkind = \"dctcp\"\ng = 0", "rdma.cc.g", &["0 is not accepted", "0 < g <= 1"]),
        (
            "[rdma.cc]\nkind = \"theta_powertcp\"\nmin_gradient = -1",
            "rdma.cc.min_gradient",
            &["-1 is not accepted", "a positive number"],
        ),
        ("[rdma.cc]\nkind = \"hpcc\"\neta = 1.2", "rdma.cc.eta", &["1.2 is not accepted", "0 < eta <= 1"]),
        ("int_multi = 0", "rdma.int_multi", &["0 is not accepted"]),
        (
            "[rdma.cc]\nkind = \"theta_powertcp\"\nhai_after = 5",
            "rdma.cc.hai_after",
            &["unknown key `hai_after`", "`base_rtt_factor`"],
        ),
    ] {
        let e = refused(rdma);
        assert_eq!(e.path, key, "{rdma}: {e}");
        assert!(words.iter().all(|w| e.message.contains(w)), "{rdma}: {e}");
    }
    let warnings = |rdma: &str| Scenario::from_toml(&format!("[rdma]\n{rdma}")).unwrap().validate().unwrap();
    assert!(warnings("window_scales_with_rate = true")[0].starts_with("rdma.window_scales_with_rate: has no effect"));
    assert!(warnings("ack_interval = 4\nwindow = \"bdp\"")[0].starts_with("rdma.ack_interval: 4 packets per ACK"));
    assert!(warnings("ack_interval = 4\nwindow = \"3001B\"").is_empty());
}

/// The bottleneck queue (switch 0's port to host 0, queue 0) every `step` ps of a run of
/// `sim` to its end: (time, bytes).
fn bottleneck_queue(sim: &mut Simulation, step: u64) -> Vec<(u64, u64)> {
    let mut samples = Vec::new();
    let mut t = 0;
    while !sim.is_finished() {
        t += step;
        sim.run_until(t);
        let c = sim.counters_json();
        let q = c["queues"].as_array().unwrap().iter().find(|q| q["switch"] == 0 && q["port"] == 0 && q["queue"] == 0);
        samples.push((t, q.map_or(0, |q| q["now"].as_u64().unwrap())));
    }
    let errors = sim.check_invariants();
    assert!(errors.is_empty(), "invariants violated: {errors:?}");
    samples
}

/// An incast of `senders` connections of `size` into host 0 of a 100 Gbps star with a
/// 32 MB buffer (nothing is dropped), switches marking as `marking` says, and the
/// connections' controller `cc` (a `[rdma.cc]` body).
fn cc_incast(senders: u32, size: &str, marking: &str, cc: &str, rdma: &str) -> Simulation {
    let sc = common::scenario(&format!(
        "[topology]\nkind = \"star\"\nhosts = {}\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n\
         [switch]\npool_size = \"32MB\"\nports_per_pool = {}\nreserved = \"0B\"\nalpha = 1000\n{marking}\n\
         [rdma]\n{rdma}\n[rdma.cc]\n{cc}\n[run]\nfct_until = \"acked\"\n[workload]\npattern = \"incast\"\n\
         senders = \"1-{senders}\"\nreceiver = 0\nsize = \"{size}\"\ntransport = \"rdma\"\n",
        senders + 1,
        senders + 1
    ));
    Simulation::new(&sc).unwrap()
}

/// The connections' FCTs in us, each checked finished.
fn fcts_us(sim: &Simulation) -> Vec<f64> {
    sim.flow_records().iter().map(|r| (r.finish.expect("finished") - r.start) as f64 / 1e6).collect()
}

/// What an incast test of a controller checks: the bottleneck queue's peak and its mean
/// from `settle_from` (ps) to the first completion, sampled every 5 us; the last FCT
/// (us); and the packets dropped.
struct IncastOutcome {
    peak: u64,
    settled_mean: f64,
    last_us: f64,
    dropped: u64,
}

fn incast_outcome(sim: &mut Simulation, settle_from: u64) -> IncastOutcome {
    let queue = bottleneck_queue(sim, 5_000_000);
    let fcts = fcts_us(sim);
    let first = fcts.iter().cloned().fold(f64::MAX, f64::min);
    let settled: Vec<u64> =
        queue.iter().filter(|q| q.0 >= settle_from && (q.0 as f64) < first * 1e6).map(|q| q.1).collect();
    IncastOutcome {
        peak: queue.iter().map(|q| q.1).max().unwrap(),
        settled_mean: settled.iter().sum::<u64>() as f64 / settled.len() as f64,
        last_us: fcts.iter().cloned().fold(0.0, f64::max),
        dropped: sim.counters_json()["packets"]["dropped"].as_u64().unwrap(),
    }
}

/// Packet time of a 1,036 B data packet at 100 Gbps, us.
const PACKET_US: f64 = 1036.0 * 8.0 / 100e3;

/// TIMELY (defaults: ns3-datacenter's) on a 2-to-1 incast of 4 MB each, no window. While
/// RTTs stay below T_low = 50 us it only increases, so the queue grows at the excess
/// rate, 100 Gbps, until an update sees RTT > T_low: the queue then holds about C x T_low
/// = 625 KB, and updates come once per RTT, so the cut lands up to two RTTs of excess
/// later: the peak is at most 625 KB x (1 + 2) = 1.875 MB, far below C x T_high
/// (6.25 MB: the RTT never reaches T_high). The steep gradient cuts both rates to the
/// minimum; from then on the queue never again exceeds C x T_low (below T_low TIMELY only
/// adds R_AI / R_HAI per RTT, and the gradient cuts again as soon as the queue grows). No
/// drop. (With the reference's defaults the climb back from 100 Mbps, + 100 Mbps per RTT,
/// leaves the link idle most of the run: 1.98 ms against the 0.66 ms both need.)
#[test]
fn timely_incast_cuts_before_t_high() {
    let mut sim = cc_incast(2, "4000000B", "", "kind = \"timely\"", "");
    let queue = bottleneck_queue(&mut sim, 5_000_000);
    fcts_us(&sim);
    assert_eq!(sim.counters_json()["packets"]["dropped"], 0);
    let peak = queue.iter().map(|q| q.1).max().unwrap();
    assert!(peak > 625_000 && peak <= 1_875_000, "peak {peak} B");
    let emptied = queue.iter().position(|q| q.1 == 0).expect("the queue empties");
    let later = queue[emptied..].iter().map(|q| q.1).max().unwrap();
    assert!(later <= 625_000, "after emptying the queue reached {later} B");
}

/// DCTCP over RDMA on a 2-to-1 incast of 4 MB each, no window, step marking at K =
/// 200 KB (kmin = kmax, pmax 1, at dequeue). Both start at line rate; the first packet
/// dequeued above K is marked, and its echo cuts its sender's rate one base RTT later
/// (4.16 us, 5 us with the marked packet's and the ACK's own times): the peak is at most
/// K + (N - 1) x C x 5 us = 200 KB + 62.5 KB. Each cut is at most once per window and
/// by alpha / 2 (alpha starts at 1), so the queue then swings below K: its mean over the
/// run stays under K. The port stays busy: the later connection ends within 5% of the
/// 8,000 packet times both need. No drop.
#[test]
fn dctcp_incast_holds_the_queue_near_k() {
    let step = "[switch.ecn]\nat = \"dequeue\"\nnon_ect = \"pass\"\n\
                [switch.marking.red]\nkmin = \"200KB\"\nkmax = \"200KB\"\npmax = 1.0";
    let mut sim = cc_incast(2, "4000000B", step, "kind = \"dctcp\"", "");
    let queue = bottleneck_queue(&mut sim, 5_000_000);
    let c = sim.counters_json();
    assert_eq!(c["packets"]["dropped"], 0);
    assert!(c["ecn_marks"].as_u64().unwrap() > 0);
    let peak = queue.iter().map(|q| q.1).max().unwrap();
    assert!(peak > 200_000 && peak <= 262_500, "peak {peak} B");
    let mean = queue.iter().map(|q| q.1).sum::<u64>() / queue.len() as u64;
    assert!(mean < 200_000, "mean queue {mean} B");
    let last = fcts_us(&sim).into_iter().fold(0.0, f64::max);
    assert!(last < 8000.0 * PACKET_US * 1.05, "{last} us");
}

/// theta-PowerTCP on a 10-to-1 incast of 4 MB each, with the reference's window (as
/// script-burst.sh runs it; PowerTCP's is rate x its base RTT, here the path's 4.16 us,
/// below every RTT measured: one BDP, 52 KB, at line rate). Its fixed point: the rates
/// stop moving when u = R_c / (R_c - beta) = 1 + N beta / C (each at C / N), i.e. when
/// the RTT is 1.05 u base RTTs: 1.05 x 1.015 x 4.16 us = 4.434 us, against the 4.173 us
/// an empty queue gives (1,036 B packets and 48 B ACKs over two links, 4 us of
/// propagation), so the queue holds C x 0.261 us = 3.3 KB. Measured from 1 ms (after the
/// first burst, which the window caps at 10 x 52 KB - 52 KB = 468 KB) to the first
/// completion, its mean is within 40% of that; the port stays busy (the last connection
/// ends within 5% of the 40,000 packet times they need); no drop.
#[test]
fn theta_powertcp_incast_holds_a_small_queue() {
    let window = "window = \"max_bdp\"\nwindow_scales_with_rate = true";
    let mut sim = cc_incast(10, "4000000B", "", "kind = \"theta_powertcp\"", window);
    let IncastOutcome { peak, settled_mean: mean, last_us: last, dropped } = incast_outcome(&mut sim, 1_000_000_000);
    assert_eq!(dropped, 0);
    assert!(peak <= 468_000, "peak {peak} B");
    assert!((mean / 3300.0 - 1.0).abs() < 0.4, "mean queue {mean} B vs 3.3 KB");
    assert!(last < 40_000.0 * PACKET_US * 1.05, "{last} us");
}

/// HPCC (defaults: maxStage 0, eta 0.95, rate_ai 50 Mbps; and with maxStage 5) on a
/// 10-to-1 incast of 4 MB each, window one BDP scaled by the rate (the reference's HPCC
/// runs: `HAS_WIN 1`, `VAR_WIN 1`). Its fixed point: each connection holds R_c = R_c eta
/// / u + rate_ai, so the bottleneck runs at u = eta R_c / (R_c - rate_ai), 0.95 x 10 /
/// (10 - 0.05) = 95.5% of 100 Gbps with 10 connections of about 9.5 Gbps, where the
/// queue term of u is zero: the queue stays empty once the first window's burst (at most
/// 9 x 52 KB = 468 KB) has drained. Measured from 200 us to the first completion, the
/// mean queue is under one packet per connection; the link stays busy: the last
/// connection ends no later than the 40,000 packet times of 1,078 B (1,036 B and the
/// 42 B stack) they need at 95.5%, plus 5%. No drop. Measured: peak 459 KB, mean
/// 1.3 KB, the last done at 3,657 us (maxStage 5: 1.2 KB, 3,694 us), against 3,612 us at
/// 95.5%; the first is done at 2,272 us (2,467 us): the additive increase evens the
/// rates out slowly. With the reference's quantized records (`int_values =
/// "quantized"`): 1.3 KB, 3,657 us.
#[test]
fn hpcc_incast_keeps_the_queue_near_zero_and_the_link_busy() {
    let window = "window = \"max_bdp\"\nwindow_scales_with_rate = true";
    let quantized = format!("{window}\nint_values = \"quantized\"");
    int_cc_incast("kind = \"hpcc\"", window, 0.955);
    int_cc_incast("kind = \"hpcc\"\nmax_stage = 5", window, 0.955);
    int_cc_incast("kind = \"hpcc\"", &quantized, 0.955);
}

/// The checks of `hpcc_incast_keeps_the_queue_near_zero_and_the_link_busy` for one
/// `[rdma.cc]` body and `[rdma]` keys, the link busy at `utilization` at the fixed point.
fn int_cc_incast(cc: &str, rdma: &str, utilization: f64) {
    let mut sim = cc_incast(10, "4000000B", "", cc, rdma);
    let IncastOutcome { peak, settled_mean: mean, last_us: last, dropped } = incast_outcome(&mut sim, 200_000_000);
    assert_eq!(dropped, 0);
    assert!(peak <= 468_000, "{cc}: peak {peak} B");
    let packet_us = 1078.0 * 8.0 / 100e3;
    assert!(mean < 10_000.0, "{cc}: mean queue {mean} B");
    assert!(last < 40_000.0 * packet_us / utilization * 1.05, "{cc}: {last} us");
}

/// PowerTCP with telemetry (both revisions) on the same incast and window (the reference's
/// PowerTCP window, rate x the base RTT, is one BDP at line rate). Its fixed point: each
/// connection holds R_c = 0.9 (R_c eta / u + beta) + 0.1 R_c, so u = eta R_c / (R_c -
/// beta); with an empty queue u is the arrival rate over the link's, N R_c / C, so R_c =
/// eta C / N + beta = 9.5 + 0.15 = 9.65 Gbps: the link is 96.5% busy and the queue empty
/// once the first window's burst has drained. The same bounds as HPCC's, at 96.5%.
/// Measured: peak 459 KB, mean 1.2 KB, the last done at 3,661 us (f542a97: 446 KB,
/// 1.2 KB, 3,648 us), against 3,575 us at 96.5%.
#[test]
fn powertcp_incast_keeps_the_queue_near_zero_and_the_link_busy() {
    let window = "window = \"max_bdp\"\nwindow_scales_with_rate = true";
    int_cc_incast("kind = \"powertcp\"", window, 0.965);
    int_cc_incast("kind = \"powertcp\"\nrevision = \"f542a97\"", window, 0.965);
}
