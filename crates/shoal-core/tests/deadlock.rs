//! Deadlocks of lossless flow control (PFC and DSH): a fabric that holds packets and can
//! no longer move any is reported with its cycle, whatever `deadlock_after` says, and a
//! congested fabric that still drains is not.

mod common;
use common::{scenario, TempFile};
use shoal_core::net::NodeId;
use shoal_core::results::{FlowTable, Summary};
use shoal_core::Simulation;

/// A ring of `switches` switches (nodes `switches` to `2 * switches - 1` of the file),
/// each with one host (node i on switch i), every link 100 Gbps and 1 us.
fn ring_file(switches: u32) -> TempFile {
    let n = switches;
    let mut lines =
        vec![format!("{} {n} {}", 2 * n, 2 * n), (n..2 * n).map(|s| s.to_string()).collect::<Vec<_>>().join(" ")];
    lines.extend((0..n).map(|h| format!("{h} {} 100Gbps 1us 0", n + h)));
    lines.extend((0..n).map(|s| format!("{} {} 100Gbps 1us 0", n + s, n + (s + 1) % n)));
    TempFile::new("ring.txt", &(lines.join("\n") + "\n"))
}

/// A trace of one flow of `bytes` from host `s` to host `d` for each `(s, d)`, all at
/// time 0.
fn trace(pairs: &[(u32, u32)], bytes: u64) -> TempFile {
    let rows: Vec<String> = pairs.iter().enumerate().map(|(i, (s, d))| format!("{i},{s},{d},{bytes},0")).collect();
    TempFile::new("flows.csv", &format!("id,src,dst,bytes,start_ns\n{}\n", rows.join("\n")))
}

/// Runs RDMA flows without congestion control (nothing slows them but the flow control)
/// in class 3 over the ring, under `[switch.flow_control]` keys `flow_control`.
fn run_ring(ring: &TempFile, flows: &TempFile, flow_control: &str) -> (Simulation, Vec<String>) {
    run_ring_with(ring, flows, flow_control, "kind = \"none\"")
}

/// `run_ring` with `[rdma.cc]` keys `cc` (and any sections after them).
fn run_ring_with(ring: &TempFile, flows: &TempFile, flow_control: &str, cc: &str) -> (Simulation, Vec<String>) {
    let sc = scenario(&format!(
        r#"
        [topology]
        kind = "file"
        path = {ring:?}
        [switch.flow_control]
        {flow_control}
        [workload]
        pattern = "trace"
        trace = {flows:?}
        transport = "rdma"
        priority = 3
        [run]
        stop_time = "2ms"
        [rdma.cc]
        {cc}
        "#,
        ring = ring.path().to_str().unwrap(),
        flows = flows.path().to_str().unwrap(),
    ));
    let mut sim = Simulation::new(&sc.resolved().unwrap()).unwrap();
    sim.run();
    let table = FlowTable::from_records(&sim.flow_records());
    let warnings = Summary::of_simulation(&mut sim, &sc, &table, Vec::new(), None).warnings;
    (sim, warnings)
}

/// Every flow goes four hops clockwise (its shortest route), so each ring link carries
/// four flows and each switch's egress to the next holds packets that wait for the next
/// switch's egress: a cyclic buffer dependency that PFC freezes.
fn clockwise(switches: u32) -> Vec<(u32, u32)> {
    (0..switches).map(|h| (h, (h + 4) % switches)).collect()
}

/// The deadlock must be the whole ring, in class 3, each entry's port leading to the
/// next entry's switch; the run must end cleanly (no invariant violated) with a warning
/// that names the nodes as the file numbers them.
fn assert_ring_deadlock(sim: &Simulation, warnings: &[String], switches: u32, frozen: bool) {
    let deadlocks = sim.deadlocks();
    assert_eq!(deadlocks.len(), 1, "{deadlocks:?}");
    let d = &deadlocks[0];
    assert_eq!(d.frozen, frozen, "{d:?}");
    assert!(d.onset <= d.detected, "{d:?}");
    let mut on_cycle: Vec<u32> = d.cycle.iter().map(|n| n.switch).collect();
    on_cycle.sort_unstable();
    assert_eq!(on_cycle, (0..switches).collect::<Vec<_>>(), "{d:?}");
    assert!(d.cycle.iter().all(|n| n.class == 3), "{d:?}");
    for (i, n) in d.cycle.iter().enumerate() {
        let next = d.cycle[(i + 1) % d.cycle.len()];
        assert_eq!(sim.port_peer(n.switch, n.port), NodeId::Switch(next.switch), "each waits for the next: {d:?}");
    }
    assert!(sim.check_invariants().is_empty(), "{:?}", sim.check_invariants());
    assert!(sim.flow_records().iter().all(|r| r.finish.is_none()), "every flow crosses the frozen ring");
    assert!(!warnings.iter().any(|w| w.contains("invariant")), "{warnings:?}");
    let warning = warnings.iter().find(|w| w.contains("deadlock")).unwrap_or_else(|| panic!("{warnings:?}"));
    assert!(warning.contains(&format!("switch 0 (node {switches})")), "{warning}");
    assert_eq!(warning.contains("froze") || warning.contains("nothing could move"), frozen, "{warning}");
    if sim.came_to_rest() {
        let stalled = warnings.iter().find(|w| w.contains("did not finish")).unwrap_or_else(|| panic!("{warnings:?}"));
        assert!(stalled.contains("behind the deadlock"), "{stalled}");
    }
}

/// ON/OFF PFC: once the ring freezes no frame or timer is left, the event queue empties
/// long before `deadlock_after` (and the stop time), and the run must still report it.
#[test]
fn a_frozen_ring_is_a_deadlock_whatever_deadlock_after_says() {
    let (ring, flows) = (ring_file(10), trace(&clockwise(10), 20_000_000));
    let (sim, warnings) =
        run_ring(&ring, &flows, "kind = \"pfc\"\ndeadlock_after = \"100us\"\nstop_at_deadlock = true");
    assert_ring_deadlock(&sim, &warnings, 10, true);
    assert!(sim.now() < 100_000_000, "frozen well before deadlock_after: {}", sim.now());
    assert_eq!(sim.now(), sim.deadlocks()[0].detected, "the run stops at the deadlock");
    let (sim, warnings) = run_ring(&ring, &flows, "kind = \"pfc\"\ndeadlock_after = \"1s\"");
    assert_ring_deadlock(&sim, &warnings, 10, true);
}

#[test]
fn a_frozen_ring_under_dsh_is_a_deadlock() {
    let (ring, flows) = (ring_file(10), trace(&clockwise(10), 20_000_000));
    let (sim, warnings) =
        run_ring(&ring, &flows, "kind = \"dsh\"\ndeadlock_after = \"100us\"\nstop_at_deadlock = true");
    assert_ring_deadlock(&sim, &warnings, 10, true);
}

/// RDMA senders with a retransmission timeout: their timers keep firing at the paused
/// NICs, so the event queue never empties, yet nothing can move (every queued packet is
/// held by a pause, nothing is on a wire). That is found at an observation (every quarter
/// of `deadlock_after`), before the pauses have lasted `deadlock_after`.
#[test]
fn a_frozen_ring_with_ticking_senders_is_a_deadlock() {
    let (ring, flows) = (ring_file(10), trace(&clockwise(10), 20_000_000));
    let with_rto = "kind = \"none\"\n[rdma]\nrto = \"20us\"";
    let (sim, warnings) = run_ring_with(&ring, &flows, "kind = \"pfc\"\ndeadlock_after = \"400us\"", with_rto);
    assert!(!sim.came_to_rest(), "the senders' timers still tick at the stop time");
    assert!(sim.flow_records().iter().map(|r| r.timeouts).sum::<u32>() > 0, "retransmission timers fired");
    assert_ring_deadlock(&sim, &warnings, 10, true);
    let d = &sim.deadlocks()[0];
    assert!(d.detected < d.onset + 400_000_000, "found frozen, before the pauses lasted deadlock_after: {d:?}");
}

/// Timed pauses refreshed while held keep sending frames, so the network never comes to
/// rest; but between refreshes nothing can move, and an observation (every quarter of
/// `deadlock_after`) finds the ring frozen before the pauses have lasted that long.
#[test]
fn a_ring_frozen_by_refreshed_timed_pauses_is_a_deadlock() {
    let (ring, flows) = (ring_file(10), trace(&clockwise(10), 20_000_000));
    let (sim, warnings) = run_ring(
        &ring,
        &flows,
        "kind = \"pfc\"\npause_quanta = 1000\ndeadlock_after = \"400us\"\nstop_at_deadlock = true",
    );
    assert_ring_deadlock(&sim, &warnings, 10, true);
    let d = &sim.deadlocks()[0];
    assert!(d.detected < d.onset + 400_000_000, "{d:?}");
    assert_eq!(sim.now(), d.detected, "the run stops at the deadlock");
    assert!(sim.pause_ports().values().map(|r| r.pauses_sent).sum::<u64>() > 20, "pauses were refreshed");
}

/// Three senders four, three and two hops upstream of one receiver: the same links are
/// congested and paused, but the dependencies form a chain, not a cycle. Everything
/// drains, every flow finishes and nothing is reported, in either pause mode.
#[test]
fn a_congested_ring_without_a_cycle_drains_and_is_not_reported() {
    let (ring, flows) = (ring_file(10), trace(&[(0, 4), (1, 4), (2, 4)], 2_000_000));
    for flow_control in ["kind = \"pfc\"", "kind = \"pfc\"\npause_quanta = 1000", "kind = \"dsh\""] {
        let (sim, warnings) = run_ring(&ring, &flows, &format!("{flow_control}\ndeadlock_after = \"5us\""));
        assert!(sim.deadlocks().is_empty(), "{flow_control}: {:?}", sim.deadlocks());
        assert!(sim.counters().frames_sent > 10, "{flow_control}: PFC must pause here");
        assert!(sim.flow_records().iter().all(|r| r.finish.is_some()), "{flow_control}");
        assert_eq!(sim.counters().total_dropped(), 0, "{flow_control}");
        assert!(warnings.is_empty(), "{flow_control}: {warnings:?}");
    }
}
