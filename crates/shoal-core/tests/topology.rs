//! Routing and ECMP on the built topologies.

mod common;
use common::{core_links_from, run, scenario, ser};

/// One-packet flows in a k = 4 fat tree cross 2, 4 or 6 links (same edge, same pod,
/// other pod); alone on the network each completes in exactly hops x (d + s).
#[test]
fn fat_tree_paths_have_the_right_length() {
    // Hosts 0,1 share an edge; 0 and 2 share a pod; 0 and 4 are in different pods.
    for (dst, hops) in [(1u64, 2u64), (2, 4), (4, 6)] {
        let sc = scenario(&format!(
            r#"
            [topology]
            kind = "fat_tree"
            k = 4
            link_rate = "40Gbps"
            uplink_rate = "40Gbps"
            link_delay = "1us"
            [workload]
            pattern = "incast"
            senders = "0"
            receiver = {dst}
            size = "1000B"
            "#
        ));
        let sim = run(&sc);
        let r = &sim.flow_records()[0];
        let expected = hops * (1_000_000 + ser(1054, 40));
        assert_eq!(r.finish.unwrap() - r.start, expected, "dst {dst}");
    }
}

/// ECMP spreads flows over every spine: with many equal-size flows, each leaf uplink
/// carries close to 1 / spines of the cross-leaf bytes (binomial spread: with 4000
/// flows over 4 uplinks one standard deviation is under 3% of the mean).
#[test]
fn ecmp_uses_every_uplink_evenly() {
    let cdf = std::env::temp_dir().join(format!("shoal-constant-{}.cdf", std::process::id()));
    std::fs::write(&cdf, "10000 0\n10000 100\n").unwrap();
    let sc = scenario(&format!(
        r#"
        [topology]
        kind = "leaf_spine"
        leaves = 2
        spines = 4
        hosts_per_leaf = 8
        link_rate = "10Gbps"
        uplink_rate = "40Gbps"
        [switch]
        ecn.k = "100KB"
        [workload]
        pattern = "many_to_few"
        senders = "0-7"
        receivers = "8-15"
        cdf = "{}"
        load = 0.3
        flows = 4000
        "#,
        cdf.display()
    ));
    let mut sim = run(&sc);
    std::fs::remove_file(&cdf).ok();
    let c = sim.counters_json();
    let uplinks = core_links_from(&c, 0);
    assert_eq!(uplinks.len(), 4);
    let mean = uplinks.iter().sum::<f64>() / 4.0;
    assert!(mean > 0.05);
    for u in &uplinks {
        assert!((u - mean).abs() <= 0.15 * mean, "uplinks {uplinks:?}");
    }
}
