//! Stochastic fair queueing (`[switch.classifier] kind = "flow_hash"` under DWRR): a
//! short flow that hashes apart from two backlogged long flows gets a third of the
//! bottleneck, as fair queueing's theory says, where a FIFO makes it wait behind the
//! long flows' queue.

mod common;
use common::scenario;
use shoal_core::Simulation;

/// Wire bytes of an RDMA data packet beyond its payload (the reference's 48 B).
const RDMA_HEADER: u64 = 48;

/// Hosts 1 and 2 send 2 MB each to host 0 from t = 0; host 3 sends it 64 KB at 50 us.
/// Returns the short flow's FCT and its unloaded (ideal) FCT, in ps.
fn short_flow_behind_two_long(switch: &str) -> (u64, u64) {
    let trace = common::TempFile::new(
        "fq-flows.csv",
        "id,src,dst,bytes,start_ns\n0,1,0,2000000,0\n1,2,0,2000000,0\n2,3,0,64000,50000\n",
    );
    let sc = scenario(&format!(
        r#"
        [topology]
        kind = "star"
        hosts = 4
        link_rate = "100Gbps"
        link_delay = "1us"
        [switch]
        pool_size = "20MB"
        reserved = "0B"
        {switch}
        [rdma.cc]
        kind = "none"
        [workload]
        pattern = "trace"
        trace = {:?}
        transport = "rdma"
        "#,
        trace.path().to_str().unwrap()
    ));
    let mut sim = Simulation::new(&sc).unwrap();
    sim.run();
    assert!(sim.check_invariants().is_empty());
    assert_eq!(sim.counters().total_dropped(), 0);
    let short = sim.flow_records().into_iter().find(|r| r.id == 2).unwrap();
    (short.finish.unwrap() - short.start, short.ideal_fct.unwrap())
}

#[test]
fn a_short_flow_gets_its_fair_share_under_flow_hashing() {
    let sfq = "queues = 32\nscheduler = { kind = \"dwrr\", quantum = \"1KB\", strict_queues = 1 }\n\
               classifier = { kind = \"flow_hash\", first_queue = 1 }";
    let (fct, ideal) = short_flow_behind_two_long(sfq);
    // Both long flows stay backlogged while the short one runs (they still have more
    // than 1.3 MB each to send), so DWRR gives each of the three a third of the link:
    // the short flow's bytes take three times their line-rate serialization.
    let packets = 64_000u64.div_ceil(1000);
    let line_rate = (64_000 + packets * RDMA_HEADER) * 8 * 1000 / 100; // ps at 100 Gbps
    let expected = ideal + 2 * line_rate;
    let ratio = fct as f64 / expected as f64;
    assert!((0.95..=1.1).contains(&ratio), "SFQ: short flow FCT {fct} ps, fair-share theory {expected} ps");

    // Under one FIFO it waits behind the long flows' queue, which has grown at the
    // line rate for 50 us (about 625 KB, 50 us to drain).
    let (fifo, _) = short_flow_behind_two_long("queues = 1\nscheduler = \"fifo\"");
    assert!(fifo > expected + 40_000_000, "FIFO: short flow FCT {fifo} ps, SFQ's theory {expected} ps");
}
