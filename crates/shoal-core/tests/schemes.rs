//! The switch schemes beyond tail drop: pushout admission (LossPass, LQD), shared-buffer
//! ECN (BCC) and PIAS tagging.

mod common;
use common::{run, scenario};
use rand::{Rng as _, SeedableRng};
use shoal_core::net::Packet;
use shoal_core::net::{Effects, ExtStore};
use shoal_core::scenario::SwitchConfig;
use shoal_core::sim::stream;
use shoal_core::stats::{Counters, DropReason};
use shoal_core::switch::admission::AdmissionConfig;
use shoal_core::switch::marking::{BccConfig, CutoffConfig, MarkerConfig};
use shoal_core::switch::scheduler::SchedulerConfig;
use shoal_core::switch::{Drops, Switch};
use shoal_core::units::{Bytes, Time};

/// Offers `pkt` to `sw` as `Switch::receive` does, with a side table of its own.
fn offer(sw: &mut Switch, ingress: usize, port: usize, pkt: Packet, now: u64, counters: &mut Counters) -> bool {
    sw.receive(ingress, port, pkt, now, &mut Drops { counters, exts: &mut ExtStore::default() }, &mut Effects::new())
}

fn packet(size: u32, priority: u8) -> Packet {
    Packet { size, ect: true, ..Packet::template(0, 0, 0, priority) }
}

/// A switch with `ports` ports and a per-port buffer of `buffer` bytes (one port per
/// pool, no reserve, an alpha large enough that only a full buffer refuses), two
/// strict-priority queues.
fn per_port_switch(admission: &str, buffer: u64, ports_per_pool: u32, ports: usize) -> Switch {
    let cfg = SwitchConfig {
        queues: 2,
        scheduler: SchedulerConfig::StrictPriority(Default::default()),
        ports_per_pool,
        pool_size: Bytes(buffer),
        reserved: Bytes(0),
        alpha: shoal_core::scenario::PerQueue::All(1e9),
        admission: AdmissionConfig::of_kind(admission).unwrap(),
        ..SwitchConfig::default()
    };
    let links: Vec<u32> = (0..ports as u32).collect();
    Switch::new(&cfg, &links, &vec![10_000_000_000; ports], 0, stream(1, "test", 0))
}

fn queue_bytes(sw: &Switch, port: usize, queue: usize) -> u64 {
    sw.port_queues(port)[queue].bytes()
}

/// LossPass's rule, checked on a random sequence of arrivals and departures: a
/// high-priority packet is dropped only once the low-priority queue holds no more bytes
/// than the packet (Algorithm 1, line 6); a low-priority packet never evicts anything;
/// the buffer never overflows.
#[test]
fn losspass_pushout_rule() {
    let buffer = 60_000;
    let mut sw = per_port_switch("losspass", buffer, 1, 1);
    let mut counters = Counters::default();
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
    let mut high_drops = 0;
    for step in 0..20_000u64 {
        if rng.gen_bool(0.3) {
            sw.transmit(0, step, &mut counters, &mut Effects::new());
            continue;
        }
        let priority = rng.gen_range(0..2u8);
        let size = rng.gen_range(64..=1500u32);
        let pushouts_before = counters.dropped[DropReason::Pushout as usize];
        let admitted = offer(&mut sw, 0, 0, packet(size, priority), step, &mut counters);
        let pushouts = counters.dropped[DropReason::Pushout as usize] - pushouts_before;
        if priority == 1 {
            assert_eq!(pushouts, 0, "a low-priority packet evicted something");
        } else if !admitted {
            // Algorithm 1 evicts while the low queue holds more than the packet; a drop
            // leaves at most the packet's size of low-priority data buffered.
            high_drops += 1;
            let low = queue_bytes(&sw, 0, 1);
            assert!(low <= size as u64, "high packet dropped with {low} B of low-priority data buffered");
        }
        assert!(queue_bytes(&sw, 0, 0) + queue_bytes(&sw, 0, 1) <= buffer);
        assert!(sw.check_accounting(0).is_empty());
    }
    assert!(counters.dropped[DropReason::Pushout as usize] > 100, "the test never filled the buffer");
    assert!(high_drops > 0, "the buffer never filled with high-priority data");
}

/// Without pushout the same arrivals lose high-priority packets while low-priority bytes
/// sit in the buffer (the rule above is not vacuous).
#[test]
fn tail_drop_loses_high_priority_packets_that_losspass_keeps() {
    let mut sw = per_port_switch("dynamic_threshold", 30_000, 1, 1);
    let mut counters = Counters::default();
    while offer(&mut sw, 0, 0, packet(1500, 1), 0, &mut counters) {}
    assert!(!offer(&mut sw, 0, 0, packet(1500, 0), 0, &mut counters));
    let mut lp = per_port_switch("losspass", 30_000, 1, 1);
    while offer(&mut lp, 0, 0, packet(1500, 1), 0, &mut counters) {}
    assert!(offer(&mut lp, 0, 0, packet(1500, 0), 0, &mut counters));
    assert_eq!(queue_bytes(&lp, 0, 1), 30_000 - 1500);
}

/// LQD: when the shared pool is full, an arrival at a short queue pushes out the tail of
/// the pool's longest queue; an arrival at the longest queue is dropped.
#[test]
fn lqd_pushes_out_the_longest_queue() {
    let mut sw = per_port_switch("lqd", 30_000, 2, 2);
    let mut counters = Counters::default();
    while offer(&mut sw, 0, 0, packet(1500, 0), 0, &mut counters) {}
    assert_eq!(queue_bytes(&sw, 0, 0), 30_000);
    assert_eq!(counters.dropped[DropReason::PoolFull as usize], 1);
    for i in 1..=5u64 {
        assert!(offer(&mut sw, 0, 1, packet(1500, 0), 0, &mut counters));
        assert_eq!(queue_bytes(&sw, 0, 0), 30_000 - i * 1500);
    }
    assert_eq!(counters.dropped[DropReason::Pushout as usize], 5);
    assert!(sw.check_accounting(0).is_empty());
}

/// BCC's worked example (section V-A): 100 Gbps, 80 us, lambda 0.72, a 3 MB pool, alpha 4,
/// 128 KB reserve, 8 ports, h = 8 us give B_R ~ 1.6 MB, Kmax ~ 2.6 MB, Kmin ~ 1.8 MB.
#[test]
fn bcc_thresholds_match_the_paper() {
    let cfg = BccConfig { rtt: Time(80_000_000), lambda: 0.72, h: Time(8_000_000), ..BccConfig::default() };
    let th = cfg.thresholds(100_000_000_000, 8, 3_000_000, 4.0, 128_000);
    assert!((th.b_r / 1e6 - 1.6).abs() < 0.05, "{th:?}");
    assert!((th.kmax / 1e6 - 2.6).abs() < 0.05, "{th:?}");
    assert!((th.kmin / 1e6 - 1.8).abs() < 0.05, "{th:?}");
}

/// Shared-buffer ECN holds a pool's shared occupancy near its cut-off: 8 congested
/// ports, each with 4 DCTCP long flows, whose per-queue K (700 KB) is never reached
/// before the pool fills. Without the shared rule the pool runs full and drops; with a
/// 1 MB shared cut-off it stays near 1 MB and nothing is dropped.
#[test]
fn shared_buffer_ecn_controls_pool_occupancy() {
    let base = r#"
        [topology]
        kind = "star"
        hosts = 40
        link_rate = "10Gbps"
        link_delay = "5us"
        [switch]
        ports_per_pool = 40
        pool_size = "3MB"
        reserved = "0B"
        alpha = 8
        marking.cutoff.k = "700KB"
        [transport]
        cc = "dctcp"
        mss = 1446
        header = 54
        [workload]
        pattern = "long_lived"
        senders = "8-39"
        receivers = "0-7"
        [run]
        stop_time = "30ms"
    "#;
    let mut without = run(&scenario(base)).counters_json();
    let mut with_rule = run(&scenario(
        &base.replace("cutoff.k = \"700KB\"", "cutoff.k = \"700KB\"\nmarking.shared_cutoff.k = \"1MB\""),
    ))
    .counters_json();
    let pool = |c: &mut serde_json::Value| c["pools"][0]["mean"].as_f64().unwrap();
    let (p_without, p_with) = (pool(&mut without), pool(&mut with_rule));
    assert!(p_without > 1.5e6, "pool without shared ECN: {p_without}");
    assert!((0.6e6..1.3e6).contains(&p_with), "pool with a 1 MB shared cut-off: {p_with}");
    assert!(with_rule["marks_by_rule"]["shared_buffer"].as_u64().unwrap() > 0);
    assert_eq!(with_rule["packets"]["dropped"], 0, "{}", with_rule["drops"]);
    assert!(with_rule["links"]["host_downlinks"]["max"].as_f64().unwrap() > 0.9);
}

/// PIAS tags the first bytes of a flow high and the rest low: with a 1 MB threshold a
/// 3 MB flow's packets queue at the bottleneck first in queue 0, then in queue 1.
#[test]
fn pias_tags_by_bytes_sent() {
    let sc = scenario(
        r#"
        [topology]
        kind = "dumbbell"
        hosts = 1
        hosts_right = 1
        link_rate = "10Gbps"
        uplink_rate = "1Gbps"
        [switch]
        queues = 2
        scheduler = "strict_priority"
        [transport]
        mss = 1000
        pias_thresholds = ["1MB"]
        [workload]
        pattern = "incast"
        senders = "0"
        receiver = 1
        size = "3MB"
        [run]
        sample_interval = "1us"
        "#,
    );
    let sim = run(&sc);
    let (mut q0, mut q1) = (0, 0);
    // Port 1 of the left switch is its uplink, the bottleneck.
    for s in sim.samples().iter().filter(|s| s.switch == 0 && s.port == 1 && s.bytes > 0) {
        if s.queue == 0 {
            q0 += 1
        } else {
            q1 += 1
        }
    }
    assert!(q0 > 0 && q1 > 0, "queues used: {q0} {q1}");
    let cfg = shoal_core::transport::TcpConfig::from_scenario(&sc.transport);
    assert_eq!(cfg.pias_priority(0), 0);
    assert_eq!(cfg.pias_priority(999_999), 0);
    assert_eq!(cfg.pias_priority(1_000_000), 1);
}

/// Pushout drops are recovered like any loss: conservation and completion hold on a
/// lossy LossPass and LQD fabric.
#[test]
fn pushout_conserves_packets_and_flows_complete() {
    for admission in ["losspass", "lqd"] {
        let sc = scenario(&format!(
            r#"
            [topology]
            kind = "star"
            hosts = 16
            link_rate = "10Gbps"
            [switch]
            queues = 2
            scheduler = "strict_priority"
            admission = "{admission}"
            pool_size = "100KB"
            reserved = "0B"
            ports_per_pool = 4
            [transport]
            cc = "newreno"
            pias_thresholds = ["100KB"]
            rto_min = "1ms"
            [workload]
            pattern = "all_to_all"
            cdf = "websearch"
            load = 0.8
            flows = 300
            [[workload.extra]]
            pattern = "incast"
            receiver = 3
            size = "20KB"
            start = "1ms"
            "#
        ));
        let mut sim = run(&sc);
        let c = sim.counters_json();
        assert!(c["drops"]["pushout"].as_u64().unwrap() > 0, "{admission}: no pushout happened");
        assert!(sim.flow_records().iter().all(|r| r.finish.is_some() && r.delivered_bytes == r.bytes));
    }
}

/// Marking rules and packets that are not ECN-capable: with `non_ect = "drop"` a UDP
/// queue is held at the per-queue threshold K (dropped on arrival above it); with
/// "pass" only the dynamic threshold limits it, at alpha * B / (1 + alpha) with one
/// congested queue (BCC's testbed, Fig. 5: the UDP port takes about half the pool).
#[test]
fn non_ect_packets_drop_or_pass() {
    let base = r#"
        [topology]
        kind = "star"
        hosts = 3
        link_rate = "100Gbps"
        [switch]
        pool_size = "3MB"
        reserved = "0B"
        alpha = 1
        ecn.k = "325KB"
        ecn.non_ect = "NONECT"
        [transport]
        mss = 1446
        header = 54
        [workload]
        pattern = "udp"
        senders = "1-2"
        receiver = 0
        rate = "60Gbps"
        [run]
        stop_time = "1ms"
    "#;
    let max_queue = |mode: &str| {
        let mut sim = run(&scenario(&base.replace("NONECT", mode)));
        let c = sim.counters_json();
        let q = c["queues"].as_array().unwrap().iter().find(|q| q["port"] == 0).unwrap().clone();
        (q["max"].as_f64().unwrap(), c["drops"].clone())
    };
    let (dropped, drops) = max_queue("drop");
    assert!(dropped <= 325_000.0 + 1500.0, "queue {dropped} with non-ECT drops");
    assert!(drops["marking_drop"].as_u64().unwrap() > 0);
    let (passed, drops) = max_queue("pass");
    assert!((passed - 1.5e6).abs() <= 3000.0, "queue {passed} with non-ECT passing");
    assert_eq!(drops["marking_drop"], 0);
}

/// TCP small queues and NIC marking: one host sends long-lived DCTCP flows to two
/// receivers, so its own 10 Gbps NIC is the bottleneck. A plain NIC marks nothing, and the
/// windows grow until its buffer overflows; with TSQ, or with ECN marking in the NIC queue,
/// the NIC never drops and stays busy (theory: 100%).
#[test]
fn tcp_small_queues_or_nic_marking_keep_the_nic_busy_without_drops() {
    let base = r#"
        [topology]
        kind = "star"
        hosts = 3
        link_rate = "10Gbps"
        [host]
        nic_buffer = "300KB"
        TSQ
        [switch.marking.cutoff]
        k = "100KB"
        [workload]
        pattern = "long_lived"
        senders = "0"
        receivers = "1"
        [[workload.extra]]
        pattern = "long_lived"
        senders = "0"
        receivers = "2"
        [run]
        stop_time = "20ms"
    "#;
    let counters = |tsq: &str| run(&scenario(&base.replace("TSQ", tsq))).counters_json();
    let without = counters("");
    assert!(without["drops"]["nic_buffer"].as_u64().unwrap() > 0);
    assert_eq!(without["marks_by_rule"]["host_nic"], 0);
    // Either remedy keeps the NIC from overflowing and busy: TSQ holds the windows back,
    // a marking NIC queue (host.ecn_k, ns-2's hosts) makes DCTCP keep it near K.
    for remedy in ["tsq = \"64KB\"", "ecn_k = \"100KB\""] {
        let mut sim = run(&scenario(&base.replace("TSQ", remedy)));
        let c = sim.counters_json();
        assert_eq!(c["drops"]["nic_buffer"], 0, "{remedy}");
        assert_eq!(c["marks_by_rule"]["host_nic"].as_u64().unwrap() > 0, remedy.starts_with("ecn_k"));
        // Goodput of both flows against the NIC's payload capacity (1460 of 1514 B).
        let delivered: u64 = sim.flow_records().iter().map(|r| r.delivered_bytes).sum();
        let goodput = delivered as f64 * 8.0 / 20e-3 / (10e9 * 1460.0 / 1514.0);
        assert!(goodput >= 0.97, "{remedy}: goodput {goodput} of the NIC's payload rate");
        assert_eq!(sim.flow_records().len(), 2);
        assert!(sim.check_invariants().is_empty());
    }
}

/// Per-port ECN (PIAS): the cut-off sees every queue of the port, so a high-priority
/// packet arriving to its empty queue is marked when the port as a whole holds K bytes,
/// which per-queue ECN would not do; below K neither marks.
#[test]
fn per_port_ecn_counts_every_queue_of_the_port() {
    use shoal_core::scenario::{EcnScope, MarkPoint};
    let k = 30_000;
    let first_mark = |scope: EcnScope| {
        let mut sw = {
            let mut cfg = SwitchConfig {
                queues: 2,
                scheduler: SchedulerConfig::StrictPriority(Default::default()),
                ports_per_pool: 1,
                pool_size: Bytes(1_000_000),
                ..SwitchConfig::default()
            };
            cfg.marking.set(MarkerConfig::Cutoff(CutoffConfig { k: Bytes(k) }));
            cfg.ecn.at = MarkPoint::Enqueue;
            cfg.ecn.scope = scope;
            Switch::new(&cfg, &[0], &[10_000_000_000], 0, stream(1, "test", 0))
        };
        let mut counters = Counters::default();
        // 20 low-priority packets of 1,500 B: the port holds 30,000 B, queue 0 none.
        for _ in 0..20 {
            offer(&mut sw, 0, 0, packet(1500, 1), 0, &mut counters);
        }
        let marks_low = counters.ecn_marks;
        offer(&mut sw, 0, 0, packet(1500, 0), 0, &mut counters);
        (marks_low, counters.ecn_marks - marks_low)
    };
    // The 20 low packets see 0..28,500 B ahead of them: below K under both scopes.
    assert_eq!(first_mark(EcnScope::Queue), (0, 0));
    assert_eq!(first_mark(EcnScope::Port), (0, 1));
}

/// RED thresholds given at a reference rate scale with each port's rate, as
/// ns3-datacenter's KMIN_MAP / KMAX_MAP: kmin = kmax = 400 KB at 100 Gbps is 100 KB on a
/// 25 Gbps port of the same switch and pool. The first packet marked (at enqueue, so it
/// sees the bytes ahead of it) is the one that finds k bytes queued: packet k / 1,000 + 1.
#[test]
fn red_thresholds_scale_with_the_port_rate() {
    use shoal_core::scenario::MarkPoint;
    use shoal_core::switch::marking::RedConfig;
    use shoal_core::units::Rate;
    let first_marked = |reference_rate: Option<Rate>, port: usize| {
        let mut cfg =
            SwitchConfig { queues: 1, ports_per_pool: 2, pool_size: Bytes(10_000_000), ..SwitchConfig::default() };
        cfg.marking.set(MarkerConfig::Red(RedConfig {
            kmin: Bytes(400_000),
            kmax: Bytes(400_000),
            reference_rate,
            ..RedConfig::default()
        }));
        cfg.ecn.at = MarkPoint::Enqueue;
        let mut sw = Switch::new(&cfg, &[0, 1], &[25_000_000_000, 100_000_000_000], 0, stream(1, "test", 0));
        let mut counters = Counters::default();
        (1..=1000).find(|_| {
            offer(&mut sw, 0, port, packet(1000, 0), 0, &mut counters);
            counters.ecn_marks > 0
        })
    };
    let at_100g = Some(Rate(100_000_000_000));
    assert_eq!(first_marked(at_100g, 0), Some(101), "25 Gbps port: 100 KB");
    assert_eq!(first_marked(at_100g, 1), Some(401), "100 Gbps port: 400 KB");
    assert_eq!(first_marked(None, 0), Some(401), "unscaled on the 25 Gbps port");
    let at_25g = Some(Rate(25_000_000_000));
    assert_eq!(first_marked(at_25g, 1), None, "1.6 MB on the 100 Gbps port: not reached by 1 MB");
}

/// Where the reserve sits decides how much a port holds: two queues of one port filled
/// alternately with 1,000 B packets, a 10 KB reserve and a 20 KB shared pool, an alpha
/// large enough that only a full pool refuses. With a reserve per queue the port holds
/// 2 x 10 + 20 = 40 KB; with one per port, 10 + 20 = 30 KB. The pool's shared bytes are
/// the same 20 KB either way.
#[test]
fn a_reserve_per_port_is_shared_by_the_ports_queues() {
    use shoal_core::scenario::ReservePer;
    for (per, held) in [(ReservePer::Queue, 40_000), (ReservePer::Port, 30_000)] {
        let cfg = SwitchConfig {
            queues: 2,
            scheduler: SchedulerConfig::StrictPriority(Default::default()),
            ports_per_pool: 1,
            pool_size: Bytes(20_000),
            reserved: Bytes(10_000),
            reserve_per: per,
            alpha: shoal_core::scenario::PerQueue::All(1e9),
            ..SwitchConfig::default()
        };
        let mut sw = Switch::new(&cfg, &[0, 1], &[10_000_000_000; 2], 0, stream(1, "test", 0));
        let mut counters = Counters::default();
        for i in 0..100u32 {
            offer(&mut sw, 1, 0, packet(1000, (i % 2) as u8), 0, &mut counters);
            assert!(sw.check_accounting(0).is_empty(), "{per:?}: {:?}", sw.check_accounting(0));
        }
        assert_eq!(queue_bytes(&sw, 0, 0) + queue_bytes(&sw, 0, 1), held, "{per:?}");
        assert_eq!(sw.pools[0].shared_used, 20_000, "{per:?}");
    }
}
