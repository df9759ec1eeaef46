//! Hostile inputs of the lossless era (issue 30, items 2, 4, 5 and 8): none panics, none
//! makes a run that cannot progress or end, none is silently wrong; legal settings that are
//! almost surely a mistake are warned of, by their full key.

mod common;
use common::{scenario, TempFile};
use shoal_core::scenario::input_checks::input_warnings;
use shoal_core::{Scenario, ScenarioError, Simulation};

/// A star of `hosts` hosts on 100 Gbps links of 1 us, then `rest`.
fn star(hosts: u32, rest: &str) -> String {
    format!("[topology]\nkind = \"star\"\nhosts = {hosts}\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n{rest}")
}

/// An RDMA incast of 100 KB from hosts 1 to 3 to host 0 of a 100 Gbps star, then `rest`.
fn rdma_incast(rest: &str) -> String {
    star(
        4,
        &format!(
            "[workload]\npattern = \"incast\"\nsenders = \"1-3\"\nreceiver = 0\nsize = \"100KB\"\ntransport = \"rdma\"\n{rest}"
        ),
    )
}

/// The error of a scenario refused when parsed or validated.
fn refused(toml: &str) -> ScenarioError {
    match Scenario::from_toml(toml) {
        Err(e) => e,
        Ok(sc) => sc.validate().expect_err("the scenario should be refused"),
    }
}

/// Every warning of a scenario: its validation's and those about it as written.
fn warnings(toml: &str) -> Vec<String> {
    let sc = Scenario::from_toml(toml).unwrap_or_else(|e| panic!("bad test scenario: {e}"));
    let mut all = sc.validate().unwrap_or_else(|e| panic!("invalid test scenario: {e}"));
    all.extend(input_warnings(&toml::from_str(toml).unwrap(), &sc));
    all
}

fn warned(all: &[String], prefix: &str) -> bool {
    all.iter().any(|w| w.starts_with(prefix))
}

/// Runs at most `events` events; true when the run ended.
fn run_at_most(sim: &mut Simulation, events: u64) -> bool {
    sim.run_bounded(u64::MAX, events)
}

// ---- item 2: panics ------------------------------------------------------------------

/// A `min_rate` above the line rate: every controller keeps its rate at most the line rate
/// (no flow beats its ideal FCT), none panics, and the key is warned of.
#[test]
fn a_min_rate_above_the_line_rate_is_warned_of_and_runs() {
    for cc in ["hpcc", "powertcp", "theta_powertcp", "timely", "dctcp", "dcqcn"] {
        let toml = rdma_incast(&format!(
            "[rdma]\nwindow = \"bdp\"\n[rdma.cc]\nkind = \"{cc}\"\nmin_rate = \"200Gbps\"\n[switch.marking.cutoff]\nk = \"20KB\"\n[switch.ecn]\nnon_ect = \"pass\"\n"
        ));
        let all = warnings(&toml);
        assert!(warned(&all, "rdma.cc.min_rate: 200Gbps is above the line rate"), "{cc}: {all:?}");
        let mut sim = Simulation::new(&scenario(&toml)).unwrap();
        assert!(run_at_most(&mut sim, 10_000_000), "{cc}: the run ends");
        for r in sim.flow_records() {
            let fct = r.finish.expect("every flow finishes") - r.start;
            assert!(fct >= r.ideal_fct.unwrap(), "{cc}: an FCT {fct} below the ideal: a rate above line rate");
        }
    }
}

fn fan_in(keys: &str) -> String {
    format!(
        "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 4\n\
         [workload]\npattern = \"fan_in\"\nflows = 1000\nsize = \"10KB\"\n{keys}"
    )
}

/// A fan-in of more flows per round than a run may hold is refused by `fan_in`, whether
/// `flows` or `duration` sets the run's length, and `fan_in + fan_in_max` cannot wrap
/// around to a small count.
#[test]
fn a_huge_fan_in_is_refused_by_its_key() {
    for keys in [
        "fan_in = 200000000\n",
        "fan_in = 4000000000\nfan_in_max = 4000000000\n",
        "fan_in = 2147483648\nfan_in_max = 2147483648\n",
        "fan_in = 200000000\nduration = \"1ms\"\n",
    ] {
        let sc = scenario(&fan_in(keys));
        let net = shoal_core::net::build(&sc.topology).unwrap();
        let e = shoal_core::workload::planned_flows(&sc.workload, &net).expect_err(keys);
        assert!(
            ["workload.fan_in", "workload.fan_in_max", "workload.duration"].contains(&e.path.as_str()),
            "{keys}: {e}"
        );
        assert!(e.message.contains("at most 100000000"), "{keys}: {e}");
        let e = Simulation::new(&sc).err().expect(keys);
        assert!(e.path.starts_with("workload."), "{keys}: {e}");
    }
    // Generation says the same, by the key that makes the round too wide.
    let sc = scenario(&fan_in("fan_in = 2147483648\nfan_in_max = 2147483648\n"));
    assert_eq!(refused_at_generation(&sc).path, "workload.fan_in_max");
    // Rounds of 60 to 100 million senders, 80 million on average, are within the limit
    // one by one, but the 2 rounds that 80,000,001 flows take are not.
    let sc = scenario(
        &fan_in("fan_in = 60000000\nfan_in_max = 100000000\n").replace("flows = 1000\n", "flows = 80000001\n"),
    );
    let e = refused_at_generation(&sc);
    assert_eq!(e.path, "workload.fan_in", "{e}");
    assert!(e.message.contains("1.600e8 flows"), "{e}");
}

fn refused_at_generation(sc: &Scenario) -> ScenarioError {
    let net = shoal_core::net::build(&sc.topology).unwrap();
    shoal_core::workload::generate(&sc.workload, sc.run.seed, &net).expect_err("refused")
}

// ---- item 4: runs that cannot progress or end ----------------------------------------

/// Every timer and interval key has a floor: one 64-B frame on the fastest link (5.12 ns
/// at 100 Gbps) for the rate controllers' timers, one largest packet (1,514 B: 121.12 ns)
/// for the timeouts and deadlock_after. A time below it is refused by its key, naming the
/// floor; the floor itself is accepted.
#[test]
fn timers_below_their_floor_are_refused_by_key() {
    let frame_floor = "5120ps"; // 64 B x 8 / 100 Gbps
    let packet_floor = "121120ps"; // 1,514 B x 8 / 100 Gbps
    let cases = [
        ("[switch.flow_control]\nkind = \"pfc\"\ndeadlock_after = ", "switch.flow_control.deadlock_after", packet_floor),
        ("[switch.flow_control]\nkind = \"dsh\"\ndeadlock_after = ", "switch.flow_control.deadlock_after", packet_floor),
        (
            "[switch]\nqueues = 35\nscheduler = { kind = \"dwrr\", strict_queues = 2 }\n[switch.flow_control]\nkind = \"bfc\"\n[switch.flow_control.backstop]\ndeadlock_after = ",
            "switch.flow_control.backstop.deadlock_after",
            packet_floor,
        ),
        ("[rdma]\nrto = ", "rdma.rto", packet_floor),
        ("[transport]\nrto_min = ", "transport.rto_min", packet_floor),
        ("[transport]\nrto_init = ", "transport.rto_init", packet_floor),
        ("[rdma.cc]\nkind = \"dcqcn\"\nincrease_interval = ", "rdma.cc.increase_interval", frame_floor),
        ("[rdma.cc]\nkind = \"dcqcn\"\nalpha_interval = ", "rdma.cc.alpha_interval", frame_floor),
        ("[rdma.cc]\nkind = \"dcqcn\"\ndecrease_interval = ", "rdma.cc.decrease_interval", frame_floor),
        ("[rdma.cc]\nkind = \"dcqcn\"\nmodel = \"paper\"\nincrease_interval = ", "rdma.cc.increase_interval", frame_floor),
        ("[rdma.cc]\nkind = \"dcqcn\"\nmodel = \"paper\"\nalpha_interval = ", "rdma.cc.alpha_interval", frame_floor),
        ("[rdma.cc]\nkind = \"dcqcn\"\nmodel = \"paper\"\ncnp_interval = ", "rdma.cc.cnp_interval", frame_floor),
    ];
    for (keys, path, floor) in cases {
        let floor_ps: u64 = floor.trim_end_matches("ps").parse().unwrap();
        for short in ["\"1ps\"".to_string(), "5".to_string(), format!("\"{}ps\"", floor_ps - 1)] {
            let e = refused(&rdma_incast(&format!("{keys}{short}\n")));
            assert_eq!(e.path, path, "{keys}{short}: {e}");
            assert!(e.message.contains(&format!("at least {floor}")), "{keys}{short}: {e}");
        }
        scenario(&rdma_incast(&format!("{keys}\"{floor}\"\n")));
    }
}

/// The floors follow the fastest link: at 25 Gbps a 64-B frame takes 20.48 ns.
#[test]
fn timer_floors_follow_the_link_rate() {
    let slow = |keys: &str| rdma_incast(keys).replace("100Gbps", "25Gbps");
    let e = refused(&slow("[rdma.cc]\nkind = \"dcqcn\"\nalpha_interval = \"20479ps\"\n"));
    assert!(e.message.contains("at least 20480ps"), "{e}");
    scenario(&slow("[rdma.cc]\nkind = \"dcqcn\"\nalpha_interval = \"20480ps\"\n"));
    // Every default timer stays accepted on a slow network: the floors stop at 1 us.
    scenario(&slow("[switch.flow_control]\nkind = \"pfc\"\n").replace("25Gbps", "10Mbps"));
}

/// `rate_on_first_cnp = 0` cuts the rate at the first notification to `min_rate`, as every
/// cut stops there, not to 0: the flows finish, each no slower than at `min_rate` alone
/// (100 KB at 100 Mbps: 8 ms) plus its share of the link.
#[test]
fn a_first_cut_to_zero_stops_at_min_rate() {
    let mut sim = Simulation::new(&scenario(&rdma_incast(
        "[rdma.cc]\nkind = \"dcqcn\"\nrate_on_first_cnp = 0\n[switch.marking.cutoff]\nk = \"5KB\"\n[switch.ecn]\nnon_ect = \"pass\"\n",
    )))
    .unwrap();
    assert!(run_at_most(&mut sim, 2_000_000), "the run ends");
    for r in sim.flow_records() {
        let fct = r.finish.expect("every flow finishes") - r.start;
        assert!(fct <= 8_000_000_000 + 10_000_000, "{fct} ps: slower than min_rate");
    }
}

/// 10 KB ACKs overload a lossy fabric and are dropped; connections without a
/// retransmission timeout whose last packets or ACKs were lost can never complete
/// (`rto = "none"`, as the reference), but the run ends once the network is empty:
/// their DCQCN timers kept the event queue from ever emptying.
#[test]
fn stalled_rdma_connections_let_the_run_end() {
    let mut sim = Simulation::new(&scenario(
        "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 4\n\
         [rdma]\nack_size = 10000\n[switch.ecn]\nnon_ect = \"pass\"\n\
         [switch.marking.red]\nkmin = \"40KB\"\nkmax = \"160KB\"\npmax = 0.2\n\
         [workload]\npattern = \"all_to_all\"\nflows = 100\nload = 0.5\ntransport = \"rdma\"\n",
    ))
    .unwrap();
    assert!(run_at_most(&mut sim, 5_000_000), "the run ends (at {} ps)", sim.now());
    assert_eq!(sim.pending_events(), 0);
    assert!(sim.flows_finished() < sim.flows_total(), "the test needs stalled connections");
    assert_eq!(sim.packets_in_network(), 0);
}

/// BFC's overflow cache only holds flows whose bucket is full: a large one changes no
/// result of 50 flows spread over 16,384 buckets, and costs no time per packet (each
/// packet of a flow without a bucket entry scanned the whole cache, minutes of run).
#[test]
fn a_large_bfc_overflow_cache_changes_nothing_and_costs_nothing() {
    let run = |cache: u32| {
        let sim = common::run(&scenario(&format!(
            "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 4\n\
             [switch]\nqueues = 35\nscheduler = {{ kind = \"dwrr\", strict_queues = 2 }}\n\
             flow_control = {{ kind = \"bfc\", overflow_cache = {cache} }}\n[rdma.cc]\nkind = \"none\"\n\
             [workload]\npattern = \"all_to_all\"\ncdf = \"websearch\"\nflows = 50\nload = 0.5\ntransport = \"rdma\"\n"
        )));
        sim.flow_records().into_iter().map(|r| (r.id, r.finish)).collect::<Vec<_>>()
    };
    let started = std::time::Instant::now();
    let large = run(100_000);
    assert!(started.elapsed().as_secs() < 60, "took {:?}", started.elapsed());
    assert_eq!(large, run(100));
    assert!(large.iter().all(|(_, finish)| finish.is_some()));
}

/// Topology files with a link that takes seconds per packet, or a delay of seconds, are
/// warned of by line: datacenter runs last micro- to milliseconds.
#[test]
fn topology_files_with_links_of_seconds_are_warned_of() {
    for (line, what) in [("1 2 1 1us 0", "1bps"), ("1 2 100Gbps 1000000 0", "1000000s")] {
        let file = TempFile::new("slow.txt", &format!("3 1 2\n2\n0 2 100Gbps 1us 0\n{line}\n"));
        let toml = format!(
            "[topology]\nkind = \"file\"\npath = \"{}\"\n[workload]\npattern = \"incast\"\nsenders = \"1\"\nreceiver = 0\nsize = \"1KB\"\n",
            file.path().display()
        );
        let all = warnings(&toml);
        assert!(
            all.iter().any(|w| w.starts_with("topology.path")
                && w.contains(what)
                && w.contains("host 1 and switch 0 (node 2)")),
            "{line}: {all:?}"
        );
    }
}

/// A delay no packet can cross before Shoal's time limit is refused at once, by its key,
/// however large the network (no network is built to say so).
#[test]
fn delays_beyond_the_time_limit_are_refused_before_anything_is_built() {
    let huge = "[topology]\nkind = \"leaf_spine\"\nleaves = 1000\nspines = 1000\nhosts_per_leaf = 1000\nlink_delay = \"1000000s\"\n";
    let started = std::time::Instant::now();
    let e = refused(huge);
    assert_eq!(e.path, "topology.link_delay", "{e}");
    assert!(e.message.contains("a round trip of 8000000.000 s over the longest route"), "{e}");
    assert!(e.message.contains("time limit of 4000000 s"), "{e}");
    assert!(started.elapsed().as_secs() < 5, "refused in {:?}", started.elapsed());
    // A long but possible delay is a warning.
    let all = warnings(&star(4, "").replace("\"1us\"", "\"2s\""));
    assert!(warned(&all, "topology.link_delay: 2s"), "{all:?}");
}

// ---- item 5: silently wrong -----------------------------------------------------------

/// An `[rdma.cc]` table without `kind` is the documented default, DCQCN, with its keys.
#[test]
fn an_rdma_cc_table_without_kind_is_dcqcn() {
    assert_eq!(Scenario::from_toml("[rdma.cc]\n").unwrap().rdma.cc.kind(), "dcqcn");
    let sc = Scenario::from_toml("[rdma.cc]\ng = 0.5\n").unwrap();
    assert_eq!(sc.rdma.cc.kind(), "dcqcn");
    assert_eq!(sc.rdma.cc, Scenario::from_toml("[rdma.cc]\nkind = \"dcqcn\"\ng = 0.5\n").unwrap().rdma.cc);
    assert_eq!(Scenario::default().rdma.cc.kind(), "dcqcn");
}

/// `rdma.ack_priority` takes the classes `workload.priority` takes, 0 to 63.
#[test]
fn an_ack_priority_beyond_the_classes_is_refused() {
    let e = refused(&rdma_incast("[rdma]\nack_priority = 64\n"));
    assert_eq!(e.path, "rdma.ack_priority");
    assert!(e.message.contains("64 is not accepted (accepted: 0 to 63)"), "{e}");
    scenario(&rdma_incast("[rdma]\nack_priority = 63\n"));
}

/// An ACK larger than the NIC buffer would be dropped every time: the NIC buffer must
/// hold the largest packet sent, ACKs included.
#[test]
fn an_ack_larger_than_the_nic_buffer_is_refused() {
    let e = refused(&rdma_incast("[host]\nnic_buffer = \"3KB\"\n[rdma]\nack_size = 10000\n"));
    assert_eq!(e.path, "host.nic_buffer");
    assert!(e.message.contains("3KB cannot hold one packet of 10KB (rdma.ack_size)"), "{e}");
    scenario(&rdma_incast("[host]\nnic_buffer = \"3KB\"\n[rdma]\nack_size = 3000\n"));
}

/// NIC drops of lossless-class packets are lossless drops: 10 KB ACKs of an incast
/// overflow the receiver's 20 KB NIC. Every class is lossless under PFC's defaults, so
/// every drop is a lossless one.
#[test]
fn nic_drops_of_lossless_packets_are_lossless_drops() {
    let mut sim = Simulation::new(&scenario(&rdma_incast(
        "[host]\nnic_buffer = \"20KB\"\n[rdma]\nack_size = 10000\nrto = \"100us\"\n[rdma.cc]\nkind = \"none\"\n[switch.flow_control]\nkind = \"pfc\"\n[run]\nstop_time = \"2ms\"\n",
    )))
    .unwrap();
    sim.run();
    let counters = sim.counters();
    let nic_drops = counters.dropped[shoal_core::stats::DropReason::NicBuffer as usize];
    assert!(nic_drops > 0, "the test needs NIC drops");
    assert_eq!(counters.lossless_drops, counters.total_dropped());
}

// ---- item 8: warnings -----------------------------------------------------------------

#[test]
fn pausing_keys_that_cannot_work_as_meant_are_warned_of() {
    let pfc = |keys: &str| warnings(&rdma_incast(&format!("[switch.flow_control]\nkind = \"pfc\"\n{keys}")));
    let dsh = |keys: &str| warnings(&rdma_incast(&format!("[switch.flow_control]\nkind = \"dsh\"\n{keys}")));
    // The default pool is 3 MB shared; the largest packet 1,514 B: an alpha of 1,982 or
    // more puts the threshold above the pool while a packet's room is free.
    for all in [pfc("alpha = 1e30\n"), dsh("alpha = 1e30\n"), pfc("alpha = 2000\n")] {
        assert!(warned(&all, "switch.flow_control.alpha: "), "{all:?}");
    }
    assert!(!warned(&pfc("alpha = 1900\n"), "switch.flow_control.alpha"));
    assert!(warned(&pfc("alpha = 1e30\n"), "switch.flow_control.alpha: 1e30 puts the threshold"));
    assert!(warned(&pfc("xon_offset = \"4MB\"\n"), "switch.flow_control.xon_offset: "));
    assert!(warned(&pfc("xon_floor = \"4MB\"\n"), "switch.flow_control.xon_floor: "));
    assert!(warned(&dsh("queue_resume_offset = \"4MB\"\n"), "switch.flow_control.queue_resume_offset: "));
    assert!(warned(&dsh("port_resume_offset = \"4MB\"\n"), "switch.flow_control.port_resume_offset: "));
    assert!(warned(&pfc("classes = []\n"), "switch.flow_control.classes: "));
    assert!(warned(&dsh("classes = []\n"), "switch.flow_control.classes: "));
    assert!(warned(&dsh("headroom = \"1B\"\n"), "switch.flow_control.headroom: "));
    assert!(!warned(&dsh(""), "switch.flow_control"), "{:?}", dsh(""));
    assert!(!warned(&pfc(""), "switch.flow_control"), "{:?}", pfc(""));
}

#[test]
fn a_bfc_interval_longer_than_its_hop_rtt_is_warned_of() {
    let bfc = |keys: &str| {
        warnings(&rdma_incast(&format!(
            "[switch]\nqueues = 35\nscheduler = {{ kind = \"dwrr\", strict_queues = 2 }}\n[switch.flow_control]\nkind = \"bfc\"\n{keys}"
        )))
    };
    assert!(warned(&bfc("interval = \"3us\"\n"), "switch.flow_control.interval: 3us is longer than"));
    assert!(!warned(&bfc("interval = \"2us\"\n"), "switch.flow_control.interval"));
    assert!(warned(&bfc("hop_rtt = \"1us\"\ninterval = \"2us\"\n"), "switch.flow_control.interval"));
}

#[test]
fn rdma_keys_without_rdma_traffic_are_warned_of() {
    let tcp = rdma_incast("[rdma]\nmtu = 4000\n[rdma.cc]\nkind = \"hpcc\"\n").replace("transport = \"rdma\"\n", "");
    let all = warnings(&tcp);
    assert!(warned(&all, "rdma.mtu: has no effect"), "{all:?}");
    assert!(warned(&all, "rdma.cc: has no effect"), "{all:?}");
    assert!(!warned(&warnings(&rdma_incast("[rdma]\nmtu = 4000\n")), "rdma.mtu"));
}

#[test]
fn dcqcn_without_a_marking_rule_is_warned_of() {
    let all = warnings(&rdma_incast(""));
    assert!(warned(&all, "rdma.cc: dcqcn reacts to ECN marks, and no switch.marking rule"), "{all:?}");
    let marked = warnings(&rdma_incast("[switch.marking.cutoff]\nk = \"100KB\"\n[switch.ecn]\nnon_ect = \"pass\"\n"));
    assert!(!warned(&marked, "rdma.cc"), "{marked:?}");
    assert!(!warned(&warnings(&rdma_incast("[rdma.cc]\nkind = \"timely\"\n")), "rdma.cc"));
}

/// A star of 100 Gbps links of 1 us: a 1,036 B packet and its 48 B ACK take 2 x (2 us +
/// 86.72 ns) = 4.17344 us over both links.
#[test]
fn an_rdma_timeout_below_the_round_trip_is_warned_of() {
    let all = warnings(&rdma_incast("[rdma]\nrto = \"4173ns\"\n"));
    assert!(
        warned(&all, "rdma.rto: 4173ns is shorter than the base round trip of the longest route (4.173 us"),
        "{all:?}"
    );
    assert!(!warned(&warnings(&rdma_incast("[rdma]\nrto = \"4174ns\"\n")), "rdma.rto"));
}

#[test]
fn a_pool_size_beside_a_whole_buffer_is_warned_of() {
    let all = warnings(&star(4, "[switch]\nbuffer = \"12MB\"\npool_size = \"4MB\"\n"));
    assert!(warned(&all, "switch.pool_size: has no effect with switch.buffer"), "{all:?}");
}

#[test]
fn congestion_control_rates_above_the_line_rate_are_warned_of() {
    for (cc, key) in [("dcqcn", "rate_ai"), ("dcqcn", "rate_hai"), ("hpcc", "rate_ai"), ("timely", "min_rate")] {
        let all = warnings(&rdma_incast(&format!(
            "[rdma.cc]\nkind = \"{cc}\"\n{key} = \"400Gbps\"\n[switch.marking.cutoff]\nk = \"100KB\"\n[switch.ecn]\nnon_ect = \"pass\"\n"
        )));
        assert!(warned(&all, &format!("rdma.cc.{key}: 400Gbps is above the line rate")), "{cc} {key}: {all:?}");
    }
}

/// `non_ect = "drop"` drops RDMA's ACKs where a marking rule fires, but never a packet of
/// a lossless class: the warning is given only where PFC does not cover the ACKs' class.
#[test]
fn dropping_non_ect_acks_is_warned_of_only_where_they_are_lossy() {
    let drops = |extra: &str| {
        warnings(&rdma_incast(&format!("[switch.marking.cutoff]\nk = \"100KB\"\n{extra}")))
            .iter()
            .any(|w| w.starts_with("switch.ecn.non_ect = \"drop\" drops RDMA ACKs"))
    };
    assert!(drops(""), "no flow control: ACKs can be dropped");
    assert!(!drops("[switch.flow_control]\nkind = \"pfc\"\n"), "PFC covers every class by default");
    assert!(drops("[switch.flow_control]\nkind = \"pfc\"\nclasses = [0]\n[rdma]\nack_priority = 5\n"));
    assert!(!drops("[switch.flow_control]\nkind = \"pfc\"\nclasses = [0, 5]\n[rdma]\nack_priority = 5\n"));
}

/// DSH's insurance below eta (2 (C D + MTU) + 3,840 B = 31,868 B on 100 Gbps, 1 us links
/// with 1,514 B frames) is warned of when a packet or more short, not when it rounds eta
/// with a 1,500 B MTU (31,840 B, the paper's way).
#[test]
fn dsh_insurance_short_of_eta_is_warned_of() {
    let short = |headroom: &str| {
        let all = warnings(&rdma_incast(&format!(
            "[switch]\nports_per_pool = 128\n[switch.flow_control]\nkind = \"dsh\"\nheadroom = \"{headroom}\"\n"
        )));
        warned(&all, "switch.flow_control.headroom:")
    };
    assert!(short("1B"));
    assert!(short("30000B"));
    assert!(!short("31840B"));
    assert!(!short("31868B"));
}
