//! `defaults.toml` documents every scheme's keys, the default scheme's as live keys and
//! every other scheme's as commented `# key = value` lines. Nothing but this test ties
//! those comments to the structs, so it reads them as a user would: each commented key
//! must be one the scheme accepts, its value must be the scheme's default, and every key
//! a scheme accepts must be there.

use shoal_core::scenario::DEFAULTS_TOML;
use shoal_core::switch::admission::AdmissionConfig;
use shoal_core::switch::classify::ClassifierConfig;
use shoal_core::switch::flow_control::FlowControlConfig;
use shoal_core::switch::scheduler::SchedulerConfig;
use shoal_core::transport::cc::RdmaCcConfig;
use shoal_core::Scenario;
use std::collections::{BTreeMap, BTreeSet};

/// A registry section of `defaults.toml` and what its schemes accept.
struct Section {
    path: &'static str,
    kinds: &'static [&'static str],
    keys_of: fn(&str) -> Option<&'static [&'static str]>,
}

const SECTIONS: [Section; 5] = [
    Section { path: "switch.admission", kinds: AdmissionConfig::KINDS, keys_of: AdmissionConfig::keys_of },
    Section { path: "switch.scheduler", kinds: SchedulerConfig::KINDS, keys_of: SchedulerConfig::keys_of },
    Section { path: "switch.classifier", kinds: ClassifierConfig::KINDS, keys_of: ClassifierConfig::keys_of },
    Section { path: "switch.flow_control", kinds: FlowControlConfig::KINDS, keys_of: FlowControlConfig::keys_of },
    Section { path: "rdma.cc", kinds: RdmaCcConfig::KINDS, keys_of: RdmaCcConfig::keys_of },
];

/// A key documented for a scheme: `# key = value` under the scheme's heading.
#[derive(Debug)]
struct DocumentedKey {
    kind: String,
    /// The keys that select a variant of the scheme, written before the key (DCQCN's
    /// `model`).
    variant: Vec<(String, String)>,
    key: String,
    /// None where the file writes `...` (a default derived from other keys).
    value: Option<String>,
    line: usize,
}

/// The lines of `[path]` (also when the header itself is commented out), numbered from 1.
fn section_lines(path: &str) -> Vec<(usize, &'static str)> {
    let headers = [format!("[{path}]"), format!("# [{path}]")];
    let mut lines = DEFAULTS_TOML.lines().enumerate();
    let Some(_) = lines.by_ref().find(|(_, l)| headers.iter().any(|h| l.trim() == h)) else {
        panic!("defaults.toml has no [{path}] section");
    };
    lines
        .take_while(|(_, l)| !(l.starts_with('[') || l.starts_with("# [") && l.trim_end().ends_with(']')))
        .map(|(i, l)| (i + 1, l))
        .collect()
}

/// `"a", "b":` at the start of a comment: the kinds a paragraph is about.
fn heading_kinds(text: &str) -> Option<Vec<&str>> {
    let text = text.strip_prefix("kind = ").unwrap_or(text);
    let head = &text[..text.find(':')?];
    let kinds: Option<Vec<&str>> =
        head.split(", ").map(|k| k.strip_prefix('"').and_then(|k| k.strip_suffix('"'))).collect();
    kinds.filter(|k| !k.is_empty() && k.iter().all(|k| k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')))
}

/// `key = value  # note` split into its parts, when `text` is one.
fn key_line(text: &str) -> Option<(&str, &str, &str)> {
    let (key, rest) = text.split_once(" = ")?;
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') {
        return None;
    }
    let (value, note) = rest.split_once("  #").unwrap_or((rest, ""));
    Some((key, value.trim(), note.trim().trim_start_matches('#').trim()))
}

fn documented_keys(section: &Section) -> Vec<DocumentedKey> {
    let mut kind: Option<String> = None;
    let mut variant: Vec<(String, String)> = Vec::new();
    let mut found = Vec::new();
    for (line, text) in section_lines(section.path) {
        if let Some((key, value, _)) = key_line(text) {
            if key == "kind" {
                kind = Some(value.trim_matches('"').to_string());
                variant.clear();
            }
            continue;
        }
        let Some(comment) = text.strip_prefix("# ") else { continue };
        if comment.starts_with(' ') {
            continue;
        }
        if let Some(kinds) = heading_kinds(comment) {
            kind = (kinds.len() == 1 && section.kinds.contains(&kinds[0])).then(|| kinds[0].to_string());
            variant.clear();
            continue;
        }
        if let Some(named) = comment.split_once(" keys").map(|(k, _)| k).filter(|k| section.kinds.contains(k)) {
            kind = Some(named.to_string());
            variant.clear();
            continue;
        }
        let Some((key, value, note)) = key_line(comment) else { continue };
        if key == "kind" {
            kind = Some(value.trim_matches('"').to_string()).filter(|k| section.kinds.contains(&k.as_str()));
            variant.clear();
            continue;
        }
        // `model = "paper": ...` opens the keys of one variant of the scheme.
        if let Some(rest) = value.strip_prefix('"').and_then(|v| v.split_once('"')) {
            if rest.1.starts_with(':') || rest.1.starts_with(" (the default):") {
                variant = vec![(key.to_string(), format!("\"{}\"", rest.0))];
                continue;
            }
        }
        // `quantum = "9KB"  # dwrr: ...` names its scheme in its note.
        let noted = note.split_once(':').map(|(k, _)| k).filter(|k| section.kinds.contains(k));
        let Some(of) = noted.map(str::to_string).or_else(|| kind.clone()) else {
            panic!("defaults.toml:{line}: `{key}` in [{}] belongs to no scheme's paragraph", section.path);
        };
        found.push(DocumentedKey {
            kind: of,
            variant: variant.clone(),
            key: key.to_string(),
            value: (!value.contains("...")).then(|| value.to_string()),
            line,
        });
    }
    found
}

/// The scenario with `[path]` set to `kind` and `keys`.
fn scenario(path: &str, kind: &str, keys: &[(String, String)]) -> Result<Scenario, String> {
    let mut toml = format!("[{path}]\nkind = \"{kind}\"\n");
    for (key, value) in keys {
        toml += &format!("{key} = {value}\n");
    }
    Scenario::from_toml(&toml).map_err(|e| e.to_string())
}

#[test]
fn every_commented_key_is_accepted_and_its_default() {
    let mut wrong = Vec::new();
    for section in &SECTIONS {
        for doc in documented_keys(section) {
            let base = scenario(section.path, &doc.kind, &doc.variant);
            let mut keys = doc.variant.clone();
            keys.push((doc.key.clone(), doc.value.clone().unwrap_or_else(|| "0".into())));
            let with_key = scenario(section.path, &doc.kind, &keys);
            let place = format!("defaults.toml:{} [{}] {} `{}`", doc.line, section.path, doc.kind, doc.key);
            match (&base, &with_key, &doc.value) {
                (Err(e), _, _) => wrong.push(format!("{place}: the scheme alone is refused: {e}")),
                // A derived default (`...`): the key must exist, whatever value it takes.
                (_, Err(e), None) if e.contains("unknown") => wrong.push(format!("{place}: not a key: {e}")),
                (_, _, None) => {}
                (_, Err(e), Some(_)) => wrong.push(format!("{place}: refused: {e}")),
                (Ok(base), Ok(with_key), Some(value)) if base != with_key => {
                    wrong.push(format!("{place}: {value} is not the default"))
                }
                _ => {}
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_key_of_every_scheme_is_documented() {
    let mut missing = Vec::new();
    for section in &SECTIONS {
        let mut documented: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for doc in documented_keys(section) {
            documented.entry(doc.kind).or_default().insert(doc.key);
        }
        let default = section.kinds[0];
        let live: BTreeSet<String> = section_lines(section.path)
            .iter()
            .filter_map(|(_, l)| key_line(l))
            .map(|(k, _, _)| k.to_string())
            .collect();
        for &kind in section.kinds {
            let Some(keys) = (section.keys_of)(kind) else { continue };
            for &key in keys {
                let here = documented.get(kind).is_some_and(|d| d.contains(key));
                let live_default = kind == default && live.contains(key);
                if !here && !live_default {
                    missing.push(format!("[{}] {kind}: `{key}` is not in defaults.toml", section.path));
                }
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// The parser above finds what it should: a key that is not a scheme's, or a wrong
/// default, in a copy of the file is reported.
#[test]
fn the_checks_see_a_wrong_key() {
    let pfc = documented_keys(&SECTIONS[3]);
    assert!(pfc.iter().any(|d| d.kind == "pfc" && d.key == "alpha" && d.value.as_deref() == Some("0.125")));
    assert!(pfc.iter().any(|d| d.kind == "dsh" && d.key == "alpha" && d.value.as_deref() == Some("0.0625")));
    assert!(pfc.iter().any(|d| d.kind == "bfc" && d.key == "vfids"));
    let dcqcn = documented_keys(&SECTIONS[4]);
    assert!(dcqcn.iter().any(|d| d.kind == "dcqcn" && d.key == "cnp_interval" && d.variant[0].1 == "\"paper\""));
    let base = scenario("switch.flow_control", "dsh", &[]).unwrap();
    let wrong = scenario("switch.flow_control", "dsh", &[("alpha".into(), "0.125".into())]).unwrap();
    assert_ne!(base, wrong);
}
