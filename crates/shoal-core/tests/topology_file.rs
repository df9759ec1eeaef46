//! Topologies read from HPCC / ns3-datacenter topology files, and failed links.

mod common;
use common::{run, scenario, ser};
use shoal_core::net::{build, NetworkSpec, NodeId, Routes, Wiring};
use shoal_core::scenario::{Topology, TopologyKind};
use shoal_core::Scenario;
use std::path::PathBuf;

/// ns3-datacenter's PowerTCP topology (examples/PowerTCP/topology.txt): 128 hosts at
/// 25 Gbps under 4 ToRs (32 each), 2 pods of 2 ToRs and 2 aggregation switches (100 Gbps,
/// 1 us), 2 cores linked to every aggregation switch (100 Gbps, 5 us).
fn n3dc_topology() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../validation/n3dc/topology.txt").to_string()
}

/// `text` as a topology file in the temporary directory.
fn topology_file(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("shoal-topology-{}-{name}.txt", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

fn file_topology(path: &str) -> Topology {
    Topology { kind: TopologyKind::File, path: Some(path.into()), ..Default::default() }
}

/// A network with its routes.
struct Routed<'a> {
    net: &'a NetworkSpec,
    wiring: Wiring,
    routes: Routes,
}

impl<'a> Routed<'a> {
    fn new(net: &'a NetworkSpec) -> Self {
        let wiring = Wiring::of(net);
        let routes = Routes::compute(net, &wiring);
        Routed { net, wiring, routes }
    }

    /// The shortest routes from host `src` to host `dst`.
    fn count(&self, src: u32, dst: u32) -> u64 {
        let NodeId::Switch(edge) = self.net.links[self.wiring.host_link[src as usize] as usize].to else {
            panic!("a host's link goes to a switch")
        };
        self.via_switch(edge, dst)
    }

    /// Every shortest route from switch `s` to host `dst`, counted by following every
    /// next hop.
    fn via_switch(&self, s: u32, dst: u32) -> u64 {
        let ports = &self.wiring.switch_ports[s as usize];
        (self.routes.next_hops(s, dst).ports())
            .map(|p| match self.net.links[ports[p as usize] as usize].to {
                NodeId::Host(h) => u64::from(h == dst),
                NodeId::Switch(n) => self.via_switch(n, dst),
            })
            .sum()
    }
}

/// The shortest routes from host `src` to host `dst` of `net`.
fn route_count(net: &NetworkSpec, src: u32, dst: u32) -> u64 {
    Routed::new(net).count(src, dst)
}

#[test]
fn the_n3dc_topology_reads_as_its_reference_builds_it() {
    let net = build(&file_topology(&n3dc_topology())).unwrap();
    assert_eq!((net.hosts, net.switches, net.links.len()), (128, 10, 2 * 144));
    let rates = |core: bool| {
        let mut r: Vec<(u64, u64)> =
            net.links.iter().filter(|l| l.core == core).map(|l| (l.rate_bps, l.delay)).collect();
        r.dedup();
        r
    };
    assert_eq!(rates(false), vec![(25_000_000_000, 1_000_000)]);
    assert_eq!(rates(true), vec![(100_000_000_000, 1_000_000), (100_000_000_000, 5_000_000)]);
    // Hosts keep their node ids (the switches, nodes 128-137, come after them).
    for (h, tor) in [(0, 0), (31, 0), (32, 1), (127, 3)] {
        let link = net.links.iter().find(|l| l.from == NodeId::Host(h)).unwrap();
        assert_eq!(link.to, NodeId::Switch(tor), "host {h}");
    }
    // Every pair of hosts has a route: 1 under one ToR, 2 within a pod (either
    // aggregation switch), 2 x 2 x 2 across pods (aggregation, core, aggregation).
    let routed = Routed::new(&net);
    for src in 0..128 {
        for dst in (0..128).filter(|&d| d != src) {
            let expected = match (src / 32, dst / 32) {
                (a, b) if a == b => 1,
                (a, b) if a / 2 == b / 2 => 2,
                _ => 8,
            };
            assert_eq!(routed.count(src, dst), expected, "{src} -> {dst}");
        }
    }
}

/// One-packet flows cross 2, 4 or 6 links of their own rates and delays; alone on the
/// network each completes in the sum over its links of delay + serialization.
#[test]
fn flows_on_the_n3dc_topology_take_each_links_rate_and_delay() {
    let (host, tor_agg, agg_core) = (1_000_000 + ser(1054, 25), 1_000_000 + ser(1054, 100), 5_000_000 + ser(1054, 100));
    for (dst, expected) in [(1, 2 * host), (32, 2 * host + 2 * tor_agg), (64, 2 * host + 2 * tor_agg + 2 * agg_core)] {
        let sc = scenario(&format!(
            "[topology]\nkind = \"file\"\npath = \"{}\"\n[workload]\npattern = \"incast\"\nsenders = \"0\"\nreceiver = {dst}\nsize = \"1000B\"\n",
            n3dc_topology()
        ));
        let sim = run(&sc);
        let r = &sim.flow_records()[0];
        assert_eq!(r.finish.unwrap() - r.start, expected, "dst {dst}");
        assert_eq!(r.ideal_fct, Some(expected), "dst {dst}");
    }
}

#[test]
fn a_workload_on_a_file_topology_completes() {
    for transport in ["tcp", "rdma"] {
        let sc = scenario(&format!(
            r#"
            [topology]
            kind = "file"
            path = "{}"
            [switch]
            pool_size = "100MB"
            [workload]
            pattern = "all_to_all"
            transport = "{transport}"
            cdf = "fb_hadoop"
            load = 0.3
            flows = 300
            "#,
            n3dc_topology()
        ));
        let sim = run(&sc);
        assert_eq!(sim.flows_finished(), 300, "{transport}");
    }
}

/// A hand-built network: hosts 0 and 1 under switch node 4, hosts 2 and 3 under node 5;
/// 4 and 5 meet through node 6 or node 7 (two hops) or through 8 and 9 (three). Node 4
/// lists its links to 6, 8 and 7 in that order, so its next hops toward 5, the ports to
/// 6 and 7, are not side by side.
const SMALL: &str = "\
# hosts 0-3, switches 4-9
10 6 11
4 5 6 7 8 9
0 4 10Gbps 1us 0
1 4 10Gbps 1us 0
4 6 40Gbps 2us 0
4 8 40Gbps 2us 0
4 7 40Gbps 2us 0
6 5 40000000000.0 2us 0
7 5 40Gbps 0.000002 0
8 9 40Gbps 2us 0
9 5 40Gbps 2us 0
2 5 10Gbps 3us 0
3 5 10Gbps 3us 0
";

#[test]
fn a_small_file_routes_over_its_shortest_paths() {
    let path = topology_file("small", SMALL);
    let net = build(&file_topology(path.to_str().unwrap())).unwrap();
    let wiring = Wiring::of(&net);
    let routes = Routes::compute(&net, &wiring);
    // Switch 0 (node 4): ports host 0, host 1, node 6, node 8, node 7.
    assert_eq!(routes.next_hops(0, 2).ports().collect::<Vec<_>>(), vec![2, 4]);
    // Switch 1 (node 5): ports node 6, node 7, node 9, host 2, host 3.
    assert_eq!(routes.next_hops(1, 0).ports().collect::<Vec<_>>(), vec![0, 1]);
    assert_eq!(routes.next_hops(1, 3).ports().collect::<Vec<_>>(), vec![4]);
    // Switch 4 (node 8) is closer to node 5 through node 9; switch 5 (node 9) closer to
    // node 4 through node 8.
    assert_eq!(routes.next_hops(4, 2).ports().collect::<Vec<_>>(), vec![1]);
    assert_eq!(routes.next_hops(5, 0).ports().collect::<Vec<_>>(), vec![0]);
    assert_eq!(route_count(&net, 0, 3), 2);
    assert_eq!(route_count(&net, 2, 1), 2);
    assert_eq!(route_count(&net, 2, 3), 1);

    // Host 0 to host 2: 10G 1us, 40G 2us, 40G 2us, 10G 3us.
    let toml = format!(
        "[topology]\nkind = \"file\"\npath = \"{}\"\n[workload]\npattern = \"incast\"\nsenders = \"0\"\nreceiver = 2\nsize = \"1000B\"\n",
        path.display()
    );
    let sim = run(&scenario(&toml));
    let r = &sim.flow_records()[0];
    let expected = 8_000_000 + 2 * ser(1054, 10) + 2 * ser(1054, 40);
    assert_eq!(r.finish.unwrap() - r.start, expected);
    // DCTCP's derived cut-off: lambda x C x RTT on the costliest route, host 0 or 1 to
    // host 2 or 3: RTT = 2 x 8 us + 2 x 1,262.4 ns + 2 x 315.6 ns = 19.156 us at C = 10
    // Gbps: 23,945 B x 0.72 = 17,240 B.
    let resolved = Scenario::from_toml(&toml).unwrap().resolved().unwrap();
    assert_eq!(resolved.to_json().matches("\"cutoff\":{\"k\":\"17240B\"}").count(), 1, "{}", resolved.to_json());
    std::fs::remove_file(path).ok();
}

/// Each mistake in a file names the key, the file, the line and what is accepted; a
/// missing file names the file.
#[test]
fn malformed_files_are_refused_naming_the_line() {
    let cases = [
        (
            "rate",
            "3 1 2\n2\n0 2 10Gbs 1us 0\n1 2 10Gbps 1us 0\n",
            "line 3: rate = \"10Gbs\" is not accepted (accepted: a positive rate",
        ),
        (
            "count",
            "3 1 3\n2\n0 2 10Gbps 1us 0\n1 2 10Gbps 1us 0\n",
            "line 4: the file ends after 2 links, but link_num = 3",
        ),
        (
            "range",
            "3 1 2\n2\n0 2 10Gbps 1us 0\n1 3 10Gbps 1us 0\n",
            "line 4: dst = \"3\" is not a node id (accepted: 0 to 2",
        ),
        ("cut", "5 2 3\n3 4\n0 3 10Gbps 1us 0\n1 3 10Gbps 1us 0\n2 4 10Gbps 1us 0\n", "host 2 cannot reach host 0"),
    ];
    for (name, text, words) in cases {
        let path = topology_file(name, text);
        let sc = Scenario { topology: file_topology(path.to_str().unwrap()), ..Default::default() };
        let e = sc.validate().unwrap_err();
        assert_eq!(e.path, "topology.path", "{name}");
        assert!(e.message.starts_with(path.to_str().unwrap()), "{name}: {e}");
        assert!(e.message.contains(words), "{name}: {e}");
        std::fs::remove_file(path).ok();
    }
    let mut sc = Scenario { topology: file_topology("/nonexistent/topology.txt"), ..Default::default() };
    let e = sc.validate().unwrap_err();
    assert_eq!(e.path, "topology.path");
    assert!(e.message.starts_with("cannot read topology file \"/nonexistent/topology.txt\""), "{e}");
    sc.topology.path = None;
    let e = sc.validate().unwrap_err();
    assert!(e.to_string().starts_with("topology.path: kind = \"file\" needs a topology file"), "{e}");
}

/// A leaf-spine of 4 leaves and 4 spines, 2 hosts per leaf: hosts are nodes 0-7, leaves
/// 8-11, spines 12-15.
fn leaf_spine(failed: &[[u32; 2]]) -> Topology {
    Topology {
        kind: TopologyKind::LeafSpine,
        leaves: 4,
        spines: 4,
        hosts_per_leaf: 2,
        failed_links: failed.to_vec(),
        ..Default::default()
    }
}

/// Between two leaves, there is one route through each spine both still reach; with no
/// spine in common, routes go leaf - spine - leaf - spine - leaf, one through each
/// third leaf that reaches a spine of each.
#[test]
fn failed_links_leave_the_routes_theory_counts() {
    let spines_of = |failed: &[[u32; 2]], leaf: u32| -> Vec<u32> {
        (12..16).filter(|&s| !failed.contains(&[8 + leaf, s]) && !failed.contains(&[s, 8 + leaf])).collect()
    };
    let cases: [&[[u32; 2]]; 5] = [
        &[],
        &[[8, 12]],
        &[[8, 12], [13, 9]],
        &[[8, 12], [8, 13], [9, 14], [9, 15]],
        &[[8, 12], [8, 13], [8, 14], [9, 13], [9, 14], [9, 15]],
    ];
    for failed in cases {
        let net = build(&leaf_spine(failed)).unwrap();
        assert_eq!(net.links.len(), 2 * (8 + 16 - failed.len()));
        let (a, b) = (spines_of(failed, 0), spines_of(failed, 1));
        let common = a.iter().filter(|s| b.contains(s)).count() as u64;
        let expected = if common > 0 {
            common
        } else {
            (2..4)
                .map(|x| {
                    let via = spines_of(failed, x);
                    a.iter().filter(|s| via.contains(s)).count() as u64
                        * b.iter().filter(|s| via.contains(s)).count() as u64
                })
                .sum()
        };
        // Host 0 is on leaf 0, host 2 on leaf 1.
        assert_eq!(route_count(&net, 0, 2), expected, "{failed:?}");
        assert_eq!(route_count(&net, 2, 0), expected, "{failed:?}");
    }
    // The last case: leaf 0 keeps spine 15, leaf 1 spine 12; one route through each of
    // leaves 2 and 3.
    assert_eq!(route_count(&build(&leaf_spine(cases[4])).unwrap(), 0, 2), 2);
}

/// A flow around a failed link completes over the longer route.
#[test]
fn flows_go_around_failed_links() {
    let toml = "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\nlink_rate = \"10Gbps\"\nuplink_rate = \"10Gbps\"\nfailed_links = [[4, 6], [5, 7]]\n[workload]\npattern = \"incast\"\nsenders = \"0\"\nreceiver = 2\nsize = \"1000B\"\n";
    let e = Scenario::from_toml(toml).unwrap().validate().unwrap_err();
    assert_eq!(e.path, "topology.failed_links");
    assert!(e.message.contains("host 2 cannot reach host 0"), "{e}");
    // One spine left for both leaves: 4 links.
    let sim = run(&scenario(&toml.replace("[[4, 6], [5, 7]]", "[[4, 6], [5, 6]]")));
    let r = &sim.flow_records()[0];
    assert_eq!(r.finish.unwrap() - r.start, 4 * (1_000_000 + ser(1054, 10)));
}

#[test]
fn failed_links_must_name_links() {
    for (failed, words) in [
        ("[[0, 1]]", "[0, 1] (item 0): there is no link between host 0 and host 1"),
        ("[[8, 9]]", "[8, 9] (item 0): there is no link between switch 0 (node 8) and switch 1 (node 9)"),
        ("[[0, 16]]", "[0, 16] (item 0): there is no node 16 (accepted: node ids 0 to 15; hosts first, then switches)"),
        ("[[8, 12], [12, 8]]", "[12, 8] (item 1): the same link as item 0"),
        ("[[0, 8]]", "host 0 has no link"),
        ("[[8, 12], [8, 13], [8, 14], [8, 15]]", "with these links down, host 2 cannot reach host 0"),
    ] {
        let toml = format!(
            "[topology]\nkind = \"leaf_spine\"\nleaves = 4\nspines = 4\nhosts_per_leaf = 2\nfailed_links = {failed}\n"
        );
        let e = Scenario::from_toml(&toml).unwrap().validate().unwrap_err();
        assert_eq!(e.path, "topology.failed_links", "{failed}");
        assert!(e.message.contains(words), "{failed}: {e}");
    }
}

/// The PowerTCP topology as its paper runs it: RDMA over PFC. A small buffer and an
/// incast overflow it without PFC; with PFC no packet is lost and every connection
/// finishes. PFC's headroom checks look at the file's own kinds of link.
#[test]
fn rdma_over_pfc_on_the_n3dc_topology() {
    let toml = format!(
        r#"
        [topology]
        kind = "file"
        path = "{}"
        [switch]
        pool_size = "200KB"
        [switch.flow_control]
        kind = "pfc"
        [rdma.cc]
        kind = "none"
        [workload]
        pattern = "incast"
        senders = "1-40,64-100"
        receiver = 0
        size = "100KB"
        transport = "rdma"
        "#,
        n3dc_topology()
    );
    let sim = run(&scenario(&toml));
    assert_eq!(sim.counters().total_dropped(), 0);
    assert_eq!(sim.flows_finished(), 77);
    assert!(!sim.pause_ports().is_empty(), "PFC acted");
    let small = toml.replace("kind = \"pfc\"", "kind = \"pfc\"\nheadroom = \"1KB\"");
    let warnings = Scenario::from_toml(&small).unwrap().validate().unwrap();
    for link in ["links of 25Gbps and 1us", "links of 100Gbps and 1us", "links of 100Gbps and 5us"] {
        assert!(warnings.iter().any(|w| w.contains(link)), "{link}: {warnings:?}");
    }
}
