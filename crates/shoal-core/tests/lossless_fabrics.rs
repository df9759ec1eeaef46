//! Property tests of lossless fabrics (issue 30): small random fabrics under PFC (ON/OFF
//! or timed) and DSH, some with failed links whose routes bounce and whose buffer
//! dependencies can cycle, on which the lossless promise and the deadlock report must
//! hold; hostile failed links and presets; and generated or corrupted topology files.
//! (`lossless_properties.rs` feeds hostile values to the flow-control and RDMA keys.)
//!
//! Each property runs a fixed number of cases (small enough for CI on two cores);
//! `SHOAL_PROPTEST_SCALE=20` multiplies every count for a thorough run.

mod common;
use common::TempFile;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError};
use shoal_core::net::NodeId;
use shoal_core::{Scenario, ScenarioError, Simulation};

/// `cases` test cases, times `SHOAL_PROPTEST_SCALE`; no regression files in the tree.
fn config(cases: u32) -> Config {
    let scale = std::env::var("SHOAL_PROPTEST_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    Config { cases: cases * scale, failure_persistence: None, ..Config::default() }
}

const RDMA_CCS: &[&str] = &["none", "dcqcn", "timely", "dctcp", "hpcc", "powertcp", "theta_powertcp"];

/// At most this many events per simulated microsecond: a few hundred at most on 8 hosts
/// of 100 Gbps (a 1 KB packet takes 80 ns a link); a flood means a timer without floor.
const MAX_EVENTS_PER_US: u64 = 50_000;

/// Runs `sc` for at most `events` events: no panic, every invariant held, time moving
/// at a physical pace, and nothing of a lossless class dropped where PFC's default
/// headroom guards it.
fn run_checked(sc: &Scenario, events: u64, what: &str) -> Result<Simulation, TestCaseError> {
    let mut sim = Simulation::new(sc).map_err(|e| TestCaseError::fail(format!("{what}: built-in check: {e}")))?;
    let done = sim.run_bounded(u64::MAX, events);
    let errors = sim.check_invariants();
    prop_assert!(errors.is_empty(), "{what}: invariants violated: {errors:?}");
    let simulated_us = sim.now() / 1_000_000;
    prop_assert!(
        done || sim.events_processed() <= MAX_EVENTS_PER_US * simulated_us.max(1),
        "{what}: {} events in {} ps of simulated time",
        sim.events_processed(),
        sim.now()
    );
    Ok(sim)
}

fn check_error(e: &ScenarioError, what: &str) -> Result<(), TestCaseError> {
    prop_assert!(!e.message.is_empty(), "{what}: an empty message");
    prop_assert!(!e.message.contains("panicked"), "{what}: {e}");
    Ok(())
}

/// Hostile `failed_links` and `preset` values on a small lossless leaf-spine (nodes 0-7
/// hosts, 8-9 leaves, 10-11 spines): refused naming the key, or run without a panic.
fn hostile_topology_keys() -> impl Strategy<Value = String> {
    let pair = prop_oneof![0i64..14, Just(-1), Just(1 << 33)];
    let failed = prop_oneof![
        prop::collection::vec(prop::collection::vec(pair, 0..4), 0..4)
            .prop_map(|links| format!("failed_links = {links:?}")),
        prop::sample::select(vec!["failed_links = []", "failed_links = \"8-10\"", "failed_links = [[8, 10], [8, 10]]"])
            .prop_map(String::from),
        Just(String::new()),
    ];
    let preset = prop::sample::select(vec!["", "preset = \"dsh_tomahawk\"\n", "preset = \"nope\"\n", "preset = 3\n"]);
    (failed, preset, prop::sample::select(vec!["pfc", "dsh"])).prop_map(|(failed, preset, fc)| {
        format!(
            "{preset}[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 4\n{failed}\n\
             [switch]\nports_per_pool = 128\n[switch.flow_control]\nkind = \"{fc}\"\n\
             [workload]\npattern = \"all_to_all\"\nflows = 10\ntransport = \"rdma\"\npriority = 3\n\
             [run]\nstop_time = \"1ms\"\n"
        )
    })
}

proptest! {
    #![proptest_config(config(100))]

    #[test]
    fn hostile_failed_links_and_presets(toml in hostile_topology_keys()) {
        let sc = match Scenario::from_toml(&toml) {
            Ok(sc) => sc,
            Err(e) => return check_error(&e, &toml),
        };
        match sc.validate().and_then(|_| Simulation::new(&sc)) {
            Err(e) => {
                prop_assert!(["topology", "preset", "switch"].iter().any(|k| e.path.starts_with(k)), "{e}\n{toml}");
                check_error(&e, &toml)?;
            }
            Ok(_) => {
                run_checked(&sc, 200_000, &toml)?;
            }
        }
    }
}

/// A small lossless fabric: a star or a leaf-spine (possibly with failed links that make
/// routes bounce and buffer dependencies cycle), PFC (ON/OFF or timed) or DSH, a shallow
/// pool, RDMA incasts and all-to-all traffic under a random controller.
#[derive(Debug, Clone)]
struct Fabric {
    toml: String,
    /// Routes only go up then down: no cyclic buffer dependency can form.
    acyclic: bool,
}

/// RDMA in class 3: an incast into host 0 beside all-to-all traffic of `flows` flows.
fn incast_and_all_to_all(hosts: u32, flows: u32) -> String {
    format!(
        "[workload]\npattern = \"incast\"\nreceiver = 0\nsenders = \"1-{}\"\nsize = \"40KB\"\n\
         transport = \"rdma\"\npriority = 3\n\
         [[workload.extra]]\npattern = \"all_to_all\"\ncdf = \"websearch\"\nload = 0.8\nflows = {flows}\n\
         transport = \"rdma\"\npriority = 3\n",
        hosts - 1
    )
}

fn fabric() -> impl Strategy<Value = Fabric> {
    // (topology keys, workload sections, acyclic)
    let star = (3u32..12, 4u32..40).prop_map(|(hosts, flows)| {
        (format!("kind = \"star\"\nhosts = {hosts}"), incast_and_all_to_all(hosts, flows), true)
    });
    let leaf_spine =
        (2u32..5, 1u32..3, 2u32..4, any::<bool>(), 4u32..40).prop_map(|(leaves, spines, per_leaf, fail, flows)| {
            let hosts = leaves * per_leaf;
            // Nodes: hosts, then leaves, then spines. Failing leaf 0 - spine 0 and the
            // last leaf - the last spine (with two spines) makes their traffic bounce.
            let failed = if fail && spines == 2 {
                let (l0, s0) = (hosts, hosts + leaves);
                format!("failed_links = [[{l0}, {s0}], [{}, {}]]", hosts + leaves - 1, s0 + 1)
            } else {
                String::new()
            };
            let acyclic = failed.is_empty();
            let topology = format!(
                "kind = \"leaf_spine\"\nleaves = {leaves}\nspines = {spines}\nhosts_per_leaf = {per_leaf}\n{failed}"
            );
            (topology, incast_and_all_to_all(hosts, flows), acyclic)
        });
    // The DSH paper's deadlock fabric (its Fig. 12), scaled down: 4 leaves and 2 spines
    // with S0-L3 and S1-L0 failed; L0 <-> L3 traffic bounces through L1 or L2 while L1
    // and L2 trade traffic, so the four links S0->L1->S1->L2->S0 can each wait for the
    // next. Whether they do depends on the load, the buffer and the controller.
    let bouncing =
        (2u32..5, prop::sample::select(vec![0.5, 0.7, 0.9]), 10u32..60).prop_map(|(per_leaf, load, flows)| {
            let (h, leaf) = (4 * per_leaf, |l: u32| format!("{}-{}", l * per_leaf, (l + 1) * per_leaf - 1));
            let topology = format!(
                "kind = \"leaf_spine\"\nleaves = 4\nspines = 2\nhosts_per_leaf = {per_leaf}\n\
             failed_links = [[{}, {}], [{}, {}]]",
                h + 3,
                h + 4,
                h,
                h + 5
            );
            let group = |from: u32, to: u32| {
                format!(
                    "pattern = \"many_to_few\"\nsenders = \"{}\"\nreceivers = \"{}\"\ncdf = \"websearch\"\n\
                 load = {load}\nflows = {flows}\ntransport = \"rdma\"\npriority = 3\n",
                    leaf(from),
                    leaf(to)
                )
            };
            let workload = format!(
                "[workload]\n{}[[workload.extra]]\n{}[[workload.extra]]\n{}[[workload.extra]]\n{}",
                group(0, 3),
                group(3, 0),
                group(1, 2),
                group(2, 1)
            );
            (topology, workload, false)
        });
    let flow_control = prop_oneof![
        Just("kind = \"pfc\"".to_string()),
        (100u32..65_535).prop_map(|q| format!("kind = \"pfc\"\npause_quanta = {q}")),
        Just("kind = \"dsh\"".to_string()),
    ];
    (
        prop_oneof![1 => star, 1 => leaf_spine, 2 => bouncing],
        flow_control,
        prop::sample::select(RDMA_CCS),
        prop::sample::select(vec!["150KB", "300KB", "1MB"]),
        prop::sample::select(vec!["\"1us\"", "\"5us\""]),
        0u64..1 << 40,
    )
        .prop_map(|((topology, workload, acyclic), flow_control, cc, pool, delay, seed)| {
            let toml = format!(
                "[topology]\n{topology}\nlink_rate = \"100Gbps\"\nuplink_rate = \"100Gbps\"\nlink_delay = {delay}\n\
                 [switch]\npool_size = \"{pool}\"\nreserved = \"0B\"\nports_per_pool = 128\n\
                 [switch.flow_control]\n{flow_control}\ndeadlock_after = \"200us\"\n\
                 [rdma.cc]\nkind = \"{cc}\"\n[run]\nseed = {seed}\nstop_time = \"3ms\"\n{workload}"
            );
            Fabric { toml, acyclic }
        })
}

proptest! {
    #![proptest_config(config(24))]

    /// The lossless promise and the deadlock report: no packet of a lossless class is
    /// dropped unless PAUSEs waited behind a backlog of frames; every invariant holds; a
    /// run that comes to rest with unfinished flows has reported a deadlock, each of
    /// whose hops leads to the next; and a fabric whose routes only go up then down never
    /// reports one.
    #[test]
    fn lossless_fabrics_keep_their_promise(f in fabric()) {
        let sc = match Scenario::from_toml(&f.toml).and_then(|sc| sc.validate().map(|_| sc)) {
            Ok(sc) => sc,
            Err(e) => {
                // Only a failed link that cuts a host off may refuse the fabric.
                prop_assert!(e.path == "topology.failed_links", "{e}\n{}", f.toml);
                return Ok(());
            }
        };
        let sim = match Simulation::new(&sc) {
            Ok(_) => run_checked(&sc, u64::MAX, &f.toml)?,
            Err(e) => {
                prop_assert!(e.path == "topology.failed_links", "{e}\n{}", f.toml);
                return Ok(());
            }
        };
        // Headroom sized by eta holds while a PAUSE waits for one packet at most; in a
        // frame storm it waits behind other frames (tests/pfc.rs), and that is said.
        let c = sim.counters();
        prop_assert!(c.lossless_drops == 0 || c.frames_queued_behind > 0, "{} lossless drops\n{}", c.lossless_drops, f.toml);
        let unfinished = sim.flow_records().iter().filter(|r| r.finish.is_none()).count();
        if sim.came_to_rest() && unfinished > 0 {
            prop_assert!(!sim.deadlocks().is_empty(), "{unfinished} flows held at rest, no deadlock\n{}", f.toml);
        }
        if f.acyclic {
            prop_assert!(sim.deadlocks().is_empty(), "{:?}\n{}", sim.deadlocks(), f.toml);
        }
        for d in sim.deadlocks() {
            prop_assert!(d.onset <= d.detected);
            for (i, n) in d.cycle.iter().enumerate() {
                let next = d.cycle[(i + 1) % d.cycle.len()];
                prop_assert_eq!(sim.port_peer(n.switch, n.port), NodeId::Switch(next.switch), "{:?}", d);
            }
        }
    }
}

/// A topology file's lines: the header (counts right, wrong, huge or malformed), the
/// switch list, and link lines with rates, delays and error rates at and beyond what is
/// accepted, duplicates and self loops.
fn topology_text() -> impl Strategy<Value = String> {
    let count = prop_oneof![0u64..12, Just(4_000_000_000u64), Just(u64::MAX)].prop_map(|n| n.to_string());
    let header = prop_oneof![
        (count.clone(), count.clone(), count.clone()).prop_map(|(a, b, c)| format!("{a} {b} {c}")),
        (count.clone(), count.clone(), count.clone(), count.clone())
            .prop_map(|(a, b, c, d)| format!("{a} {b} {c} {d} 0")),
        Just("3 one 2".to_string()),
        Just(String::new()),
    ];
    let switches = prop::collection::vec(0u32..12, 0..4)
        .prop_map(|ids| ids.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(" "));
    let rate = prop::sample::select(vec![
        "100Gbps",
        "25000000000.0",
        "1bps",
        "0.5",
        "0",
        "-1",
        "1e30",
        "NaN",
        "400Gbps",
        "10Gbps",
        "fast",
    ]);
    let delay = prop::sample::select(vec!["1us", "0.000001", "0", "1ps", "1000000s", "-1us", "inf", "1ms", "x"]);
    let error = prop::sample::select(vec!["0", "0.0", "0.01", "1", "-0", ""]);
    let link = (0u32..12, 0u32..12, rate, delay, error).prop_map(|(a, b, r, d, e)| format!("{a} {b} {r} {d} {e}"));
    (header, switches, prop::collection::vec(link, 0..14)).prop_map(|(h, s, links)| {
        let mut lines = vec![h, s];
        lines.extend(links);
        lines.join("\n")
    })
}

/// A valid file: hosts 0-3 on switches 4 and 5, one line each; the tests corrupt it.
const GOOD_FILE: &str =
    "6 2 5\n4 5\n0 4 100Gbps 1us 0\n1 4 100Gbps 1us 0\n2 5 100Gbps 1us 0\n3 5 100Gbps 1us 0\n4 5 100Gbps 1us 0";

proptest! {
    #![proptest_config(config(300))]

    /// Generated and corrupted topology files: read, the file is refused naming
    /// `topology.path` with a message that names its line (when it is one line's
    /// fault), or it builds and small traffic runs on it.
    #[test]
    fn topology_files(text in prop_oneof![
        topology_text(),
        (0usize..7, topology_text()).prop_map(|(line, bad)| {
            let mut lines: Vec<String> = GOOD_FILE.lines().map(String::from).collect();
            let replacement = bad.lines().last().unwrap_or_default().to_string();
            lines[line] = replacement;
            lines.join("\n")
        }),
    ]) {
        let file = TempFile::new("topology.txt", &text);
        let toml = format!(
            "[topology]\nkind = \"file\"\npath = {:?}\n[switch.flow_control]\nkind = \"pfc\"\n\
             [workload]\npattern = \"all_to_all\"\nflows = 5\ntransport = \"rdma\"\n[run]\nstop_time = \"1ms\"\n",
            file.path().to_str().unwrap()
        );
        let sc = Scenario::from_toml(&toml).unwrap();
        let built = sc.validate().and_then(|_| Simulation::new(&sc));
        match built {
            Err(e) => {
                prop_assert!(e.path.starts_with("topology") || e.path.starts_with("workload"), "{e}\n{text}");
                check_error(&e, &text)?;
            }
            Ok(_) => {
                run_checked(&sc, 500_000, &text)?;
            }
        }
    }
}
