//! Property tests of the lossless surface (issue 30): hostile values for the keys of
//! `[switch.flow_control]` under PFC, DSH and BFC, of `[rdma]`, of `[rdma.cc]` under
//! every controller and of `[rdma.loss_recovery]` under IRN, on a small RDMA incast.
//! Whatever the values: no panic; a refusal names a key of the scenario; an accepted
//! scenario runs with its invariants held, and one that drew no warning keeps PFC's
//! promise (no lossless packet dropped).
//!
//! Case counts are sized for CI (a debug build: well under a minute);
//! `SHOAL_PROPTEST_SCALE=20` multiplies them for a long run.

use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{json, Map, Value};
use shoal_core::scenario::input_checks::input_warnings;
use shoal_core::{Scenario, Simulation};

fn config(cases: u32) -> Config {
    let scale = std::env::var("SHOAL_PROPTEST_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    Config { cases: cases * scale, failure_persistence: None, ..Config::default() }
}

/// Most events a case runs: a few hundred packets of the incast, with room for timers.
const EVENTS: u64 = 200_000;

/// At most this many events per simulated microsecond: a few thousand at most on 4
/// hosts of 100 Gbps even with 37 B packets (3 ns a link); a flood means a timer without
/// a floor.
const MAX_EVENTS_PER_US: u64 = 50_000;

/// The keys a scheme of each section takes, each with its default (null for the keys
/// unset by default), so that mutations aim at keys that exist.
fn section_keys(section: &str, kind: &str) -> Vec<(String, Value)> {
    let mut keys: Vec<(String, Value)> = match section {
        "flow_control" => {
            keys_of(&json!({ "switch": { "flow_control": { "kind": kind } } }), &["switch", "flow_control"])
        }
        "rdma" => keys_of(&json!({}), &["rdma"]).into_iter().filter(|(k, _)| k != "cc").collect(),
        "loss_recovery" => {
            keys_of(&json!({ "rdma": { "loss_recovery": { "kind": kind } } }), &["rdma", "loss_recovery"])
        }
        _ => keys_of(&json!({ "rdma": { "cc": { "kind": kind } } }), &["rdma", "cc"]),
    };
    let unset = |names: &[&str]| names.iter().map(|n| (n.to_string(), Value::Null)).collect::<Vec<_>>();
    match (section, kind) {
        ("rdma", _) => keys.extend(unset(&["ack_priority"])),
        ("cc", "dcqcn") => keys.extend(unset(&["model", "byte_counter", "cnp_interval"])),
        ("flow_control", "bfc") => keys.extend(unset(&["hop_rtt", "interval", "backstop"])),
        ("flow_control", "pfc") => keys.extend(unset(&["pause_quanta", "refresh_quanta"])),
        _ => {}
    }
    keys.retain(|(k, _)| k != "kind");
    // A key no scheme has ("none" has no keys at all): refused by name.
    keys.push(("no_such_key".into(), Value::Null));
    keys
}

/// The keys of the table at `path` of `doc` once defaults fill it in, with their values.
fn keys_of(doc: &Value, path: &[&str]) -> Vec<(String, Value)> {
    let sc = Scenario::from_json(&doc.to_string()).unwrap();
    let full = serde_json::to_value(&sc).unwrap();
    let table = path.iter().fold(&full, |v, k| &v[k]);
    table.as_object().map_or(Vec::new(), |m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
}

fn select(values: Vec<Value>) -> BoxedStrategy<Value> {
    prop::sample::select(values).boxed()
}

/// Hostile values of the type of `default` (a time, rate or size, a number, a flag, a
/// list), so that most scenarios parse and reach validation and the run; or of any type.
fn hostile_like(default: &Value) -> BoxedStrategy<Value> {
    let strings = |v: &[&str]| v.iter().map(|s| json!(s)).collect::<Vec<_>>();
    let typed = match default {
        Value::String(s) if s.ends_with("bps") => {
            select(strings(&["1bps", "1Mbps", "100Mbps", "1Gbps", "50Gbps", "100Gbps", "200Gbps", "100Tbps"]))
        }
        Value::String(s) if s.ends_with('s') => {
            select(strings(&["0ps", "1ps", "5ns", "5120ps", "121120ps", "1us", "100us", "1ms", "1s", "1000000s"]))
        }
        Value::String(s) if s.ends_with('B') => {
            select(strings(&["0B", "1B", "64B", "1514B", "9KB", "100KB", "1MB", "3MB", "100MB", "1PB"]))
        }
        Value::Number(n) if n.is_f64() => {
            select([0.0, 1e-9, 0.001, 0.0625, 0.5, 0.95, 1.0, 1.5, 2000.0, 1e30].map(|f| json!(f)).to_vec())
        }
        Value::Number(_) => {
            select([0i64, 1, 2, 5, 7, 8, 63, 64, 255, 256, 65_535, 65_536, 1 << 20].map(|i| json!(i)).to_vec())
        }
        Value::Bool(_) => any::<bool>().prop_map(|b| json!(b)).boxed(),
        Value::Array(_) => {
            select(vec![json!([]), json!([0]), json!([3]), json!([0, 3, 9]), json!([0, 1, 2, 3, 4, 5, 6, 7])])
        }
        _ => hostile(),
    };
    prop_oneof![4 => typed, 1 => hostile()].boxed()
}

/// Hostile values of any type: boundaries, tiny and huge quantities, words the keys take.
fn hostile() -> BoxedStrategy<Value> {
    let words = vec![
        "none",
        "eta",
        "3cd",
        "0B",
        "1B",
        "64B",
        "9KB",
        "1MB",
        "1PB",
        "0ps",
        "1ps",
        "5ns",
        "1us",
        "100us",
        "1ms",
        "1000000s",
        "1bps",
        "1Mbps",
        "100Gbps",
        "400Gbps",
        "100Tbps",
        "sticky",
        "threshold",
        "headroom",
        "paper",
        "ns3_datacenter",
        "f542a97",
        "published",
        "bdp",
        "max_bdp",
        "exact",
        "quantized",
        "hash",
        "dynamic",
        "",
        "x",
    ];
    prop_oneof![
        prop::sample::select(words).prop_map(|w| json!(w)),
        prop::sample::select(vec![0i64, 1, 2, 5, 7, 8, 63, 64, 255, 256, 65_535, 65_536, 1 << 20, 1 << 21, -1])
            .prop_map(|i| json!(i)),
        prop::sample::select(vec![0.0, 1e-9, 0.001, 0.0625, 0.5, 1.0, 1.5, 2000.0, 1e30]).prop_map(|f| json!(f)),
        any::<bool>().prop_map(|b| json!(b)),
        Just(json!([])),
        Just(json!([0, 3, 9])),
        Just(json!({})),
        Just(json!({ "deadlock_after": "1ms", "classes": [0] })),
    ]
    .boxed()
}

/// A scheme of each section and 1 to 3 hostile values for keys of those sections.
fn lossless_scenario() -> impl Strategy<Value = Value> {
    let flow_control = prop::sample::select(vec!["pfc", "dsh", "bfc"]);
    let cc = prop::sample::select(vec!["dcqcn", "none", "timely", "dctcp", "hpcc", "powertcp", "theta_powertcp"]);
    (flow_control, cc).prop_flat_map(|(fc, cc)| {
        let sections = vec![("flow_control", fc), ("rdma", ""), ("cc", cc), ("loss_recovery", "irn")];
        let mutation = prop::sample::select(sections).prop_flat_map(|(section, kind)| {
            prop::sample::select(section_keys(section, kind))
                .prop_flat_map(move |(key, default)| (Just(section), Just(key), hostile_like(&default)))
        });
        (Just(fc), Just(cc), prop::collection::vec(mutation, 1..4))
            .prop_map(|(fc, cc, mutations)| build(fc, cc, mutations))
    })
}

/// A 4-host star at 100 Gbps: hosts 1 to 3 send 20 KB each to host 0 over RDMA, DCQCN's
/// marking rule set; then the mutations.
fn build(fc: &str, cc: &str, mutations: Vec<(&str, String, Value)>) -> Value {
    let mut flow_control = Map::from_iter([("kind".to_string(), json!(fc))]);
    let mut rdma = Map::new();
    let mut rdma_cc = Map::from_iter([("kind".to_string(), json!(cc))]);
    let mut loss_recovery = None;
    for (section, key, value) in mutations {
        let table = match section {
            "flow_control" => &mut flow_control,
            "rdma" => &mut rdma,
            "loss_recovery" => {
                loss_recovery.get_or_insert_with(|| Map::from_iter([("kind".to_string(), json!("irn"))]))
            }
            _ => &mut rdma_cc,
        };
        table.insert(key, value);
    }
    rdma.insert("cc".into(), Value::Object(rdma_cc));
    if let Some(irn) = loss_recovery {
        rdma.insert("loss_recovery".into(), Value::Object(irn));
    }
    let mut switch = json!({
        "flow_control": flow_control,
        "ecn": { "non_ect": "pass" },
        "marking": { "red": { "kmin": "20KB", "kmax": "80KB", "pmax": 0.2 } },
    });
    if fc == "bfc" {
        switch["queues"] = json!(35);
        switch["scheduler"] = json!({ "kind": "dwrr", "strict_queues": 2 });
    }
    json!({
        "topology": { "kind": "star", "hosts": 4, "link_rate": "100Gbps", "link_delay": "1us" },
        "switch": switch,
        "rdma": rdma,
        "workload": {
            "pattern": "incast", "senders": "1-3", "receiver": 0, "size": "20KB", "transport": "rdma"
        },
        "run": { "stop_time": "2ms" },
    })
}

/// The sections a refusal may name.
fn names_a_key(path: &str) -> bool {
    ["switch.", "rdma", "topology", "workload", "host.", "transport.", "run."].iter().any(|p| path.starts_with(p))
}

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn hostile_lossless_keys(doc in lossless_scenario()) {
        let text = doc.to_string();
        let sc = match Scenario::from_json(&text) {
            Ok(sc) => sc,
            Err(e) => {
                prop_assert!(names_a_key(&e.path), "{e} names no key of\n{text}");
                return Ok(());
            }
        };
        let mut warnings = match sc.validate() {
            Ok(w) => w,
            Err(e) => {
                prop_assert!(names_a_key(&e.path), "{e} names no key of\n{text}");
                return Ok(());
            }
        };
        warnings.extend(input_warnings(&doc, &sc));
        let mut sim = match Simulation::new(&sc) {
            Ok(sim) => sim,
            Err(e) => {
                prop_assert!(names_a_key(&e.path), "{e} names no key of\n{text}");
                return Ok(());
            }
        };
        let done = sim.run_bounded(u64::MAX, EVENTS);
        let errors = sim.check_invariants();
        prop_assert!(errors.is_empty(), "{errors:?}\n{text}");
        let simulated_us = sim.now() / 1_000_000;
        prop_assert!(
            done || EVENTS <= MAX_EVENTS_PER_US * simulated_us.max(1),
            "{EVENTS} events in {} ps of simulated time: a timer without a floor?\n{text}",
            sim.now()
        );
        if warnings.is_empty() {
            prop_assert_eq!(sim.counters().lossless_drops, 0, "lossless drops without a warning:\n{}", text);
        }
    }
}
