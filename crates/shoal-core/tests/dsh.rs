//! DSH (dynamic and shared headroom) against the DSH paper's Theorems 1 and 2 and the
//! lossless promise.

mod common;
use common::{scenario, ser};
use shoal_core::net::NodeId;
use shoal_core::switch::flow_control::HeadroomRule;
use shoal_core::Simulation;

const GBPS: u64 = 100;
const C: f64 = GBPS as f64 * 1e9 / 8.0; // bytes per second
const DELAY_PS: u64 = 100_000;
const BURST_START_PS: u64 = 100_000_000;
const POOL: u64 = 4_000_000;
const PACKET: u64 = 1036; // RDMA: 1,000 B of payload and 36 B of headers

/// The theorem's setting on one switch: N hosts send endless line-rate flows to one
/// receiver from t = 0, so their N ingress queues sit at their pause threshold by the
/// burst (each drains at C / N); at 100 us M more hosts send 1 MB each to a second
/// receiver, so each of their M ingress queues grows at g = C (1 - 1 / M). No private
/// buffer (`reserved = 0`), one shared pool of 4 MB, 100 Gbps links of 0.1 us (the
/// theorem's PFC delay is 0), RDMA at line rate in lossless class 3. Returns the
/// simulated time from the first burst packet's arrival at the switch to the switch's
/// first PAUSE toward a burst sender, in seconds, and eta.
fn first_burst_pause_s(flow_control: &str, n: u32, m: u32, alpha: f64) -> (f64, f64) {
    let hosts = n + m + 2;
    let sc = scenario(&format!(
        r#"
        [topology]
        kind = "star"
        hosts = {hosts}
        link_rate = "{GBPS}Gbps"
        link_delay = "{DELAY_PS}ps"
        [switch]
        pool_size = "{POOL}B"
        ports_per_pool = {hosts}
        reserved = "0B"
        alpha = 1000
        [switch.flow_control]
        {flow_control}
        alpha = {alpha}
        classes = [3]
        [rdma.cc]
        kind = "none"
        [run]
        stop_time = "{stop}ps"
        [workload]
        pattern = "long_lived"
        senders = "0-{last_bg}"
        receivers = "{r1}"
        transport = "rdma"
        priority = 3
        [[workload.extra]]
        pattern = "incast"
        senders = "{n}-{last_burst}"
        receiver = {r2}
        size = "1MB"
        start = "{BURST_START_PS}ps"
        transport = "rdma"
        priority = 3
        "#,
        stop = BURST_START_PS + 100_000_000,
        last_bg = n - 1,
        r1 = n + m,
        last_burst = n + m - 1,
        r2 = n + m + 1,
    ));
    let eta = HeadroomRule::Eta.bytes(GBPS * 1_000_000_000, DELAY_PS, sc.largest_packet()) as f64;
    let mut sim = Simulation::new(&sc).unwrap();
    sim.run();
    assert_eq!(sim.counters().total_dropped(), 0, "{flow_control}: lossless");
    let burst_hosts = n..n + m;
    let first = sim
        .pause_events()
        .iter()
        .find(|e| e.paused && matches!(e.key.node, NodeId::Host(h) if burst_hosts.contains(&h)))
        .unwrap_or_else(|| panic!("{flow_control}: no burst sender was paused"))
        .time;
    // The frame left the switch a frame time and a delay before it arrived; the burst's
    // first packet reached it a packet time and a delay after the start.
    let sent = first - DELAY_PS - ser(64, GBPS);
    let arrived = BURST_START_PS + ser(PACKET, GBPS) + DELAY_PS;
    ((sent - arrived) as f64 / 1e12, eta)
}

/// The time to the first PAUSE of a bursting queue by the theorems (lossless-facts §2.1,
/// in dimensions: growth g of each burst queue, drain d_bg of each congested one):
/// (alpha B_s - h) / ((1 + alpha (N + M)) g) when alpha M g / (1 + alpha N) <= d_bg (case
/// 1), else (alpha B_s - h) / ((1 + alpha N)((1 + alpha M) g - alpha N d_bg)); h = eta
/// for DSH (Theorem 1, X_qoff = T - eta), 0 for SIH (Theorem 2, X_off = T).
fn theorem_s(n: u32, m: u32, alpha: f64, h: f64) -> (f64, u8) {
    let (n, m) = (n as f64, m as f64);
    let g = C * (1.0 - 1.0 / m);
    let d_bg = C / n;
    let numerator = alpha * POOL as f64 - h;
    if alpha * m * g / (1.0 + alpha * n) <= d_bg {
        (numerator / ((1.0 + alpha * (n + m)) * g), 1)
    } else {
        (numerator / ((1.0 + alpha * n) * ((1.0 + alpha * m) * g - alpha * n * d_bg)), 2)
    }
}

/// Theorems 1 (DSH) and 2 (SIH, as PFC pausing at its threshold with no hysteresis):
/// the simulated time to a bursting queue's first PAUSE is within 5% of the theorem's,
/// in both of its cases, for several N, M and alpha. (N is at least 2: one background
/// flow alone drains as fast as it arrives and never congests its queue.) Measured:
/// within 1.4% in every case.
#[test]
fn the_first_pause_of_a_burst_comes_when_the_theorems_say() {
    let sih = "kind = \"pfc\"\npause_at = \"threshold\"\nheadroom_admission = \"threshold\"\n\
               threshold_counts_arrival = false\nxon_offset = \"1B\"\nxon_floor = \"1B\"";
    let dsh = "kind = \"dsh\"";
    let mut cases_seen = [false; 2];
    for (n, m, alpha) in [(2, 8, 1.0 / 16.0), (2, 16, 1.0 / 16.0), (3, 4, 1.0 / 8.0), (4, 12, 1.0 / 4.0)] {
        for (name, flow_control, dsh_like) in [("DSH", dsh, true), ("SIH", sih, false)] {
            let (measured, eta) = first_burst_pause_s(flow_control, n, m, alpha);
            let (expected, case) = theorem_s(n, m, alpha, if dsh_like { eta } else { 0.0 });
            cases_seen[case as usize - 1] = true;
            let ratio = measured / expected;
            assert!(
                (ratio - 1.0).abs() < 0.05,
                "{name}, N {n}, M {m}, alpha {alpha}: first PAUSE after {:.3} us, theorem (case {case}) {:.3} us",
                measured * 1e6,
                expected * 1e6
            );
        }
    }
    assert_eq!(cases_seen, [true, true], "both cases of the theorems are checked");
}

/// DSH needs one buffer per switch: a star of 12 hosts split into pools of 8 ports is
/// refused, naming the key, the value and what is accepted; 12 is accepted.
#[test]
fn dsh_refuses_a_buffer_split_into_pools() {
    let text = |ports_per_pool| {
        format!(
            "[topology]\nkind = \"star\"\nhosts = 12\n[switch]\nports_per_pool = {ports_per_pool}\n\
             [switch.flow_control]\nkind = \"dsh\"\n"
        )
    };
    let err = shoal_core::Scenario::from_toml(&text(8)).unwrap().validate().unwrap_err().to_string();
    assert!(err.contains("switch.ports_per_pool") && err.contains("8 splits") && err.contains("12 or more"), "{err}");
    assert!(shoal_core::Scenario::from_toml(&text(12)).unwrap().validate().is_ok());
}

/// `switch.buffer` is the whole buffer: PFC's headroom of 8 lossless classes on 4 ports
/// of 1 us links (8 x 4 x eta, about 1 MB) does not fit in 500 KB, and the error names
/// the key, the bytes left and the headroom; DSH's one eta per port does.
#[test]
fn a_buffer_too_small_for_its_headroom_is_refused() {
    let text = |flow_control: &str| {
        format!(
            "[topology]\nkind = \"star\"\nhosts = 4\nlink_delay = \"1us\"\n[switch]\nbuffer = \"500KB\"\n\
             ports_per_pool = 4\nreserved = \"0B\"\n[switch.flow_control]\n{flow_control}\n\
             [workload]\npattern = \"incast\"\nreceiver = 0\nsize = \"10KB\"\n"
        )
    };
    let pfc = shoal_core::Scenario::from_toml(&text("kind = \"pfc\"")).unwrap();
    let err = Simulation::new(&pfc).err().expect("refused").to_string();
    assert!(err.contains("switch.buffer") && err.contains("leaves 0 B shared"), "{err}");
    let dsh = shoal_core::Scenario::from_toml(&text("kind = \"dsh\"")).unwrap();
    assert!(Simulation::new(&dsh).is_ok());
}

/// The lossless promise under DSH with seven lossless classes per port, as the paper's
/// switch has them (`preset = "dsh_tomahawk"`, a pool cut to 400 KB of shared buffer so
/// that insurance is needed): seven 8-to-1 incasts of 40 KB, one per class, into seven
/// receivers, and all-to-all web-search traffic in class 1, on 100 ns and 5 us links.
/// The shared buffer runs out, so the ports' insurance takes the bytes in flight (without
/// it the 5 us run drops thousands of packets) and ports send port-level PAUSEs; nothing
/// is dropped, every flow finishes, and the accounting holds mid-run and at the end.
#[test]
fn the_lossless_promise_holds_under_dsh_with_seven_lossless_classes() {
    for delay in ["100ns", "5us"] {
        let mut workloads = String::new();
        for class in 1..=7u32 {
            let senders = 8 + 8 * (class - 1);
            workloads.push_str(&format!(
                "[[workload.extra]]\npattern = \"incast\"\nsenders = \"{senders}-{}\"\nreceiver = {class}\n\
                 size = \"40KB\"\ntransport = \"rdma\"\npriority = {class}\n",
                senders + 7
            ));
        }
        let sc = scenario(&format!(
            "preset = \"dsh_tomahawk\"\n[topology]\nkind = \"star\"\nhosts = 64\nlink_rate = \"100Gbps\"\n\
             link_delay = \"{delay}\"\n[switch]\nports_per_pool = 64\nbuffer = \"{buffer}B\"\n\
             [switch.flow_control]\nkind = \"dsh\"\n[rdma.cc]\nkind = \"none\"\n\
             [workload]\npattern = \"all_to_all\"\ncdf = \"websearch\"\nload = 0.3\nflows = 30\n\
             transport = \"rdma\"\npriority = 1\n{workloads}",
            // 400 KB shared beside 64 x 8 x 3 KB of reserves and 64 etas of insurance.
            buffer = 400_000 + 64 * 8 * 3000 + 64 * eta_of(delay),
        ));
        let what = format!("DSH, seven classes, {delay} links");
        let mut sim = Simulation::new(&sc).unwrap();
        for k in 1..=4 {
            sim.run_until(k * 20_000_000);
            let errors = sim.check_invariants();
            assert!(errors.is_empty(), "{what} at {} us: {errors:?}", k * 20);
        }
        sim.run();
        let errors = sim.check_invariants();
        assert!(errors.is_empty(), "{what} at the end: {errors:?}");
        assert_eq!(sim.counters().total_dropped(), 0, "{what}: drops {:?}", sim.counters().dropped);
        let records = sim.flow_records();
        assert!(records.iter().all(|r| r.finish.is_some() && r.delivered_bytes == r.bytes), "{what}: unfinished");
        let classes: std::collections::BTreeSet<u8> = records.iter().map(|r| r.priority).collect();
        assert_eq!(classes.len(), 7, "{what}");
        let port_pauses: u64 = sim.pause_ports().iter().filter(|(k, _)| k.class == 8).map(|(_, r)| r.pauses_sent).sum();
        assert!(port_pauses > 0, "{what}: no port-level PAUSE; the test needs the shared buffer to run out");
    }
}

/// eta of a 100 Gbps link of `delay` with the scenario's largest packet (1,514 B).
fn eta_of(delay: &str) -> u64 {
    let ps = match delay {
        "100ns" => 100_000,
        "5us" => 5_000_000,
        _ => unreachable!(),
    };
    HeadroomRule::Eta.bytes(100_000_000_000, ps, 1514)
}
