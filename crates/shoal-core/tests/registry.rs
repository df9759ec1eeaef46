//! Every registered scheme, through the registries: conservation and accounting on a
//! congested network for each kind (a newly registered scheme is covered by registering
//! it), and the per-scheme configuration: key paths of errors, kinds, old spellings.

mod common;
use common::scenario;
use shoal_core::scenario::input_checks::input_warnings;
use shoal_core::switch::admission::AdmissionConfig;
use shoal_core::switch::classify::ClassifierConfig;
use shoal_core::switch::flow_control::FlowControlConfig;
use shoal_core::switch::marking::{MarkerConfig, MarkingConfig};
use shoal_core::switch::scheduler::SchedulerConfig;
use shoal_core::transport::cc::{CcConfig, RdmaCcConfig};
use shoal_core::{Scenario, Simulation};

/// Web-search flows and a repeated two-class incast on a 1 MB pool shared by four
/// 10 Gbps ports: queues build, drop and mark under every scheme.
const CONGESTED: &str = r#"
    [topology]
    kind = "leaf_spine"
    leaves = 2
    spines = 2
    hosts_per_leaf = 4
    link_rate = "10Gbps"
    uplink_rate = "10Gbps"
    link_delay = "2us"
    [switch]
    pool_size = "1MB"
    reserved = "3KB"
    ports_per_pool = 4
    alpha = [1.0, 2.0]
    queues = 2
    [transport]
    init_cwnd = 10
    rto_min = "1ms"
    [workload]
    pattern = "all_to_all"
    cdf = "fb_hadoop"
    load = 0.8
    flows = 150
    [[workload.extra]]
    pattern = "incast"
    receiver = 0
    size = "200KB"
    start = "100us"
    period = "500us"
    repeats = 3
    priority = 1
"#;

/// Runs `sc` with the invariants checked halfway (at 1 ms) and at the end; every flow
/// must finish.
fn check(sc: &Scenario, what: &str) {
    sc.validate().unwrap_or_else(|e| panic!("{what}: {e}"));
    let mut sim = Simulation::new(&sc.resolved().unwrap()).unwrap();
    sim.run_until(1_000_000_000);
    assert!(sim.packets_in_network() > 0, "{what}: nothing in flight at 1 ms");
    let errors = sim.check_invariants();
    assert!(errors.is_empty(), "{what}: mid-run {errors:?}");
    sim.run();
    let errors = sim.check_invariants();
    assert!(errors.is_empty(), "{what}: at the end {errors:?}");
    let records = sim.flow_records();
    assert!(records.iter().all(|r| r.finish.is_some() && r.delivered_bytes == r.bytes), "{what}: unfinished flows");
    let c = sim.counters_json();
    assert_eq!(c["packets"]["in_network"], 0, "{what}");
}

#[test]
fn every_admission_and_scheduler_pair_conserves_packets() {
    for admission in AdmissionConfig::KINDS {
        for scheduler in SchedulerConfig::KINDS {
            let mut sc = scenario(CONGESTED);
            sc.switch.admission = AdmissionConfig::of_kind(admission).unwrap();
            sc.switch.scheduler = SchedulerConfig::of_kind(scheduler).unwrap();
            check(&sc, &format!("admission {admission}, scheduler {scheduler}"));
        }
    }
}

#[test]
fn every_marking_rule_with_every_congestion_control_conserves_packets() {
    for rule in MarkerConfig::KINDS {
        for cc in CcConfig::KINDS {
            let mut sc = scenario(CONGESTED);
            sc.switch.marking = MarkingConfig::new(vec![MarkerConfig::of_kind(rule).unwrap()]);
            sc.switch.scheduler = SchedulerConfig::of_kind("strict_priority").unwrap();
            sc.transport.cc = CcConfig::of_kind(cc).unwrap();
            check(&sc, &format!("marking {rule}, cc {cc}"));
        }
    }
}

#[test]
fn every_classifier_and_flow_control_conserves_packets() {
    for classifier in ClassifierConfig::KINDS {
        for flow_control in FlowControlConfig::KINDS {
            let mut sc = scenario(CONGESTED);
            sc.switch.classifier = Some(ClassifierConfig::of_kind(classifier).unwrap());
            sc.switch.flow_control = FlowControlConfig::of_kind(flow_control).unwrap();
            sc.switch.scheduler = SchedulerConfig::of_kind("dwrr").unwrap();
            if *flow_control == "dsh" {
                // DSH assumes one buffer per switch (and refuses pools).
                sc.switch.ports_per_pool = 6;
            }
            if *flow_control == "bfc" {
                // BFC steers flows over its own queues (the classifier is unused): the
                // ACK and first-packet queues served first, 3 physical queues and the
                // overflow queue by DRR.
                let bfc =
                    scenario("[switch]\nqueues = 6\nalpha = 2.0\nscheduler = { kind = \"dwrr\", strict_queues = 2 }\n");
                (sc.switch.queues, sc.switch.alpha, sc.switch.scheduler) =
                    (bfc.switch.queues, bfc.switch.alpha, bfc.switch.scheduler);
            }
            check(&sc, &format!("classifier {classifier}, flow control {flow_control}"));
        }
    }
}

/// RDMA traffic through the congested fabric with a buffer large enough that nothing is
/// dropped (go-back-N has no timeout, so a lossy run may stall: lossless classes are what
/// RDMA runs on), marked by RED, under every RDMA congestion control.
#[test]
fn every_rdma_congestion_control_conserves_packets() {
    for cc in RdmaCcConfig::KINDS {
        let mut sc = scenario(CONGESTED);
        sc.switch.pool_size = shoal_core::units::Bytes(50_000_000);
        sc.switch.marking = MarkingConfig::new(vec![MarkerConfig::of_kind("red").unwrap()]);
        sc.rdma.cc = RdmaCcConfig::of_kind(cc).unwrap();
        sc.workload.transport = shoal_core::scenario::FlowTransport::Rdma;
        for w in &mut sc.workload.extra {
            w.transport = shoal_core::scenario::FlowTransport::Rdma;
        }
        check(&sc, &format!("rdma cc {cc}"));
    }
}

#[test]
fn every_admission_with_a_reserve_per_port_conserves_packets() {
    for admission in AdmissionConfig::KINDS {
        let mut sc = scenario(CONGESTED);
        sc.switch.admission = AdmissionConfig::of_kind(admission).unwrap();
        sc.switch.reserved = shoal_core::units::Bytes(20_000);
        sc.switch.reserve_per = shoal_core::scenario::ReservePer::Port;
        check(&sc, &format!("admission {admission}, reserve per port"));
    }
}

/// Unset, the classifier follows the scheduler, and the resolved scenario says which.
#[test]
fn the_classifier_defaults_to_one_queue_under_fifo_only() {
    for (scheduler, classifier) in
        [("fifo", "single_queue"), ("strict_priority", "by_priority"), ("dwrr", "by_priority")]
    {
        let sc = Scenario::from_toml(&format!("[switch.scheduler]\nkind = \"{scheduler}\"\n")).unwrap();
        assert_eq!(sc.switch.classifier, None);
        assert_eq!(sc.resolved().unwrap().switch.classifier.map(|c| c.kind()), Some(classifier), "{scheduler}");
    }
    let sc = Scenario::from_toml("[switch]\nscheduler = \"fifo\"\nclassifier = \"by_priority\"\n").unwrap();
    assert_eq!(sc.resolved().unwrap().switch.classifier.map(|c| c.kind()), Some("by_priority"));
}

/// Every scheme section may be given by its kind alone.
#[test]
fn every_scheme_section_takes_a_bare_kind() {
    let text = "[switch]\nadmission = \"lqd\"\nscheduler = \"dwrr\"\nclassifier = \"single_queue\"\n\
                flow_control = \"lossy\"\n[transport]\ncc = \"newreno\"\n[rdma]\ncc = \"none\"\n";
    let sc = Scenario::from_toml(text).unwrap_or_else(|e| panic!("{e}"));
    let s = &sc.switch;
    let kinds = [s.admission.kind(), s.scheduler.kind(), s.classifier.as_ref().unwrap().kind(), s.flow_control.kind()];
    assert_eq!(kinds, ["lqd", "dwrr", "single_queue", "lossy"]);
    assert_eq!((sc.transport.cc.kind(), sc.rdma.cc.kind()), ("newreno", "none"));
}

/// The old spellings mean what they meant: each old file parses to the same scenario as
/// its new spelling, with a warning naming each new key.
#[test]
fn old_spellings_read_as_the_new_keys() {
    let pairs = [
        (
            "[switch]\nscheduler = \"dwrr\"\ndwrr_quantum = \"18KB\"\ndwrr_weights = [2, 1]\nqueues = 2\n",
            "[switch]\nqueues = 2\n[switch.scheduler]\nkind = \"dwrr\"\nquantum = \"18KB\"\nweights = [2, 1]\n",
            &["switch.dwrr_quantum: is switch.scheduler.quantum now", "switch.dwrr_weights: is switch.scheduler.weights now"]
                as &[&str],
        ),
        (
            "[switch.ecn]\nk = \"100KB\"\nat = \"enqueue\"\n",
            "[switch.ecn]\nat = \"enqueue\"\n[switch.marking.cutoff]\nk = \"100KB\"\n",
            &["switch.ecn.k: is switch.marking.cutoff.k now"],
        ),
        (
            "[switch.ecn]\nkmin = \"10KB\"\nkmax = \"20KB\"\npmax = 0.5\n[switch.shared_ecn]\nk = \"1MB\"\n",
            "[switch.marking]\nred = { kmin = \"10KB\", kmax = \"20KB\", pmax = 0.5 }\nshared_cutoff = { k = \"1MB\" }\n",
            &["switch.ecn.kmin: is switch.marking.red.kmin now", "switch.shared_ecn.k: is switch.marking.shared_cutoff.k now"],
        ),
        (
            "[switch]\nmarking = \"bcc\"\n[switch.bcc]\nh = \"6us\"\n[switch.shared_ecn]\npmax = 0.05\n",
            "[switch.marking.bcc]\nh = \"6us\"\npmax = 0.05\n",
            &["switch.marking: \"bcc\" is the rule [switch.marking.bcc] now", "switch.bcc.h: is switch.marking.bcc.h now"],
        ),
        (
            "[switch]\nmarking = \"explicit\"\nadmission = \"lqd\"\n",
            "[switch.admission]\nkind = \"lqd\"\n",
            &["switch.marking: \"explicit\" is no longer needed"],
        ),
        (
            "[transport]\ncc = \"dctcp\"\ndctcp_g = 0.125\ndctcp_alpha_init = 0\n",
            "[transport]\ncc = { kind = \"dctcp\", g = 0.125, alpha_init = 0 }\n",
            &["transport.dctcp_g: is transport.cc.g now", "transport.dctcp_alpha_init: is transport.cc.alpha_init now"],
        ),
        (
            "[transport]\ncc = \"newreno\"\ndctcp_g = 0.125\n",
            "[transport]\ncc = \"newreno\"\n",
            &["transport.dctcp_g: has no effect unless transport.cc = \"dctcp\" (it is transport.cc.g now)"],
        ),
    ];
    for (old, new, expected) in pairs {
        let (o, n) = (Scenario::from_toml(old).unwrap(), Scenario::from_toml(new).unwrap());
        assert_eq!(o, n, "{old}");
        let warnings = input_warnings(&toml::from_str(old).unwrap(), &o);
        for w in expected {
            assert!(warnings.iter().any(|m| m.starts_with(w)), "{old}: no {w:?} in {warnings:?}");
        }
        assert!(input_warnings(&toml::from_str(new).unwrap(), &n).is_empty(), "{new}");
        // Through JSON, as the Python side sends it.
        let json = serde_json::to_string(&toml::from_str::<serde_json::Value>(old).unwrap()).unwrap();
        assert_eq!(Scenario::from_json(&json).unwrap(), n);
    }
}

/// Errors name the full key path of the bad value, inside per-scheme sections too, in
/// both formats; an old spelling's bad value names the old key.
#[test]
fn errors_name_the_key_path_inside_scheme_sections() {
    let cases = [
        ("[switch.admission]\nkind = \"lqd\"\nalpha = 2\n", "switch.admission.alpha", "unknown key"),
        ("[switch.admission]\nkind = \"drop_tail\"\n", "switch.admission.kind", "unknown kind \"drop_tail\""),
        (
            "[switch]\nadmission = \"drop_tail\"\n",
            "switch.admission",
            "accepted: \"dynamic_threshold\", \"losspass\", \"lqd\"",
        ),
        ("[switch.scheduler]\nquantum = \"9KB\"\n", "switch.scheduler.quantum", "unknown key"),
        (
            "[switch.classifier]\nkind = \"hash\"\n",
            "switch.classifier.kind",
            "accepted: \"by_priority\", \"single_queue\"",
        ),
        ("[switch.flow_control]\nkind = \"credit\"\n", "switch.flow_control.kind", "accepted: \"lossy\", \"pfc\""),
        ("[switch.flow_control]\nkind = \"pfc\"\nheadroom = \"lots\"\n", "switch.flow_control.headroom", "\"eta\""),
        ("[switch.flow_control]\nxoff = 1\n", "switch.flow_control.xoff", "unknown key"),
        ("[switch.scheduler]\nkind = \"dwrr\"\nquantum = \"9 parsecs\"\n", "switch.scheduler.quantum", ""),
        ("[switch.scheduler]\nkind = \"dwrr\"\nweights = [1, \"x\"]\n", "switch.scheduler.weights[1]", ""),
        ("[switch.marking.bcc]\nh = \"8 fortnights\"\n", "switch.marking.bcc.h", ""),
        (
            "[switch.marking.wred]\nk = 1\n",
            "switch.marking.wred",
            "accepted: cutoff, red, shared_cutoff, shared_red, bcc",
        ),
        ("[switch.marking]\ncutoff = 5\n", "switch.marking.cutoff", "expected a table"),
        ("[transport]\ncc = { kind = \"dctcp\", g = \"fast\" }\n", "transport.cc.g", ""),
        (
            "[transport]\ncc = { kind = \"cubic\" }\n",
            "transport.cc.kind",
            "accepted: \"dctcp\", \"newreno\", \"ecn_star\"",
        ),
        ("[switch]\nscheduler = \"dwrr\"\ndwrr_quantum = \"9 parsecs\"\n", "switch.dwrr_quantum", ""),
        ("[switch]\nmarking = \"bcc\"\n[switch.bcc]\nrtt = \"x\"\n", "switch.bcc.rtt", ""),
        ("[transport]\ndctcp_g = \"x\"\n", "transport.dctcp_g", ""),
        // Bounded values are refused where they are read.
        ("[switch.marking.bcc]\npmax = 1.5\n", "switch.marking.bcc.pmax", "1.5 is outside [0, 1]"),
        ("[transport]\ncc = { alpha_init = -1 }\n", "transport.cc.alpha_init", "outside [0, 1]"),
        ("[switch.ecn]\nkmin = \"1KB\"\nkmax = \"2KB\"\npmax = 1.5\n", "switch.ecn.pmax", "outside [0, 1]"),
        ("[switch.ecn]\npmax = 1.5\n", "switch.ecn.pmax", "outside [0, 1]"),
        // Both spellings of one setting.
        (
            "[switch]\nscheduler = { kind = \"dwrr\", quantum = \"9KB\" }\ndwrr_quantum = \"18KB\"\n",
            "switch.dwrr_quantum",
            "old spelling of switch.scheduler.quantum",
        ),
        ("[switch.ecn]\nk = \"1KB\"\n[switch.marking.cutoff]\nk = \"2KB\"\n", "switch.ecn.k", "switch.marking.cutoff"),
        ("[transport]\ncc = { g = 0.5, kind = \"dctcp\" }\ndctcp_g = 0.1\n", "transport.dctcp_g", "transport.cc.g"),
    ];
    for (toml, path, message) in cases {
        let json = serde_json::to_string(&toml::from_str::<serde_json::Value>(toml).unwrap()).unwrap();
        for e in [Scenario::from_toml(toml).unwrap_err(), Scenario::from_json(&json).unwrap_err()] {
            assert_eq!(e.path, path, "{toml}: {e}");
            assert!(e.message.contains(message), "{toml}: {e}");
        }
    }
    // Range checks of a scheme's keys name them too.
    for (toml, path) in [
        ("[transport]\ncc = { kind = \"dctcp\", g = 2 }\n", "transport.cc.g"),
        ("[switch.scheduler]\nkind = \"dwrr\"\nquantum = 0\n", "switch.scheduler.quantum"),
        ("[switch.marking.red]\nkmin = \"2KB\"\nkmax = \"1KB\"\n", "switch.marking.red.kmin"),
        ("[switch.marking]\ncutoff = {}\nred = {}\n", "switch.marking.red"),
    ] {
        let e = Scenario::from_toml(toml).unwrap().validate().unwrap_err();
        assert_eq!(e.path, path, "{toml}: {e}");
    }
}

/// The resolved scenario reads back as itself, whatever the schemes.
#[test]
fn scheme_sections_round_trip() {
    let sc = scenario(
        "[switch.scheduler]\nkind = \"dwrr\"\nweights = [1, 3]\n[switch]\nqueues = 2\nadmission = \"losspass\"\n\
         [switch.marking]\nred = { kmin = \"10KB\", kmax = \"30KB\" }\nbcc = {}\n[transport]\ncc = \"ecn_star\"\n",
    );
    assert_eq!(Scenario::from_json(&sc.to_json()).unwrap(), sc);
    let json: serde_json::Value = serde_json::from_str(&sc.to_json()).unwrap();
    assert_eq!(json["switch"]["admission"], serde_json::json!({ "kind": "losspass" }));
    assert_eq!(json["switch"]["marking"]["red"]["pmax"], 0.1);
    assert_eq!(json["transport"]["cc"], serde_json::json!({ "kind": "ecn_star" }));
}
