//! PFC (`[switch.flow_control] kind = "pfc"`): the lossless promise under randomized
//! incasts, drops counted as `HeadroomOverflow` when the headroom is too small, and the
//! obeying side frame by frame.

mod common;
use common::scenario;
use shoal_core::net::{Effect, Effects, ExtStore, Packet};
use shoal_core::scenario::SwitchConfig;
use shoal_core::sim::stream;
use shoal_core::stats::{Counters, DropReason};
use shoal_core::switch::flow_control::{pause_frame, FlowControlConfig};
use shoal_core::switch::scheduler::SchedulerConfig;
use shoal_core::switch::{Drops, Switch};
use shoal_core::units::Bytes;
use shoal_core::Simulation;

/// An incast of `fan_in` RDMA senders (nothing slows them: `[rdma.cc] kind = "none"`)
/// into host 0 on a 100 Gbps star, plus random RDMA traffic among all hosts, through one
/// small pool that PFC must protect; `headroom` is PFC's headroom rule.
fn incast(fan_in: u32, seed: u64, headroom: &str) -> Simulation {
    let hosts = fan_in + 1;
    let sc = scenario(&format!(
        r#"
        [topology]
        kind = "star"
        hosts = {hosts}
        link_rate = "100Gbps"
        link_delay = "1us"
        [switch]
        pool_size = "300KB"
        reserved = "0B"
        ports_per_pool = 128
        [switch.flow_control]
        kind = "pfc"
        headroom = {headroom}
        [rdma.cc]
        kind = "none"
        [run]
        seed = {seed}
        [workload]
        pattern = "incast"
        receiver = 0
        size = "60KB"
        transport = "rdma"
        [[workload.extra]]
        pattern = "all_to_all"
        cdf = "websearch"
        load = 0.5
        flows = 40
        transport = "rdma"
        "#
    ));
    Simulation::new(&sc.resolved()).unwrap()
}

/// With eta of headroom (the default) no lossless packet is ever dropped, whatever the
/// fan-in and seed; PFC does act (frames flow), every flow finishes, and conservation
/// and buffer accounting (headroom included) hold mid-run and at the end.
#[test]
fn eta_headroom_keeps_lossless_classes_lossless() {
    for fan_in in [16, 32, 64] {
        for seed in 1..=3 {
            let what = format!("fan-in {fan_in}, seed {seed}");
            let mut sim = incast(fan_in, seed, "\"eta\"");
            for step in 1..=10 {
                sim.run_until(step * 5_000_000);
                let errors = sim.check_invariants();
                assert!(errors.is_empty(), "{what} at {step} x 5 us: {errors:?}");
            }
            sim.run();
            let errors = sim.check_invariants();
            assert!(errors.is_empty(), "{what} at the end: {errors:?}");
            let c = sim.counters();
            assert_eq!(c.total_dropped(), 0, "{what}: drops {:?}", c.dropped);
            assert!(c.frames_sent > 0, "{what}: PFC never paused; the test needs it to");
            assert_eq!(c.frames_sent, c.frames_received, "{what}");
            let records = sim.flow_records();
            assert!(
                records.iter().all(|r| r.finish.is_some() && r.delivered_bytes == r.bytes),
                "{what}: unfinished flows"
            );
        }
    }
}

/// With a headroom far below eta, the packets in flight when the PAUSE leaves overflow
/// it: drops happen, and each is counted as `HeadroomOverflow` (never by the admission
/// policy); the accounting still holds.
#[test]
fn a_small_headroom_overflows_and_says_so() {
    let mut sim = incast(32, 1, "\"2KB\"");
    sim.run_until(200_000_000);
    let errors = sim.check_invariants();
    assert!(errors.is_empty(), "{errors:?}");
    let c = sim.counters();
    let overflows = c.dropped[DropReason::HeadroomOverflow as usize];
    assert!(overflows > 0, "drops {:?}", c.dropped);
    assert_eq!(overflows, c.total_dropped(), "drops {:?}", c.dropped);
}

/// A switch with PFC, two classes in two queues, under `scheduler`.
fn pfc_switch(scheduler: &str) -> Switch {
    let cfg = SwitchConfig {
        queues: 2,
        reserved: Bytes(0),
        scheduler: SchedulerConfig::of_kind(scheduler).unwrap(),
        flow_control: FlowControlConfig::of_kind("pfc").unwrap(),
        ..SwitchConfig::default()
    };
    Switch::new(&cfg, &[0, 1, 2], &[100_000_000_000; 3], 0, stream(1, "test", 0))
}

/// A port paused for class 0 sends nothing of class 0 at the next packet boundary but
/// keeps sending class 1; a RESUME kicks the port and class 0 goes again. The same
/// under strict priority (class 0 first) and DWRR.
#[test]
fn a_paused_class_stops_and_the_others_go_on() {
    for scheduler in ["strict_priority", "dwrr"] {
        let mut sw = pfc_switch(scheduler);
        let (mut counters, mut exts, mut effects) = (Counters::default(), ExtStore::default(), Effects::new());
        for i in 0..6u8 {
            let pkt = Packet { size: 1000, ..Packet::template(0, 0, 0, i % 2) };
            let mut drops = Drops { counters: &mut counters, exts: &mut exts };
            assert!(sw.receive(1, 0, pkt, 0, &mut drops, &mut effects), "{scheduler}");
        }
        // Port 0's neighbour pauses class 0.
        sw.on_frame(0, &pause_frame(0, true, 64), 0, &mut effects);
        assert!(effects.is_empty(), "{scheduler}: a PAUSE asks for nothing");
        assert!(sw.pauses().is_paused(0, 0));
        let mut sent = Vec::new();
        while let Some(pkt) = sw.transmit(0, 0, &mut counters, &mut effects) {
            sent.push(pkt.priority);
        }
        assert_eq!(sent, vec![1, 1, 1], "{scheduler}: only class 1 leaves");
        assert!(!sw.has_queued(0), "{scheduler}: class 0 waits, so the port has nothing to send");
        assert_eq!(sw.queued_packets(), 3);
        sw.on_frame(0, &pause_frame(0, false, 64), 0, &mut effects);
        assert!(matches!(effects[..], [Effect::Kick { port: 0 }]), "{scheduler}: {effects:?}");
        effects.clear();
        assert!(sw.has_queued(0));
        let mut sent = Vec::new();
        while let Some(pkt) = sw.transmit(0, 0, &mut counters, &mut effects) {
            sent.push(pkt.priority);
        }
        assert_eq!(sent, vec![0, 0, 0], "{scheduler}");
        assert!(sw.check_accounting(0).is_empty(), "{:?}", sw.check_accounting(0));
        // A repeated RESUME changes nothing and kicks nothing.
        effects.clear();
        sw.on_frame(0, &pause_frame(0, false, 64), 0, &mut effects);
        assert!(effects.is_empty(), "{scheduler}");
    }
}

/// A lossy switch ignores PFC frames: its ports never pause.
#[test]
fn a_lossy_switch_ignores_pause_frames() {
    let cfg = SwitchConfig { queues: 2, ..SwitchConfig::default() };
    let mut sw = Switch::new(&cfg, &[0, 1], &[100_000_000_000; 2], 0, stream(1, "test", 0));
    let mut effects = Effects::new();
    sw.on_frame(0, &pause_frame(0, true, 64), 0, &mut effects);
    assert!(!sw.pauses().is_paused(0, 0));
}
