//! Messages for mistyped or out-of-range input: each names the full key path, the value
//! and what is accepted, in terms a user can act on (issue 30, items 7 and 13).

use shoal_core::{Scenario, ScenarioError};

/// The error of parsing and validating `toml`.
fn refused(toml: &str) -> ScenarioError {
    match Scenario::from_toml(toml) {
        Ok(sc) => sc.validate().expect_err(toml),
        Err(e) => e,
    }
}

/// The error of parsing and validating the scenario `json` (as Python sends it).
fn refused_json(json: &str) -> ScenarioError {
    match Scenario::from_json(json) {
        Ok(sc) => sc.validate().expect_err(json),
        Err(e) => e,
    }
}

#[test]
fn nan_and_infinities_are_refused_as_numbers() {
    for (toml, path, number) in [
        ("[workload]\nload = nan\n", "workload.load", "NaN"),
        ("[topology]\nlink_rate = inf\n", "topology.link_rate", "inf"),
        ("[switch]\nalpha = -inf\n", "switch.alpha", "-inf"),
        ("[switch]\nalpha = [1.0, nan]\n", "switch.alpha[1]", "NaN"),
        // An optional key: null would read as unset.
        ("[topology]\nuplink_delay = nan\n", "topology.uplink_delay", "NaN"),
        ("[switch.flow_control]\nkind = \"pfc\"\nalpha = inf\n", "switch.flow_control.alpha", "inf"),
    ] {
        let e = refused(toml);
        assert_eq!(e.path, path, "{toml}: {e}");
        assert_eq!(e.message, format!("{number} is not accepted (accepted: a finite number)"), "{toml}");
    }
    // Python's json module writes them as NaN, Infinity and -Infinity.
    for (json, path, word) in [
        (r#"{"workload": {"load": NaN}}"#, "workload.load", "NaN"),
        (r#"{"topology": {"link_rate": Infinity}}"#, "topology.link_rate", "Infinity"),
        (
            r#"{"switch": {"alpha": [1.0,
              -Infinity]}}"#,
            "switch.alpha[1]",
            "-Infinity",
        ),
    ] {
        let e = refused_json(json);
        assert_eq!(e.path, path, "{json}: {e}");
        assert_eq!(e.message, format!("{word} is not accepted (accepted: a finite number)"), "{json}");
    }
}

#[test]
fn a_one_quantum_pause_names_pause_quanta_whatever_the_refresh() {
    for refresh in ["", "refresh_quanta = 1\n"] {
        let e = refused(&format!("[switch.flow_control]\nkind = \"pfc\"\npause_quanta = 1\n{refresh}"));
        assert_eq!(e.path, "switch.flow_control.pause_quanta", "{e}");
        assert!(e.message.contains("accepted: 2 to 65535") && !e.message.contains("1 to 0"), "{e}");
    }
    let e = refused("[switch.flow_control]\nkind = \"pfc\"\npause_quanta = 2\nrefresh_quanta = 2\n");
    assert_eq!(e.path, "switch.flow_control.refresh_quanta");
    assert!(e.message.contains("accepted: 1 to 1"), "{e}");
}

#[test]
fn sizes_are_read_in_the_units_the_limits_are_stated_in() {
    // The README states the largest size as 1 PB.
    let sc = Scenario::from_toml("[workload]\npattern = \"incast\"\nsize = \"1PB\"\n").unwrap();
    assert_eq!(sc.workload.size.0, 1_000_000_000_000_000);
    assert_eq!(
        Scenario::from_toml("[workload]\npattern = \"incast\"\nsize = \"2TB\"\n").unwrap().workload.size.0,
        2e12 as u64
    );
    let e = refused("[workload]\npattern = \"incast\"\nsize = \"2PB\"\n");
    assert_eq!(e.path, "workload.size");
    assert!(e.message.contains("too large (accepted: up to 1PB)"), "{e}");
    // The limit as the message writes it is accepted.
    assert!(Scenario::from_toml("[workload]\npattern = \"incast\"\nsize = \"1PB\"\n").is_ok());
    let e = refused("[workload]\npattern = \"incast\"\nsize = 2000000000000000\n");
    assert!(e.message.contains("accepted: up to 1PB"), "{e}");
    // Written back as before: resolved scenarios of existing runs read the same.
    assert_eq!(sc.workload.size.to_string(), "1000000GB");
}

#[test]
fn a_misspelled_kind_is_named() {
    for (toml, path) in [
        ("[switch.flow_control]\nknd = \"pfc\"\n", "switch.flow_control.knd"),
        ("[rdma.cc]\nkidn = \"hpcc\"\n", "rdma.cc.kidn"),
        ("[switch.scheduler]\nKind = \"dwrr\"\n", "switch.scheduler.Kind"),
    ] {
        let e = refused(toml);
        assert_eq!(e.path, path, "{toml}");
        assert!(e.message.contains("did you mean `kind`?"), "{toml}: {e}");
        assert!(!e.message.contains("there are no fields"), "{toml}: {e}");
    }
}

#[test]
fn a_key_of_another_kind_without_kind_says_which_kind_has_it() {
    let e = refused("[switch.flow_control]\nclasses = [3]\n");
    assert_eq!(e.path, "switch.flow_control.classes");
    assert!(
        e.message.contains("kind \"lossy\" (the default when `kind` is not set)")
            && e.message.contains("it is a key of kind \"pfc\" or kind \"dsh\"")
            && e.message.contains("set kind = \"pfc\""),
        "{e}"
    );
    let e = refused("[switch.scheduler]\nquantum = \"9KB\"\n");
    assert!(e.message.contains("it is a key of kind \"dwrr\": set kind = \"dwrr\""), "{e}");
    // A key no kind has, in a section whose default kind has none.
    let e = refused("[switch.flow_control]\ncolour = \"blue\"\n");
    assert_eq!(e.path, "switch.flow_control.colour");
    assert!(e.message.contains("has no keys besides `kind`") && e.message.contains("\"bfc\""), "{e}");
}

#[test]
fn an_unknown_key_of_a_named_kind_lists_kind_among_the_keys() {
    let e = refused("[rdma.cc]\nkind = \"hpcc\"\nkidn = 1\n");
    assert_eq!(e.path, "rdma.cc.kidn");
    assert!(e.message.starts_with("unknown key `kidn` for kind \"hpcc\" (accepted: `kind`, "), "{e}");
    // A key of another kind, with kind set.
    let e = refused("[switch.flow_control]\nkind = \"pfc\"\nvfids = 4\n");
    assert!(
        e.message.contains("(accepted: `kind`, `classes`,")
            && e.message.ends_with("; `vfids` is a key of kind \"bfc\""),
        "{e}"
    );
}

#[test]
fn a_congestion_control_of_the_other_transport_points_to_its_section() {
    for toml in ["[transport]\ncc = \"hpcc\"\n", "[transport.cc]\nkind = \"hpcc\"\n"] {
        let e = refused(toml);
        assert!(e.path.starts_with("transport.cc"), "{e}");
        assert!(e.message.contains("set it in [rdma.cc] (kind = \"hpcc\")"), "{toml}: {e}");
    }
    let e = refused("[rdma]\ncc = \"newreno\"\n");
    assert!(e.message.contains("set it in [transport.cc]"), "{e}");
    // A kind neither has: the list alone.
    let e = refused("[transport]\ncc = \"cubic\"\n");
    assert!(!e.message.contains("set it in"), "{e}");
}

#[test]
fn a_scheme_whose_keys_are_read_by_hand_keeps_its_list_and_adds_kind() {
    // DCQCN reads its keys by model: its own message lists them.
    let e = refused("[rdma.cc]\nkind = \"dcqcn\"\nfoo = 1\n");
    assert_eq!(e.path, "rdma.cc.foo");
    assert!(e.message.starts_with("unknown key `foo`, expected one of "), "{e}");
    assert!(e.message.contains("`rate_ai`") && e.message.contains("; and `kind` (accepted kinds: "), "{e}");
}
