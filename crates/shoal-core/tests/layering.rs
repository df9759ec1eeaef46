//! The layering the code keeps: no import cycle among the core's files; schemes check
//! their keys against `CheckEnv`, never the whole scenario; the `config` module under
//! every section imports none of them; the engine names no scheme. Read from the
//! sources, as `use` paths (test modules excluded).

use shoal_core::switch::admission::AdmissionConfig;
use shoal_core::switch::classify::ClassifierConfig;
use shoal_core::switch::flow_control::FlowControlConfig;
use shoal_core::switch::marking::MarkerConfig;
use shoal_core::switch::scheduler::SchedulerConfig;
use shoal_core::transport::cc::{CcConfig, RdmaCcConfig};
use shoal_core::transport::rdma::recovery::LossRecoveryConfig;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir` (a file or a directory of `src`).
fn files(dir: &Path) -> Vec<PathBuf> {
    if dir.is_file() {
        return vec![dir.to_path_buf()];
    }
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("a source directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            out.extend(files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// The file's text before its test module (which may be `pub(super)`).
fn before_tests(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("a readable source file");
    let cut = ["#[cfg(test)]\nmod ", "#[cfg(test)]\npub(super) mod ", "#[cfg(test)]\npub(crate) mod "]
        .iter()
        .filter_map(|m| text.find(m))
        .min();
    text[..cut.unwrap_or(text.len())].to_string()
}

/// The file's code before its test module, without comment lines.
fn code(path: &Path) -> String {
    before_tests(path).lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// The module path of a source file: `switch/mod.rs` is `switch`, `lib.rs` the root.
fn module_of(file: &Path) -> Vec<String> {
    let mut parts: Vec<String> =
        file.strip_prefix(src()).unwrap().with_extension("").iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The files each file imports from: every `crate::a::b` or `super::a` path of its code
/// (the longest prefix that is a file), except a parent's re-export of its child's items
/// (`pub use child::Item;`), which would make every parent depend on its children.
fn import_graph() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let modules: BTreeMap<Vec<String>, PathBuf> = files(&src()).into_iter().map(|f| (module_of(&f), f)).collect();
    let mut graph = BTreeMap::new();
    for (module, file) in &modules {
        let mut targets = BTreeSet::new();
        for line in code(file).lines() {
            let line = line.split("//").next().unwrap_or("");
            let trimmed = line.trim_start();
            let reexport = trimmed.strip_prefix("pub use ").or_else(|| trimmed.strip_prefix("pub(crate) use "));
            if reexport.is_some_and(|rest| !rest.starts_with("crate::") && !rest.starts_with("super::")) {
                continue;
            }
            for (at, _) in line.match_indices("crate::").chain(line.match_indices("super::")) {
                let before = line[..at].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                    continue;
                }
                let rest = &line[at..];
                let path: Vec<&str> = rest
                    .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                    .next()
                    .unwrap_or("")
                    .split("::")
                    .filter(|p| !p.is_empty())
                    .collect();
                // `super` is the parent of the file's module, a `mod.rs` or not.
                let mut target: Vec<String> = if path[0] == "crate" {
                    Vec::new()
                } else {
                    let mut parent = module.clone();
                    parent.pop();
                    parent
                };
                target.extend(path[1..].iter().map(|p| p.to_string()));
                while !target.is_empty() && !modules.contains_key(&target) {
                    target.pop();
                }
                if !target.is_empty() && &target != module {
                    targets.insert(target);
                }
            }
        }
        graph.insert(module.clone(), targets);
    }
    graph
}

/// A cycle of the graph, as its files in order, if there is one.
fn a_cycle(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Option<Vec<String>> {
    fn visit<'a>(
        node: &'a Vec<String>,
        graph: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        done: &mut BTreeSet<&'a Vec<String>>,
        path: &mut Vec<&'a Vec<String>>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| *n == node) {
            return Some(path[at..].iter().chain([&node]).map(|m| m.join("/")).collect());
        }
        if !done.insert(node) {
            return None;
        }
        path.push(node);
        for next in &graph[node] {
            if let Some(cycle) = visit(next, graph, done, path) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}

/// The files under `dirs` whose code names one of `paths`.
fn naming(dirs: &[&str], paths: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for dir in dirs {
        for file in files(&src().join(dir)) {
            let code = code(&file);
            for path in paths {
                if code.contains(path) {
                    found.push(format!("{} names {path}", file.strip_prefix(src()).unwrap().display()));
                }
            }
        }
    }
    found
}

#[test]
fn schemes_do_not_read_the_scenario() {
    let schemes = [
        "switch/admission",
        "switch/marking",
        "switch/flow_control",
        "switch/flow_control.rs",
        "switch/load_balance",
        "switch/classify.rs",
        "switch/scheduler.rs",
        "transport/cc",
        "transport/rdma/recovery",
        "registry.rs",
    ];
    let found = naming(&schemes, &["crate::scenario", "Scenario::"]);
    assert!(found.is_empty(), "schemes validate against CheckEnv, not the scenario: {found:#?}");
}

#[test]
fn config_imports_no_section() {
    let sections =
        ["crate::scenario", "crate::net", "crate::switch", "crate::transport", "crate::workload", "crate::host"];
    let found = naming(&["config", "check_env.rs"], &sections[..1]);
    assert!(found.is_empty(), "{found:#?}");
    let found = naming(&["config"], &sections);
    assert!(found.is_empty(), "config is below every section: {found:#?}");
}

#[test]
fn no_import_cycle() {
    let graph = import_graph();
    assert!(graph.len() > 100, "every source file is read: {}", graph.len());
    assert_eq!(a_cycle(&graph), None, "the core's files import each other in a cycle");
}

#[test]
fn the_cycle_finder_finds_one() {
    let graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")]
        .into_iter()
        .map(|(from, to)| (vec![from.to_string()], BTreeSet::from([vec![to.to_string()]])))
        .collect();
    assert_eq!(a_cycle(&graph), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
    let real = import_graph();
    let scenario = vec!["scenario".to_string()];
    assert!(real[&scenario].contains(&vec!["switch".to_string(), "config".to_string()]), "{:?}", real[&scenario]);
    // `super::` from a file that is not a `mod.rs` names the file's parent module.
    let graph_rs = vec!["net".to_string(), "graph".to_string()];
    assert!(real[&graph_rs].contains(&vec!["net".to_string(), "spec".to_string()]), "{:?}", real[&graph_rs]);
}

/// The engine names no scheme: not in its code, not in its comments (the loop, its
/// builder and its read-outs ask schemes through their traits and facts).
#[test]
fn the_engine_names_no_scheme() {
    let kinds = [
        AdmissionConfig::KINDS,
        SchedulerConfig::KINDS,
        ClassifierConfig::KINDS,
        MarkerConfig::KINDS,
        FlowControlConfig::KINDS,
        CcConfig::KINDS,
        RdmaCcConfig::KINDS,
        LossRecoveryConfig::KINDS,
    ];
    // Words that are kinds but say nothing of a scheme.
    let generic = ["none"];
    let mut found = Vec::new();
    for file in files(&src().join("engine")) {
        let text = before_tests(&file).to_lowercase();
        let words: BTreeSet<&str> = text.split(|c: char| !c.is_ascii_alphanumeric()).collect();
        let snake: BTreeSet<&str> = text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).collect();
        for kind in kinds.iter().flat_map(|k| k.iter()).filter(|k| !generic.contains(k)) {
            if words.contains(kind) || snake.contains(kind) {
                found.push(format!("{} names {kind}", file.strip_prefix(src()).unwrap().display()));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

/// The checker finds what it looks for (it would pass vacuously on a wrong path).
#[test]
fn the_checker_sees_imports() {
    assert!(!naming(&["scenario/mod.rs"], &["crate::config"]).is_empty());
    assert!(files(&src().join("switch/marking")).len() >= 5);
}
