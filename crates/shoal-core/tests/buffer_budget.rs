//! A switch's buffer (`switch.buffer`) as its parts: the reserves, the headroom and the
//! shared pool. A reserve for a queue no packet joins is buffer the shared pool loses, so
//! it is warned about; a buffer its parts do not fit in is refused with the total needed
//! and each part, for the packets the scenario actually sends (issue 30, item 10).

use shoal_core::{Scenario, ScenarioError, Simulation};

fn warnings(toml: &str) -> Vec<String> {
    Scenario::from_toml(toml).unwrap().validate().unwrap()
}

fn reserve_warning(toml: &str) -> Option<String> {
    warnings(toml).into_iter().find(|w| w.starts_with("switch.reserved:"))
}

fn refused(toml: &str) -> ScenarioError {
    let sc = Scenario::from_toml(toml).unwrap();
    match Simulation::new(&sc) {
        Ok(_) => panic!("accepted: {toml}"),
        Err(e) => e,
    }
}

/// The case: a 12 MB buffer with the default 8 queues of 128 KB reserved each,
/// and the fifo scheduler, whose packets all join queue 0.
const DEFAULTS_12MB: &str = "[switch]\nbuffer = \"12MB\"\n";

#[test]
fn reserves_for_queues_no_packet_joins_are_warned_about() {
    let w = reserve_warning(DEFAULTS_12MB).expect("a warning");
    // A pool of 8 ports (ports_per_pool) x 7 unused queues x 128 KB = 7.168 MB.
    for words in [
        "only queue 0",
        "7 of switch.queues = 8 queues",
        "7.17 MB of each pool's 12MB",
        "8 ports x 7 queues x 128KB",
        "set switch.queues = 1",
        "switch.reserve_per = \"port\"",
    ] {
        assert!(w.contains(words), "{words:?} not in: {w}");
    }
    // Priorities spread over two queues of a priority scheduler: six left unused.
    let w = reserve_warning(
        "[switch]\nbuffer = \"12MB\"\nscheduler = \"strict_priority\"\n[workload]\npriorities = [0, 2]\n",
    )
    .expect("a warning");
    assert!(w.contains("only queues 0, 2") && w.contains("6 of switch.queues = 8"), "{w}");
    assert!(w.contains("set switch.queues = 3"), "{w}");
}

#[test]
fn reserves_that_every_queue_can_use_or_that_are_small_are_not_warned_about() {
    for toml in [
        // No buffer: pool_size is the shared pool whatever the reserves.
        "",
        // One queue, or one reserve per port.
        "[switch]\nbuffer = \"12MB\"\nqueues = 1\n",
        "[switch]\nbuffer = \"12MB\"\nreserve_per = \"port\"\n",
        // Every queue carries a priority.
        "[switch]\nbuffer = \"12MB\"\nscheduler = \"strict_priority\"\n[workload]\npriorities = [0, 1, 2, 3, 4, 5, 6, 7]\n",
        // Flows hashed over the queues.
        "[switch]\nbuffer = \"12MB\"\nscheduler = \"dwrr\"\nclassifier = \"flow_hash\"\n",
        // 7 x 8 x 3 KB = 168 KB of 16 MiB: about 1%.
        "[switch]\nbuffer = \"16MiB\"\nreserved = \"3KB\"\n",
    ] {
        assert_eq!(reserve_warning(toml), None, "{toml}");
    }
}

#[test]
fn an_impossible_buffer_gives_the_total_needed_and_its_parts() {
    // 8 ports x 8 queues x 128 KB = 8.192 MB reserved in each pool, and one packet.
    let e = refused("[switch]\nbuffer = \"1MB\"\n");
    assert_eq!(e.path, "switch.buffer");
    for words in [
        "pool 0 of switch 0 (node 32)",
        "needs at least 8193514 B",
        "8192000 B of reserves (switch.reserved = 128KB per queue x 8 queues x 8 ports)",
        "0 B of headroom",
        "one packet of 1514 B (transport.mss + transport.header)",
    ] {
        assert!(e.message.contains(words), "{words:?} not in: {e}");
    }
}

/// RDMA flows alone send packets of rdma.mtu + rdma.header (1,036 B): a buffer that
/// holds one is enough, whatever TCP's segment size.
#[test]
fn the_least_buffer_is_that_of_the_packets_the_scenario_sends() {
    let rdma =
        "[topology]\nhosts = 4\n[switch]\nqueues = 1\nreserved = \"0B\"\nports_per_pool = 1\nbuffer = \"1100B\"\n\
                [rdma.cc]\nkind = \"none\"\n[workload]\npattern = \"incast\"\nsenders = \"0\"\nreceiver = 1\n\
                size = \"5KB\"\ntransport = \"rdma\"\n";
    let sc = Scenario::from_toml(rdma).unwrap();
    let mut sim = Simulation::new(&sc).expect("1,100 B holds a 1,036 B packet");
    sim.run();
    assert!(sim.flow_records().iter().all(|f| f.finish.is_some()));
    // Below one RDMA packet: refused, naming RDMA's packet.
    let e = refused(&rdma.replace("1100B", "1000B"));
    assert!(e.message.contains("one packet of 1036 B (rdma.mtu + rdma.header)"), "{e}");
    // The same with TCP flows: their 1,514 B segments do not fit.
    let e = refused(&rdma.replace("transport = \"rdma\"", "transport = \"tcp\""));
    assert!(e.message.contains("one packet of 1514 B (transport.mss + transport.header)"), "{e}");
}

/// Without `switch.buffer`, the pool and reserve, and the NIC's buffer, must hold one
/// packet the scenario sends: RDMA's in an RDMA-only scenario.
#[test]
fn pools_and_nic_buffers_hold_the_packets_the_scenario_sends() {
    let rdma = "[topology]\nhosts = 4\n[host]\nnic_buffer = \"1100B\"\n[switch]\nqueues = 1\nreserved = \"0B\"\n\
                pool_size = \"1100B\"\n[rdma.cc]\nkind = \"none\"\n[workload]\npattern = \"incast\"\n\
                senders = \"0\"\nreceiver = 1\nsize = \"5KB\"\ntransport = \"rdma\"\n";
    let sc = Scenario::from_toml(rdma).unwrap();
    let mut sim = Simulation::new(&sc).expect("1,100 B hold a 1,036 B packet");
    sim.run();
    assert!(sim.flow_records().iter().all(|f| f.finish.is_some()));
    let tcp = rdma.replace("transport = \"rdma\"", "transport = \"tcp\"");
    let e = Scenario::from_toml(&tcp).unwrap().validate().unwrap_err();
    assert_eq!(e.path, "host.nic_buffer");
    assert!(e.message.contains("1514B (transport.mss + transport.header)"), "{e}");
    let e = Scenario::from_toml(&tcp.replace("nic_buffer = \"1100B\"", "nic_buffer = \"10MB\""))
        .unwrap()
        .validate()
        .unwrap_err();
    assert_eq!(e.path, "switch.pool_size");
    assert!(e.message.contains("1514B (transport.mss + transport.header)"), "{e}");
}
