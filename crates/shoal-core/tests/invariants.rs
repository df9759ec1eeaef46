//! Conservation, accounting and determinism on every scheme of the core.

mod common;
use common::{run, scenario};
use shoal_core::Simulation;

/// A small, lossy mix: web-search flows plus an incast on shallow buffers, with a second
/// priority class, so that drops, marks, recovery and timeouts all happen.
fn mixed(cc: &str, scheduler: &str, ecn: &str, seed: u64) -> String {
    format!(
        r#"
        [topology]
        kind = "leaf_spine"
        leaves = 2
        spines = 2
        hosts_per_leaf = 4
        link_rate = "10Gbps"
        uplink_rate = "10Gbps"
        link_delay = "2us"
        [switch]
        pool_size = "200KB"
        reserved = "3KB"
        ports_per_pool = 4
        alpha = [1.0, 2.0]
        queues = 2
        scheduler = "{scheduler}"
        [switch.ecn]
        {ecn}
        [transport]
        cc = "{cc}"
        init_cwnd = 10
        rto_min = "1ms"
        [workload]
        pattern = "all_to_all"
        cdf = "fb_hadoop"
        load = 0.7
        flows = 300
        [[workload.extra]]
        pattern = "incast"
        receiver = 0
        size = "60KB"
        start = "100us"
        period = "500us"
        repeats = 3
        priority = 1
        [run]
        seed = {seed}
        "#
    )
}

#[test]
fn conservation_and_accounting_on_every_scheme() {
    for cc in ["newreno", "ecn_star", "dctcp"] {
        for scheduler in ["fifo", "strict_priority", "dwrr"] {
            for ecn in [
                "",
                "k = \"30KB\"",
                "kmin = \"10KB\"\nkmax = \"60KB\"\npmax = 0.2",
                "k = \"30KB\"\nat = \"enqueue\"",
                "k = \"30KB\"\nscope = \"port\"",
            ] {
                let sc = scenario(&mixed(cc, scheduler, ecn, 3));
                let mut sim = run(&sc);
                let c = sim.counters_json();
                let records = sim.flow_records();
                assert!(records.iter().all(|r| r.finish.is_some()), "{cc}/{scheduler}/{ecn}: unfinished flows");
                assert_eq!(c["packets"]["in_network"], 0);
                let drops = c["packets"]["dropped"].as_u64().unwrap();
                let sent = c["packets"]["sent"].as_u64().unwrap();
                let delivered = c["packets"]["delivered"].as_u64().unwrap();
                assert_eq!(sent, drops + delivered);
                // Every flow's receiver got exactly its bytes.
                assert!(records.iter().all(|r| r.delivered_bytes == r.bytes));
                // Marks happen only for ECN-capable transports (with the derived K when no
                // rule is set); non-ECT NewReno gets drops instead.
                let marks = c["ecn_marks"].as_u64().unwrap();
                if cc == "newreno" {
                    assert_eq!(marks, 0, "{cc}/{ecn}");
                } else {
                    assert!(marks > 0, "{cc}/{ecn}: no marks");
                }
                if !ecn.is_empty() && cc == "newreno" {
                    assert!(c["drops"]["marking_drop"].as_u64().unwrap() > 0);
                }
            }
        }
    }
}

#[test]
fn losses_are_recovered() {
    // Shallow buffer, no ECN, a heavy incast: drops and retransmissions must occur and
    // every flow must still complete.
    let sc = scenario(&mixed("newreno", "fifo", "", 5).replace("pool_size = \"200KB\"", "pool_size = \"40KB\""));
    let mut sim = run(&sc);
    let c = sim.counters_json();
    assert!(c["packets"]["dropped"].as_u64().unwrap() > 0);
    let records = sim.flow_records();
    assert!(records.iter().map(|r| r.retransmits).sum::<u32>() > 0);
    assert!(records.iter().all(|r| r.finish.is_some()));
    // Switches drop all that is dropped (no NIC overflows here), each pool its share.
    assert_eq!(c["packets"]["switch_dropped"], c["packets"]["dropped"]);
    let by_pool: u64 = c["pools"].as_array().unwrap().iter().map(|p| p["drops"].as_u64().unwrap()).sum();
    assert_eq!(by_pool, c["packets"]["switch_dropped"].as_u64().unwrap());
}

#[test]
fn same_seed_same_results_other_seed_other_results() {
    let key = |seed| {
        let sc = scenario(&mixed("dctcp", "dwrr", "k = \"30KB\"", seed));
        let sim = run(&sc);
        sim.flow_records().iter().map(|r| format!("{:?}", r)).collect::<Vec<_>>().join("\n")
    };
    assert_eq!(key(11), key(11));
    assert_ne!(key(11), key(12));
}

#[test]
fn stop_time_leaves_flows_unfinished_and_counted() {
    let mut sc = scenario(&mixed("dctcp", "fifo", "k = \"30KB\"", 1));
    sc.run.stop_time = Some(shoal_core::units::Time(200_000_000)); // 200 us
    let mut sim = Simulation::new(&sc).unwrap();
    sim.run();
    assert!(sim.check_invariants().is_empty());
    let unfinished = sim.flow_records().iter().filter(|r| r.finish.is_none()).count();
    assert!(unfinished > 0);
    assert!(sim.packets_in_network() > 0);
    assert!(sim.now() <= 200_000_000);
}

/// `switch_arrivals` counts a packet once per switch it reaches: a lossless flow within a
/// leaf crosses one switch, one across the spine three (data and ACKs alike).
#[test]
fn every_switch_hop_counts_as_one_arrival() {
    for (receiver, hops) in [(1u64, 1u64), (4, 3)] {
        let sc = scenario(&format!(
            r#"
            [topology]
            kind = "leaf_spine"
            leaves = 2
            spines = 2
            hosts_per_leaf = 4
            link_rate = "10Gbps"
            [workload]
            pattern = "incast"
            senders = "0"
            receiver = {receiver}
            size = "200KB"
            "#
        ));
        let mut sim = run(&sc);
        let c = sim.counters_json();
        let packets = &c["packets"];
        assert_eq!(packets["dropped"], 0);
        let sent = packets["sent"].as_u64().unwrap();
        assert_eq!(packets["switch_arrivals"].as_u64().unwrap(), hops * sent, "receiver {receiver}");
    }
}

/// Ports of 1,024 queues: flows of three priorities (0, 1 and 63) share the network under
/// DWRR and under strict priority; every flow finishes and the accounting holds, with the
/// queues beyond the busy ones idle.
#[test]
fn a_thousand_queues_per_port() {
    for scheduler in ["dwrr", "strict_priority"] {
        let sc = scenario(&format!(
            r#"
            [topology]
            kind = "star"
            hosts = 8
            link_rate = "10Gbps"
            [switch]
            queues = 1024
            reserved = "0B"
            [switch.scheduler]
            kind = "{scheduler}"
            [workload]
            pattern = "all_to_all"
            cdf = "fb_hadoop"
            load = 0.6
            flows = 100
            [[workload.extra]]
            pattern = "incast"
            senders = "1-7"
            receiver = 0
            size = "100KB"
            priority = 63
            [[workload.extra]]
            pattern = "incast"
            senders = "1-7"
            receiver = 0
            size = "100KB"
            priority = 1
            "#
        ));
        let mut sim = run(&sc);
        assert_eq!(sim.flows_finished(), sim.flows_total(), "{scheduler}");
        let c = sim.counters_json();
        let used: Vec<u64> = c["queues"].as_array().unwrap().iter().map(|q| q["queue"].as_u64().unwrap()).collect();
        assert!(used.contains(&63) && used.iter().all(|&q| q == 0 || q == 1 || q == 63), "{scheduler}: {used:?}");
    }
}
