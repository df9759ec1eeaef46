//! Run results: the flow table as Parquet (read back with the parquet crate's reader),
//! the summary, and run directories (complete, deterministic).

mod common;

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use shoal_core::results::{FlowTable, RunFiles, SampleTable, Summary};
use shoal_core::Simulation;
use std::path::{Path, PathBuf};

/// 40 flows on 6 hosts, stopped early (some unfinished), with queue samples.
const STOPPED: &str = r#"
[topology]
kind = "star"
hosts = 6
link_rate = "100Gbps"
link_delay = "1us"

[workload]
pattern = "all_to_all"
cdf = "websearch"
load = 0.5
flows = 40

[run]
seed = 3
stop_time = "300us"
sample_interval = "20us"
"#;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("shoal-results-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn stopped_run() -> (shoal_core::Scenario, Simulation) {
    let sc = common::scenario(STOPPED);
    let mut sim = Simulation::new(&sc).unwrap();
    sim.run();
    (sc, sim)
}

fn read_rows(path: &Path) -> (Vec<String>, Vec<Vec<Field>>) {
    let reader = SerializedFileReader::try_from(std::fs::File::open(path).unwrap()).unwrap();
    let names =
        reader.metadata().file_metadata().schema_descr().columns().iter().map(|c| c.name().to_string()).collect();
    assert_eq!(reader.metadata().num_row_groups(), 1);
    let rows = reader
        .get_row_iter(None)
        .unwrap()
        .map(|r| r.unwrap().into_columns().into_iter().map(|(_, f)| f).collect())
        .collect();
    (names, rows)
}

fn double(x: f64) -> Field {
    if x.is_nan() {
        Field::Null
    } else {
        Field::Double(x)
    }
}

#[test]
fn flows_parquet_holds_the_flow_table() {
    let (_, sim) = stopped_run();
    let t = FlowTable::from_records(&sim.flow_records());
    let unfinished = (0..t.len()).filter(|&i| !t.finished(i)).count();
    assert!(unfinished > 0 && unfinished < t.len(), "the test wants finished and unfinished flows");
    let dir = scratch("flows");
    let path = dir.join("flows.parquet");
    t.write_parquet(std::fs::File::create(&path).unwrap()).unwrap();
    let (names, rows) = read_rows(&path);
    let flows = shoal_core::results::schema::run_tables().into_iter().find(|t| t.name == "flows").unwrap();
    assert_eq!(names, flows.columns.iter().map(|c| c.0).collect::<Vec<_>>(), "the columns the core publishes");
    assert_eq!(rows.len(), t.len());
    for (i, row) in rows.iter().enumerate() {
        let expected = vec![
            Field::ULong(t.id[i]),
            Field::UInt(t.src[i]),
            Field::UInt(t.dst[i]),
            Field::ULong(t.bytes[i]),
            double(t.start_ns(i)),
            double(t.finish_ns(i)),
            double(t.fct_ns(i)),
            double(t.ideal_fct_ns(i)),
            double(t.slowdown(i)),
            Field::UInt(t.retransmits[i]),
            Field::UInt(t.timeouts[i]),
            Field::UByte(t.priority[i]),
            Field::Str(t.kind[i].into()),
            Field::ULong(t.delivered_bytes[i]),
            Field::Bool(t.finished(i)),
            Field::Long(t.query[i]),
        ];
        assert_eq!(row, &expected, "row {i}");
        // Unfinished flows have no finish, FCT or slowdown (null, NaN in pandas).
        assert_eq!(row[6] == Field::Null, !t.finished(i));
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn queues_parquet_holds_the_samples() {
    let (_, sim) = stopped_run();
    let s = SampleTable::from_samples(sim.samples());
    assert!(!s.is_empty());
    let dir = scratch("queues");
    let path = dir.join("queues.parquet");
    s.write_parquet(std::fs::File::create(&path).unwrap()).unwrap();
    let (names, rows) = read_rows(&path);
    assert_eq!(names, ["time_ns", "switch", "port", "queue", "bytes", "pool_bytes", "tx_bytes"]);
    assert_eq!(rows.len(), s.len());
    for (i, row) in rows.iter().enumerate() {
        let expected = vec![
            Field::Double(s.time_ns[i]),
            Field::UInt(s.switch[i]),
            Field::UInt(s.port[i]),
            Field::UInt(s.queue[i]),
            Field::ULong(s.bytes[i]),
            Field::ULong(s.pool_bytes[i]),
            Field::ULong(s.tx_bytes[i]),
        ];
        assert_eq!(row, &expected, "row {i}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_summary_counts_the_flow_table() {
    let (sc, mut sim) = stopped_run();
    let t = FlowTable::from_records(&sim.flow_records());
    let summary = Summary::of_simulation(&mut sim, &sc, &t, vec!["from the scenario".into()], Some(0.5));
    let finished = (0..t.len()).filter(|&i| t.finished(i)).count();
    assert_eq!(summary.flows.total, t.len());
    assert_eq!(summary.flows.finished, finished);
    assert_eq!(summary.flows.unfinished, t.len() - finished);
    assert_eq!(summary.fct.get("all").unwrap().count, finished);
    let buckets: usize = ["small", "medium", "large"].iter().map(|b| summary.fct.get(b).unwrap().count).sum();
    assert_eq!(buckets, finished);
    let small = (0..t.len()).filter(|&i| t.finished(i) && t.bytes[i] <= 100_000).count();
    assert_eq!(summary.fct.get("small").unwrap().count, small);
    assert_eq!(summary.warnings[0], "from the scenario");
    assert!(summary.warnings[1].contains("did not finish"), "{:?}", summary.warnings);
    assert_eq!(summary.events_per_s, Some(sim.events_processed() as f64 / 0.5));
    assert_eq!(summary.seed, 3);
}

#[test]
fn run_directories_are_complete_and_deterministic() {
    let dir = scratch("dirs");
    for name in ["a", "b"] {
        let (sc, mut sim) = stopped_run();
        RunFiles::collect(&mut sim, &sc, Vec::new(), None).write(&dir.join(name)).unwrap();
    }
    let files = |name: &str| {
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.join(name))
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
            })
            .collect();
        files.sort();
        files
    };
    let a = files("a");
    let names: Vec<&str> = a.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["flows.parquet", "queues.parquet", "scenario.json", "summary.json"]);
    assert!(a == files("b"), "the same run gives the same bytes");
    let summary: serde_json::Value = serde_json::from_slice(&a[3].1).unwrap();
    assert_eq!(summary["scenario"], serde_json::from_slice::<serde_json::Value>(&a[2].1).unwrap());
    assert_eq!(summary["wall_time_s"], serde_json::Value::Null);
    std::fs::remove_dir_all(dir).unwrap();
}
