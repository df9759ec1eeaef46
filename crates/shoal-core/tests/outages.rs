//! Links and switches out of service during a run (`topology.outages`): what crosses a
//! down link is lost until routing moves away from it (`topology.reconvergence`), and
//! nothing after; flows move to the paths left; the schedule is checked.

mod common;
use common::{refusal, run, scenario};
use shoal_core::{Scenario, Simulation};

/// A leaf-spine of 2 leaves (nodes 4, 5) and 2 spines (nodes 6, 7), 2 hosts a leaf.
const FABRIC: &str = "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\n\
                      link_rate = \"100Gbps\"\nlink_delay = \"1us\"\n";

/// One flow of datagrams from host 0 to host 2, 10 Gbps for 2 ms.
const DATAGRAMS: &str =
    "[workload]\npattern = \"udp\"\nsenders = \"0\"\nreceiver = 2\nrate = \"10Gbps\"\nstop = \"2ms\"\n";

/// The node id of the spine that host 0's datagrams to host 2 cross, with no outage.
fn spine_of_the_flow() -> u32 {
    let mut sim = run(&scenario(&format!("{FABRIC}{DATAGRAMS}")));
    let c = sim.counters_json();
    let used: Vec<u64> = c["links"]["core_links"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["from_switch"] == 0 && l["utilization"].as_f64().unwrap() > 0.0)
        .map(|l| l["to_switch"].as_u64().unwrap())
        .collect();
    assert_eq!(used.len(), 1, "one flow takes one spine");
    4 + used[0] as u32
}

fn counters(sim: &mut Simulation) -> (f64, f64, f64) {
    let c = sim.counters_json();
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    (f(&c["packets"]["sent"]), f(&c["drops"]["link_down"]), f(&c["packets"]["delivered"]))
}

/// The spine the flow crosses fails at 0.5 ms and returns at 1.5 ms; routing follows
/// `reconvergence` later. The flow loses what it sends in that time (its constant rate
/// times the delay; give or take the packet on the wire), then moves to the other spine
/// and loses nothing more; with no delay it loses at most what was on the wire.
#[test]
fn a_failed_spine_blackholes_the_flow_for_the_reconvergence_time_only() {
    let spine = spine_of_the_flow();
    for reconvergence_us in [0.0, 100.0, 300.0] {
        let mut sim = run(&scenario(&format!(
            "{FABRIC}reconvergence = \"{reconvergence_us}us\"\n\
             [[topology.outages]]\nswitch = {spine}\nat = \"500us\"\nuntil = \"1500us\"\n{DATAGRAMS}"
        )));
        let (sent, lost, delivered) = counters(&mut sim);
        let per_us = sent / 2000.0; // packets a microsecond, at a constant rate for 2 ms
        let expected = per_us * reconvergence_us;
        assert!((lost - expected).abs() <= 2.0, "{reconvergence_us} us: lost {lost}, expected {expected:.1}");
        assert_eq!(delivered + lost, sent, "nothing else is lost");
    }
}

/// A link (not a switch) down for good: the flow moves, and the down link carries
/// nothing after the routes moved.
#[test]
fn a_link_down_for_good_moves_the_flow_for_good() {
    let spine = spine_of_the_flow();
    let mut sim = run(&scenario(&format!(
        "{FABRIC}reconvergence = \"50us\"\n[[topology.outages]]\nlink = [4, {spine}]\nat = \"1ms\"\n{DATAGRAMS}"
    )));
    let (sent, lost, delivered) = counters(&mut sim);
    let expected = sent / 2000.0 * 50.0;
    assert!((lost - expected).abs() <= 2.0, "lost {lost}, expected {expected:.1}");
    assert_eq!(delivered + lost, sent);
}

/// TCP flows across a fabric whose spine fails and returns all finish (they resend what
/// the outage lost), and PFC's pauses held by the failed spine end with its links.
#[test]
fn flows_finish_across_a_spine_failure_with_and_without_pfc() {
    for (transport, flow_control) in [("tcp", "lossy"), ("rdma", "pfc")] {
        let mut sim = run(&scenario(&format!(
            "[topology]\nkind = \"leaf_spine\"\nleaves = 4\nspines = 2\nhosts_per_leaf = 4\nreconvergence = \"50us\"\n\
             [[topology.outages]]\nswitch = 20\nat = \"200us\"\nuntil = \"1ms\"\n\
             [switch.flow_control]\nkind = \"{flow_control}\"\n[rdma]\nrto = \"100us\"\n\
             [workload]\npattern = \"all_to_all\"\ncdf = \"websearch\"\nflows = 200\nload = 0.6\ntransport = \"{transport}\"\n"
        )));
        let records = sim.flow_records();
        assert!(records.iter().all(|r| r.finish.is_some()), "{transport}: every flow finishes");
        assert!(counters(&mut sim).1 > 0.0, "{transport}: the outage lost packets");
        assert!(sim.deadlocks().is_empty(), "{transport}: {:?}", sim.deadlocks());
    }
}

#[test]
fn bad_outages_are_refused_by_key() {
    let refused = |outage: &str| refusal(&format!("{FABRIC}[[topology.outages]]\n{outage}\n"));
    let (key, message) = refused("link = [0, 4]\nat = \"1ms\"");
    assert_eq!(key, "topology.outages[0].link");
    assert!(message.contains("would cut host 0 off"), "{message}");
    let (key, message) = refused("switch = 4\nat = \"1ms\"");
    assert_eq!(key, "topology.outages[0].switch");
    assert!(message.contains("would cut host"), "{message}");
    let (key, message) = refused("switch = 1\nat = \"1ms\"");
    assert_eq!(key, "topology.outages[0].switch");
    assert!(message.contains("1 is not a switch's node id"), "{message}");
    let (key, _) = refused("link = [6, 7]\nat = \"1ms\"");
    assert_eq!(key, "topology.outages[0].link");
    let (key, message) = refused("link = [4, 6]\nat = \"2ms\"\nuntil = \"1ms\"");
    assert_eq!(key, "topology.outages[0].until");
    assert!(message.contains("is not after at = 2ms"), "{message}");
    let (key, _) = refused("at = \"1ms\"");
    assert_eq!(key, "topology.outages[0]");
    let sc = Scenario::from_toml(&format!(
        "{FABRIC}[[topology.outages]]\nswitch = 6\nat = \"1ms\"\n[[topology.outages]]\nswitch = 7\nat = \"3ms\"\n"
    ))
    .unwrap();
    let e = sc.validate().unwrap_err();
    assert_eq!(e.path, "topology.outages");
    assert!(e.message.contains("with every outage at once"), "{e}");
}

/// A run with outages asked for several threads runs on one, with the same results.
#[test]
fn a_run_with_outages_runs_on_one_thread() {
    let sc = scenario(&format!(
        "{FABRIC}reconvergence = \"20us\"\n[[topology.outages]]\nswitch = 6\nat = \"300us\"\nuntil = \"900us\"\n{DATAGRAMS}"
    ));
    let mut one = Simulation::new(&sc).unwrap();
    one.run();
    let mut many = Simulation::with_threads(&sc, 4).unwrap();
    assert_eq!(many.partitions(), 1);
    many.run();
    assert_eq!(one.counters_json(), many.counters_json());
}
