//! Every size, count, index and time either fits its type everywhere or is refused, with
//! the key; a run that cannot make progress ends, and a caller can always regain control.

mod common;
use common::scenario;
use shoal_core::results::FlowTable;
use shoal_core::results::Summary;
use shoal_core::sim::{PS_PER_S, TIME_LIMIT};
use shoal_core::{Scenario, ScenarioError, Simulation};

/// The error of building `toml`'s simulation (parse, validation or workload).
fn refused(toml: &str) -> ScenarioError {
    let sc = match Scenario::from_toml(toml) {
        Ok(sc) => sc,
        Err(e) => return e,
    };
    match Simulation::new(&sc) {
        Ok(_) => panic!("accepted: {toml}"),
        Err(e) => e,
    }
}

#[test]
fn a_switch_has_at_most_65535_ports() {
    let e = refused("[topology]\nkind = \"star\"\nhosts = 65536\n");
    assert_eq!(e.path, "topology");
    assert!(e.message.contains("65536 ports") && e.message.contains("topology.hosts"), "{e}");
    assert!(scenario("[topology]\nkind = \"star\"\nhosts = 65535\n").validate().is_ok());
    let e = refused("[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 65000\nhosts_per_leaf = 600\n");
    assert!(e.message.contains("65600 ports"), "{e}");
}

#[test]
fn the_last_host_of_the_largest_star_is_reached_through_its_own_port() {
    // Port indices are 16 bits: the host on port 65,534 must not alias a lower port.
    let sc = scenario(
        r#"
        [topology]
        kind = "star"
        hosts = 65535
        [workload]
        pattern = "incast"
        senders = "65534"
        receiver = 65533
        size = "10KB"
        "#,
    );
    let sim = common::run(&sc);
    let flows = sim.flow_records();
    assert_eq!(flows.len(), 1);
    assert!(flows[0].finish.is_some());
}

#[test]
fn buffers_must_hold_one_packet() {
    let e = refused("[host]\nnic_buffer = \"1000B\"\n");
    assert_eq!(e.path, "host.nic_buffer");
    assert!(e.message.contains("1514B"), "{e}");
    let e = refused("[switch]\npool_size = \"1000B\"\nreserved = \"0B\"\n");
    assert_eq!(e.path, "switch.pool_size");
    // A packet fits in the reserve and the pool together.
    assert!(scenario("[switch]\npool_size = \"1000B\"\nreserved = \"514B\"\n").validate().is_ok());
}

#[test]
fn times_rates_and_sizes_beyond_the_limits_are_refused_with_their_key() {
    for (toml, key) in [
        ("[topology]\nlink_delay = \"18446744073709551615ps\"\n", "topology.link_delay"),
        ("[topology]\nlink_rate = 1e30\n", "topology.link_rate"),
        ("[workload]\npattern = \"udp\"\nrate = \"1e30bps\"\n", "workload.rate"),
        ("[workload]\npattern = \"incast\"\nsize = 1e30\n", "workload.size"),
        ("[run]\nstop_time = \"2000000s\"\n", "run.stop_time"),
    ] {
        let e = refused(toml);
        assert_eq!(e.path, key, "{toml}: {e}");
        assert!(e.message.contains("too large"), "{toml}: {e}");
    }
    // Integers beyond TOML's 64-bit range arrive from Python as JSON, exact or as floats.
    for value in ["18446744073709551615", "18446744073709551616", "1e300"] {
        let e = Scenario::from_json(&format!("{{\"topology\": {{\"link_delay\": {value}}}}}")).unwrap_err();
        assert_eq!(e.path, "topology.link_delay", "{value}: {e}");
        assert!(e.message.contains("too large"), "{value}: {e}");
    }
}

#[test]
fn workloads_that_would_start_beyond_the_time_limit_are_refused() {
    // 100 bit/s instead of 100 Gbps: a thousand web-search flows would take a decade.
    let e = refused("[topology]\nlink_rate = 100\nuplink_rate = 100\n");
    assert_eq!(e.path, "workload.load");
    assert!(e.message.contains("units"), "{e}");
    let e = refused("[workload]\nload = 1e-20\n");
    assert_eq!(e.path, "workload.load");
    let e = refused(
        "[workload]\npattern = \"incast\"\nrepeats = 4000000000\nperiod = \"1000s\"\nsenders = \"1\"\nreceiver = 0\n",
    );
    assert_eq!(e.path, "workload.repeats");
    let e = refused("[workload]\npattern = \"incast\"\nrepeats = 10000000\nperiod = \"1ms\"\nreceiver = 0\n");
    assert_eq!(e.path, "workload.repeats");
    assert!(e.message.contains("310000000 flows"), "{e}");
    let e = refused("[workload]\nduration = \"1000s\"\n");
    assert_eq!(e.path, "workload.duration");
}

#[test]
fn a_trace_starting_beyond_the_time_limit_is_refused() {
    let dir = std::env::temp_dir().join(format!("shoal-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("late.csv");
    std::fs::write(&file, "id,src,dst,bytes,start_ns\n0,1,2,1000,0\n1,2,3,1000,1e16\n").unwrap();
    let toml = format!("[workload]\npattern = \"trace\"\ntrace = {:?}\n", file.to_str().unwrap());
    let e = refused(&toml);
    assert_eq!(e.path, "workload.trace");
    assert!(e.message.contains("line 3") && e.message.contains("too late"), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_run_that_cannot_progress_stops_at_the_time_limit() {
    // One bit per second: a 1 MB flow would need 8 million seconds, twice the limit.
    let sc = scenario(
        r#"
        [topology]
        kind = "star"
        hosts = 2
        link_rate = "1bps"
        [transport]
        rto_min = "1s"
        rto_init = "1s"
        rto_max = "1000s"
        [workload]
        pattern = "incast"
        senders = "1"
        receiver = 0
        size = "1MB"
        "#,
    );
    let mut sim = Simulation::new(&sc).unwrap();
    sim.run();
    assert!(sim.reached_time_limit());
    assert!(sim.now() <= TIME_LIMIT);
    assert!(sim.check_invariants().is_empty());
    let table = FlowTable::from_records(&sim.flow_records());
    let summary = Summary::of_simulation(&mut sim, &sc, &table, Vec::new(), None);
    let limit = format!("simulated-time limit ({} s)", TIME_LIMIT / PS_PER_S);
    assert!(summary.warnings.iter().any(|w| w.contains(&limit)), "{:?}", summary.warnings);
}

#[test]
fn a_bounded_step_returns_after_its_events() {
    let sc = scenario("[workload]\nflows = 50\n");
    let mut sim = Simulation::new(&sc).unwrap();
    assert!(!sim.run_bounded(u64::MAX, 1000));
    assert_eq!(sim.events_processed(), 1000);
    assert!(!sim.run_bounded(u64::MAX, 1000));
    assert_eq!(sim.events_processed(), 2000);
    let mut whole = Simulation::new(&sc).unwrap();
    whole.run();
    while !sim.run_bounded(u64::MAX, 1000) {}
    assert_eq!(sim.events_processed(), whole.events_processed());
    let finishes = |s: &Simulation| s.flow_records().iter().map(|f| f.finish).collect::<Vec<_>>();
    assert_eq!(finishes(&sim), finishes(&whole));
}

#[test]
fn endless_flows_add_no_bytes_to_the_total() {
    let sc = scenario(
        r#"
        [workload]
        pattern = "long_lived"
        senders = "1-3"
        receiver = 0
        [[workload.extra]]
        pattern = "incast"
        senders = "4-5"
        receiver = 6
        size = "10KB"
        [run]
        stop_time = "1ms"
        "#,
    );
    let mut sim = common::run(&sc);
    let table = FlowTable::from_records(&sim.flow_records());
    let summary = Summary::of_simulation(&mut sim, &sc, &table, Vec::new(), None);
    assert_eq!(summary.flows.bytes, 20_000);
    assert!(summary.flows.delivered_bytes > 20_000);
}

#[test]
fn the_only_receiver_does_not_send() {
    // Senders 0-3 to receiver 3: host 3 has nobody to send to (drawing a receiver other
    // than itself looped forever).
    let sc = scenario("[topology]\nhosts = 4\n[workload]\nsenders = \"0-3\"\nreceivers = \"3\"\nflows = 50\n");
    let flows =
        shoal_core::workload::generate(&sc.workload, sc.run.seed, &shoal_core::net::build(&sc.topology).unwrap())
            .unwrap();
    assert_eq!(flows.len(), 50);
    assert!(flows.iter().all(|f| f.dst == 3 && f.src != 3));
    let e = refused("[topology]\nhosts = 4\n[workload]\nsenders = \"3\"\nreceivers = \"3\"\n");
    assert_eq!(e.path, "workload.receivers");
}
