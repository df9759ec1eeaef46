//! Per-flow time series (`run.series`): which flows are traced, what their rows hold
//! against theory, and that tracing changes nothing else.

mod common;
use common::{refusal, ser, star_100g};
use shoal_core::transport::SeriesRow;
use shoal_core::{Scenario, Simulation};

fn rows_of(sim: &Simulation, flow: u64) -> Vec<SeriesRow> {
    sim.series_rows().into_iter().filter(|(id, _)| *id == flow).map(|(_, row)| row).collect()
}

/// A lone RDMA message at line rate on a star of 100 Gbps links of 1 us: every ACK
/// measures the same round trip, a 1,036 B packet stored and forwarded once and its
/// 48 B ACK likewise, plus four link delays; the rate stays the line rate.
#[test]
fn a_lone_rdma_flow_measures_the_base_round_trip() {
    let sim = star_100g(
        2,
        "[rdma.cc]\nkind = \"none\"\n[workload]\npattern = \"incast\"\nsenders = \"0\"\nreceiver = 1\n\
         size = \"100KB\"\ntransport = \"rdma\"\n[run.series]\nflows = [0]\n",
    );
    let rows = rows_of(&sim, 0);
    let rtt = 2 * ser(1036, 100) + 2 * ser(48, 100) + 4 * 1_000_000;
    let measured: Vec<u64> = rows.iter().filter_map(|r| r.rtt).collect();
    assert_eq!(measured.len(), 100, "one sample per ACK");
    assert!(measured.iter().all(|&m| m == rtt), "{measured:?} != {rtt}");
    assert!(rows.iter().all(|r| r.probe.rate_bps == 100e9 && r.probe.alpha.is_nan()));
    assert_eq!(rows[0].at, 0, "the first row is the state at the start");
}

/// TCP in slow start with no loss grows its window by every byte acknowledged: from 10
/// segments, the last row holds 10 MSS plus the whole flow.
#[test]
fn tcp_slow_start_grows_by_the_bytes_acknowledged() {
    let sim = star_100g(
        2,
        "[transport]\ncc = \"newreno\"\n[workload]\npattern = \"incast\"\nsenders = \"0\"\nreceiver = 1\n\
         size = \"146KB\"\n[run.series]\nmin_bytes = \"1KB\"\n",
    );
    let rows = rows_of(&sim, 0);
    assert_eq!(rows[0].probe.cwnd_bytes, 10.0 * 1460.0);
    assert!(rows.windows(2).all(|w| w[1].probe.cwnd_bytes >= w[0].probe.cwnd_bytes));
    assert_eq!(rows.last().unwrap().probe.cwnd_bytes, 10.0 * 1460.0 + 146_000.0);
}

const INCAST: &str = "[topology]\nkind = \"star\"\nhosts = 9\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n\
    [switch.flow_control]\nkind = \"pfc\"\n[switch.marking.red]\nkmin = \"40KB\"\nkmax = \"160KB\"\npmax = 0.2\n\
    [switch.ecn]\nnon_ect = \"pass\"\n[workload]\npattern = \"incast\"\nsenders = \"0-7\"\nreceiver = 8\n\
    size = \"500KB\"\nrepeats = 2\nperiod = \"50us\"\ntransport = \"rdma\"\n";

fn incast(series: &str) -> Simulation {
    let mut sim = Simulation::new(&Scenario::from_toml(&format!("{INCAST}{series}")).unwrap()).unwrap();
    sim.run();
    sim
}

fn traced(sim: &Simulation) -> Vec<u64> {
    let mut ids: Vec<u64> = sim.series_rows().iter().map(|(id, _)| *id).collect();
    ids.dedup();
    ids
}

/// `flows` traces exactly those; `sample` exactly that many, the same ones for the same
/// seed; `interval` keeps rows at least that far apart. DCQCN's alpha stays in [0, 1],
/// its rate at or below the line rate. Tracing changes no flow's results.
#[test]
fn the_chosen_flows_are_traced_and_nothing_else_changes() {
    let plain = incast("");
    assert!(plain.series_rows().is_empty());
    let by_id = incast("[run.series]\nflows = [3, 11]\n");
    assert_eq!(traced(&by_id), vec![3, 11]);
    assert_eq!(by_id.flow_records(), plain.flow_records(), "tracing perturbs nothing");
    let sampled = incast("[run.series]\nsample = 5\n");
    assert_eq!(traced(&sampled).len(), 5);
    assert_eq!(traced(&incast("[run.series]\nsample = 5\n")), traced(&sampled));
    let rows = sampled.series_rows();
    assert!(rows.iter().all(|(_, r)| (0.0..=1.0).contains(&r.probe.alpha) && r.probe.rate_bps <= 100e9));
    assert!(rows.iter().any(|(_, r)| r.probe.rate_bps < 100e9), "the incast slows DCQCN down");
    let spaced = incast("[run.series]\nflows = [3]\ninterval = \"2us\"\n");
    let times: Vec<u64> = spaced.series_rows().iter().map(|(_, r)| r.at).collect();
    assert!(times.len() > 10 && times.windows(2).all(|w| w[1] - w[0] >= 2_000_000), "{times:?}");
}

#[test]
fn bad_series_settings_are_refused_naming_the_key() {
    let (key, message) = refusal(&format!("{INCAST}[run.series]\n"));
    assert!(key == "run.series" && message.contains("chooses no flow"), "{key}: {message}");
    let (key, _) = refusal(&format!("{INCAST}[run.series]\nsample = 0\n"));
    assert_eq!(key, "run.series.sample");
    let (key, _) = refusal(&format!("{INCAST}[run.series]\nmin_bytes = \"2MB\"\nmax_bytes = \"1MB\"\n"));
    assert_eq!(key, "run.series.max_bytes");
    let (key, message) = refusal(&format!("{INCAST}[run.series]\nflow = [1]\n"));
    assert!(key.starts_with("run.series"), "{key}: {message}");
}
