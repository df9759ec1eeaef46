//! Load balancing beyond ECMP (`[switch.load_balancing]`): each policy spreads a flow as
//! it says, reordering is counted, and the transports react to it as they do to loss.

mod common;
use common::{core_links_from, refusal, run, scenario};
use serde_json::Value;
use shoal_core::Simulation;

/// Two leaves of one host each under four spines, uplinks at `uplink` (hosts at 100
/// Gbps), host 0 sending datagrams at `rate` to host 1 for `stop`, balanced by `policy`
/// (the keys of `[switch.load_balancing]`).
fn leaf_to_leaf(policy: &str, uplink: &str, rate: &str, stop: &str) -> Simulation {
    run(&scenario(&format!(
        "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 4\nhosts_per_leaf = 1\nuplink_rate = \"{uplink}\"\n\
         [switch]\nbuffer = \"20MB\"\n[switch.load_balancing]\n{policy}\n\
         [workload]\npattern = \"udp\"\nsenders = \"0\"\nreceiver = 1\nrate = \"{rate}\"\nstop = \"{stop}\"\n"
    )))
}

/// Bytes each uplink of leaf 0 (switch 0) carried, as a share of all four.
fn uplink_shares(c: &Value) -> Vec<f64> {
    let used = core_links_from(c, 0);
    assert_eq!(used.len(), 4);
    let total: f64 = used.iter().sum();
    used.iter().map(|u| u / total).collect()
}

/// Whether every share is within 4.5 standard deviations of a quarter for `n` packets
/// each placed at random.
fn quarters_at_random(shares: &[f64], n: f64) -> bool {
    let sd = (0.25 * 0.75 / n).sqrt();
    shares.iter().all(|s| (s - 0.25).abs() < 4.5 * sd)
}

fn sent(c: &Value) -> f64 {
    c["packets"]["sent"].as_f64().unwrap()
}

/// ECMP keeps a flow on one uplink, and counts no reordering (the key is not listed).
#[test]
fn ecmp_keeps_a_flow_on_one_path() {
    let c = leaf_to_leaf("kind = \"ecmp\"", "100Gbps", "40Gbps", "500us").counters_json();
    let shares = uplink_shares(&c);
    assert_eq!(shares.iter().filter(|&&s| s == 0.0).count(), 3, "{shares:?}");
    assert!(c["packets"].get("reordered").is_none());
}

/// Round-robin spraying gives each of the four uplinks every fourth packet: their bytes
/// differ by at most one packet. Paths of equal delay that never queue (four 25 Gbps
/// uplinks share 40 Gbps, each packet gone before its uplink's next) keep the order.
#[test]
fn round_robin_spraying_deals_packets_in_turn() {
    let mut sim = leaf_to_leaf("kind = \"spray\"\norder = \"round_robin\"", "25Gbps", "40Gbps", "500us");
    let c = sim.counters_json();
    let n = sent(&c);
    let shares = uplink_shares(&c);
    for s in &shares {
        assert!((s - 0.25).abs() <= 1.0 / n, "{shares:?} of {n} packets");
    }
    assert_eq!(c["packets"]["reordered"], 0);
}

/// Random spraying places each packet on an uplink drawn at random: the shares are
/// binomial. At 90% of the uplinks' capacity their queues differ, and packets overtake
/// each other.
#[test]
fn random_spraying_places_packets_binomially_and_reorders_them() {
    let c = leaf_to_leaf("kind = \"spray\"", "25Gbps", "90Gbps", "500us").counters_json();
    let n = sent(&c);
    let shares = uplink_shares(&c);
    assert!(quarters_at_random(&shares, n), "{shares:?} of {n} packets");
    let reordered = c["packets"]["reordered"].as_f64().unwrap();
    assert!(reordered > 0.01 * n, "{reordered} of {n} reordered");
}

/// LetFlow: a flow that never pauses for `gap` is one flowlet and keeps its first path;
/// one whose packets are further apart than `gap` draws a path for each, as spraying
/// does.
#[test]
fn letflow_moves_a_flow_only_after_a_pause() {
    // 40 Gbps: a packet each 0.3 us.
    let steady = leaf_to_leaf("kind = \"letflow\"\ngap = \"10us\"", "100Gbps", "40Gbps", "500us").counters_json();
    let shares = uplink_shares(&steady);
    assert_eq!(shares.iter().filter(|&&s| s == 0.0).count(), 3, "{shares:?}");
    assert_eq!(steady["packets"]["reordered"], 0);
    // 1 Gbps: a packet each 12 us, each a flowlet of its own.
    let sparse = leaf_to_leaf("kind = \"letflow\"\ngap = \"10us\"", "100Gbps", "1Gbps", "5ms").counters_json();
    let n = sent(&sparse);
    assert!(n > 300.0);
    let shares = uplink_shares(&sparse);
    assert!(quarters_at_random(&shares, n), "{shares:?} of {n} packets");
}

/// Bytes queued at most, over the run, at any uplink port of leaf 0 (ports 1 to 4: the
/// host's port comes first).
fn largest_uplink_queue(c: &Value) -> u64 {
    c["queues"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["switch"] == 0 && q["port"].as_u64().unwrap() >= 1)
        .map(|q| q["max"].as_u64().unwrap())
        .max()
        .unwrap_or(0)
}

/// DRILL sends each packet to the shorter of two sampled uplink queues (and the last
/// choice): at 90% load the four uplinks share the flow evenly, and the longest queue
/// stays far below random spraying's (the power of two choices: a maximum that grows as
/// log log n instead of log n / log log n), and far below ECMP's, which puts 90 Gbps on
/// one 25 Gbps uplink.
#[test]
fn drill_keeps_the_uplink_queues_short_and_even() {
    let (uplink, rate, stop) = ("25Gbps", "90Gbps", "1ms");
    let drill = leaf_to_leaf("kind = \"drill\"", uplink, rate, stop).counters_json();
    let spray = leaf_to_leaf("kind = \"spray\"", uplink, rate, stop).counters_json();
    let ecmp = leaf_to_leaf("kind = \"ecmp\"", uplink, rate, stop).counters_json();
    let shares = uplink_shares(&drill);
    for s in &shares {
        assert!((s - 0.25).abs() < 0.01, "{shares:?}");
    }
    let (d, s, e) = (largest_uplink_queue(&drill), largest_uplink_queue(&spray), largest_uplink_queue(&ecmp));
    assert!(d * 3 <= s, "DRILL's longest queue {d} B against random spraying's {s} B");
    assert!(s * 10 <= e, "random spraying's longest queue {s} B against ECMP's {e} B");
    assert_eq!(drill["packets"]["dropped"], 0);
}

/// TCP under spraying: packets overtaken by three later ones look lost, and the sender
/// retransmits them although nothing was dropped.
#[test]
fn spraying_makes_tcp_retransmit_what_was_not_lost() {
    let mut sim = run(&scenario(
        "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 4\nhosts_per_leaf = 4\nuplink_rate = \"25Gbps\"\n\
         [switch]\nbuffer = \"20MB\"\n[switch.load_balancing]\nkind = \"spray\"\n\
         [workload]\npattern = \"all_to_all\"\ncdf = \"websearch\"\nflows = 40\nload = 0.6\n",
    ));
    let c = sim.counters_json();
    assert_eq!(c["packets"]["dropped"], 0);
    assert!(c["packets"]["reordered"].as_u64().unwrap() > 0);
    let retransmits: u64 = sim.flow_records().iter().map(|r| r.retransmits as u64).sum();
    assert!(retransmits > 0, "spurious fast retransmits");
}

/// RDMA's go-back-N resends everything after a packet it sees out of order. One 1 MB
/// message at 100 Gbps over four 25 Gbps uplinks (PFC, so that nothing is lost): sprayed,
/// it is resent many times over although nothing was dropped; under ECMP it crosses one
/// uplink, paused but in order, and nothing is resent.
#[test]
fn go_back_n_pays_for_reordering() {
    let run_with = |policy: &str| {
        let mut sim = run(&scenario(&format!(
            "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 4\nhosts_per_leaf = 1\nuplink_rate = \"25Gbps\"\n\
             [switch.load_balancing]\nkind = \"{policy}\"\n[switch.flow_control]\nkind = \"pfc\"\n\
             [workload]\npattern = \"incast\"\nsenders = \"0\"\nreceiver = 1\nsize = \"1MB\"\ntransport = \"rdma\"\n"
        )));
        let c = sim.counters_json();
        assert_eq!(c["packets"]["dropped"], 0, "{policy}: lossless");
        let record = sim.flow_records()[0].clone();
        assert!(record.finish.is_some(), "{policy}: the message arrives");
        (record.retransmits, record.finish.unwrap() - record.start)
    };
    let (ecmp_resent, ecmp_time) = run_with("ecmp");
    let (spray_resent, spray_time) = run_with("spray");
    assert_eq!(ecmp_resent, 0);
    // 1 MB is 1,000 packets of 1,000 B.
    assert!(spray_resent > 1000, "{spray_resent} packets resent");
    assert!(spray_time > ecmp_time, "sprayed {spray_time} ps, ECMP {ecmp_time} ps");
}

#[test]
fn bad_policies_are_refused_by_key() {
    let refused = |keys: &str| refusal(&format!("[switch.load_balancing]\n{keys}\n"));
    let (key, message) = refused("kind = \"conga\"");
    assert!(key.starts_with("switch.load_balancing"), "{key}");
    assert!(message.contains("\"drill\""), "{message}");
    let (key, message) = refused("kind = \"letflow\"\ntable = 1000");
    assert_eq!(key, "switch.load_balancing.table");
    assert!(message.contains("1000 is not accepted"), "{message}");
    let (key, _) = refused("kind = \"letflow\"\ngap = \"1ps\"");
    assert_eq!(key, "switch.load_balancing.gap");
    let (key, message) = refused("kind = \"drill\"\nsamples = 0");
    assert_eq!(key, "switch.load_balancing.samples");
    assert!(message.contains("0 is not accepted"), "{message}");
    let (key, _) = refused("kind = \"spray\"\norder = \"sideways\"");
    assert!(key.starts_with("switch.load_balancing"), "{key}");
}
