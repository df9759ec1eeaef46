//! Property tests: no input, however hostile, makes the unit parser, the scenario parser
//! and validation, the trace reader or the CDF parser panic; whatever they accept is in
//! range, and whatever they refuse is refused with the key path or line it concerns.
//!
//! Case counts are sized for CI (`cargo test`, debug build: a few seconds in all);
//! `SHOAL_PROPTEST_SCALE=20` multiplies every count for a long run.

use proptest::prelude::*;
use proptest::test_runner::Config;
use shoal_core::units::{Bytes, Rate, Time};
use shoal_core::workload::{read_trace, FlowSizeCdf};
use shoal_core::{Scenario, ScenarioError, Simulation};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `cases` test cases, times `SHOAL_PROPTEST_SCALE`; no regression files in the tree.
fn config(cases: u32) -> Config {
    let scale = std::env::var("SHOAL_PROPTEST_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    Config { cases: cases * scale, failure_persistence: None, ..Config::default() }
}

// ---------------------------------------------------------------------------------------
// Units

/// Each unit type's table: (unit, factor in base units), as documented in units.rs.
const TIME_UNITS: &[(&str, u128)] = &[
    ("ps", 1),
    ("ns", 1_000),
    ("us", 1_000_000),
    ("µs", 1_000_000),
    ("μs", 1_000_000),
    ("ms", 1_000_000_000),
    ("s", 1_000_000_000_000),
];
const RATE_UNITS: &[(&str, u128)] = &[
    ("bps", 1),
    ("Kbps", 1_000),
    ("kbps", 1_000),
    ("Mbps", 1_000_000),
    ("Gbps", 1_000_000_000),
    ("Tbps", 1_000_000_000_000),
];
const SIZE_UNITS: &[(&str, u128)] = &[
    ("B", 1),
    ("KB", 1_000),
    ("kB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
];

/// The three unit types behind one interface, so that every property runs on each.
#[derive(Clone, Copy, Debug)]
enum Unit {
    Time,
    Rate,
    Bytes,
}

impl Unit {
    const ALL: [Unit; 3] = [Unit::Time, Unit::Rate, Unit::Bytes];

    fn table(self) -> &'static [(&'static str, u128)] {
        match self {
            Unit::Time => TIME_UNITS,
            Unit::Rate => RATE_UNITS,
            Unit::Bytes => SIZE_UNITS,
        }
    }

    fn max(self) -> u64 {
        match self {
            Unit::Time => Time::MAX.0,
            Unit::Rate => Rate::MAX.0,
            Unit::Bytes => Bytes::MAX.0,
        }
    }

    fn parse(self, text: &str) -> Result<u64, String> {
        match self {
            Unit::Time => Time::parse(text).map(|v| v.0),
            Unit::Rate => Rate::parse(text).map(|v| v.0),
            Unit::Bytes => Bytes::parse(text).map(|v| v.0),
        }
    }

    fn display(self, value: u64) -> String {
        match self {
            Unit::Time => Time(value).to_string(),
            Unit::Rate => Rate(value).to_string(),
            Unit::Bytes => Bytes(value).to_string(),
        }
    }

    /// Deserializes `json` text as this unit.
    fn parse_json(self, json: &str) -> Result<u64, String> {
        let e = |e: serde_json::Error| e.to_string();
        match self {
            Unit::Time => serde_json::from_str::<Time>(json).map(|v| v.0).map_err(e),
            Unit::Rate => serde_json::from_str::<Rate>(json).map(|v| v.0).map_err(e),
            Unit::Bytes => serde_json::from_str::<Bytes>(json).map(|v| v.0).map_err(e),
        }
    }

    /// Deserializes the TOML value `v` (as in `v = <toml>`) as this unit.
    fn parse_toml(self, toml_value: &str) -> Result<u64, String> {
        #[derive(serde::Deserialize)]
        struct V<T> {
            v: T,
        }
        let text = format!("v = {toml_value}\n");
        let e = |e: toml::de::Error| e.to_string();
        match self {
            Unit::Time => toml::from_str::<V<Time>>(&text).map(|v| v.v.0).map_err(e),
            Unit::Rate => toml::from_str::<V<Rate>>(&text).map(|v| v.v.0).map_err(e),
            Unit::Bytes => toml::from_str::<V<Bytes>>(&text).map(|v| v.v.0).map_err(e),
        }
    }
}

fn any_unit() -> impl Strategy<Value = Unit> {
    prop::sample::select(Unit::ALL.to_vec())
}

/// Strings that look like quantities: signs, digits, points, exponents, spaces and unit
/// suffixes (real, misspelt and foreign), and arbitrary text.
fn unit_like_text() -> impl Strategy<Value = String> {
    let suffixes: Vec<&str> = TIME_UNITS
        .iter()
        .chain(RATE_UNITS)
        .chain(SIZE_UNITS)
        .map(|(u, _)| *u)
        .chain(["", " ", "e", "E", "e+", "Gbs", "gbps", "kib", "µ", "s s", "\u{0}", "ps\n", "inf", "NaN"])
        .collect();
    prop_oneof![
        4 => ("[ +-]{0,2}[0-9]{0,25}(\\.[0-9]{0,20})?([eE][+-]?[0-9]{0,4})? ?", prop::sample::select(suffixes))
            .prop_map(|(n, u)| format!("{n}{u}")),
        1 => "[-+.eE0-9a-zA-Zµμ ]{0,12}",
        1 => any::<String>(),
        1 => prop::sample::select(vec!["inf", "-inf", "NaN", "infs", "1e400s", "-0", "-0.0ps", "+5us", "0x10", "1_000"])
            .prop_map(String::from),
    ]
}

/// A well-formed quantity: its text, and its exact value in base units as a fraction
/// (numerator, denominator).
fn quantity(unit: Unit) -> impl Strategy<Value = (String, u128, u128)> {
    let table = unit.table();
    (0u64..10_000_000, 0u32..8, -20i32..20, prop::sample::select(table.to_vec()), 0usize..3, any::<bool>()).prop_map(
        |(mantissa, decimals, exp, (name, factor), form, space)| {
            let digits = mantissa.to_string();
            let decimals = (decimals as usize).min(digits.len());
            // mantissa x 10^(-decimals) x 10^exp x factor.
            let (int, frac) = digits.split_at(digits.len() - decimals);
            let int = if int.is_empty() { "0" } else { int };
            let number = match (decimals, form) {
                (0, 0) => int.to_string(),
                (_, 0) => format!("{int}.{frac}"),
                (_, 1) => format!("{int}.{frac}").trim_end_matches('.').to_string(),
                _ => format!("{int}.{frac}e{exp}"),
            };
            let exp = if form == 2 { exp } else { 0 };
            let shift = exp - decimals as i32;
            let (mut num, mut den) = (mantissa as u128 * factor, 1u128);
            if shift >= 0 {
                num *= 10u128.pow(shift as u32);
            } else {
                den = 10u128.pow((-shift) as u32);
            }
            let sep = if space { " " } else { "" };
            (format!("{number}{sep}{name}"), num, den)
        },
    )
}

proptest! {
    #![proptest_config(config(2000))]

    /// Any text: no panic; an accepted value is within the type's maximum and its display
    /// parses back to it.
    #[test]
    fn unit_parser_never_panics(unit in any_unit(), text in unit_like_text()) {
        if let Ok(v) = unit.parse(&text) {
            prop_assert!(v <= unit.max(), "{text:?} gave {v} > {}", unit.max());
            prop_assert_eq!(unit.parse(&unit.display(v)), Ok(v), "{:?}", text);
        }
    }

    /// "<number><unit>" is the number times the unit's factor, rounded (to within the
    /// precision of a 64-bit float), or "too large" beyond the maximum.
    #[test]
    fn well_formed_quantities_are_scaled((unit, (text, num, den)) in any_unit().prop_flat_map(|u| (Just(u), quantity(u)))) {
        let exact = num as f64 / den as f64;
        let slack = exact * 1e-15 + 1e-9;
        match unit.parse(&text) {
            Ok(v) => {
                prop_assert!(v <= unit.max());
                prop_assert!((v as f64 - exact).abs() <= 0.5 + slack, "{text:?}: {v} vs exact {exact}");
            }
            Err(e) => {
                prop_assert!(exact.round() > unit.max() as f64 - slack, "{text:?} refused: {e}");
                prop_assert!(e.contains("too large") && e.contains("accepted: up to"), "{text:?}: {e}");
            }
        }
    }

    /// Every value up to the maximum displays as text that parses back to it.
    #[test]
    fn display_round_trips(unit in any_unit(), v in prop_oneof![0u64..2_000_000, any::<u64>(), Just(u64::MAX)]) {
        let v = v % (unit.max() + 1);
        let shown = unit.display(v);
        prop_assert_eq!(unit.parse(&shown), Ok(v), "{}", shown);
        prop_assert_eq!(unit.parse_json(&serde_json::to_string(&shown).unwrap()), Ok(v));
    }

    /// JSON and TOML numbers: integers up to the maximum are taken as they are, floats
    /// rounded; negative, non-finite and too large numbers are refused with a reason.
    #[test]
    fn unit_numbers_deserialize_in_range(
        unit in any_unit(),
        int in prop_oneof![any::<i64>(), (0u64..=1 << 62).prop_map(|v| v as i64), -2i64..3],
        big in any::<u64>(),
        float in any::<f64>(),
    ) {
        let max = unit.max();
        let check = |what: String, got: Result<u64, String>, want: Option<u64>| -> Result<(), TestCaseError> {
            match (got, want) {
                (Ok(v), Some(w)) => prop_assert_eq!(v, w, "{}", what),
                (Err(e), None) => prop_assert!(
                    e.contains("too large") || e.contains("negative") || e.contains("expected") || e.contains("invalid"),
                    "{what}: {e}"
                ),
                (got, want) => prop_assert!(false, "{what}: got {got:?}, expected {want:?}"),
            }
            Ok(())
        };
        let int_want = u64::try_from(int).ok().filter(|v| *v <= max);
        check(format!("json {int}"), unit.parse_json(&int.to_string()), int_want)?;
        check(format!("toml {int}"), unit.parse_toml(&int.to_string()), int_want)?;
        check(format!("json {big}"), unit.parse_json(&big.to_string()), Some(big).filter(|v| *v <= max))?;
        let float_want = (float.is_finite() && float >= 0.0 && float.round() <= max as f64).then(|| float.round() as u64);
        let toml_float = if float.is_nan() { "nan".into() } else if float.is_infinite() { format!("{}inf", if float > 0.0 { "" } else { "-" }) } else { format!("{float:?}") };
        check(format!("toml {toml_float}"), unit.parse_toml(&toml_float), float_want)?;
        if float.is_finite() {
            // serde_json (without its float_roundtrip feature) may read a float one ulp
            // off, enough to move a half-integer to its other neighbour.
            let got = unit.parse_json(&format!("{float:?}"));
            let near = |v: u64| (v as f64 - float).abs() <= 0.5 + float.abs() * f64::EPSILON;
            let want = match (&got, float_want) {
                (Ok(v), Some(_)) if near(*v) => Some(*v),
                _ => float_want,
            };
            check(format!("json {float:?}"), got, want)?;
        }
    }
}

// ---------------------------------------------------------------------------------------
// Scenarios

/// A document tree that can hold what either format can say: JSON's null and integers
/// beyond 64 bits, TOML's NaN and infinities.
#[derive(Clone, Debug, PartialEq)]
enum Node {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Arr(Vec<Node>),
    Table(Vec<(String, Node)>),
}

/// One step of a key path: a table key or an array index.
#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Index(usize),
}

impl Node {
    fn from_json(v: &serde_json::Value) -> Node {
        use serde_json::Value as J;
        match v {
            J::Null => Node::Null,
            J::Bool(b) => Node::Bool(*b),
            J::Number(n) => n.as_i64().map(|i| Node::Int(i as i128)).unwrap_or(Node::Float(n.as_f64().unwrap())),
            J::String(s) => Node::Str(s.clone()),
            J::Array(a) => Node::Arr(a.iter().map(Node::from_json).collect()),
            J::Object(o) => Node::Table(o.iter().map(|(k, v)| (k.clone(), Node::from_json(v))).collect()),
        }
    }

    /// Sets the value at `path`, creating or replacing the tables and arrays on the way.
    fn set(&mut self, path: &[Seg], value: Node) {
        let Some((first, rest)) = path.split_first() else {
            *self = value;
            return;
        };
        let empty = || match rest.first() {
            Some(Seg::Index(_)) => Node::Arr(Vec::new()),
            _ => Node::Table(Vec::new()),
        };
        match first {
            Seg::Key(k) => {
                if !matches!(self, Node::Table(_)) {
                    *self = Node::Table(Vec::new());
                }
                let Node::Table(entries) = self else { unreachable!() };
                let i = entries.iter().position(|(key, _)| key == k).unwrap_or_else(|| {
                    entries.push((k.clone(), empty()));
                    entries.len() - 1
                });
                entries[i].1.set(rest, value);
            }
            Seg::Index(i) => {
                if !matches!(self, Node::Arr(_)) {
                    *self = Node::Arr(Vec::new());
                }
                let Node::Arr(items) = self else { unreachable!() };
                while items.len() <= *i {
                    items.push(empty());
                }
                items[*i].set(rest, value);
            }
        }
    }

    /// The value at `path`, if there is one.
    fn get(&self, path: &[Seg]) -> Option<&Node> {
        match (self, path.split_first()) {
            (_, None) => Some(self),
            (Node::Table(entries), Some((Seg::Key(k), rest))) => entries.iter().find(|(key, _)| key == k)?.1.get(rest),
            (Node::Arr(items), Some((Seg::Index(i), rest))) => items.get(*i)?.get(rest),
            _ => None,
        }
    }

    /// Removes the key at `path`, if there is one.
    fn remove(&mut self, path: &[Seg]) {
        match (self, path) {
            (Node::Table(entries), [Seg::Key(k)]) => entries.retain(|(key, _)| key != k),
            (Node::Table(entries), [Seg::Key(k), rest @ ..]) => {
                entries.iter_mut().filter(|(key, _)| key == k).for_each(|(_, v)| v.remove(rest))
            }
            (Node::Arr(items), [Seg::Index(i), rest @ ..]) if *i < items.len() => {
                if rest.is_empty() {
                    items.remove(*i);
                } else {
                    items[*i].remove(rest)
                }
            }
            _ => {}
        }
    }

    /// The tree without nulls (TOML has none): null keys and items are left out.
    fn without_nulls(&self) -> Node {
        match self {
            Node::Arr(items) => {
                Node::Arr(items.iter().filter(|v| **v != Node::Null).map(Node::without_nulls).collect())
            }
            Node::Table(entries) => Node::Table(
                entries.iter().filter(|(_, v)| *v != Node::Null).map(|(k, v)| (k.clone(), v.without_nulls())).collect(),
            ),
            other => other.clone(),
        }
    }

    /// Every key path in the tree, spelt as `ScenarioError::path` spells them
    /// ("workload.extra[0].load").
    fn paths(&self, prefix: &str, out: &mut BTreeSet<String>) {
        match self {
            Node::Arr(items) => {
                for (i, v) in items.iter().enumerate() {
                    let p = format!("{prefix}[{i}]");
                    v.paths(&p, out);
                    out.insert(p);
                }
            }
            Node::Table(entries) => {
                for (k, v) in entries {
                    let p = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    v.paths(&p, out);
                    out.insert(p);
                }
            }
            _ => {}
        }
    }

    fn to_json(&self) -> String {
        match self {
            Node::Null => "null".into(),
            Node::Bool(b) => b.to_string(),
            Node::Int(i) => i.to_string(),
            // JSON has no NaN or infinity: "NaN" is a syntax error, 1e999 out of range.
            Node::Float(f) if f.is_nan() => "NaN".into(),
            Node::Float(f) if f.is_infinite() => if *f > 0.0 { "1e999" } else { "-1e999" }.into(),
            Node::Float(f) => format!("{f:?}"),
            Node::Str(s) => serde_json::to_string(s).unwrap(),
            Node::Arr(items) => format!("[{}]", items.iter().map(Node::to_json).collect::<Vec<_>>().join(",")),
            Node::Table(entries) => format!(
                "{{{}}}",
                entries
                    .iter()
                    .map(|(k, v)| format!("{}:{}", serde_json::to_string(k).unwrap(), v.to_json()))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        }
    }

    /// TOML text: the root's plain values, then one `[section]` per root table with its
    /// values inline. Nulls must have been removed.
    fn to_toml(&self) -> String {
        let Node::Table(entries) = self else { return format!("v = {}\n", self.toml_inline()) };
        let mut text = String::new();
        for (k, v) in entries.iter().filter(|(_, v)| !matches!(v, Node::Table(_))) {
            text += &format!("{} = {}\n", toml_string(k), v.toml_inline());
        }
        for (k, v) in entries {
            if let Node::Table(inner) = v {
                text += &format!("[{}]\n", toml_string(k));
                for (k2, v2) in inner {
                    text += &format!("{} = {}\n", toml_string(k2), v2.toml_inline());
                }
            }
        }
        text
    }

    fn toml_inline(&self) -> String {
        match self {
            Node::Null => unreachable!("nulls are removed before writing TOML"),
            Node::Bool(b) => b.to_string(),
            Node::Int(i) => i.to_string(),
            Node::Float(f) if f.is_nan() => "nan".into(),
            Node::Float(f) if f.is_infinite() => if *f > 0.0 { "inf" } else { "-inf" }.into(),
            Node::Float(f) => format!("{f:?}"),
            Node::Str(s) => toml_string(s),
            Node::Arr(items) => format!("[{}]", items.iter().map(Node::toml_inline).collect::<Vec<_>>().join(", ")),
            Node::Table(entries) => format!(
                "{{{}}}",
                entries
                    .iter()
                    .map(|(k, v)| format!("{} = {}", toml_string(k), v.toml_inline()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

/// A TOML basic string (also a quoted key): quotes, backslashes and control characters
/// escaped.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out += "\\\"",
            '\\' => out += "\\\\",
            c if c.is_control() => out += &format!("\\u{:04X}", c as u32),
            c => out.push(c),
        }
    }
    out + "\""
}

/// A small valid scenario (8 hosts, 20 flows) as a tree: the base every mutation starts from.
fn base() -> Node {
    let mut sc = Scenario::default();
    sc.topology.hosts = 8;
    sc.workload.flows = 20;
    sc.workload.cdf = "fb_hadoop".into();
    Node::from_json(&serde_json::to_value(&sc).unwrap())
}

/// The keys a scenario may have unset (absent from the defaults' serialization).
const OPTIONAL_KEYS: &[&str] = &[
    "topology.uplink_delay",
    "topology.path",
    "topology.failed_links",
    "switch.scheduler.quantum",
    "switch.scheduler.weights",
    "switch.marking.cutoff",
    "switch.marking.cutoff.k",
    "switch.marking.red",
    "switch.marking.red.kmin",
    "switch.marking.red.kmax",
    "switch.marking.red.pmax",
    "switch.marking.shared_cutoff",
    "switch.marking.shared_cutoff.k",
    "switch.marking.shared_red",
    "switch.marking.shared_red.kmin",
    "switch.marking.shared_red.kmax",
    "switch.marking.shared_red.pmax",
    "switch.marking.bcc",
    "switch.marking.bcc.rtt",
    "switch.marking.bcc.lambda",
    "switch.marking.bcc.h",
    "switch.marking.bcc.pmax",
    "workload.duration",
    "workload.senders",
    "workload.receivers",
    "workload.period",
    "workload.stop",
    "workload.trace",
    "workload.extra",
    "run.stop_time",
    "run.sample_interval",
];

/// Every key path of the schema: the defaults' and the optional ones.
fn schema_keys() -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    Node::from_json(&serde_json::to_value(Scenario::default()).unwrap()).paths("", &mut keys);
    keys.extend(OPTIONAL_KEYS.iter().map(|k| k.to_string()));
    keys
}

/// Whether `path` names a key of the schema (or a table of it), where a workload in
/// `workload.extra[i]` exists in the input (`i < extras`) and has the workload's keys.
fn names_a_schema_key(path: &str, schema: &BTreeSet<String>, extras: usize) -> bool {
    if let Some(rest) = path.strip_prefix("workload.extra[") {
        let Some((index, key)) = rest.split_once(']') else { return false };
        let in_input = index.parse::<usize>().is_ok_and(|i| i < extras);
        return in_input && (key.is_empty() || schema.contains(&format!("workload{key}")));
    }
    path == "topology" || path == "workload" || schema.contains(path)
}

/// Key paths a mutation aims at: every schema key, tables included, the first extra
/// workload's, items of lists, and a few that do not exist.
fn key_paths() -> Vec<Vec<Seg>> {
    let keys = schema_keys();
    let extra = keys.iter().filter_map(|k| k.strip_prefix("workload.")).map(|k| format!("workload.extra.0.{k}"));
    let more = [
        "switch.alpha.2",
        "switch.dwrr_weights.0",
        "switch.scheduler.weights.0",
        "switch.ecn.k",
        "switch.ecn.kmin",
        "switch.shared_ecn.pmax",
        "switch.bcc.h",
        "switch.marking",
        "transport.dctcp_g",
        "transport.pias_thresholds.1",
        "run.size_buckets.1",
        "topology.kind.star",
        "bogus",
        "switch.ecn.bogus",
        "workload.extra.0",
        "workload.extra.3.flows",
        "run.seed.0",
    ];
    keys.iter()
        .filter(|k| !k.contains('['))
        .cloned()
        .chain(extra)
        .chain(more.map(String::from))
        .map(|k| k.split('.').map(|s| s.parse::<usize>().map_or_else(|_| Seg::Key(s.into()), Seg::Index)).collect())
        .collect()
}

/// Hostile integers, floats and strings: boundaries of every integer type, huge, negative
/// and non-finite numbers, quantities and near-quantities, enum names, host sets, any text.
fn hostile() -> (impl Strategy<Value = i128>, impl Strategy<Value = f64>, impl Strategy<Value = String>) {
    let ints: Vec<i128> = vec![
        0,
        1,
        -1,
        2,
        3,
        63,
        64,
        255,
        256,
        65_535,
        65_536,
        100_000_001,
        u32::MAX as i128,
        u32::MAX as i128 + 1,
        i64::MAX as i128,
        i64::MIN as i128,
        u64::MAX as i128,
        u64::MAX as i128 + 1,
        -(u64::MAX as i128) - 1,
        10i128.pow(30),
    ];
    let floats = vec![0.0, -0.0, 0.5, 1.0, 1.5, 1e-300, 1e300, f64::MAX, f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
    let words: Vec<&str> = vec![
        "star",
        "leaf_spine",
        "fat_tree",
        "dumbbell",
        "fifo",
        "dwrr",
        "strict_priority",
        "lqd",
        "losspass",
        "bcc",
        "explicit",
        "cutoff",
        "shared_red",
        "incast",
        "udp",
        "long_lived",
        "trace",
        "many_to_few",
        "all_to_all",
        "core",
        "core_nominal",
        "lognormal",
        "acked",
        "every",
        "on",
        "off",
        "auto",
        "newreno",
        "ecn_star",
        "websearch",
        "google_rpc",
        "0-3",
        "0-7,2",
        "7-0",
        "0-99999999999",
        "1,1,1",
        "",
        "-",
        ",",
        "0--1",
        "100Gbps",
        "1us",
        "1ms",
        "1e6s",
        "2000000s",
        "0B",
        "1514B",
        "1PB",
        "-5KB",
        "1e400s",
        "nan",
        "/nonexistent/cdf",
        "/dev/zero", // not a regular file: refused before it is read
    ];
    let int = prop_oneof![prop::sample::select(ints), -1000i128..1000, any::<i64>().prop_map(|i| i as i128),];
    let float = prop_oneof![prop::sample::select(floats), any::<f64>()];
    let string = prop_oneof![prop::sample::select(words).prop_map(String::from), unit_like_text()];
    (int, float, string)
}

/// Hostile leaf values of every type.
fn leaf() -> impl Strategy<Value = Node> {
    let (int, float, string) = hostile();
    prop_oneof![
        Just(Node::Null),
        any::<bool>().prop_map(Node::Bool),
        int.prop_map(Node::Int),
        float.prop_map(Node::Float),
        string.prop_map(Node::Str),
    ]
}

/// Values a scenario could well hold: small numbers and quantities, so that a good share
/// of mutated scenarios stays valid and reaches validation and the workload generator.
fn plausible() -> impl Strategy<Value = Node> {
    let quantities = vec!["10us", "1ms", "100Gbps", "10Gbps", "64KB", "1MB", "9KB", "0-3", "4-7"];
    prop_oneof![
        (0i128..20).prop_map(Node::Int),
        (0.0f64..2.0).prop_map(Node::Float),
        prop::sample::select(quantities).prop_map(|s| Node::Str(s.into())),
        any::<bool>().prop_map(Node::Bool),
    ]
}

/// Any value: a leaf, or arrays and tables of them (a table where an array belongs and the
/// other way round).
fn value() -> impl Strategy<Value = Node> {
    let leaf = || prop_oneof![2 => leaf(), 1 => plausible()];
    let nested = leaf().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Node::Arr),
            prop::collection::vec((key_name(), inner), 0..3).prop_map(|mut entries| {
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                entries.dedup_by(|a, b| a.0 == b.0);
                Node::Table(entries)
            }),
        ]
    });
    prop_oneof![4 => leaf(), 1 => nested]
}

/// Key names: known ones, unknown ones, empty, unicode, with dots and brackets.
fn key_name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec!["hosts", "k", "kind", "load", "pmax", "extra", "0", "", "a.b", "x[0]", "ключ", "🦈"])
            .prop_map(String::from),
        "\\PC{0,8}",
    ]
}

#[derive(Clone, Debug)]
enum Mutation {
    Set(Vec<Seg>, Node),
    Remove(Vec<Seg>),
    /// Adds an unknown key to the table at the path.
    Unknown(Vec<Seg>, String, Node),
    /// Replaces the value at the path by a hostile one of the same type (the integer, the
    /// float or the string, whichever fits), so that the document parses more often and
    /// validation sees hostile values.
    SameType(Vec<Seg>, i128, f64, String),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let path = prop::sample::select(key_paths());
    let (int, float, string) = hostile();
    prop_oneof![
        6 => (path.clone(), int, float, string).prop_map(|(p, i, f, s)| Mutation::SameType(p, i, f, s)),
        6 => (path.clone(), value()).prop_map(|(p, v)| Mutation::Set(p, v)),
        1 => path.clone().prop_map(Mutation::Remove),
        1 => (path, key_name(), value()).prop_map(|(mut p, k, v)| {
            p.pop();
            Mutation::Unknown(p, k, v)
        }),
    ]
}

/// The base scenario after 1 to 3 mutations.
fn mutated_scenario() -> impl Strategy<Value = Node> {
    prop::collection::vec(mutation(), 1..4).prop_map(|mutations| {
        let mut doc = base();
        for m in mutations {
            match m {
                Mutation::Set(p, v) => doc.set(&p, v),
                Mutation::Remove(p) => doc.remove(&p),
                Mutation::Unknown(mut p, k, v) => {
                    p.push(Seg::Key(k));
                    doc.set(&p, v)
                }
                Mutation::SameType(p, i, f, s) => {
                    let v = match doc.get(&p) {
                        Some(Node::Int(_)) => Node::Int(i),
                        Some(Node::Float(_)) => Node::Float(f),
                        Some(Node::Str(_)) => Node::Str(s),
                        _ => continue,
                    };
                    doc.set(&p, v)
                }
            }
        }
        doc
    })
}

/// Whether building `sc`'s network and workload is cheap: few hosts and switches, and a
/// bounded number of flows. (The property is "no panic", not running large networks.)
fn is_small(sc: &Scenario) -> bool {
    let t = &sc.topology;
    // A file's size is not known here: not small.
    let hosts = t.host_count().unwrap_or(u64::MAX);
    let small_workload = |w: &shoal_core::scenario::Workload| {
        w.flows <= 1000 && w.duration.is_none() && (w.repeats as u64).saturating_mul(hosts) <= 10_000
    };
    hosts <= 64 && t.leaves <= 64 && t.spines <= 64 && t.k <= 6 && sc.workloads().all(small_workload)
}

/// Parses, validates and builds one scenario document; checks every error's key path.
fn check_scenario(doc: &Node, parsed: Result<Scenario, ScenarioError>, text: &str) -> Result<(), TestCaseError> {
    let sc = match parsed {
        Ok(sc) => sc,
        Err(e) => {
            let mut input = BTreeSet::new();
            doc.paths("", &mut input);
            prop_assert!(e.path.is_empty() || input.contains(&e.path), "{e} does not name a key of\n{text}");
            prop_assert!(!e.message.is_empty());
            return Ok(());
        }
    };
    let schema = schema_keys();
    let extras = sc.workload.extra.len();
    let named = |e: &ScenarioError| names_a_schema_key(&e.path, &schema, extras);
    if let Err(e) = sc.validate() {
        prop_assert!(named(&e), "validation error {e:?} does not name a key; input:\n{text}");
        return Ok(());
    }
    if is_small(&sc) {
        if let Err(e) = Simulation::new(&sc) {
            prop_assert!(named(&e), "workload error {e:?} does not name a key; input:\n{text}");
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(1000))]

    /// Mutated scenarios in JSON: no panic; errors name a key path of the input (parse) or
    /// of the schema (validation, workload); small valid ones build.
    #[test]
    fn mutated_json_scenarios(doc in mutated_scenario()) {
        let text = doc.to_json();
        check_scenario(&doc, Scenario::from_json(&text), &text)?;
    }

    /// The same in TOML (no nulls; NaN and infinities; integers beyond 64 bits).
    #[test]
    fn mutated_toml_scenarios(doc in mutated_scenario()) {
        let doc = doc.without_nulls();
        let text = doc.to_toml();
        check_scenario(&doc, Scenario::from_toml(&text), &text)?;
    }

    /// Arbitrary text and deep nesting in either format: no panic, no stack overflow.
    #[test]
    fn arbitrary_scenario_text(
        text in prop_oneof![any::<String>(), "(\\[[a-z]{0,6}\\]\n)?[a-z_]{0,8} ?= ?[\\[\\]{}\"0-9a-z.,=: -]{0,20}\n?"],
        depth in prop_oneof![Just(0usize), 1usize..200, Just(100_000)],
        open in prop::sample::select(vec!["[", "{\"a\":", "{a = ", "[["]),
    ) {
        let nested = format!("a = {}", open.repeat(depth));
        for t in [&text, &nested, &format!("{{\"topology\": {}", open.repeat(depth))] {
            // Only the absence of a panic or an abort is checked.
            let _ = Scenario::from_toml(t).map(|sc| sc.validate());
            let _ = Scenario::from_json(t).map(|sc| sc.validate());
        }
    }
}

// ---------------------------------------------------------------------------------------
// Traces and CDFs

/// One CSV field: numbers at and beyond the limits, negatives, non-numbers.
fn field() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (0u64..10).prop_map(|v| v.to_string()),
        2 => any::<u64>().prop_map(|v| v.to_string()),
        1 => prop::sample::select(vec![
            "", " ", "-1", "1.5", "1e3", "1e400", "nan", "inf", "-0", "1000000000000000", "1000000000000001",
            "1000000000000000000", "1000000000000000000.5", "18446744073709551616", "63", "64", "x", "\u{feff}1",
        ])
        .prop_map(String::from),
        1 => "\\PC{0,6}",
    ]
}

/// Trace text: a header (right, with priority, or wrong) and lines of 4 to 7 fields,
/// comments and blank lines.
fn trace_text() -> impl Strategy<Value = String> {
    let header = prop::sample::select(vec![
        "id,src,dst,bytes,start_ns",
        "id,src,dst,bytes,start_ns,priority",
        " ID , Src,dst,bytes,start_ns",
        "id,src,dst,bytes",
        "id,src,dst,bytes,start_ns,prio",
        "id,src,dst,bytes,start_ns,priority,x",
        "",
        "# comment",
    ]);
    let line = prop_oneof![
        8 => prop::collection::vec(field(), 4..8).prop_map(|f| f.join(",")),
        1 => Just(String::new()),
        1 => Just("# comment".to_string()),
        1 => "\\PC{0,12}",
    ];
    prop_oneof![
        8 => (header, prop::collection::vec(line, 0..8)).prop_map(|(h, lines)| format!("{h}\n{}", lines.join("\n"))),
        1 => any::<String>(),
    ]
}

static TRACE_FILES: AtomicUsize = AtomicUsize::new(0);

/// Writes `text` to a fresh file in the temporary directory and returns its path.
fn temp_file(text: &str) -> std::path::PathBuf {
    let n = TRACE_FILES.fetch_add(1, Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("shoal-properties-{}-{n}.csv", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

/// The line number a "file: line N: ..." message names.
fn named_line(message: &str) -> Option<usize> {
    let rest = &message[message.find(": line ")? + ": line ".len()..];
    rest[..rest.find(':')?].parse().ok()
}

/// CDF text: `<bytes> <percent>` lines, mostly increasing, with hostile numbers.
fn cdf_text() -> impl Strategy<Value = String> {
    let number = prop_oneof![
        4 => (0u32..200).prop_map(|v| v.to_string()),
        2 => prop::sample::select(vec!["100", "0", "50.5", "1e15", "1e16", "1e300", "1.7e308", "-1", "nan", "inf", "x", "1e400"])
            .prop_map(String::from),
        1 => any::<f64>().prop_map(|f| f.to_string()),
    ];
    let line = prop_oneof![
        8 => (number.clone(), number.clone()).prop_map(|(s, p)| format!("{s} {p}")),
        1 => prop::collection::vec(number, 0..4).prop_map(|f| f.join("\t")),
        1 => "\\PC{0,10}",
    ];
    prop_oneof![
        6 => prop::collection::vec(line, 0..8).prop_map(|mut lines| {
            lines.sort();
            lines.join("\n")
        }),
        1 => any::<String>(),
    ]
}

/// Whether a CDF file names a size above `Bytes::MAX` (see `cdf_parser`).
fn above_size_limit(text: &str) -> bool {
    let size = |line: &str| line.split_whitespace().next().and_then(|s| s.parse::<f64>().ok());
    text.lines().filter_map(size).any(|s| s > Bytes::MAX.0 as f64)
}

proptest! {
    #![proptest_config(config(1000))]

    /// Trace text: no panic; an error names the trace key, the file and a line of the
    /// file (or says the file is empty); an accepted trace has one flow per data line,
    /// every one within the topology and the limits.
    #[test]
    fn trace_reader(text in trace_text(), hosts in 1u64..10) {
        let file = temp_file(&text);
        let name = file.to_str().unwrap().to_string();
        let result = read_trace(&name, hosts, "workload.trace");
        std::fs::remove_file(&file).unwrap();
        let lines = text.lines().count();
        match result {
            Err(e) => {
                prop_assert_eq!(&e.path, "workload.trace");
                prop_assert!(e.message.contains(&name), "{}", e.message);
                if !e.message.contains("the trace is empty") {
                    let n = named_line(&e.message);
                    prop_assert!(n.is_some_and(|n| (1..=lines).contains(&n)), "{} ({lines} lines)", e.message);
                }
            }
            Ok(flows) => {
                let data = text.lines().filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#')).count();
                prop_assert_eq!(flows.len(), data - 1);
                let ids: BTreeSet<u64> = flows.iter().map(|f| f.id).collect();
                prop_assert_eq!(ids.len(), flows.len());
                for f in &flows {
                    prop_assert!((f.src as u64) < hosts && (f.dst as u64) < hosts && f.src != f.dst);
                    prop_assert!(f.bytes >= 1 && f.bytes <= Bytes::MAX.0);
                    prop_assert!(f.start <= Time::MAX.0);
                    prop_assert!(f.priority < 64 || f.priority == u8::MAX);
                }
            }
        }
    }

    /// CDF text: no panic; an error names a line of the file or the whole file's fault;
    /// an accepted CDF has a finite mean and samples at least one byte and at most the
    /// size limit.
    #[test]
    fn cdf_parser(text in cdf_text(), seed in any::<u64>()) {
        match FlowSizeCdf::parse(&text) {
            Err(e) => {
                let whole_file = ["no points", "must end at 100", "every flow would be empty"];
                if !whole_file.iter().any(|w| e.contains(w)) {
                    let n = e.strip_prefix("line ").and_then(|r| r[..r.find(':')?].parse::<usize>().ok());
                    prop_assert!(n.is_some_and(|n| (1..=text.lines().count()).contains(&n)), "{e}");
                }
            }
            Ok(_) if above_size_limit(&text) => prop_assert!(false, "a size above 1 PB was accepted:\n{text}"),
            Ok(cdf) => {
                prop_assert!(cdf.mean().is_finite() && cdf.mean() >= 0.0, "mean {} of\n{text}", cdf.mean());
                let mut rng = shoal_core::sim::stream(seed, "test", 0);
                for _ in 0..20 {
                    let size = cdf.sample(&mut rng);
                    prop_assert!((1..=Bytes::MAX.0).contains(&size), "sampled {size} from\n{text}");
                }
            }
        }
    }
}

/// Not a property: reports how many generated scenarios were valid and small enough to
/// build (run with `--nocapture`), so that a generator that stops producing valid
/// scenarios is noticed.
#[test]
fn some_mutated_scenarios_are_valid() {
    let mut runner = proptest::test_runner::TestRunner::new(config(200));
    let (built, total) = (AtomicUsize::new(0), AtomicUsize::new(0));
    runner
        .run(&mutated_scenario(), |doc| {
            total.fetch_add(1, Ordering::Relaxed);
            let ok = Scenario::from_json(&doc.to_json()).ok().filter(|sc| is_small(sc) && Simulation::new(sc).is_ok());
            built.fetch_add(ok.is_some() as usize, Ordering::Relaxed);
            Ok(())
        })
        .unwrap();
    let (built, total) = (built.into_inner(), total.into_inner());
    eprintln!("{built} of {total} mutated scenarios built a simulation");
    assert!(built * 10 >= total, "only {built} of {total} mutated scenarios are valid");
}
