//! What a scheme may validate its keys against: facts derived once from the whole
//! scenario, so that a scheme's file depends on these facts and not on the scenario's
//! schema (which names every scheme's config).

use crate::config::ScenarioError;
use crate::net::config::Topology;
use crate::units::{Bytes, Rate, Time};

/// The scenario as the schemes' checks see it.
#[derive(Debug, Clone)]
pub struct CheckEnv<'a> {
    /// The network (its links' rates and delays; built-in or from a file).
    pub topology: &'a Topology,
    /// `switch.queues`: the queues of every switch port.
    pub queues: u32,
    /// `switch.ports_per_pool`: the ports that share one pool.
    pub ports_per_pool: u32,
    /// `switch.pool_size`.
    pub pool_size: Bytes,
    /// `switch.reserved`.
    pub reserved: Bytes,
    /// The largest shared pool a switch may have: `switch.buffer` when set (its shared
    /// part is less), else `switch.pool_size`.
    pub largest_pool: Bytes,
    /// The least `switch.alpha` of any queue.
    pub alpha_min: f64,
    /// `switch.scheduler`'s kind, and whether it serves a port from one queue.
    pub scheduler: &'static str,
    pub single_queue_scheduler: bool,
    /// The queues a `dwrr` scheduler serves first (None for another scheduler).
    pub dwrr_strict_queues: Option<u32>,
    /// Whether `switch.classifier` is set, and the kind of the classifier in effect.
    pub classifier_set: bool,
    pub classifier: &'static str,
    /// The priorities the workloads and RDMA's ACKs use, each with the queue the switch's
    /// classifier gives it.
    pub priority_queues: Vec<(u8, usize)>,
    /// Whether some workload sends TCP flows (UDP streams not counted).
    pub tcp_flows: bool,
    /// The largest packet any transport of the scenario sends, headers included.
    pub largest_packet: u64,
    /// The rate of the fastest link (a star has no uplinks, whatever `uplink_rate` says;
    /// 0 for a topology that cannot be built, which validation refuses first).
    pub fastest_link: Rate,
    /// Whether `run.stop_time` is set.
    pub stop_time_set: bool,
}

impl CheckEnv<'_> {
    /// The least time a timer or interval key may take: `bytes` serialized on the
    /// topology's fastest link, or 1 us where that is longer (every default timer is 1 us
    /// or more, so they hold on slow links too). Nothing on the network happens faster:
    /// a shorter timer fires several times between two packets it could act on, and one
    /// of 1 ps made hundreds of millions of events per simulated millisecond. Timeouts
    /// and `deadlock_after` take one largest packet (`largest_packet`): a shorter one runs
    /// out before the packet it guards has left, a pause shorter than that has held back
    /// no packet. The rate controllers' timers take one minimum frame
    /// (`MIN_FRAME_BYTES`): a rate is read once a packet, and no packet is shorter.
    pub fn timer_floor(&self, bytes: u64) -> Time {
        let cap = Time(1_000_000);
        if self.fastest_link.0 == 0 {
            return cap;
        }
        Time(crate::sim::serialization(bytes, self.fastest_link.0)).min(cap)
    }

    /// Refuses a timer `key` of `value` below `bytes` on the fastest link (`timer_floor`);
    /// `what` says what those bytes are.
    pub fn check_timer(&self, key: &str, value: Time, bytes: u64, what: &str) -> Result<(), ScenarioError> {
        let floor = self.timer_floor(bytes);
        if value >= floor {
            return Ok(());
        }
        Err(ScenarioError::new(
            key,
            format!(
                "{value} is too short (accepted: at least {floor}: {what} of {bytes} B on the fastest link, {}, \
                 and never more than 1us; a plain number is picoseconds)",
                self.fastest_link
            ),
        ))
    }

    /// Refuses a timeout or `deadlock_after` below one largest packet's time (`timer_floor`).
    pub fn check_timeout(&self, key: &str, value: Time) -> Result<(), ScenarioError> {
        self.check_timer(key, value, self.largest_packet, "the time of the largest packet")
    }
}
