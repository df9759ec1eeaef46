//! Runs scenario files in this process and reports wall time, simulated events per
//! second and peak memory: `cargo run --release --example bench -- FILE.toml [...]`.

use shoal_core::Scenario;
use std::time::Instant;

/// CPU time this (single-threaded) process has run, in seconds: the first field of
/// `/proc/self/schedstat`, nanoseconds on a CPU.
fn cpu_s() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/schedstat").ok()?;
    Some(stat.split_whitespace().next()?.parse::<u64>().ok()? as f64 / 1e9)
}

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
        "{:<40} {:>9} {:>12} {:>12} {:>10} {:>9} {:>9} {:>10}",
        "scenario", "flows", "events", "events/s", "wall (s)", "cpu (s)", "sim (ms)", "peak MiB"
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
        // Files the scenario names (a CDF, a trace) are relative to it, as `shoal run` reads them.
        let cwd = std::env::current_dir().expect("a working directory");
        if let Some(dir) = std::path::Path::new(&file).parent().filter(|d| !d.as_os_str().is_empty()) {
            std::env::set_current_dir(dir).expect("the scenario's directory");
        }
        let (setup, cpu_before) = (Instant::now(), cpu_s());
        let mut sim = shoal_core::Simulation::new(&scenario).unwrap_or_else(|e| {
            eprintln!("error: {file}: {e}");
            std::process::exit(2)
        });
        std::env::set_current_dir(&cwd).expect("the working directory");
        let build = setup.elapsed().as_secs_f64();
        let start = Instant::now();
        sim.run();
        let wall = start.elapsed().as_secs_f64();
        let cpu = cpu_s().zip(cpu_before).map_or(f64::NAN, |(after, before)| after - before);
        let events = sim.events_processed();
        let errors = sim.check_invariants();
        assert!(errors.is_empty(), "{errors:?}");
        println!(
            "{:<40} {:>9} {:>12} {:>12.0} {:>10.3} {:>9.3} {:>9.2} {:>10.1}",
            file,
            format!("{}/{}", sim.flows_finished(), sim.flows_total()),
            events,
            events as f64 / wall,
            wall + build,
            cpu,
            sim.now() as f64 / 1e9,
            peak_rss_kib().unwrap_or(0) as f64 / 1024.0
        );
    }
}
