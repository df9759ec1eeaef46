//! PFC (`[switch.flow_control] kind = "pfc"`): the lossless promise under randomized
//! incasts, drops counted as `HeadroomOverflow` when the headroom is too small, and the
//! obeying side frame by frame.

mod common;
use common::scenario;
use shoal_core::net::{Effect, Effects, ExtStore, NodeId, Packet};
use shoal_core::scenario::SwitchConfig;
use shoal_core::sim::stream;
use shoal_core::stats::{Counters, DropReason, PauseKey};
use shoal_core::switch::flow_control::{pause_frame, FlowControlConfig, Pause};
use shoal_core::switch::scheduler::SchedulerConfig;
use shoal_core::switch::{Drops, Switch};
use shoal_core::units::Bytes;
use shoal_core::Simulation;

/// An incast of `fan_in` RDMA senders (nothing slows them: `[rdma.cc] kind = "none"`)
/// into host 0 on a 100 Gbps star, plus random RDMA traffic among all hosts, through one
/// small pool that PFC must protect; `headroom` is PFC's headroom rule.
fn incast(fan_in: u32, seed: u64, headroom: &str) -> Simulation {
    incast_with(fan_in, seed, &format!("headroom = {headroom}"))
}

/// `incast` with PFC keys `pfc`.
fn incast_with(fan_in: u32, seed: u64, pfc: &str) -> Simulation {
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
        {pfc}
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
    Simulation::new(&sc.resolved().unwrap()).unwrap()
}

/// Runs `sim` to the end, checking conservation and buffer accounting (headroom
/// included) every `step` ps for `steps` steps and at the end, and asserts PFC's promise:
/// PFC paused (the tests need it to), nothing was dropped, and every flow delivered all
/// its bytes.
fn run_lossless(mut sim: Simulation, step: u64, steps: u64, what: &str) -> Simulation {
    for k in 1..=steps {
        sim.run_until(k * step);
        let errors = sim.check_invariants();
        assert!(errors.is_empty(), "{what} at {} ps: {errors:?}", k * step);
    }
    sim.run();
    let errors = sim.check_invariants();
    assert!(errors.is_empty(), "{what} at the end: {errors:?}");
    let c = sim.counters();
    assert_eq!(c.total_dropped(), 0, "{what}: drops {:?}", c.dropped);
    assert!(c.frames_sent > 0, "{what}: PFC never paused; the test needs it to");
    let records = sim.flow_records();
    assert!(records.iter().all(|r| r.finish.is_some() && r.delivered_bytes == r.bytes), "{what}: unfinished flows");
    sim
}

/// With eta of headroom (the default) no lossless packet is ever dropped, whatever the
/// fan-in and seed; PFC does act (frames flow), every flow finishes, and conservation
/// and buffer accounting (headroom included) hold mid-run and at the end.
#[test]
fn eta_headroom_keeps_lossless_classes_lossless() {
    for fan_in in [16, 32, 64] {
        for seed in 1..=3 {
            let what = format!("fan-in {fan_in}, seed {seed}");
            let sim = run_lossless(incast(fan_in, seed, "\"eta\""), 5_000_000, 10, &what);
            let c = sim.counters();
            assert_eq!(c.frames_sent, c.frames_received, "{what}");
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
        sw.on_frame(0, &pause_frame(0, Pause::UntilResume, 64), 0, &mut effects, &mut ExtStore::default());
        let record = |e: &Effect| match *e {
            Effect::PauseReceived { port: 0, class: 0, paused } => Some(paused),
            _ => None,
        };
        assert!(
            matches!(effects[..], [ref e] if record(e) == Some(true)),
            "{scheduler}: a PAUSE asks for nothing but its record: {effects:?}"
        );
        effects.clear();
        assert!(sw.pauses().is_paused(0, 0));
        let mut sent = Vec::new();
        while let Some(pkt) = sw.transmit(0, 0, &mut counters, &mut effects) {
            sent.push(pkt.priority);
        }
        assert_eq!(sent, vec![1, 1, 1], "{scheduler}: only class 1 leaves");
        assert!(!sw.has_queued(0), "{scheduler}: class 0 waits, so the port has nothing to send");
        assert_eq!(sw.queued_packets(), 3);
        sw.on_frame(0, &pause_frame(0, Pause::Resume, 64), 0, &mut effects, &mut ExtStore::default());
        assert!(
            matches!(effects[..], [ref e, Effect::Kick { port: 0 }] if record(e) == Some(false)),
            "{scheduler}: {effects:?}"
        );
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
        sw.on_frame(0, &pause_frame(0, Pause::Resume, 64), 0, &mut effects, &mut ExtStore::default());
        assert!(matches!(effects[..], [ref e] if record(e) == Some(false)), "{scheduler}: {effects:?}");
    }
}

/// A lossy switch ignores PFC frames: its ports never pause.
#[test]
fn a_lossy_switch_ignores_pause_frames() {
    let cfg = SwitchConfig { queues: 2, ..SwitchConfig::default() };
    let mut sw = Switch::new(&cfg, &[0, 1], &[100_000_000_000; 2], 0, stream(1, "test", 0));
    let mut effects = Effects::new();
    sw.on_frame(0, &pause_frame(0, Pause::UntilResume, 64), 0, &mut effects, &mut ExtStore::default());
    assert!(!sw.pauses().is_paused(0, 0));
}

/// Two RDMA senders at line rate (no congestion control) into one 100 Gbps receiver: the
/// bottleneck drains at 100 Gbps, so each sender can send half the time and PFC pauses
/// it for the other half. Over the transfer (2 x 1 MB on the wire takes twice one flow's
/// serialization time S), each sender's NIC is paused for about S, less the time before
/// the first PAUSE (the ingress fills at 50 Gbps to alpha x the free pool, a few us).
/// Every frame a switch sent was received and logged, and the tables agree.
#[test]
fn paused_time_is_what_the_bottleneck_leaves_each_sender() {
    let sc = scenario(
        r#"
        [topology]
        kind = "star"
        hosts = 3
        link_rate = "100Gbps"
        link_delay = "1us"
        [switch]
        pool_size = "300KB"
        reserved = "0B"
        [switch.flow_control]
        kind = "pfc"
        [rdma.cc]
        kind = "none"
        [workload]
        pattern = "incast"
        receiver = 0
        size = "1MB"
        transport = "rdma"
        "#,
    );
    let sim = common::run(&sc);
    assert_eq!(sim.counters().total_dropped(), 0);
    let rows = sim.pause_ports();
    let rdma = shoal_core::transport::RdmaSettings::new(&sc.rdma, &sc.topology, vec![100_000_000_000; 3]);
    let wire_bytes = rdma.packets(1_000_000) as u64 * (rdma.mtu + rdma.header) as u64;
    let one_flow = common::ser(wire_bytes, 100) as f64;
    let mut senders = 0;
    for (key, row) in &rows {
        match key.node {
            NodeId::Host(h) => {
                senders += 1;
                assert!(h == 1 || h == 2, "only the senders are paused: {key:?}");
                let paused = row.paused as f64;
                assert!(
                    (0.85 * one_flow..=one_flow).contains(&paused),
                    "host {h}: paused {paused} ps, one flow's serialization {one_flow} ps"
                );
                assert_eq!(row.resumes_received, row.pauses_received, "host {h}: every pause ended");
            }
            NodeId::Switch(_) => assert_eq!(row.pauses_received, 0, "the receiver never pauses the switch"),
        }
    }
    assert_eq!(senders, 2);
    let sent: u64 = rows.values().map(|r| r.pauses_sent + r.resumes_sent).sum();
    let received: u64 = rows.values().map(|r| r.pauses_received + r.resumes_received).sum();
    assert_eq!(sent, received);
    assert_eq!(received as usize, sim.pause_events().len());
    assert_eq!(sent, sim.counters().frames_sent);
}

/// The lossless promise on `topology`, with short (0.1 us) and long (10 us) links and
/// three lossless classes sharing each port: a fan-in-64 incast in class 1, random
/// all-to-all traffic in class 2 and a second incast in class 3, through a small pool.
/// With eta of headroom nothing is dropped and every flow finishes; PFC pauses (frames
/// flow), no deadlock is reported, and the accounting holds mid-run and at the end.
fn lossless_promise(name: &str, topology: &str) {
    lossless_promise_with(name, topology, "");
}

/// `lossless_promise` with PFC keys `pfc`.
fn lossless_promise_with(name: &str, topology: &str, pfc: &str) {
    lossless_promise_under(name, topology, "", &format!("kind = \"pfc\"\n{pfc}"));
}

/// `lossless_promise` with `switch` keys under the flow control of `flow_control` (its
/// kind and keys).
fn lossless_promise_under(name: &str, topology: &str, switch: &str, flow_control: &str) {
    for delay in ["100ns", "10us"] {
        for seed in 1..=2 {
            let what = format!("{name}, {delay} links, seed {seed}");
            let uplink = if name == "star" { String::new() } else { format!("uplink_delay = \"{delay}\"") };
            let sc = scenario(&format!(
                r#"
                [topology]
                {topology}
                link_rate = "100Gbps"
                link_delay = "{delay}"
                {uplink}
                [switch]
                queues = 4
                scheduler = "dwrr"
                pool_size = "500KB"
                reserved = "0B"
                {switch}
                [switch.flow_control]
                {flow_control}
                [rdma.cc]
                kind = "none"
                [run]
                seed = {seed}
                [workload]
                pattern = "incast"
                receiver = 0
                size = "20KB"
                transport = "rdma"
                priority = 1
                [[workload.extra]]
                pattern = "all_to_all"
                cdf = "websearch"
                load = 0.5
                flows = 40
                transport = "rdma"
                priority = 2
                [[workload.extra]]
                pattern = "incast"
                receiver = 5
                size = "30KB"
                transport = "rdma"
                priority = 3
                "#
            ));
            let sim = run_lossless(Simulation::new(&sc.resolved().unwrap()).unwrap(), 10_000_000, 4, &what);
            assert!(sim.deadlocks().is_empty(), "{what}: {:?}", sim.deadlocks());
            let records = sim.flow_records();
            let classes: std::collections::BTreeSet<u8> = records.iter().map(|r| r.priority).collect();
            assert_eq!(classes.into_iter().collect::<Vec<_>>(), [1, 2, 3], "{what}");
        }
    }
}

#[test]
fn the_lossless_promise_holds_on_a_star() {
    lossless_promise("star", "kind = \"star\"\nhosts = 65");
}

#[test]
fn the_lossless_promise_holds_on_a_leaf_spine() {
    lossless_promise(
        "leaf-spine",
        "kind = \"leaf_spine\"\nleaves = 4\nspines = 2\nhosts_per_leaf = 17\nuplink_rate = \"100Gbps\"",
    );
}

/// The same with timed pauses (5.12 us timers refreshed every 2.56 us, ns3-rdma's 5 us
/// and 2.5 us): switches obey timers and refresh pauses to other switches, not only to
/// NICs.
#[test]
fn the_lossless_promise_holds_on_a_leaf_spine_with_timed_pauses() {
    lossless_promise_with(
        "leaf-spine",
        "kind = \"leaf_spine\"\nleaves = 4\nspines = 2\nhosts_per_leaf = 17\nuplink_rate = \"100Gbps\"",
        "pause_quanta = 1000",
    );
}

/// DSH, one buffer per switch (as it requires), three lossless classes per port and one
/// eta of insurance per port: its port-level pauses keep the promise where queue-level
/// ones come too late.
#[test]
fn the_lossless_promise_holds_under_dsh_on_a_leaf_spine() {
    lossless_promise_under(
        "leaf-spine, DSH",
        "kind = \"leaf_spine\"\nleaves = 4\nspines = 2\nhosts_per_leaf = 17\nuplink_rate = \"100Gbps\"",
        "ports_per_pool = 64",
        "kind = \"dsh\"",
    );
}

#[test]
fn the_lossless_promise_holds_under_dsh_on_a_star() {
    lossless_promise_under("star, DSH", "kind = \"star\"\nhosts = 65", "ports_per_pool = 65", "kind = \"dsh\"");
}

/// Flows hashed over queues 1-3 (stochastic fair queueing): each class's packets share
/// every one of them, so a pause of one class must hold all three at the switch it
/// reaches (a leaf-spine: switches pause switches).
#[test]
fn the_lossless_promise_holds_with_flows_hashed_to_queues() {
    lossless_promise_under(
        "leaf-spine, flow_hash",
        "kind = \"leaf_spine\"\nleaves = 4\nspines = 2\nhosts_per_leaf = 17\nuplink_rate = \"100Gbps\"",
        "classifier = { kind = \"flow_hash\", first_queue = 1 }",
        "kind = \"pfc\"",
    );
}

#[test]
fn the_lossless_promise_holds_on_a_fat_tree() {
    lossless_promise("fat tree", "kind = \"fat_tree\"\nk = 8\nuplink_rate = \"100Gbps\"");
}

/// The DSH paper's deadlock fabric (its Fig. 12), scaled down: 2 spines and 4 leaves of 4
/// hosts, all links 100 Gbps, 1 us. With the links S0-L3 and S1-L0 `failed`, traffic
/// between L0 and L3 must go down through L1 or L2 and up again, and with traffic between
/// L1 and L2 the four links S0->L1->S1->L2->S0 each carry packets that wait for the next:
/// a cyclic buffer dependency. Leaves are switches 0-3, spines 4-5 (node ids: hosts
/// first, so switch s is node 16 + s).
fn deadlock_fabric(failed: bool, seed: u64) -> Simulation {
    deadlock_fabric_with(failed, seed, "")
}

/// `deadlock_fabric` with PFC keys `pfc` (`deadlock_after` is 200 us unless they set it).
fn deadlock_fabric_with(failed: bool, seed: u64, pfc: &str) -> Simulation {
    let watch = if pfc.contains("deadlock_after") { "" } else { "deadlock_after = \"200us\"" };
    let failed_links = if failed { "failed_links = [[20, 19], [21, 16]]" } else { "" };
    let flows = |senders: &str, receivers: &str| {
        format!(
            "pattern = \"many_to_few\"\nsenders = \"{senders}\"\nreceivers = \"{receivers}\"\ncdf = \"websearch\"\n\
             load = 0.9\nflows = 150\ntransport = \"rdma\"\npriority = 3\n"
        )
    };
    let sc = scenario(&format!(
        "[topology]\nkind = \"leaf_spine\"\nleaves = 4\nspines = 2\nhosts_per_leaf = 4\nlink_rate = \"100Gbps\"\n\
         uplink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n{failed_links}\n\
         [switch]\npool_size = \"300KB\"\nreserved = \"0B\"\nqueues = 8\nscheduler = \"strict_priority\"\n\
         [switch.flow_control]\nkind = \"pfc\"\n{watch}\nstop_at_deadlock = true\n{pfc}\n\
         [rdma.cc]\nkind = \"none\"\n[run]\nseed = {seed}\n\
         [workload]\n{}\n[[workload.extra]]\n{}\n[[workload.extra]]\n{}\n[[workload.extra]]\n{}",
        flows("0-3", "12-15"),
        flows("12-15", "0-3"),
        flows("4-7", "8-11"),
        flows("8-11", "4-7"),
        pfc = pfc,
        watch = watch,
    ));
    let mut sim = Simulation::new(&sc.resolved().unwrap()).unwrap();
    sim.run();
    sim
}

/// On the fabric with failed links, PFC deadlocks: the run stops at the first deadlock,
/// whose cycle runs through S0, L1, S1 and L2 (one way or the other) in one class, each
/// entry's port leading to the next entry's switch, found frozen (nothing could move) or
/// at least `deadlock_after` after its last pause began.
#[test]
fn a_cyclic_buffer_dependency_deadlocks_and_is_reported() {
    let sim = deadlock_fabric(true, 1);
    let deadlocks = sim.deadlocks();
    assert!(!deadlocks.is_empty(), "no deadlock found");
    assert!(deadlocks.iter().all(|d| d.detected == deadlocks[0].detected), "the run stops at the first: {deadlocks:?}");
    let d = &deadlocks[0];
    assert!(d.frozen || d.detected >= d.onset + 200_000_000, "found frozen, or after deadlock_after: {d:?}");
    assert_eq!(sim.now(), d.detected, "the run ended where the deadlock was found");
    assert!(sim.flow_records().iter().any(|r| r.finish.is_none()));
    let switches: std::collections::BTreeSet<u32> = d.cycle.iter().map(|n| n.switch).collect();
    assert_eq!(switches.into_iter().collect::<Vec<_>>(), [1, 2, 4, 5], "L1 L2 S0 S1: {d:?}");
    assert!(d.cycle.iter().all(|n| n.class == 3), "{d:?}");
    for (i, n) in d.cycle.iter().enumerate() {
        let next = d.cycle[(i + 1) % d.cycle.len()];
        assert_eq!(sim.port_peer(n.switch, n.port), NodeId::Switch(next.switch), "each waits for the next: {d:?}");
    }
}

/// A `deadlock_after` longer than the run could last: the fabric freezes (ON/OFF pauses
/// send no more frames, and nothing slows or times out the flows), the network comes to
/// rest holding packets, and the deadlock is reported there with the same cycle.
#[test]
fn a_fabric_that_freezes_before_deadlock_after_is_reported_at_rest() {
    let sim = deadlock_fabric_with(true, 1, "deadlock_after = \"10s\"");
    let deadlocks = sim.deadlocks();
    assert!(!deadlocks.is_empty(), "no deadlock found");
    let d = &deadlocks[0];
    assert!(d.frozen && d.detected < 10_000_000_000_000, "{d:?}");
    assert_eq!(sim.now(), d.detected, "the run ended where the deadlock was found");
    let switches: std::collections::BTreeSet<u32> = d.cycle.iter().map(|n| n.switch).collect();
    assert_eq!(switches.into_iter().collect::<Vec<_>>(), [1, 2, 4, 5], "L1 L2 S0 S1: {d:?}");
    assert!(sim.check_invariants().is_empty(), "{:?}", sim.check_invariants());
}

/// With timed pauses refreshed while held, a deadlock's pauses never lapse, and the
/// detector (which reads when each pause began) still finds the cycle: the run stops
/// there, found frozen or `deadlock_after` or more after the onset, with the same switches
/// in the cycle.
#[test]
fn refreshed_timed_pauses_deadlock_the_same_and_are_reported() {
    let sim = deadlock_fabric_with(true, 1, "pause_quanta = 1000");
    let deadlocks = sim.deadlocks();
    assert!(!deadlocks.is_empty(), "no deadlock found");
    let d = &deadlocks[0];
    assert!(d.frozen || d.detected >= d.onset + 200_000_000, "found frozen, or after deadlock_after: {d:?}");
    assert_eq!(sim.now(), d.detected);
    let switches: std::collections::BTreeSet<u32> = d.cycle.iter().map(|n| n.switch).collect();
    assert_eq!(switches.into_iter().collect::<Vec<_>>(), [1, 2, 4, 5], "L1 L2 S0 S1: {d:?}");
    let expired: u64 = sim.pause_ports().values().map(|r| r.pauses_expired).sum();
    assert_eq!(expired, 0, "refreshes keep every pause");
}

/// The same traffic on the intact fabric, where routes only go up then down: PFC pauses a
/// lot, yet no cycle forms, no deadlock is reported and every flow finishes.
#[test]
fn a_congested_fabric_without_cycles_is_not_a_deadlock() {
    let sim = deadlock_fabric(false, 1);
    assert!(sim.deadlocks().is_empty(), "{:?}", sim.deadlocks());
    assert!(sim.counters().frames_sent > 100, "PFC must work hard here: {}", sim.counters().frames_sent);
    assert!(sim.flow_records().iter().all(|r| r.finish.is_some()));
    assert_eq!(sim.counters().total_dropped(), 0);
}

/// One pause quantum at 100 Gbps: 512 bit times.
const QUANTUM_PS: u64 = 5_120;

/// The frames each (node, port, class) received, in time order: (time, PAUSE?).
fn frames_by_key(sim: &Simulation) -> std::collections::BTreeMap<PauseKey, Vec<(u64, bool)>> {
    let mut frames: std::collections::BTreeMap<PauseKey, Vec<(u64, bool)>> = Default::default();
    for e in sim.pause_events() {
        frames.entry(e.key).or_default().push((e.time, e.paused));
    }
    frames
}

/// A long incast with timed pauses of 200 quanta (1.024 us at 100 Gbps) refreshed every
/// R = 100 quanta (512 ns): refreshes come far earlier than a pause could lapse (a refresh
/// waits behind at most one packet, ~84 ns), so no pause runs out; nothing is dropped and
/// every flow finishes (the lossless promise). The switch sends a PAUSE and then one every
/// R until its RESUME, so a pause of length L at the sender brings 1 + floor(L / R)
/// PAUSEs: L / R + 1 within one frame. The sender sees L shifted by the difference of two
/// frames' waits behind a packet (at most one packet's serialization, j), so it is checked
/// within one frame and j / R; and refreshes did happen.
#[test]
fn refreshes_keep_a_timed_pause_until_its_resume() {
    let refresh_ps = 100 * QUANTUM_PS;
    let mut refreshed = 0;
    for seed in 1..=2 {
        let what = format!("seed {seed}");
        let sim = run_lossless(incast_with(32, seed, "pause_quanta = 200"), 5_000_000, 10, &what);
        let sc = common::scenario("");
        let rdma = shoal_core::transport::RdmaSettings::new(&sc.rdma, &sc.topology, vec![100_000_000_000; 2]);
        let slack = common::ser((rdma.mtu + rdma.header) as u64, 100) as f64 / refresh_ps as f64;
        for (key, frames) in frames_by_key(&sim) {
            let row = sim.pause_ports()[&key];
            assert_eq!(row.pauses_expired, 0, "{what} {key:?}: a pause lapsed between refreshes");
            assert!(row.pauses_received >= row.resumes_received, "{what} {key:?}");
            // Pauses: from a PAUSE while not paused to the next RESUME.
            let mut start = None;
            let mut count = 0u64;
            for &(t, pause) in &frames {
                match (pause, start) {
                    (true, None) => (start, count) = (Some(t), 1),
                    (true, Some(_)) => count += 1,
                    (false, Some(t0)) => {
                        let expected = (t - t0) as f64 / refresh_ps as f64 + 1.0;
                        assert!(
                            (expected - 1.0 - slack..=expected + slack).contains(&(count as f64)),
                            "{what} {key:?}: {count} PAUSEs in a pause of {} ps, expected about {expected:.2}",
                            t - t0
                        );
                        refreshed += count - 1;
                        start = None;
                    }
                    (false, None) => {}
                }
            }
            assert_eq!(start, None, "{what} {key:?}: a pause never ended");
        }
    }
    assert!(refreshed > 10, "the test needs refreshes: {refreshed}");
}

/// A refresh only one quantum before the timer runs out comes too late whenever it waits
/// behind a packet longer than the PAUSE before it did (the all-to-all traffic puts data
/// on the switch's links to the senders), and a tiny timer (16 quanta, 81.92 ns, below
/// one packet's serialization) lapses the same way: pauses run out, and the senders
/// resume by expiry. The timer's theory holds exactly: each PAUSE holds its class until
/// the next frame or for the timer, whichever is first, so the paused time in the log is
/// the sum over PAUSEs of min(gap to the next frame, timer), never more than the timer per
/// PAUSE. The headroom absorbs what the early resumes let through: nothing is dropped.
#[test]
fn a_pause_refreshed_too_late_lapses_and_headroom_keeps_it_lossless() {
    for (pause, refresh) in [(40, 39), (16, 15)] {
        let timer = pause * QUANTUM_PS;
        let what = format!("pause_quanta = {pause}, refresh_quanta = {refresh}");
        let pfc = format!("pause_quanta = {pause}\nrefresh_quanta = {refresh}");
        let sim = run_lossless(incast_with(32, 1, &pfc), 5_000_000, 10, &what);
        let rows = sim.pause_ports();
        let mut expired = 0;
        for (key, frames) in frames_by_key(&sim) {
            let mut paused = 0;
            let mut lapses = 0;
            for (i, &(t, pause)) in frames.iter().enumerate() {
                if !pause {
                    continue;
                }
                let gap = frames.get(i + 1).map_or(u64::MAX, |&(next, _)| next - t);
                paused += gap.min(timer);
                lapses += (gap > timer) as u64;
            }
            let row = rows[&key];
            assert_eq!(row.paused, paused, "{what} {key:?}: paused time against the timer's theory");
            assert_eq!(row.pauses_expired, lapses, "{what} {key:?}");
            expired += lapses;
        }
        assert!(expired > 0, "{what}: the test needs pauses that lapse");
    }
}

/// Found by tests/lossless_fabrics.rs: seven RDMA senders without congestion control
/// into one host of an 8-host star of 5 us links, with all-to-all traffic, a 150 KB pool
/// and the default eta headroom (131,868 B per port and class). The shared pool runs so
/// low that each 48 B ACK of a receiver goes into headroom and leaves at once: its class
/// toggles PAUSE and RESUME every 3.84 ns, faster than a 64 B frame leaves (5.12 ns), so
/// frames pile up on the link and the PAUSE that counts waits behind them, longer than
/// eta allows for. ns3-datacenter sends every frame too; Shoal keeps its model and says
/// why the lossless packets were dropped.
#[test]
fn a_storm_of_pause_frames_delays_the_pause_and_says_so() {
    let sc = scenario(
        r#"
        [topology]
        kind = "star"
        hosts = 8
        link_rate = "100Gbps"
        link_delay = "5us"
        [switch]
        pool_size = "150KB"
        reserved = "0B"
        ports_per_pool = 128
        [switch.flow_control]
        kind = "pfc"
        [rdma.cc]
        kind = "none"
        [run]
        seed = 285225056771
        [workload]
        pattern = "incast"
        receiver = 0
        senders = "1-7"
        size = "40KB"
        transport = "rdma"
        priority = 3
        [[workload.extra]]
        pattern = "all_to_all"
        cdf = "websearch"
        load = 0.8
        flows = 30
        transport = "rdma"
        priority = 3
        "#,
    );
    let mut sim = common::run(&sc);
    let c = sim.counters();
    assert!(
        c.lossless_drops > 0 && c.frames_queued_behind > c.frames_sent / 4,
        "{} {}",
        c.lossless_drops,
        c.frames_queued_behind
    );
    let table = shoal_core::results::FlowTable::from_records(&sim.flow_records());
    let warnings = shoal_core::results::Summary::of_simulation(&mut sim, &sc, &table, Vec::new(), None).warnings;
    assert!(warnings.iter().any(|w| w.contains("waited behind other frames")), "{warnings:?}");
}
