#![allow(dead_code)]
use shoal_core::{Scenario, Simulation};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A file holding `contents` in the temporary directory, its name unique to this process
/// and call; removed when dropped.
pub struct TempFile(PathBuf);

impl TempFile {
    pub fn new(name: &str, contents: &str) -> Self {
        static MADE: AtomicUsize = AtomicUsize::new(0);
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("shoal-{}-{n}-{name}", std::process::id()));
        std::fs::write(&path, contents).unwrap();
        TempFile(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

pub fn scenario(toml: &str) -> Scenario {
    let sc = Scenario::from_toml(toml).unwrap_or_else(|e| panic!("bad test scenario: {e}"));
    sc.validate().unwrap_or_else(|e| panic!("invalid test scenario: {e}"));
    sc
}

/// The key path and message of the first refusal of `toml`: as read, as validated, or
/// as the network is built. Panics if all three accept it.
pub fn refusal(toml: &str) -> (String, String) {
    let e = Scenario::from_toml(toml)
        .and_then(|sc| sc.validate().and_then(|_| Simulation::new(&sc)).map(|_| ()))
        .expect_err("the scenario is refused");
    (e.path.clone(), e.message.clone())
}

/// Runs to the end and checks conservation and buffer accounting.
pub fn run(sc: &Scenario) -> Simulation {
    let mut sim = Simulation::new(sc).unwrap();
    sim.run();
    let errors = sim.check_invariants();
    assert!(errors.is_empty(), "invariants violated: {errors:?}");
    sim
}

/// Serialization time in picoseconds of `bytes` at `gbps`.
pub fn ser(bytes: u64, gbps: u64) -> u64 {
    (bytes * 8 * 1000).div_ceil(gbps)
}

/// Runs (as `run`) a star of `hosts` hosts on 100 Gbps links of 1 us, with the rest of
/// the scenario in `rest` (TOML tables).
pub fn star_100g(hosts: u32, rest: &str) -> Simulation {
    run(&scenario(&format!(
        "[topology]\nkind = \"star\"\nhosts = {hosts}\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n{rest}"
    )))
}

/// The utilization of each switch-to-switch link out of switch `switch` (by its index
/// among the switches), from a run's counters.
pub fn core_links_from(counters: &serde_json::Value, switch: u64) -> Vec<f64> {
    counters["links"]["core_links"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["from_switch"] == switch)
        .map(|l| l["utilization"].as_f64().unwrap())
        .collect()
}
