//! Reading a scenario from TOML or JSON text as its user wrote it: old spellings and
//! presets first, then serde. Every error names the key path.

use super::Scenario;
use crate::config::ScenarioError;
use crate::transport::cc::{CcConfig, RdmaCcConfig};

impl Scenario {
    /// Parses a scenario from TOML text; errors name the key path.
    pub fn from_toml(text: &str) -> Result<Scenario, ScenarioError> {
        let value: toml::Value = serde_path_to_error::deserialize(toml::Deserializer::new(text)).map_err(|e| {
            let path = e.path().to_string();
            ScenarioError::from_serde(path, e.into_inner().message())
        })?;
        // JSON has no NaN or infinity: converted, they would become null (and an optional
        // key's null reads as unset).
        if let Some((path, number)) = non_finite(&value, String::new()) {
            return Err(not_finite(path, &number));
        }
        Scenario::from_value(serde_json::to_value(value).expect("a TOML value of finite numbers is JSON"))
    }

    /// Parses a scenario from JSON text; errors name the key path.
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            // Python writes NaN and infinities as these words, which JSON does not have;
            // the error's column is at the word, or past the sign of "-Infinity".
            let line = text.lines().nth(inner.line().saturating_sub(1)).unwrap_or("");
            let column = inner.column().saturating_sub(1);
            let at = |start: usize| line.get(start..).unwrap_or("");
            let signed = column.checked_sub(1).is_some_and(|sign| at(sign).starts_with('-'));
            let word = match ["NaN", "Infinity"].into_iter().find(|w| at(column).starts_with(w)) {
                Some("Infinity") if signed => Some("-Infinity"),
                word => word,
            };
            if let Some(word) = word {
                return not_finite(if path == "." { String::new() } else { path }, word);
            }
            let message = inner.to_string();
            let message = message.find(" at line ").map_or(message.as_str(), |at| &message[..at]).to_string();
            ScenarioError::from_serde(path, &message)
        })?;
        Scenario::from_value(value)
    }

    /// Parses a scenario as written: old spellings are read as their new keys
    /// (`input_checks::upgrade`), then every table must be a table. An error inside a
    /// value written under an old key names that key.
    fn from_value(mut value: serde_json::Value) -> Result<Scenario, ScenarioError> {
        let upgrade = super::input_checks::upgrade(&mut value)?;
        let as_written = |mut e: ScenarioError| {
            e.path = upgrade.as_written(&e.path);
            e
        };
        super::presets::apply(&mut value)?;
        super::input_checks::check_tables(&value).map_err(as_written)?;
        serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            as_written(point_to_the_other_transport(ScenarioError::from_serde(path, &e.into_inner().to_string())))
        })
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a scenario always serializes")
    }
}

/// `e`, or for a congestion control set in the other transport's section (`hpcc` in
/// `transport.cc`, `newreno` in `rdma.cc`), `e` with where it belongs.
fn point_to_the_other_transport(mut e: ScenarioError) -> ScenarioError {
    let sections = [
        ("transport.cc", "rdma.cc", RdmaCcConfig::KINDS, "RDMA connections", "rdma"),
        ("rdma.cc", "transport.cc", CcConfig::KINDS, "TCP flows", "tcp"),
    ];
    for (section, other, kinds, flows, transport) in sections {
        if e.path != section && e.path != format!("{section}.kind") {
            continue;
        }
        let kind = e.message.strip_prefix("unknown kind \"").and_then(|rest| rest.split('"').next());
        if let Some(kind) = kind.filter(|k| kinds.contains(k)) {
            e.message.push_str(&format!(
                "; \"{kind}\" is a congestion control of {flows}: set it in [{other}] (kind = \"{kind}\"), \
                 for workloads with transport = \"{transport}\""
            ));
        }
    }
    e
}

/// The first number of `value` (at `path`) that is NaN or infinite: its path (as
/// `serde_path_to_error` writes paths) and the number as written.
fn non_finite(value: &toml::Value, path: String) -> Option<(String, String)> {
    match value {
        toml::Value::Float(x) if !x.is_finite() => Some((path, x.to_string())),
        toml::Value::Table(table) => table
            .iter()
            .find_map(|(key, v)| non_finite(v, if path.is_empty() { key.clone() } else { format!("{path}.{key}") })),
        toml::Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| non_finite(v, format!("{path}[{i}]"))),
        _ => None,
    }
}

/// The error for a NaN or infinite `number` at `path`.
fn not_finite(path: String, number: &str) -> ScenarioError {
    ScenarioError::new(path, format!("{number} is not accepted (accepted: a finite number)"))
}
