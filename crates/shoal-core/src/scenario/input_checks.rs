//! Checks of a scenario as its user wrote it, before defaults fill it in: old spellings
//! of keys (read as their new keys, with a warning), a table given as something else
//! (serde would read an array positionally), keys that do nothing for the chosen
//! topology or workload pattern, and plain numbers that are almost surely a unit mistake
//! (`link_delay = 10` is 10 ps).

use super::Scenario;
use crate::config::{Probability, ScenarioError, Warnings};
use crate::net::config::TopologyKind;
use crate::workload::config::{CollectiveKind, FanInSizes, FlowTransport, Pattern};
use serde::Deserialize;
use serde_json::{Map, Value};

/// Fails when `input` gives a table of the schema as anything but a table (an array
/// would be read field by field in declaration order: `switch = [1, 2]`).
pub fn check_tables(input: &Value) -> Result<(), ScenarioError> {
    let defaults = serde_json::to_value(Scenario::default()).expect("a scenario always serializes");
    tables_match(input, &defaults, "")
}

/// The sections of one scheme each (`registry!`), which may be given by their kind alone.
const SCHEMES: &[&str] = &[
    "switch.admission",
    "switch.scheduler",
    "switch.classifier",
    "switch.flow_control",
    "switch.load_balancing",
    "transport.cc",
    "rdma.cc",
    "rdma.loss_recovery",
];

fn tables_match(input: &Value, schema: &Value, path: &str) -> Result<(), ScenarioError> {
    let Some(fields) = schema.as_object() else { return Ok(()) };
    let Some(given) = input.as_object() else {
        return Err(ScenarioError::new(path, format!("expected a table, found {}", describe(input))));
    };
    for (key, value) in given {
        let child = join(path, key);
        if value.is_string() && SCHEMES.contains(&child.as_str()) {
            // A scheme given by its kind alone: `admission = "lqd"`.
        } else if let Some(field) = fields.get(key) {
            tables_match(value, field, &child)?;
        } else if path == "workload" && key == "extra" {
            // Extra workloads are workload tables, each checked like the first.
            for (i, item) in value.as_array().into_iter().flatten().enumerate() {
                tables_match(item, schema, &format!("{child}[{i}]"))?;
            }
        }
    }
    Ok(())
}

fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "a table",
    };
    let text = value.to_string();
    if text.len() > 40 {
        kind.to_string()
    } else {
        format!("{kind} ({text})")
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Warnings about `input` (the scenario as written) given `sc` (as parsed). A key given
/// its default value is not reported as without effect: a resolved scenario (every key
/// written out) only gets warnings for what differs from the defaults.
pub fn input_warnings(input: &Value, sc: &Scenario) -> Warnings {
    let mut input = input.clone();
    let mut warnings = upgrade(&mut input).map_or(Vec::new(), |up| up.warnings);
    let input = &input;
    let resolved = serde_json::to_value(sc).expect("a scenario always serializes");
    let defaults = serde_json::to_value(Scenario::default()).expect("a scenario always serializes");
    unit_mistakes(input, &resolved, "", &mut warnings);
    let given = |path: &str| -> Vec<String> {
        let default = lookup(&defaults, path.split('[').next().unwrap_or(path));
        lookup(input, path).and_then(Value::as_object).map_or(Vec::new(), |m| {
            m.iter()
                .filter(|(k, v)| default.and_then(|d| d.get(k.as_str())) != Some(*v))
                .map(|(k, _)| k.clone())
                .collect()
        })
    };
    let t = &sc.topology;
    let (kind, used): (&str, &[&str]) = match t.kind {
        TopologyKind::Star => ("star", &["hosts"]),
        TopologyKind::Dumbbell => ("dumbbell", &["hosts", "hosts_right", "uplink_rate", "uplink_delay"]),
        TopologyKind::LeafSpine => {
            ("leaf_spine", &["leaves", "spines", "hosts_per_leaf", "uplink_rate", "uplink_delay"])
        }
        TopologyKind::FatTree => ("fat_tree", &["k", "uplink_rate", "uplink_delay"]),
        TopologyKind::File => ("file", &["path"]),
    };
    // A file gives every link its rate and delay.
    let everywhere: &[&str] = match t.kind {
        TopologyKind::File => &["kind", "failed_links", "error_rate", "lossy_links", "outages", "reconvergence"],
        _ => &[
            "kind",
            "failed_links",
            "error_rate",
            "lossy_links",
            "outages",
            "reconvergence",
            "link_rate",
            "link_delay",
        ],
    };
    for key in given("topology") {
        if !everywhere.contains(&key.as_str()) && !used.contains(&key.as_str()) {
            warnings.push(format!("topology.{key}: has no effect on a {kind} topology (it uses {})", used.join(", ")));
        }
    }
    // RDMA's keys act only on RDMA connections (a UDP workload has no transport).
    let rdma = sc.workloads().any(|w| w.transport == FlowTransport::Rdma && w.pattern != Pattern::Udp);
    if !rdma {
        for key in given("rdma") {
            warnings.push(format!(
                "rdma.{key}: has no effect: no workload runs RDMA connections (workload.transport = \"rdma\")"
            ));
        }
    }
    if sc.switch.buffer.is_some() && given("switch").iter().any(|k| k == "pool_size") {
        warnings.push(
            "switch.pool_size: has no effect with switch.buffer (each pool's shared part is what the buffer \
             leaves beside the reserves and the headroom)"
                .into(),
        );
    }
    for (path, w) in sc.workload_paths() {
        let pattern = serde_json::to_value(w.pattern).expect("an enum serializes");
        // The keys of a load-driven arrival process (all_to_all, many_to_few, fan_in).
        const ARRIVALS: [&str; 9] =
            ["load", "load_on", "arrival", "lognormal_sigma", "flows", "duration", "senders", "receivers", "transport"];
        let used: Vec<&str> = match w.pattern {
            Pattern::AllToAll | Pattern::ManyToFew => [&["cdf", "sites", "remote_fraction"][..], &ARRIVALS].concat(),
            Pattern::FanIn => {
                let size = if w.fan_in_sizes == FanInSizes::Cdf { "cdf" } else { "size" };
                [&[size, "fan_in", "fan_in_max", "fan_in_sizes"][..], &ARRIVALS].concat()
            }
            Pattern::Incast => {
                vec!["senders", "receivers", "receiver", "size", "start", "period", "repeats", "transport"]
            }
            Pattern::LongLived => vec!["senders", "receivers", "receiver", "start", "transport"],
            Pattern::Udp => vec!["senders", "receivers", "receiver", "rate", "start", "stop", "pacing"],
            Pattern::Trace => vec!["trace", "transport"],
            Pattern::Collective => {
                let server = (w.collective == Some(CollectiveKind::ParameterServer)).then_some("receiver");
                ["collective", "senders", "size", "repeats", "compute", "start", "transport"]
                    .into_iter()
                    .chain(server)
                    .collect()
            }
        };
        for key in given(&path) {
            if !["pattern", "priority", "priorities", "extra"].contains(&key.as_str()) && !used.contains(&key.as_str())
            {
                warnings.push(format!(
                    "{path}.{key}: has no effect with pattern = {pattern} (it uses {})",
                    used.join(", ")
                ));
            }
        }
    }
    warnings
}

/// Rewrites the old spellings of keys in `input` as their new keys and returns a warning
/// for each, naming the new key; a key that did nothing under its old spelling is
/// dropped with the same warning as before. Setting one thing under both spellings is an
/// error naming both. Only tables are looked into: anything else is left to
/// `check_tables` and serde to refuse.
pub fn upgrade(input: &mut Value) -> Result<Upgrade, ScenarioError> {
    let mut up = Upgrade::default();
    if let Some(sw) = input.get_mut("switch").and_then(Value::as_object_mut) {
        upgrade_scheduler(sw, &mut up)?;
        upgrade_marking(sw, &mut up)?;
    }
    if let Some(tr) = input.get_mut("transport").and_then(Value::as_object_mut) {
        upgrade_cc(tr, &mut up)?;
    }
    Ok(up)
}

/// What `upgrade` did: its warnings, and where each moved value was written.
#[derive(Debug, Default)]
pub struct Upgrade {
    pub warnings: Warnings,
    /// (new key, old key) of every value moved.
    moved: Vec<(String, String)>,
}

impl Upgrade {
    /// Records that the value of `old` now sits at `new`.
    fn moved(&mut self, old: &str, new: &str) {
        self.warnings.push(format!("{old}: is {new} now (the old key is read the same way)"));
        self.moved.push((new.to_string(), old.to_string()));
    }

    /// `path` as the user wrote it: a key inside a moved value names the old key.
    pub fn as_written(&self, path: &str) -> String {
        for (new, old) in &self.moved {
            if let Some(rest) = path.strip_prefix(new.as_str()).filter(|r| r.is_empty() || r.starts_with(['.', '['])) {
                return format!("{old}{rest}");
            }
        }
        path.to_string()
    }
}

/// `dwrr_quantum`, `dwrr_weights` -> `[switch.scheduler] quantum, weights`.
fn upgrade_scheduler(sw: &mut Map<String, Value>, up: &mut Upgrade) -> Result<(), ScenarioError> {
    let default = crate::switch::scheduler::SchedulerConfig::default();
    let flat = Flat { path: "switch", section: "scheduler", kind: "dwrr", prefix: "dwrr_" };
    flat.upgrade(sw, &["quantum", "weights"], default.kind(), up)
}

/// `[switch.ecn] k / kmin, kmax, pmax`, `[switch.shared_ecn]`, `marking = "bcc"` with
/// `[switch.bcc]` -> the rules of `[switch.marking]`.
fn upgrade_marking(sw: &mut Map<String, Value>, up: &mut Upgrade) -> Result<(), ScenarioError> {
    let legacy = match sw.get("marking") {
        Some(Value::String(kind)) => Some(kind.clone()),
        _ => None,
    };
    let bcc = match legacy.as_deref() {
        None | Some("explicit") => false,
        Some("bcc") => true,
        Some(other) => {
            return Err(ScenarioError::new(
                "switch.marking",
                format!("\"{other}\" is not accepted (accepted: a table of rules, e.g. [switch.marking.cutoff])"),
            ))
        }
    };
    if let Some(kind) = &legacy {
        sw.remove("marking");
        up.warnings.push(if bcc {
            "switch.marking: \"bcc\" is the rule [switch.marking.bcc] now (the old spelling is read the same way)"
                .into()
        } else {
            format!("switch.marking: \"{kind}\" is no longer needed: the rules are the tables of [switch.marking]")
        });
    }
    let ecn = sw
        .get_mut("ecn")
        .and_then(Value::as_object_mut)
        .map_or(Vec::new(), |t| take(t, &["k", "kmin", "kmax", "pmax"]));
    let shared = match sw.remove("shared_ecn") {
        Some(Value::Object(mut t)) => take(&mut t, &["k", "kmin", "kmax", "pmax"]).into_iter().chain(t).collect(),
        Some(other) => {
            sw.insert("shared_ecn".into(), other);
            Vec::new()
        }
        None => Vec::new(),
    };
    let bcc_keys = match sw.remove("bcc") {
        Some(Value::Object(t)) => Some(t),
        Some(other) => {
            sw.insert("bcc".into(), other);
            None
        }
        None => None,
    };
    if ecn.is_empty() && shared.is_empty() && bcc_keys.is_none() && !bcc {
        return Ok(());
    }
    let rules = match sw.entry("marking").or_insert_with(|| Value::Object(Map::new())) {
        Value::Object(rules) => rules,
        _ => return Ok(()),
    };
    let written: Vec<String> = rules.keys().cloned().collect();
    let mut add = |kind: &str, key: &str, value: Value, old: &str| -> Result<(), ScenarioError> {
        if written.iter().any(|w| w == kind) {
            return Err(ScenarioError::new(
                old,
                format!("is the old spelling of a key of switch.marking.{kind}, which is set too; keep one"),
            ));
        }
        let rule = rules.entry(kind).or_insert_with(|| Value::Object(Map::new()));
        let rule = rule.as_object_mut().expect("a rule added here is a table");
        rule.insert(key.into(), value);
        up.moved(old, &format!("switch.marking.{kind}.{key}"));
        Ok(())
    };
    let mut without_effect = Vec::new();
    let shared_kinds = ("shared_cutoff", "shared_red");
    for (path, keys, (cutoff, red)) in
        [("switch.ecn", ecn, ("cutoff", "red")), ("switch.shared_ecn", shared, shared_kinds)]
    {
        // The thresholds were optional: null meant unset.
        let get = |key: &str| keys.iter().find(|(k, v)| k == key && !v.is_null()).map(|(_, v)| v.clone());
        let (k, kmin, kmax, pmax) = (get("k"), get("kmin"), get("kmax"), get("pmax"));
        let err = |key: &str, message: &str| Err(ScenarioError::new(format!("{path}.{key}"), message));
        match (&k, &kmin, &kmax) {
            (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
                return err("k", "set either k (cut-off) or kmin and kmax (RED), not both")
            }
            (None, Some(_), None) => return err("kmin", "RED needs kmax as well as kmin"),
            (None, None, Some(_)) => return err("kmax", "RED needs kmin as well as kmax"),
            _ => {}
        }
        // The old checks of these keys, under their old names.
        let bytes = |v: &Option<Value>| v.as_ref().and_then(|v| crate::units::Bytes::deserialize(v).ok());
        let lo = bytes(&kmin).unwrap_or_default();
        crate::switch::marking::check_red(path, lo.0, bytes(&kmax).unwrap_or(lo).0)?;
        if let Some(Err(e)) = pmax.as_ref().and_then(Value::as_f64).map(Probability::try_from) {
            return err("pmax", &e);
        }
        if bcc && path == "switch.shared_ecn" && (k.is_some() || kmin.is_some()) {
            return Err(ScenarioError::new(
                "switch.marking",
                "\"bcc\" derives switch.shared_ecn thresholds; remove switch.shared_ecn.k/kmin/kmax or use marking = \"explicit\"",
            ));
        }
        if let Some(k) = k {
            add(cutoff, "k", k, &format!("{path}.k"))?;
        }
        if let (Some(kmin), Some(kmax)) = (kmin, kmax) {
            add(red, "kmin", kmin, &format!("{path}.kmin"))?;
            add(red, "kmax", kmax, &format!("{path}.kmax"))?;
            if let Some(pmax) = pmax {
                add(red, "pmax", pmax, &format!("{path}.pmax"))?;
            }
        } else if let Some(pmax) = pmax {
            if bcc && path == "switch.shared_ecn" {
                add("bcc", "pmax", pmax, &format!("{path}.pmax"))?;
            } else {
                without_effect.push(format!(
                    "{path}.pmax: has no effect without kmin and kmax (it is switch.marking.{red}.pmax now)"
                ));
            }
        }
        if let Some((key, _)) = keys.iter().find(|(k, _)| !["k", "kmin", "kmax", "pmax"].contains(&k.as_str())) {
            return Err(ScenarioError::new(
                format!("{path}.{key}"),
                format!("unknown key `{key}`, expected one of `k`, `kmin`, `kmax`, `pmax`"),
            ));
        }
    }
    match bcc_keys {
        Some(keys) if bcc => {
            for (key, value) in keys {
                add("bcc", &key, value, &format!("switch.bcc.{key}"))?;
            }
        }
        Some(_) => without_effect
            .push("switch.bcc: has no effect unless switch.marking = \"bcc\" (it is [switch.marking.bcc] now)".into()),
        None => {}
    }
    if bcc {
        rules.entry("bcc").or_insert_with(|| Value::Object(Map::new()));
    }
    up.warnings.extend(without_effect);
    Ok(())
}

/// `dctcp_g`, `dctcp_alpha_init` -> `transport.cc = { kind = "dctcp", g, alpha_init }`.
fn upgrade_cc(tr: &mut Map<String, Value>, up: &mut Upgrade) -> Result<(), ScenarioError> {
    let default = crate::transport::cc::CcConfig::default();
    let flat = Flat { path: "transport", section: "cc", kind: "dctcp", prefix: "dctcp_" };
    flat.upgrade(tr, &["g", "alpha_init"], default.kind(), up)
}

/// Flat keys `prefix + key` of the table at `path` that are the keys of scheme `kind` in
/// its section `section` now.
struct Flat {
    path: &'static str,
    section: &'static str,
    kind: &'static str,
    prefix: &'static str,
}

impl Flat {
    /// Moves the flat keys into the section when it is of `kind` (`default` when it does
    /// not say); otherwise they did nothing and are dropped with a warning.
    fn upgrade(
        &self,
        table: &mut Map<String, Value>,
        keys: &[&str],
        default: &str,
        up: &mut Upgrade,
    ) -> Result<(), ScenarioError> {
        let (path, section) = (self.path, self.section);
        let flat: Vec<String> = keys.iter().map(|k| format!("{}{k}", self.prefix)).collect();
        let old = take(table, &flat.iter().map(String::as_str).collect::<Vec<_>>());
        if old.is_empty() {
            return Ok(());
        }
        if kind_of(table.get(section), default) != self.kind {
            for (key, _) in &old {
                let new = &key[self.prefix.len()..];
                up.warnings.push(format!(
                    "{path}.{key}: has no effect unless {path}.{section} = \"{}\" (it is {path}.{section}.{new} now)",
                    self.kind
                ));
            }
            return Ok(());
        }
        let Some(target) = self::section(table, section, self.kind) else { return Ok(()) };
        for (key, value) in old {
            put(target, &key[self.prefix.len()..], value, &format!("{path}.{key}"), &format!("{path}.{section}"), up)?;
        }
        Ok(())
    }
}

/// Removes `keys` from `table`, returning those present.
fn take(table: &mut Map<String, Value>, keys: &[&str]) -> Vec<(String, Value)> {
    keys.iter().filter_map(|k| table.remove(*k).map(|v| (k.to_string(), v))).collect()
}

/// The kind a scheme's value names: its `kind`, the string itself, or `default`.
fn kind_of(value: Option<&Value>, default: &str) -> String {
    match value {
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Object(t)) => t.get("kind").and_then(Value::as_str).unwrap_or(default).to_string(),
        _ => default.to_string(),
    }
}

/// The table of scheme `key` in `parent`, made from a bare kind or created with `kind`.
fn section<'a>(parent: &'a mut Map<String, Value>, key: &str, kind: &str) -> Option<&'a mut Map<String, Value>> {
    let value = parent.entry(key).or_insert_with(|| Value::String(kind.into()));
    if let Value::String(kind) = value {
        *value = Value::Object(Map::from_iter([("kind".to_string(), Value::String(kind.clone()))]));
    }
    value.as_object_mut()
}

/// Sets `key` of the section at `path` from the old key `old`.
fn put(
    section: &mut Map<String, Value>,
    key: &str,
    value: Value,
    old: &str,
    path: &str,
    up: &mut Upgrade,
) -> Result<(), ScenarioError> {
    if section.contains_key(key) {
        return Err(ScenarioError::new(
            old,
            format!("is the old spelling of {path}.{key}, which is set too; keep one"),
        ));
    }
    section.insert(key.into(), value);
    up.moved(old, &format!("{path}.{key}"));
    Ok(())
}

/// The value at a dotted path with `[i]` indices ("workload.extra[0]").
fn lookup<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(value, |v, part| match part.split_once('[') {
        Some((key, index)) => v.get(key)?.get(index.trim_end_matches(']').parse::<usize>().ok()?),
        None => v.get(part),
    })
}

/// Plain numbers given for times and rates that are almost surely meant in another
/// unit: under 1 ns of time (a number is picoseconds) or 1 Mbps of rate (bits per second).
fn unit_mistakes(input: &Value, resolved: &Value, path: &str, warnings: &mut Warnings) {
    match (input, resolved) {
        (Value::Object(given), Value::Object(fields)) => {
            for (key, value) in given {
                if let Some(field) = fields.get(key) {
                    unit_mistakes(value, field, &join(path, key), warnings);
                }
            }
        }
        (Value::Array(given), Value::Array(fields)) => {
            for (i, (value, field)) in given.iter().zip(fields).enumerate() {
                unit_mistakes(value, field, &format!("{path}[{i}]"), warnings);
            }
        }
        (Value::Number(n), Value::String(unit)) => {
            let Some(v) = n.as_f64().filter(|v| *v > 0.0) else { return };
            if unit.ends_with("bps") && v < 1e6 {
                warnings.push(format!(
                    "{path} = {n} is {n} bit/s (a plain number is bits per second); write \"{n}Gbps\" if you meant gigabits"
                ));
            } else if unit.ends_with('s') && !unit.ends_with("bps") && v < 1e3 {
                warnings.push(format!(
                    "{path} = {n} is {n} ps (a plain number is picoseconds); write \"{n}us\" if you meant microseconds"
                ));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warnings(toml: &str) -> Warnings {
        let input: Value = toml::from_str(toml).unwrap();
        input_warnings(&input, &Scenario::from_toml(toml).unwrap())
    }

    #[test]
    fn tables_must_be_tables() {
        for (text, path) in [
            (r#"{"switch": [1, 2]}"#, "switch"),
            (r#"{"switch": {"ecn": 5}}"#, "switch.ecn"),
            (r#"{"topology": "star"}"#, "topology"),
            (r#"{"workload": {"extra": [{"pattern": "incast"}, [1]]}}"#, "workload.extra[1]"),
        ] {
            let e = check_tables(&serde_json::from_str(text).unwrap()).unwrap_err();
            assert_eq!(e.path, path, "{text}");
            assert!(e.message.starts_with("expected a table, found"), "{e}");
        }
        assert!(check_tables(&serde_json::from_str(r#"{"switch": {"alpha": [1, 2]}}"#).unwrap()).is_ok());
    }

    #[test]
    fn keys_without_effect_are_named() {
        let w = warnings("[topology]\nkind = \"star\"\nk = 8\nhosts_per_leaf = 4\n");
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w.iter().any(|m| m.starts_with("topology.k: has no effect on a star topology")), "{w:?}");
        let w = warnings("[workload]\npattern = \"all_to_all\"\ntrace = \"x.csv\"\nsize = \"1MB\"\n");
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w.iter().any(|m| m.starts_with("workload.trace: has no effect with pattern = \"all_to_all\"")));
        let w = warnings("[workload]\npattern = \"fan_in\"\ncdf = \"datamining\"\nsize = \"1MB\"\nload = 0.3\n");
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("workload.cdf: has no effect with pattern = \"fan_in\" (it uses size, fan_in,"));
        let w = warnings(
            "[workload]\npattern = \"fan_in\"\nfan_in_sizes = \"cdf\"\ncdf = \"datamining\"\nsize = \"1MB\"\n",
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("workload.size: has no effect with pattern = \"fan_in\" (it uses cdf, fan_in,"));
        let w = warnings("[switch]\ndwrr_quantum = \"18KB\"\n[switch.bcc]\nh = \"6us\"\n");
        assert_eq!(w.len(), 2, "{w:?}");
        // Keys at their defaults, as a resolved scenario writes every key, are not flagged.
        assert!(warnings("[topology]\nkind = \"star\"\nk = 4\nleaves = 8\nuplink_rate = \"100Gbps\"\n").is_empty());
        // What each kind and pattern uses is not flagged.
        assert!(warnings("[topology]\nkind = \"fat_tree\"\nk = 4\nuplink_rate = \"40Gbps\"\n").is_empty());
        assert!(warnings("[topology]\nkind = \"file\"\npath = \"t.txt\"\nfailed_links = [[0, 9]]\n").is_empty());
        assert!(warnings("[topology]\nkind = \"star\"\nfailed_links = [[0, 32]]\n").is_empty());
        // A file gives each link its rate and delay.
        let w = warnings("[topology]\nkind = \"file\"\npath = \"t.txt\"\nlink_rate = \"10Gbps\"\nhosts = 3\n");
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w.iter().any(|m| m == "topology.link_rate: has no effect on a file topology (it uses path)"), "{w:?}");
        let w = warnings("[topology]\nkind = \"star\"\npath = \"t.txt\"\n");
        assert_eq!(w, ["topology.path: has no effect on a star topology (it uses hosts)"]);
        assert!(warnings("[workload]\npattern = \"incast\"\nsize = \"1MB\"\nreceiver = 0\n").is_empty());
    }

    #[test]
    fn plain_numbers_that_look_like_unit_mistakes() {
        let w = warnings("[topology]\nlink_delay = 10\nlink_rate = 100\n");
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w.iter().any(|m| m.starts_with("topology.link_delay = 10 is 10 ps")), "{w:?}");
        assert!(w.iter().any(|m| m.starts_with("topology.link_rate = 100 is 100 bit/s")), "{w:?}");
        // Units written out, or plain numbers of a plausible size, are fine.
        assert!(warnings("[topology]\nlink_delay = \"10ps\"\nlink_rate = 100000000000\n").is_empty());
        assert!(warnings("[switch.marking.cutoff]\nk = 30\n").is_empty()); // sizes are bytes
    }
}
