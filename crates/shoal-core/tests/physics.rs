//! Physics checks against theory (not against Shoal's own output).

mod common;
use common::{run, scenario, ser};

/// A lone NewReno flow in slow start on an idle 2-host star. With one ACK per packet each
/// ACK releases two packets, so round r carries IW * 2^r packets back to back, and round r
/// starts exactly one "packet RTT" after round r - 1 while the window is below the pipe:
///   RTT0 = s (host) + d + s (switch) + d + a (receiver NIC) + d + a (switch) + d
/// The flow has N packets; with IW = 2, rounds carry 2, 4, 8, 16 (30 packets) and the
/// fifth round the remaining N - 30 <= 32. The switch finishes forwarding the last full
/// packet at 4 RTT0 + (N - 30) s + d; the shorter last packet, queued behind it, then
/// takes s_last more and reaches the receiver after another d.
#[test]
fn lone_flow_slow_start_matches_formula() {
    let mss = 1460u64;
    let header = 40u64;
    let n = 50u64;
    let bytes = n * mss - 500;
    let sc = scenario(&format!(
        r#"
        [topology]
        kind = "star"
        hosts = 2
        link_rate = "10Gbps"
        link_delay = "10us"
        [transport]
        cc = "newreno"
        mss = {mss}
        header = {header}
        ack_size = 64
        init_cwnd = 2
        [workload]
        pattern = "incast"
        senders = "0"
        receiver = 1
        size = {bytes}
        "#
    ));
    let sim = run(&sc);
    let rec = &sim.flow_records()[0];
    let d = 10_000_000u64;
    let s = ser(mss + header, 10);
    let s_last = ser(mss - 500 + header, 10);
    let a = ser(64, 10);
    let rtt0 = 2 * s + 2 * a + 4 * d;
    // Preconditions of the formula: each round fits in one RTT0.
    assert!(16 * s <= rtt0 && (n - 30) * s <= rtt0);
    let expected = 4 * rtt0 + (n - 30) * s + s_last + 2 * d;
    assert_eq!(rec.finish.unwrap() - rec.start, expected);
    assert_eq!(rec.retransmits, 0);
    // The ideal FCT is the same flow with an unlimited window: all packets back to back.
    let ideal = 2 * d + n * s + s_last;
    assert_eq!(rec.ideal_fct.unwrap(), ideal);
}

/// A 10,000 B flow from host 0 to host 1 of a one-host-a-side dumbbell (25 Gbps access
/// links, a 100 Gbps core link, 3 us per link) with an initial window of 10 segments:
/// `transport` and `workload` add lines to those tables.
fn ten_kb_dumbbell_flow(transport: &str, workload: &str) -> shoal_core::Scenario {
    scenario(&format!(
        r#"
        [topology]
        kind = "dumbbell"
        hosts = 1
        hosts_right = 1
        link_rate = "25Gbps"
        uplink_rate = "100Gbps"
        link_delay = "3us"
        [transport]
        init_cwnd = 10
        {transport}
        [workload]
        pattern = "incast"
        senders = "0"
        receiver = 1
        size = "10000B"
        {workload}
        "#
    ))
}

/// The FCT of `ten_kb_dumbbell_flow` without a handshake, and what a SYN / SYN-ACK round
/// trip adds. 7 segments of 1460 B (the last 1240 B) with 54 B headers fit in the initial
/// window. Full packets cross the 100 Gbps link without queueing; at the right switch the
/// short last packet waits for the sixth, which leaves at 7 s1 + s2 + 2d; the last
/// follows, l1 later.
fn ten_kb_dumbbell_fct() -> (u64, u64) {
    let d = 3_000_000u64;
    let (s1, s2) = (ser(1514, 25), ser(1514, 100));
    let l1 = ser(10_000 - 6 * 1460 + 54, 25);
    let handshake = 2 * (3 * d + ser(64, 25) * 2 + ser(64, 100));
    (7 * s1 + s2 + l1 + 3 * d, handshake)
}

/// A flow that fits in the initial window completes in exactly its ideal FCT; with the
/// handshake it takes one SYN / SYN-ACK round trip more.
#[test]
fn initial_window_flow_completes_in_ideal_time() {
    let (ideal, handshake_rtt) = ten_kb_dumbbell_fct();
    for handshake in [false, true] {
        let sim = run(&ten_kb_dumbbell_flow(&format!("handshake = {handshake}"), ""));
        let rec = &sim.flow_records()[0];
        let expected = if handshake { ideal + handshake_rtt } else { ideal };
        assert_eq!(rec.finish.unwrap() - rec.start, expected, "handshake = {handshake}");
        assert_eq!(rec.ideal_fct.unwrap(), expected);
    }
}

/// With `run.fct_until = "acked"` the flow ends when the last ACK reaches the sender: the
/// delivered FCT plus that ACK's trip back over the three links (no queueing: earlier
/// ACKs left at least one data packet's serialization earlier).
#[test]
fn acked_fct_adds_the_last_acks_trip() {
    let (ideal, handshake_rtt) = ten_kb_dumbbell_fct();
    let ack_trip = 3 * 3_000_000 + 2 * ser(64, 25) + ser(64, 100);
    for handshake in [false, true] {
        let sim = run(&ten_kb_dumbbell_flow(&format!("handshake = {handshake}"), "[run]\nfct_until = \"acked\""));
        let rec = &sim.flow_records()[0];
        let expected = ideal + ack_trip + if handshake { handshake_rtt } else { 0 };
        assert_eq!(rec.finish.unwrap() - rec.start, expected, "handshake = {handshake}");
        assert_eq!(rec.ideal_fct.unwrap(), expected);
    }
}

/// Choudhury-Hahne dynamic threshold: M queues of one pool, each overloaded by
/// constant-rate UDP, settle at q* = alpha * B / (1 + M * alpha) each. With packets of
/// size P the queues' mean settles within one P of q*. Each single queue sees the
/// others move by one packet, which moves its threshold by alpha * P per other queue, so
/// its own level is within P * (1 + alpha * (M - 1) / (1 + alpha)) of q*.
#[test]
fn dynamic_threshold_shares_match_theory() {
    let packet = 1500u64;
    for (m, alpha) in [(1u32, 1.0f64), (2, 1.0), (3, 2.0), (4, 0.5)] {
        // Hosts 0..m are receivers; hosts m + 2i and m + 2i + 1 both send to receiver i
        // at 60 Gbps each (120 Gbps into a 100 Gbps port).
        let hosts = 3 * m;
        let senders = format!("{}-{}", m, hosts - 1);
        let receivers: Vec<String> = (0..m).flat_map(|r| [r.to_string(), r.to_string()]).collect();
        let sc = scenario(&format!(
            r#"
            [topology]
            kind = "star"
            hosts = {hosts}
            link_rate = "100Gbps"
            link_delay = "1us"
            [switch]
            ports_per_pool = 64
            pool_size = "1MB"
            reserved = "0B"
            alpha = {alpha}
            [transport]
            mss = 1446
            header = 54
            [workload]
            pattern = "udp"
            senders = "{senders}"
            receivers = [{}]
            rate = "60Gbps"
            [run]
            stop_time = "2ms"
            sample_interval = "1us"
            "#,
            receivers.iter().map(|r| format!("\"{r}\"")).collect::<Vec<_>>().join(", ")
        ));
        let mut sim = common::run(&sc);
        let expected = alpha * 1e6 / (1.0 + m as f64 * alpha);
        // Average each congested queue over the second millisecond, once settled.
        let mut congested = vec![(0.0, 0u32); m as usize];
        for s in sim.samples().iter().filter(|s| s.time >= 1_000_000_000 && s.port < m) {
            congested[s.port as usize].0 += s.bytes as f64;
            congested[s.port as usize].1 += 1;
        }
        let counters = sim.counters_json();
        let p = packet as f64;
        let coupled = p * (1.0 + alpha * (m as f64 - 1.0) / (1.0 + alpha));
        let levels: Vec<f64> = congested.iter().map(|&(sum, count)| sum / count as f64).collect();
        assert!(congested.iter().all(|&(_, count)| count > 900));
        for q in &levels {
            assert!((q - expected).abs() <= coupled, "M={m} alpha={alpha}: queue {q} vs theory {expected}");
        }
        let mean = levels.iter().sum::<f64>() / m as f64;
        assert!((mean - expected).abs() <= p, "M={m} alpha={alpha}: mean share {mean} vs theory {expected}");
        assert!(counters["drops"]["dynamic_threshold"].as_u64().unwrap() > 0);
    }
}

/// DCTCP with N long flows through one bottleneck and K above the DCTCP paper's minimum
/// (K > C x RTT / 7) keeps the link busy, and its queue stays near K: between
/// Q_min = Q_max - A and Q_max = K + N packets, where A = (1/2) sqrt(2 N (C x RTT + K))
/// packets is the oscillation amplitude of the DCTCP paper's analysis.
#[test]
fn dctcp_long_flows_keep_utilization_and_queue_near_k() {
    let n = 10u32;
    let packet = 1500.0;
    let k_packets = 65.0;
    let sc = scenario(&format!(
        r#"
        [topology]
        kind = "star"
        hosts = {}
        link_rate = "10Gbps"
        link_delay = "10us"
        [switch]
        pool_size = "4MB"
        ecn.k = "{}B"
        [transport]
        cc = "dctcp"
        mss = 1446
        header = 54
        [workload]
        pattern = "long_lived"
        receiver = 0
        [run]
        stop_time = "60ms"
        "#,
        n + 1,
        (k_packets * packet) as u64
    ));
    let mut sim = common::run(&sc);
    let counters = sim.counters_json();
    let rtt_s = 4.0 * 10e-6 + 2.0 * 1500.0 * 8.0 / 10e9;
    let bdp_packets = 10e9 * rtt_s / 8.0 / packet;
    assert!(k_packets > bdp_packets / 7.0);
    let util = counters["links"]["host_downlinks"]["max"].as_f64().unwrap();
    assert!(util >= 0.95, "bottleneck utilization {util}");
    let q = counters["queues"].as_array().unwrap().iter().find(|q| q["port"] == 0).unwrap().clone();
    let mean = q["mean"].as_f64().unwrap() / packet;
    let q_max = k_packets + n as f64;
    let amplitude = 0.5 * (2.0 * n as f64 * (bdp_packets + k_packets)).sqrt();
    let q_min = q_max - amplitude;
    assert!(mean >= q_min - 5.0 && mean <= q_max, "mean queue {mean} packets, theory [{q_min}, {q_max}]");
    assert_eq!(counters["drops"]["dynamic_threshold"], 0);
    assert_eq!(counters["drops"]["pool_full"], 0);
}

/// NewReno repairs one hole per round trip from partial ACKs. A burst that loses ~75
/// consecutive segments needs ~75 round trips (~3 ms here) to repair that way, longer
/// than the 1 ms RTO: with the timer restarted on every partial ACK (Slow-but-Steady)
/// recovery never times out; with the Impatient variant (restart on the first partial
/// ACK only) the timer fires and go-back-N repairs the rest.
#[test]
fn partial_ack_timer_variants() {
    let run_with = |variant: &str| {
        let sc = scenario(&burst_through_a_tiny_buffer(&format!("sack = false\npartial_ack_rto = \"{variant}\"")));
        let sim = run(&sc);
        let r = sim.flow_records()[0].clone();
        assert!(r.finish.is_some());
        r
    };
    let steady = run_with("every");
    assert_eq!(steady.timeouts, 0);
    assert!(steady.retransmits >= 50, "{steady:?}");
    let impatient = run_with("first");
    assert!(impatient.timeouts >= 1, "{impatient:?}");
    // Which variant finishes first depends on what go-back-N resends after the timeout;
    // here (no SACK, a tiny buffer) the timeout costs more than it saves.
}

/// SACK recovery (RFC 6675) retransmits exactly the segments that were lost: every drop
/// costs one retransmission (a dropped retransmission is a drop too), and nothing the
/// receiver holds is sent again. Here a 100-packet initial window meets a 30 KB buffer with a
/// 10:1 rate mismatch, so most of the burst is lost in long runs.
#[test]
fn sack_retransmits_exactly_what_was_lost() {
    let sim = run(&scenario(&burst_through_a_tiny_buffer("sack = true")));
    let r = sim.flow_records()[0].clone();
    assert!(r.finish.is_some());
    let drops = sim.counters().total_dropped();
    assert!(drops >= 50, "the buffer must overflow: {drops} drops");
    assert_eq!(r.retransmits as u64, drops, "{r:?}");
}

/// One NewReno flow (the `transport_extra` settings added) sends 200 segments of 1,500 B
/// at 10 Gbps into a 1 Gbps link behind a 30 KB buffer.
fn burst_through_a_tiny_buffer(transport_extra: &str) -> String {
    format!(
        r#"
            [topology]
            kind = "dumbbell"
            hosts = 1
            hosts_right = 1
            link_rate = "10Gbps"
            uplink_rate = "1Gbps"
            link_delay = "5us"
            [switch]
            ports_per_pool = 1
            pool_size = "30KB"
            reserved = "0B"
            alpha = 1000
            [transport]
            cc = "newreno"
            mss = 1446
            header = 54
            init_cwnd = 100
            rto_min = "1ms"
            rto_init = "1ms"
            {transport_extra}
            [workload]
            pattern = "incast"
            senders = "0"
            receiver = 1
            size = "289200B"
            "#
    )
}

/// Reused connections (`transport.reuse_connections`): a flow that finds an idle
/// connection to its receiver skips the SYN / SYN-ACK round trip and completes in its
/// ideal time; the first flow, and a flow that starts while the only connection is busy,
/// pay the handshake. Without reuse every flow pays it.
#[test]
fn a_reused_connection_skips_the_handshake() {
    let fcts = |reuse: bool, period: &str| {
        let transport = format!("handshake = true\nreuse_connections = {reuse}");
        let sim = run(&ten_kb_dumbbell_flow(&transport, &format!("period = \"{period}\"\nrepeats = 3")));
        sim.flow_records().iter().map(|r| r.finish.unwrap() - r.start).collect::<Vec<_>>()
    };
    let (ideal, handshake) = ten_kb_dumbbell_fct();
    // Flows 1 ms apart: each finds the previous one's connection idle.
    assert_eq!(fcts(false, "1ms"), vec![ideal + handshake; 3]);
    assert_eq!(fcts(true, "1ms"), vec![ideal + handshake, ideal, ideal]);
    // Flows 100 ns apart overlap: no connection is idle, so reuse changes nothing.
    assert_eq!(fcts(true, "100ns"), fcts(false, "100ns"));
}

/// RFC 8257, section 3.4: DCTCP "MUST react to loss episodes in the same way as
/// conventional TCP". Where nothing is marked (K out of reach) every window change comes
/// from losses, so an incast through a small tail-drop buffer runs exactly as under
/// NewReno. ns-3's answer (`loss_response = "alpha"`, cwnd x (1 - alpha/2)) cuts less and
/// less as alpha decays without marks, and loses more.
#[test]
fn without_marks_dctcp_loses_as_reno() {
    let incast = |cc: &str| {
        run(&scenario(&format!(
            r#"
            [topology]
            kind = "star"
            hosts = 9
            link_rate = "10Gbps"
            link_delay = "5us"
            [switch]
            pool_size = "150KB"
            [switch.marking.cutoff]
            k = "100MB"
            [transport]
            cc = {cc}
            rto_min = "1ms"
            [workload]
            pattern = "incast"
            senders = "0-7"
            receiver = 8
            size = "3MB"
            "#
        )))
    };
    let outcome = |sim: &shoal_core::Simulation| {
        let fcts: Vec<_> = sim.flow_records().iter().map(|r| r.finish.unwrap() - r.start).collect();
        (fcts, sim.counters().total_dropped())
    };
    let reno = outcome(&incast(r#""newreno""#));
    assert!(reno.1 > 0, "the test needs losses");
    assert_eq!(outcome(&incast(r#"{ kind = "dctcp" }"#)), reno);
    let ns3 = outcome(&incast(r#"{ kind = "dctcp", loss_response = "alpha" }"#));
    assert!(ns3.1 > reno.1, "cutting by alpha / 2 loses more: {} vs {}", ns3.1, reno.1);
}

/// A reused connection keeps its 5-tuple, so ECMP keeps it on one path: one host sending
/// flows one after another to a host on another leaf, over 4 spines, loads a single
/// uplink of its leaf when every flow takes over the previous one's connection; opening a
/// connection per flow spreads them over the uplinks.
#[test]
fn a_reused_connection_keeps_its_path() {
    let uplinks_used = |reuse: bool| {
        let mut sim = run(&scenario(&format!(
            r#"
            [topology]
            kind = "leaf_spine"
            leaves = 2
            spines = 4
            hosts_per_leaf = 1
            link_rate = "10Gbps"
            [transport]
            reuse_connections = {reuse}
            [workload]
            pattern = "incast"
            senders = "0"
            receiver = 1
            size = "20KB"
            period = "1ms"
            repeats = 12
            "#
        )));
        let counters = sim.counters_json();
        counters["links"]["core_links"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["from_switch"] == 0 && l["utilization"].as_f64().unwrap() > 0.0)
            .count()
    };
    assert_eq!(uplinks_used(true), 1);
    assert!(uplinks_used(false) > 1);
}
