//! The layering the code keeps: schemes check their keys against `CheckEnv`, never the
//! whole scenario, and the `config` module under every section imports none of them.
//! Read from the sources, as `use` paths (test modules excluded).

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

/// The file's code before its test module, without comment lines.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("a readable source file");
    let text = match text.find("#[cfg(test)]\nmod ") {
        Some(cut) => &text[..cut],
        None => &text[..],
    };
    text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
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
        "switch/classify.rs",
        "switch/scheduler.rs",
        "transport/cc",
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

/// The checker finds what it looks for (it would pass vacuously on a wrong path).
#[test]
fn the_checker_sees_imports() {
    assert!(!naming(&["scenario/mod.rs"], &["crate::config"]).is_empty());
    assert!(files(&src().join("switch/marking")).len() >= 5);
}
