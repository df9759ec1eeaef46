//! Random corruption on links (`topology.error_rate`, `topology.lossy_links`, a topology
//! file's `error_rate`): loss matches the chance set, only where it is set, and the
//! transports recover from it.

mod common;
use common::{refusal, run, scenario, TempFile};
use shoal_core::Simulation;

/// (packets sent, packets corrupted) of a run's counters.
fn sent_and_corrupted(sim: &mut Simulation) -> (f64, f64) {
    let c = sim.counters_json();
    (c["packets"]["sent"].as_f64().unwrap(), c["drops"]["link_error"].as_f64().expect("link_error is listed"))
}

/// Whether `observed` is within 4.5 standard deviations of a binomial of `n` trials of
/// chance `q`.
fn binomial(observed: f64, n: f64, q: f64) -> bool {
    (observed - n * q).abs() < 4.5 * (n * q * (1.0 - q)).sqrt()
}

/// 50 Gbps of datagrams for 2 ms across one switch, on links that corrupt 2% of packets:
/// each packet crosses two links, so it is lost with chance 1 - 0.98^2, and every other
/// packet is delivered (nothing queues).
#[test]
fn datagrams_crossing_two_lossy_links_are_lost_with_the_two_hop_chance() {
    let p: f64 = 0.02;
    let mut sim = run(&scenario(&format!(
        "[topology]\nkind = \"star\"\nhosts = 2\nerror_rate = {p}\n\
         [workload]\npattern = \"udp\"\nsenders = \"0\"\nreceiver = 1\nrate = \"50Gbps\"\nstop = \"2ms\"\n"
    )));
    let (sent, corrupted) = sent_and_corrupted(&mut sim);
    assert!(sent > 8_000.0, "{sent} packets");
    let q = 1.0 - (1.0 - p).powi(2);
    assert!(binomial(corrupted, sent, q), "{corrupted} of {sent} corrupted, expected {}", sent * q);
    let c = sim.counters_json();
    assert_eq!(c["packets"]["delivered"].as_f64().unwrap(), sent - corrupted);
    assert_eq!(c["packets"]["switch_dropped"], 0, "corruption is not a switch drop");
    assert_eq!(c["switch_data_dropped"], 0);
}

/// Two senders, one of them on a lossy cable (`lossy_links`): only its packets are lost,
/// with the cable's chance.
#[test]
fn lossy_links_corrupt_only_on_their_cable() {
    let p = 0.05;
    // Hosts are nodes 0 to 2, the switch node 3.
    let mut sim = run(&scenario(&format!(
        "[topology]\nkind = \"star\"\nhosts = 3\n\
         [[topology.lossy_links]]\nends = [3, 1]\nerror_rate = {p}\n\
         [workload]\npattern = \"udp\"\nsenders = \"0-1\"\nreceiver = 2\nrate = \"20Gbps\"\nstop = \"1ms\"\n"
    )));
    let (sent, corrupted) = sent_and_corrupted(&mut sim);
    let records = sim.flow_records();
    let delivered = |src: u32| records.iter().filter(|r| r.src == src).map(|r| r.delivered_bytes).sum::<u64>();
    assert!(delivered(0) > 0 && delivered(1) > 0);
    let clean = delivered(0) as f64;
    let lossy = delivered(1) as f64;
    // Each sender sends the same: half the packets.
    assert!(binomial(corrupted, sent / 2.0, p), "{corrupted} of {} corrupted at {p}", sent / 2.0);
    let lost_share = 1.0 - lossy / clean;
    assert!((lost_share - p).abs() < 0.01, "host 1 delivered {lost_share} less than host 0");
}

/// The same corruption in a topology file's line and in `lossy_links`: the same run.
#[test]
fn a_files_error_rate_is_the_links_own() {
    let file = |rate: &str| format!("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us {rate}\n");
    let workload =
        "[workload]\npattern = \"udp\"\nsenders = \"0\"\nreceiver = 1\nrate = \"30Gbps\"\nstop = \"500us\"\n";
    let lossy_file = TempFile::new("lossy.txt", &file("0.01"));
    let clean_file = TempFile::new("clean.txt", &file("0"));
    let topology = |path: &TempFile| format!("[topology]\nkind = \"file\"\npath = {:?}\n", path.path());
    let mut from_file = run(&scenario(&format!("{}{workload}", topology(&lossy_file))));
    let mut from_key = run(&scenario(&format!(
        "{}[[topology.lossy_links]]\nends = [2, 1]\nerror_rate = 0.01\n{workload}",
        topology(&clean_file)
    )));
    let corrupted = sent_and_corrupted(&mut from_file).1;
    assert!(corrupted > 0.0);
    assert_eq!(from_file.counters_json(), from_key.counters_json());
    // lossy_links wins over the file's own rate.
    let mut cleaned = run(&scenario(&format!(
        "{}[[topology.lossy_links]]\nends = [1, 2]\nerror_rate = 0\n{workload}",
        topology(&lossy_file)
    )));
    let c = cleaned.counters_json();
    assert!(c["drops"].get("link_error").is_none(), "no link corrupts");
    assert_eq!(c["packets"]["dropped"], 0);
}

/// A long-lived NewReno flow whose only losses are random (a lossy cable at the receiver,
/// a buffer that never fills) runs at Mathis et al.'s rate (CCR 1997): MSS / RTT x
/// sqrt(3 / (2p)) for loss chance p, here 11.2 Gbps at p = 1e-3 and 20.5 Gbps at 3e-4 on
/// a 100 Gbps path of 40 us (measured: 11.2 and 23.4 Gbps). The formula assumes what holds here: the window (39 and 71
/// packets) far below the path's 330-packet BDP, losses recovered by fast retransmit
/// (no timeout), one ACK per packet.
#[test]
fn newreno_under_random_loss_runs_at_the_mathis_rate() {
    // Measured after the first 50 ms: the opening slow start runs far past the
    // loss-limited window before its first loss, and takes a while to come down.
    let (warm_up, end) = (50_000_000_000u64, 350_000_000_000u64);
    for p in [1e-3_f64, 3e-4] {
        let sc = scenario(&format!(
            "[topology]\nkind = \"star\"\nhosts = 2\nlink_rate = \"100Gbps\"\nlink_delay = \"10us\"\n\
             [[topology.lossy_links]]\nends = [1, 2]\nerror_rate = {p}\n[switch]\nbuffer = \"100MB\"\n\
             [transport]\ncc = \"newreno\"\necn = \"off\"\n\
             [workload]\npattern = \"long_lived\"\nsenders = \"0\"\nreceiver = 1\n[run]\nstop_time = \"350ms\"\n"
        ));
        let mut sim = Simulation::new(&sc).unwrap();
        let delivered = |sim: &Simulation| sim.flow_records()[0].delivered_bytes as f64;
        sim.run_until(warm_up);
        let before = delivered(&sim);
        sim.run_until(end);
        let throughput = (delivered(&sim) - before) * 8.0 / ((end - warm_up) as f64 * 1e-12);
        let records = sim.flow_records();
        // The round trip: 4 x 10 us of propagation, a 1,514 B packet and a 64 B ACK each
        // serialized twice at 100 Gbps.
        let rtt = 40e-6 + 2.0 * (1514.0 + 64.0) * 8.0 / 100e9;
        let mathis = 1460.0 * 8.0 / rtt * (3.0 / (2.0 * p)).sqrt();
        let ratio = throughput / mathis;
        // Mathis's constant sqrt(3/2) is that of periodic losses; for independent ones Ott,
        // Kemperman and Mathis (1996) find about 7% more, and 170 to 330 loss events leave
        // a sampling spread of about 5%.
        assert!((0.9..1.25).contains(&ratio), "p {p}: {:.2} Gbps against {:.2} Gbps", throughput / 1e9, mathis / 1e9);
        assert_eq!(records[0].timeouts, 0, "p {p}: fast retransmit recovers every loss");
        let c = sim.counters_json();
        assert_eq!(c["drops"]["dynamic_threshold"], 0, "no loss but corruption");
        assert_eq!(c["drops"]["pool_full"], 0, "no loss but corruption");
    }
}

/// What a run's counters say of flows: (finished, started, retransmits, timeouts).
fn flow_outcome(sim: &Simulation) -> (usize, usize, u64, u64) {
    let records = sim.flow_records();
    let finished = records.iter().filter(|r| r.finish.is_some()).count();
    let retransmits = records.iter().map(|r| r.retransmits as u64).sum();
    let timeouts = records.iter().map(|r| r.timeouts as u64).sum();
    (finished, records.len(), retransmits, timeouts)
}

/// Every TCP flow finishes over links that corrupt one packet in a thousand (data and
/// ACKs), and each lost data packet is sent again.
#[test]
fn tcp_recovers_every_flow_from_corruption() {
    let mut sim = run(&scenario(
        "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 4\nerror_rate = 1e-3\n\
         [workload]\npattern = \"all_to_all\"\ncdf = \"websearch\"\nflows = 200\nload = 0.5\n",
    ));
    let (finished, started, retransmits, _) = flow_outcome(&sim);
    assert_eq!(finished, started, "every flow finishes");
    let corrupted = sent_and_corrupted(&mut sim).1;
    assert!(corrupted > 20.0, "{corrupted} corrupted");
    assert!(retransmits > 0);
}

/// RDMA's go-back-N, with a retransmission timeout for lost last packets, recovers from
/// corruption without flow control and under PFC with 802.1Qbb's timed pauses (a lost
/// RESUME runs out, a lost PAUSE is refreshed).
#[test]
fn rdma_with_a_timeout_recovers_every_flow_from_corruption() {
    for flow_control in ["kind = \"lossy\"", "kind = \"pfc\"\npause_quanta = 65535"] {
        let mut sim = run(&scenario(&format!(
            "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 4\nerror_rate = 1e-3\n\
             [switch.flow_control]\n{flow_control}\n[rdma]\nrto = \"100us\"\n\
             [workload]\npattern = \"all_to_all\"\ncdf = \"websearch\"\nflows = 200\nload = 0.5\ntransport = \"rdma\"\n"
        )));
        let (finished, started, retransmits, _) = flow_outcome(&sim);
        assert_eq!(finished, started, "{flow_control}: every flow finishes");
        assert!(retransmits > 0, "{flow_control}");
        assert!(sent_and_corrupted(&mut sim).1 > 20.0);
    }
}

/// Under ON/OFF pauses (ns3-datacenter's), a corrupted RESUME holds its class for good:
/// the scenario is warned of, and the run ends at the pause that nothing holds (the
/// senders' timeouts would otherwise send into it until Shoal's time limit).
#[test]
fn a_corrupted_resume_holds_an_on_off_pause_for_good() {
    let sc = scenario(
        "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 4\nerror_rate = 0.01\n\
         [switch.flow_control]\nkind = \"pfc\"\n[rdma]\nrto = \"100us\"\n\
         [workload]\npattern = \"all_to_all\"\ncdf = \"websearch\"\nflows = 200\nload = 0.8\ntransport = \"rdma\"\n",
    );
    let warnings = sc.validate().unwrap();
    assert!(warnings.iter().any(|w| w.starts_with("topology.error_rate:") && w.contains("a corrupted RESUME")));
    let mut sim = run(&sc);
    let c = sim.counters_json();
    assert!(c["frames_corrupted"].as_u64().unwrap() > 0);
    let (finished, started, _, _) = flow_outcome(&sim);
    assert!(finished < started, "a lost RESUME stalls some flow");
    let stuck: Vec<_> = sim.deadlocks().iter().filter(|d| d.without_cycle).collect();
    assert_eq!(stuck.len(), 1, "{:?}", sim.deadlocks());
    assert!(!stuck[0].cycle.is_empty() || stuck[0].held_nics > 0);
    assert!(sim.is_finished() && !sim.came_to_rest(), "ended with the timers still set");
}

/// A run without lossy links lists no corruption.
#[test]
fn clean_runs_list_no_corruption() {
    let mut sim = run(&scenario(
        "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\npattern = \"incast\"\nsenders = \"1-3\"\nsize = \"100KB\"\n",
    ));
    let c = sim.counters_json();
    assert!(c["drops"].get("link_error").is_none(), "{}", c["drops"]);
    assert!(c.get("frames_corrupted").is_none());
}

#[test]
fn bad_error_rates_are_refused_by_key() {
    let (key, message) = refusal("[topology]\nerror_rate = 1.5\n");
    assert_eq!(key, "topology.error_rate");
    assert!(message.contains("1.5 is not accepted (accepted: a probability from 0 to 1"), "{message}");
    let (key, message) =
        refusal("[topology]\nkind = \"star\"\nhosts = 3\n[[topology.lossy_links]]\nends = [0, 1]\nerror_rate = 0.1\n");
    assert_eq!(key, "topology.lossy_links");
    assert!(message.contains("[0, 1] (item 0): there is no link between host 0 and host 1"), "{message}");
    let (key, message) =
        refusal("[topology]\nkind = \"star\"\nhosts = 3\n[[topology.lossy_links]]\nends = [0, 3]\nerror_rate = -1\n");
    assert_eq!(key, "topology.lossy_links[0].error_rate");
    assert!(message.contains("-1 is not accepted"), "{message}");
}

/// RDMA without a timeout over corrupting links is warned of, naming the key that
/// corrupts.
#[test]
fn rdma_without_a_timeout_on_lossy_links_is_warned_of() {
    let warnings = scenario(
        "[topology]\nkind = \"star\"\nhosts = 3\n[[topology.lossy_links]]\nends = [0, 3]\nerror_rate = 1e-4\n\
         [workload]\npattern = \"incast\"\nsenders = \"1-2\"\ntransport = \"rdma\"\n",
    )
    .validate()
    .unwrap();
    assert!(
        warnings.iter().any(|w| w.starts_with("topology.lossy_links:") && w.contains("set rdma.rto")),
        "{warnings:?}"
    );
}

/// A NewReno flow (SACK on) over a cable that corrupts 1% of packets both ways times out
/// often: a retransmission lost in SACK recovery holds snd_una while SACKs let new data
/// out. Two rules keep the window what the path carried, and the sender off its NIC's
/// tail (1 MB, twice the 500 KB BDP):
/// - the timeout halves the unSACKed data in flight (ns-3's `BytesInFlight`), not the
///   outstanding data, which here grows to tens of thousands of segments;
/// - slow start ends at ssthresh (RFC 5681, Linux, ns-3's `TcpLinuxReno`), so the
///   cumulative ACK that covers what the receiver held after go-back-N cannot lift the
///   window by every byte it covers.
///
/// Without either, tens of thousands of packets drop at the NIC.
#[test]
fn timeouts_under_random_loss_keep_the_window_to_what_the_path_carried() {
    let sc = scenario(
        "[topology]\nkind = \"star\"\nhosts = 2\nlink_rate = \"100Gbps\"\nlink_delay = \"10us\"\n\
         [[topology.lossy_links]]\nends = [1, 2]\nerror_rate = 0.01\n[switch]\nbuffer = \"100MB\"\n\
         [host]\nnic_buffer = \"1MB\"\n\
         [transport]\ncc = \"newreno\"\necn = \"off\"\n\
         [workload]\npattern = \"long_lived\"\nsenders = \"0\"\nreceiver = 1\n[run]\nstop_time = \"400ms\"\n",
    );
    let mut sim = run(&sc);
    let timeouts = sim.flow_records()[0].timeouts;
    assert!(timeouts > 10, "{timeouts} timeouts: the case is not exercised");
    let c = sim.counters_json();
    assert_eq!(c["drops"]["nic_buffer"], 0, "{}", c["drops"]);
}
