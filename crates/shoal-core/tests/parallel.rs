//! The parallel engine gives the results of the single simulation, whatever the number
//! of threads (more than the machine's cores included).

mod common;
use common::scenario;
use shoal_core::{FlowRecord, Scenario, Simulation};

/// What a run's results come to: every flow's record and the counters.
fn results(sc: &Scenario, threads: usize) -> (Vec<FlowRecord>, serde_json::Value, u64) {
    let mut sim = Simulation::with_threads(sc, threads).unwrap();
    if threads > 1 {
        assert!(sim.partitions() > 1, "{threads} threads: the run is cut");
    }
    sim.run();
    let errors = sim.check_invariants();
    assert!(errors.is_empty(), "{threads} threads: {errors:?}");
    (sim.flow_records(), sim.counters_json(), sim.now())
}

fn same_for_any_threads(toml: &str) {
    let sc = scenario(toml);
    let one = results(&sc, 1);
    assert!(one.0.iter().filter(|r| r.finish.is_some()).count() > 10, "the test needs flows that finish");
    for threads in [2, 3, 4, 8] {
        let many = results(&sc, threads);
        assert_eq!(one.2, many.2, "{threads} threads: the run's end");
        assert_eq!(one.1, many.1, "{threads} threads: counters");
        for (a, b) in one.0.iter().zip(&many.0) {
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{threads} threads");
        }
        assert_eq!(one.0.len(), many.0.len());
    }
}

#[test]
fn a_lossy_fat_tree_of_dctcp_flows() {
    same_for_any_threads(
        "[topology]\nkind = \"fat_tree\"\nk = 4\nlink_delay = \"1us\"\n\
         [switch]\nbuffer = \"400KB\"\nreserved = \"2KB\"\n\
         [workload]\npattern = \"all_to_all\"\ncdf = \"websearch\"\nflows = 300\nload = 0.6\n",
    );
}

#[test]
fn a_lossless_leaf_spine_of_rdma_connections() {
    same_for_any_threads(
        "[topology]\nkind = \"leaf_spine\"\nleaves = 4\nspines = 2\nhosts_per_leaf = 4\nlink_delay = \"1us\"\n\
         [switch.flow_control]\nkind = \"pfc\"\n\
         [workload]\npattern = \"all_to_all\"\ncdf = \"websearch\"\nflows = 300\nload = 0.6\ntransport = \"rdma\"\n",
    );
}

/// Corruption draws depend on the link and the arrival time only, so a cut changes none.
#[test]
fn a_fat_tree_of_lossy_links() {
    same_for_any_threads(
        "[topology]\nkind = \"fat_tree\"\nk = 4\nlink_delay = \"1us\"\nerror_rate = 1e-3\n\
         [switch]\nbuffer = \"400KB\"\nreserved = \"2KB\"\n\
         [workload]\npattern = \"all_to_all\"\ncdf = \"websearch\"\nflows = 300\nload = 0.6\n",
    );
}

/// IRN over a lossy fabric that drops: each connection's SACKs, resends and two timeouts
/// are its own, whatever partition its ends run in.
#[test]
fn irn_over_a_dropping_fat_tree() {
    same_for_any_threads(
        "[topology]\nkind = \"fat_tree\"\nk = 4\nlink_delay = \"1us\"\n\
         [switch]\nbuffer = \"100KB\"\nreserved = \"0B\"\n\
         [rdma]\nwindow = \"max_bdp\"\nloss_recovery = \"irn\"\ncc = \"none\"\n\
         [workload]\npattern = \"all_to_all\"\ncdf = \"websearch\"\nflows = 60\nload = 0.8\ntransport = \"rdma\"\n",
    );
}

/// Each balancer decides at its own switch, from draws that depend on the switch, the
/// packet and the time, so a cut changes none of its choices.
#[test]
fn a_fat_tree_under_each_load_balancer() {
    for policy in [
        "kind = \"spray\"\norder = \"round_robin\"",
        "kind = \"spray\"",
        "kind = \"letflow\"\ngap = \"5us\"",
        "kind = \"drill\"",
    ] {
        same_for_any_threads(&format!(
            "[topology]\nkind = \"fat_tree\"\nk = 4\nlink_delay = \"1us\"\n\
             [switch]\nbuffer = \"400KB\"\nreserved = \"2KB\"\n[switch.load_balancing]\n{policy}\n\
             [workload]\npattern = \"all_to_all\"\ncdf = \"websearch\"\nflows = 40\nload = 0.6\n"
        ));
    }
}
