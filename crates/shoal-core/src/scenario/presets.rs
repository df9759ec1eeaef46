//! Named presets (`preset = "<name>"`, `presets.toml`): a chip's settings as a paper
//! describes them, laid under the scenario's own keys before it is read.

use crate::config::ScenarioError;
use serde_json::{Map, Value};

/// The presets as their file has them: each a table of scenario keys and a description.
pub const PRESETS_TOML: &str = include_str!("presets.toml");

/// Scheme sections whose kind decides which keys they accept.
const SCHEMES: &[&str] = &["scheduler", "admission", "classifier"];

/// Flow controls that pause, whose keys a preset's `[switch.flow_control]` sets.
const PAUSING: &[&str] = &["pfc", "dsh"];

fn presets() -> Map<String, Value> {
    let table: toml::Table = toml::from_str(PRESETS_TOML).expect("presets.toml parses");
    match serde_json::to_value(table).expect("a TOML table is JSON") {
        Value::Object(map) => map,
        _ => unreachable!("a TOML table is an object"),
    }
}

/// The names of the presets, in file order.
pub fn names() -> Vec<String> {
    presets().keys().cloned().collect()
}

/// The description of preset `name`.
pub fn description(name: &str) -> Option<String> {
    presets().get(name)?.get("description")?.as_str().map(str::to_string)
}

/// Lays the preset that `input` names (its top-level `preset`) under `input`'s own keys.
pub fn apply(input: &mut Value) -> Result<(), ScenarioError> {
    let Some(name) = input.get("preset") else { return Ok(()) };
    let all = presets();
    let accepted = || all.keys().map(|k| format!("\"{k}\"")).collect::<Vec<_>>().join(", ");
    let Some(name) = name.as_str() else {
        return Err(ScenarioError::new("preset", format!("{name} is not accepted (accepted: {})", accepted())));
    };
    let Some(preset) = all.get(name) else {
        return Err(ScenarioError::new("preset", format!("\"{name}\" is not accepted (accepted: {})", accepted())));
    };
    let mut preset = preset.clone();
    let preset_map = preset.as_object_mut().expect("a preset is a table");
    preset_map.remove("description");
    if let Some(switch) = preset_map.get_mut("switch").and_then(Value::as_object_mut) {
        let kind = input.pointer("/switch/flow_control").and_then(kind_of);
        if !kind.is_some_and(|k| PAUSING.contains(&k.as_str())) {
            switch.remove("flow_control");
        }
    }
    let own = std::mem::take(input);
    *input = merge(preset, own, "");
    Ok(())
}

/// The kind of a scheme given as a table or by its kind alone.
fn kind_of(scheme: &Value) -> Option<String> {
    match scheme {
        Value::String(kind) => Some(kind.clone()),
        Value::Object(table) => table.get("kind")?.as_str().map(str::to_string),
        _ => None,
    }
}

/// `own` laid over `base`: tables merge key by key, anything else of `own` wins; a scheme
/// given with another kind than the base's, or by its kind alone, replaces it whole.
fn merge(base: Value, own: Value, key: &str) -> Value {
    match (base, own) {
        (Value::Object(mut base), Value::Object(own)) => {
            if SCHEMES.contains(&key) || key == "flow_control" {
                let own_kind = own.get("kind").and_then(Value::as_str);
                let base_kind = base.get("kind").and_then(Value::as_str);
                if own_kind.is_some() && base_kind.is_some() && own_kind != base_kind {
                    return Value::Object(own);
                }
            }
            for (k, v) in own {
                let merged = match base.remove(&k) {
                    Some(b) => merge(b, v, &k),
                    None => v,
                };
                base.insert(k, merged);
            }
            Value::Object(base)
        }
        (Value::Object(base), Value::String(kind)) if SCHEMES.contains(&key) || key == "flow_control" => {
            let same = base.get("kind").and_then(Value::as_str) == Some(kind.as_str());
            if same || key == "flow_control" {
                let mut table = base;
                table.insert("kind".into(), Value::String(kind));
                Value::Object(table)
            } else {
                Value::String(kind)
            }
        }
        (_, own) => own,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The scenario's keys win; a preset's flow-control keys apply under PFC or DSH only;
    /// a scheduler of another kind replaces the preset's whole.
    #[test]
    fn a_preset_lies_under_the_scenario() {
        let mut input = json!({
            "preset": "dsh_tomahawk",
            "switch": {"reserved": "0B", "flow_control": "dsh", "scheduler": {"kind": "strict_priority"}},
        });
        apply(&mut input).unwrap();
        assert_eq!(input["switch"]["reserved"], "0B");
        assert_eq!(input["switch"]["buffer"], "16MiB");
        assert_eq!(
            input["switch"]["flow_control"],
            json!({"kind": "dsh", "alpha": 0.0625, "classes": [1, 2, 3, 4, 5, 6, 7]})
        );
        assert_eq!(input["switch"]["scheduler"], json!({"kind": "strict_priority"}));
        assert_eq!(input["rdma"]["ack_priority"], 0);
        let mut lossy = json!({"preset": "dsh_tomahawk"});
        apply(&mut lossy).unwrap();
        assert!(lossy["switch"].get("flow_control").is_none());
        assert_eq!(lossy["switch"]["scheduler"]["strict_queues"], 1);
    }

    #[test]
    fn an_unknown_preset_names_the_accepted_ones() {
        let err = apply(&mut json!({"preset": "trident"})).unwrap_err().to_string();
        assert!(err.contains("preset") && err.contains("\"trident\"") && err.contains("\"dsh_tomahawk\""), "{err}");
    }
}
