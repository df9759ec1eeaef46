//! Checks of a scenario as its user wrote it, before defaults fill it in: a table given
//! as something else (serde would read an array positionally), keys that do nothing for
//! the chosen topology or workload pattern, and plain numbers that are almost surely a
//! unit mistake (`link_delay = 10` is 10 ps).

use crate::scenario::{Pattern, Scenario, ScenarioError, SchedulerKind, TopologyKind, Warnings};
use serde_json::Value;

/// Fails when `input` gives a table of the schema as anything but a table (an array
/// would be read field by field in declaration order: `switch = [1, 2]`).
pub fn check_tables(input: &Value) -> Result<(), ScenarioError> {
    let defaults = serde_json::to_value(Scenario::default()).expect("a scenario always serializes");
    tables_match(input, &defaults, "")
}

fn tables_match(input: &Value, schema: &Value, path: &str) -> Result<(), ScenarioError> {
    let Some(fields) = schema.as_object() else { return Ok(()) };
    let Some(given) = input.as_object() else {
        return Err(ScenarioError::new(path, format!("expected a table, found {}", describe(input))));
    };
    for (key, value) in given {
        let child = join(path, key);
        if let Some(field) = fields.get(key) {
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
    let mut warnings = Vec::new();
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
    };
    for key in given("topology") {
        if !["kind", "link_rate", "link_delay"].contains(&key.as_str()) && !used.contains(&key.as_str()) {
            warnings.push(format!("topology.{key}: has no effect on a {kind} topology (it uses {})", used.join(", ")));
        }
    }
    let sw = given("switch");
    if sc.switch.scheduler != SchedulerKind::Dwrr {
        for key in sw.iter().filter(|k| k.starts_with("dwrr_")) {
            warnings.push(format!("switch.{key}: has no effect unless switch.scheduler = \"dwrr\""));
        }
    }
    if sc.switch.marking != crate::scenario::MarkingKind::Bcc && sw.iter().any(|k| k == "bcc") {
        warnings.push("switch.bcc: has no effect unless switch.marking = \"bcc\"".into());
    }
    for (path, w) in sc.workload_paths() {
        let pattern = serde_json::to_value(w.pattern).expect("an enum serializes");
        let used: &[&str] = match w.pattern {
            Pattern::AllToAll | Pattern::ManyToFew => {
                &["cdf", "load", "load_on", "arrival", "lognormal_sigma", "flows", "duration", "senders", "receivers"]
            }
            Pattern::Incast => &["senders", "receivers", "receiver", "size", "start", "period", "repeats"],
            Pattern::LongLived => &["senders", "receivers", "receiver", "start"],
            Pattern::Udp => &["senders", "receivers", "receiver", "rate", "start", "stop"],
            Pattern::Trace => &["trace"],
        };
        for key in given(&path) {
            if !["pattern", "priority", "extra"].contains(&key.as_str()) && !used.contains(&key.as_str()) {
                warnings.push(format!(
                    "{path}.{key}: has no effect with pattern = {pattern} (it uses {})",
                    used.join(", ")
                ));
            }
        }
    }
    warnings
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
        let w = warnings("[switch]\ndwrr_quantum = \"18KB\"\n[switch.bcc]\nh = \"6us\"\n");
        assert_eq!(w.len(), 2, "{w:?}");
        // Keys at their defaults, as a resolved scenario writes every key, are not flagged.
        assert!(warnings("[topology]\nkind = \"star\"\nk = 4\nleaves = 8\nuplink_rate = \"100Gbps\"\n").is_empty());
        // What each kind and pattern uses is not flagged.
        assert!(warnings("[topology]\nkind = \"fat_tree\"\nk = 4\nuplink_rate = \"40Gbps\"\n").is_empty());
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
        assert!(warnings("[switch.ecn]\nk = 30\n").is_empty()); // sizes are bytes
    }
}
