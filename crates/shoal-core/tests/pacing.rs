//! Pacing by the NIC's rate limiter (`workload.pacing = "nic"`): the NIC pulls a paced
//! flow's packets only when its link is free, so paced flows never queue at the NIC and
//! share its link in round robin; a host pacer pushes at the flow's rate whatever the
//! link does.

mod common;
use common::star_100g;

/// A star of `hosts` hosts on 100 Gbps links of 1 us, running for 1 ms the UDP
/// workloads `workloads` (each the keys of one workload table), 1,500-byte packets.
fn udp_on_a_star(hosts: u32, workloads: &[String]) -> shoal_core::Simulation {
    let [first, extra @ ..] = workloads else { panic!("no workload") };
    let extra: String = extra.iter().map(|w| format!("[[workload.extra]]\n{w}")).collect();
    let rest = "[host]\nnic_buffer = \"100KB\"\n[transport]\nmss = 1446\nheader = 54\n[run]\nstop_time = \"1ms\"\n";
    star_100g(hosts, &format!("{rest}[workload]\n{first}\n{extra}"))
}

/// UDP from host 1 to `receiver` at `rate`, paced by `pacing`.
fn udp_flow(receiver: u32, rate: &str, pacing: &str) -> String {
    format!("pattern = \"udp\"\nsenders = \"1\"\nreceiver = {receiver}\nrate = \"{rate}\"\npacing = \"{pacing}\"\n")
}

/// Two UDP flows from host 1, to hosts 0 and 2, each offered at `rate`.
fn two_flows_from_one_host(rate: &str, pacing: &str) -> shoal_core::Simulation {
    udp_on_a_star(3, &[udp_flow(0, rate, pacing), udp_flow(2, rate, pacing)])
}

/// Payload bytes each flow delivered, by flow.
fn delivered(sim: &shoal_core::Simulation) -> Vec<u64> {
    sim.flow_records().iter().map(|r| r.delivered_bytes).collect()
}

/// Offered 300 Gbps on a 100 Gbps link, each flow ready again before the link is free:
/// the NIC alternates the two packet by packet at line rate (theory: 50 Gbps each) and
/// drops nothing; a host pacer overflows the NIC buffer, and the link still carries line
/// rate.
#[test]
fn nic_pacing_shares_a_busy_link_in_round_robin_without_nic_drops() {
    let (packet, payload) = (1500u64, 1446u64);
    // Packets that reach a receiver by 1 ms: the link sends one per 120 ns from t = 0,
    // and each takes 2 x 120 ns of serialization plus 2 us to arrive.
    let line_packets = (1_000_000 - 2_000 - 240) / 120 + 1;
    let mut nic = two_flows_from_one_host("150Gbps", "nic");
    let d = delivered(&nic);
    assert!(d[0].abs_diff(d[1]) <= payload, "round robin: {d:?}");
    assert_eq!((d[0] + d[1]) / payload, line_packets, "line rate: {d:?}");
    let c = nic.counters_json();
    assert_eq!(c["drops"]["nic_buffer"], 0, "{c}");

    let mut host = two_flows_from_one_host("150Gbps", "host");
    let c = host.counters_json();
    assert!(c["drops"]["nic_buffer"].as_u64().unwrap() > 0, "{c}");
    let d = delivered(&host);
    assert!((d[0] + d[1]) / payload >= line_packets - 100_000 / packet, "{d:?}");
}

/// Below line rate, alone on an idle link, a flow sends the same packets at the same
/// times whichever pacer keeps its rate: one per size / rate.
#[test]
fn alone_on_an_idle_link_both_pacers_send_at_the_flow_rate() {
    let one_flow = |pacing: &str| delivered(&udp_on_a_star(2, &[udp_flow(0, "30Gbps", pacing)]))[0];
    let (nic, host) = (one_flow("nic"), one_flow("host"));
    // 30 Gbps of 1,500 B packets is one per 400 ns: those that arrive by 1 ms.
    let expected = ((1_000_000 - 2_000 - 240) / 400 + 1) * 1446;
    assert_eq!(host, expected);
    assert_eq!(nic, expected);
}

/// A pacer that does not exist is refused by its key path, listing the accepted ones.
#[test]
fn an_unknown_pacer_is_refused_by_name() {
    let e = shoal_core::Scenario::from_toml("[workload]\npattern = \"udp\"\npacing = \"wire\"\n").unwrap_err();
    assert_eq!(e.path, "workload.pacing");
    assert!(e.message.contains("`host`") && e.message.contains("`nic`"), "{e}");
}
