//! `switch.buffer_of_node`: one switch's buffer apart from the others'. Two hosts send
//! 100 RDMA packets each at line rate through switch A of a dumbbell to one host behind
//! switch B; every link runs at 100 Gbps. A's port to B receives two packets for every one
//! it sends, so its queue peaks at about one flow's packets (100 x 1,036 B, within a few
//! packets): the drop point is A's buffer, whichever key sets it, and B's buffer plays no
//! part.

mod common;
use common::{run, scenario};
use shoal_core::{Scenario, Simulation};

/// RDMA packets of the test: 1,000 B of payload and 36 B of headers.
const PACKET: u64 = 1036;
/// Packets per flow.
const PACKETS: u64 = 100;
/// Switch A and B as node ids (hosts 0-2 first, then the switches).
const A: u32 = 3;
const B: u32 = 4;

/// The dumbbell with `buffer` bytes for every switch and `own` buffers by node id.
fn dumbbell(buffer: u64, own: &[(u32, u64)]) -> Scenario {
    let own: Vec<String> = own.iter().map(|(node, bytes)| format!("\"{node}\" = \"{bytes}B\"")).collect();
    scenario(&format!(
        r#"
[topology]
kind = "dumbbell"
hosts = 2
hosts_right = 1
link_rate = "100Gbps"
uplink_rate = "100Gbps"
link_delay = "1us"
[switch]
buffer = "{buffer}B"
buffer_of_node = {{ {} }}
reserved = "0B"
alpha = 1000
[rdma]
window = "0B"
rto = "100us"             # a lost tail is sent again
[rdma.cc]
kind = "none"
[workload]
pattern = "incast"
senders = "0-1"
receiver = 2
size = "{}B"
transport = "rdma"
"#,
        own.join(", "),
        PACKETS * 1000
    ))
}

fn dropped(sc: &Scenario) -> u64 {
    let sim = run(sc);
    assert!(sim.flow_records().iter().all(|f| f.finish.is_some()), "every flow finishes");
    sim.counters().total_dropped()
}

/// Comfortably below and above the peak of about `PACKETS` packets.
const BELOW: u64 = (PACKETS - 5) * PACKET;
const ABOVE: u64 = (PACKETS + 7) * PACKET;

#[test]
fn the_switch_named_gets_its_own_drop_point() {
    // The shared setting alone: drops below the peak, none above it.
    assert!(dropped(&dumbbell(BELOW, &[])) > 0, "A's {BELOW} B is below the peak");
    assert_eq!(dropped(&dumbbell(ABOVE, &[])), 0, "A's {ABOVE} B holds the peak");
    // A's own buffer moves A's drop point either way.
    assert_eq!(dropped(&dumbbell(BELOW, &[(A, ABOVE)])), 0, "A raised above the peak");
    assert!(dropped(&dumbbell(ABOVE, &[(A, BELOW)])) > 0, "A lowered below the peak");
    // B's does not: the queue is A's.
    assert!(dropped(&dumbbell(BELOW, &[(B, 100 * ABOVE)])) > 0, "B's buffer is not A's");
}

fn refused(sc: &Scenario) -> shoal_core::ScenarioError {
    match Simulation::new(sc) {
        Err(e) => e,
        Ok(_) => panic!("accepted: {:?}", sc.switch.buffer_of_node),
    }
}

#[test]
fn keys_that_name_no_switch_are_refused_with_the_key_and_what_is_accepted() {
    let host = refused(&dumbbell(ABOVE, &[(2, ABOVE)]));
    assert_eq!(host.path, "switch.buffer_of_node.2");
    assert!(host.message.contains("node 2 is host 2, not a switch"), "{}", host.message);
    assert!(
        host.message
            .contains("accepted: the node id of a switch; node ids run from 0 to 4, hosts first, then switches"),
        "{}",
        host.message
    );
    let missing = refused(&dumbbell(ABOVE, &[(5, ABOVE)]));
    assert_eq!(missing.path, "switch.buffer_of_node.5");
    assert!(missing.message.contains("there is no node 5"), "{}", missing.message);

    let mut twice = dumbbell(ABOVE, &[(A, ABOVE)]);
    twice.switch.buffer_of_node.insert("03".into(), shoal_core::units::Bytes(ABOVE));
    let e = refused(&twice);
    assert!(e.message.contains("names the same switch as switch.buffer_of_node."), "{}", e.message);

    let mut word = dumbbell(ABOVE, &[]);
    word.switch.buffer_of_node.insert("gateway".into(), shoal_core::units::Bytes(ABOVE));
    let e = word.validate().unwrap_err();
    assert_eq!(e.path, "switch.buffer_of_node.gateway");
    assert!(e.message.contains("\"gateway\" is not a node id (accepted: a whole number"), "{}", e.message);

    let mut tiny = dumbbell(ABOVE, &[]);
    tiny.switch.buffer_of_node.insert(A.to_string(), shoal_core::units::Bytes(100));
    let e = tiny.validate().unwrap_err();
    assert_eq!(e.path, "switch.buffer_of_node.3");
    assert!(e.message.contains("100B cannot hold one packet"), "{}", e.message);
}

/// A switch's own buffer counts even when `switch.buffer` is unset (pool_size then sizes
/// the others), and the resolved scenario names no such key when none is set.
#[test]
fn an_own_buffer_applies_without_switch_buffer_and_is_left_out_when_unset() {
    let mut sc = dumbbell(ABOVE, &[(A, BELOW)]);
    sc.switch.buffer = None;
    sc.switch.pool_size = shoal_core::units::Bytes(ABOVE);
    assert!(dropped(&sc) > 0, "A's own {BELOW} B, not pool_size");
    sc.switch.buffer_of_node.clear();
    assert_eq!(dropped(&sc), 0, "pool_size = {ABOVE} B holds the peak");
    let toml = toml::to_string(&sc).unwrap();
    assert!(!toml.contains("buffer_of_node"), "{toml}");
}
