//! IRN's selective repeat (`rdma.loss_recovery.kind = "irn"`) against theory: under
//! random loss each lost packet is resent about once, where go-back-N resends what was in
//! flight behind it: about one window, BDP / MTU packets, per loss.

mod common;
use common::{run, scenario};

/// Packets of the message `lossy_message` sends.
const PACKETS: f64 = 10_000.0;

/// One 10 MB RDMA message (10,000 packets) from host 0 to host 1 across a star whose
/// receiver's cable corrupts a share `p` of what crosses it, both ways, with a window
/// of one BDP; returns (retransmissions, timeouts).
fn lossy_message(recovery: &str, p: f64, seed: u64) -> (f64, f64) {
    let sim = run(&scenario(&format!(
        "[topology]\nkind = \"star\"\nhosts = 2\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n\
         [[topology.lossy_links]]\nends = [2, 1]\nerror_rate = {p}\n\
         [rdma]\nwindow = \"max_bdp\"\n{recovery}\n\
         [workload]\npattern = \"incast\"\nsenders = \"0\"\nreceiver = 1\nsize = \"10MB\"\ntransport = \"rdma\"\n\
         [run]\nseed = {seed}\n"
    )));
    let r = &sim.flow_records()[0];
    assert!(r.finish.is_some(), "the message completes");
    (r.retransmits as f64, r.timeouts as f64)
}

/// At 1% loss a message of n packets loses about n p / (1 - p) of its transmissions
/// (101 here, sd 10). IRN resends each once, plus the few that a lost NACK leaves
/// unSACKed below a SACKed one, and whatever a timeout finds in flight after a lost
/// retransmission: between 0.6 and 2 resends per loss over three seeds. Go-back-N resends
/// the window in flight behind each loss: 52 packets at 100 Gbps and a base RTT of
/// 4.16 us, so more than 20 times IRN's.
#[test]
fn under_random_loss_irn_resends_each_lost_packet_about_once() {
    let p = 0.01;
    let losses = PACKETS * p / (1.0 - p);
    for seed in 1..=3 {
        let (irn, irn_timeouts) = lossy_message("loss_recovery = \"irn\"", p, seed);
        assert!(
            (0.6 * losses..2.0 * losses).contains(&irn),
            "seed {seed}: IRN resent {irn} packets for about {losses:.0} losses"
        );
        assert!(irn_timeouts <= 5.0, "seed {seed}: {irn_timeouts} timeouts: a loss is found by its NACKs");
        let (go_back_n, _) = lossy_message("rto = \"320us\"", p, seed);
        assert!(go_back_n > 20.0 * irn, "seed {seed}: go-back-N resent {go_back_n}, IRN {irn}");
    }
}

/// A lossless path: IRN sends each packet once and never times out, as go-back-N.
#[test]
fn without_loss_irn_resends_nothing() {
    let (irn, timeouts) = lossy_message("loss_recovery = \"irn\"", 0.0, 1);
    assert_eq!((irn, timeouts), (0.0, 0.0));
}
