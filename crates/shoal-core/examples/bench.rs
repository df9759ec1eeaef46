//! Runs scenario files in this process and reports wall time, simulated events per
//! second and peak memory: `cargo run --release --example bench -- FILE.toml [...]`.

use shoal_core::Scenario;
use std::time::Instant;

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: bench FILE.toml [FILE.toml ...]");
        std::process::exit(2);
    }
    println!(
        "{:<40} {:>9} {:>12} {:>12} {:>10} {:>9} {:>10}",
        "scenario", "flows", "events", "events/s", "wall (s)", "sim (ms)", "peak MiB"
    );
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| {
            eprintln!("error: {file}: {e}");
            std::process::exit(2)
        });
        let scenario = Scenario::from_toml(&text).unwrap_or_else(|e| {
            eprintln!("error: {file}: {e}");
            std::process::exit(2)
        });
        let setup = Instant::now();
        let mut sim = shoal_core::Simulation::new(&scenario).unwrap_or_else(|e| {
            eprintln!("error: {file}: {e}");
            std::process::exit(2)
        });
        let build = setup.elapsed().as_secs_f64();
        let start = Instant::now();
        sim.run();
        let wall = start.elapsed().as_secs_f64();
        let events = sim.events_processed();
        let errors = sim.check_invariants();
        assert!(errors.is_empty(), "{errors:?}");
        println!(
            "{:<40} {:>9} {:>12} {:>12.0} {:>10.3} {:>9.2} {:>10.1}",
            file,
            format!("{}/{}", sim.flows_finished(), sim.flows_total()),
            events,
            events as f64 / wall,
            wall + build,
            sim.now() as f64 / 1e9,
            peak_rss_kib().unwrap_or(0) as f64 / 1024.0
        );
    }
}
