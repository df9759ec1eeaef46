//! DSH, dynamic and shared headroom (Shan et al., "Less is More: Dynamic and Shared
//! Headroom Allocation in PFC-enabled Datacenter Networks", §IV; lossless-facts §2).
//!
//! Each ingress port keeps one eta of insurance headroom (Eq. 4) instead of one per
//! (port, lossless class); everything else of the pool is shared, by footroom and
//! headroom alike, under one dynamic threshold T = alpha x (pool size - shared bytes in
//! use), where the bytes in use count every lossless byte outside insurance (§IV-B).
//! Two flow controls act on it:
//!
//! - queue level, as PFC: an ingress queue whose shared bytes exceed X_qoff = T - eta
//!   (Eq. 5, at least 0) PAUSEs its class upstream; it RESUMEs once they are below X_qoff
//!   - delta_q, or zero;
//! - port level: a port whose lossless queues' shared bytes together exceed X_poff = N_q
//!   x T (Eq. 6), or that holds insurance bytes, sends a port-level PAUSE, which stops
//!   every class of the upstream; it RESUMEs once those bytes are below X_poff - delta_p,
//!   or zero, and its insurance is empty. While a port is paused its arrivals go to its
//!   insurance, and only a full insurance drops one (`HeadroomOverflow`).
//!
//! The upstream holds a queue while its class OR its port is paused (Fig. 9): the two
//! frames are distinct (`PORT_LEVEL`), and a port-level RESUME leaves a class's pause.
//!
//! Where the paper is silent (lossless-facts §2.2): N_q is a setting (`lossless_queues`,
//! 7 as in §V-A); a negative X_qoff counts as 0; resumes are strictly below the
//! thresholds, and also happen once the queue (port) holds no shared byte, so that a
//! threshold stuck at 0 cannot keep an empty queue paused; a port resumes only with its
//! insurance empty, so that a new port-level pause always finds a whole eta for the
//! bytes in flight; departures release insurance first, as PFC's release headroom.
//! Frames are ON/OFF. The private buffer is the switch's per-queue reserve
//! (`switch.reserved`), which the paper's theorems set to 0.

use super::{
    check_pausing_keys, class_mask, pausing_warnings, resume_offset_warning, FlowControl, FlowControlEnv,
    FlowControlFacts, FlowControlReport, IngressCx, Lossless, LosslessArrival, PoolState, Steering, UpstreamPauses,
    PORT_LEVEL,
};
use crate::check_env::CheckEnv;
use crate::config::{ScenarioError, Warnings};

use crate::registry::Scheme;
use crate::stats::DropReason;
use crate::switch::admission::Verdict;
use crate::switch::flow_control::DeadlockWatch;
use crate::switch::flow_control::{HeadroomRule, Pause};
use crate::switch::mmu::{Charge, IngressAccounts, CLASSES};
use crate::units::{Bytes, Time};
use serde::{Deserialize, Serialize};

/// DSH's keys (`[switch.flow_control] kind = "dsh"`). Defaults follow the paper's
/// microbenchmark switch (§V-A: seven lossless queues, alpha 1/16, no hysteresis).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DshConfig {
    /// The lossless classes (priorities 0 to 7). Default 0 to 6: the paper's seven DWRR
    /// queues, the eighth (strict priority) carrying ACKs and control frames.
    pub classes: Vec<u8>,
    /// Insurance headroom per ingress port, eta: "eta" (default, Eq. 1: 2(C*D + MTU) +
    /// 3840 B), "3cd" or a size.
    pub headroom: HeadroomRule,
    /// The dynamic threshold's alpha (1/16, §V-A, after Guo et al.).
    pub alpha: f64,
    /// N_q in X_poff = N_q x T: the lossless queues per port (7, §V-A).
    pub lossless_queues: u32,
    /// delta_q: a paused queue RESUMEs below X_qoff - delta_q (0, §V-A).
    pub queue_resume_offset: Bytes,
    /// delta_p: a paused port RESUMEs below X_poff - delta_p (0, §V-A).
    pub port_resume_offset: Bytes,
    /// Bytes of a PAUSE or RESUME frame on the wire (64, 802.1Qbb).
    pub frame_size: Bytes,
    /// A cycle of paused queues whose every pause lasted this long is reported as a
    /// deadlock (1 ms).
    pub deadlock_after: Time,
    /// End the run at the first deadlock.
    pub stop_at_deadlock: bool,
}

impl Default for DshConfig {
    fn default() -> Self {
        DshConfig {
            classes: (0..7).collect(),
            headroom: HeadroomRule::Eta,
            alpha: 1.0 / 16.0,
            lossless_queues: 7,
            queue_resume_offset: Bytes(0),
            port_resume_offset: Bytes(0),
            frame_size: Bytes(64),
            deadlock_after: Time(1_000_000_000),
            stop_at_deadlock: false,
        }
    }
}

impl DshConfig {
    /// How the run watches for deadlocks.
    pub fn deadlock_watch(&self) -> DeadlockWatch {
        DeadlockWatch { after: self.deadlock_after.0, stop: self.stop_at_deadlock }
    }
}

/// DSH at one switch.
///
/// Invariants: `insurance_used[p * CLASSES + c]` is at most the bytes buffered from
/// (p, c) and 0 for lossy classes; their sum over c is `port_insurance_used[p]`, at most
/// `insurance[p]`; `pool_insurance_used` sums them by pool.
pub struct Dsh {
    lossless: u8,
    alpha: f64,
    lossless_queues: f64,
    queue_resume_offset: u64,
    port_resume_offset: u64,
    /// By ingress port: eta, its insurance headroom.
    insurance: Vec<u64>,
    /// By (ingress port, class): insurance bytes in use.
    insurance_used: Vec<u64>,
    /// By ingress port: insurance bytes in use.
    port_insurance_used: Vec<u64>,
    /// By pool: insurance bytes in use, which the threshold does not count as used.
    pool_insurance_used: Vec<u64>,
    /// The queue- and port-level pauses it holds upstream, and their frames.
    upstream: UpstreamPauses,
}

impl Scheme for Dsh {
    type Config = DshConfig;
    type Env = FlowControlEnv;

    fn build(cfg: &DshConfig, env: &FlowControlEnv) -> Self {
        let ports = env.ingress_links.len();
        Dsh {
            lossless: class_mask(&cfg.classes),
            alpha: cfg.alpha,
            lossless_queues: cfg.lossless_queues as f64,
            queue_resume_offset: cfg.queue_resume_offset.0,
            port_resume_offset: cfg.port_resume_offset.0,
            insurance: cfg.headroom.per_port(env),
            insurance_used: vec![0; ports * CLASSES],
            port_insurance_used: vec![0; ports],
            pool_insurance_used: vec![0; ports],
            upstream: UpstreamPauses::new(ports, cfg.frame_size.0 as u32),
        }
    }

    fn validate(cfg: &DshConfig, path: &str, env: &CheckEnv, warnings: &mut Warnings) -> Result<(), ScenarioError> {
        check_pausing_keys(path, "DSH", &cfg.classes, cfg.alpha, cfg.frame_size, cfg.deadlock_after, env)?;
        pausing_warnings(path, "DSH", &cfg.classes, cfg.alpha, env, warnings);
        // X_qoff = T - eta and X_poff = N_q x T, T at most alpha x the pool.
        let largest_threshold = cfg.alpha * env.largest_pool.0 as f64;
        resume_offset_warning(
            &format!("{path}.queue_resume_offset"),
            cfg.queue_resume_offset,
            largest_threshold,
            "the largest queue threshold X_qoff, below alpha x the shared pool",
            "once it holds no shared byte",
            warnings,
        );
        resume_offset_warning(
            &format!("{path}.port_resume_offset"),
            cfg.port_resume_offset,
            cfg.lossless_queues as f64 * largest_threshold,
            "the largest port threshold X_poff, lossless_queues x alpha x the shared pool",
            "once it holds no shared byte",
            warnings,
        );
        insurance_warning(cfg, path, env, warnings);
        if cfg.lossless_queues == 0 || cfg.lossless_queues as usize > CLASSES {
            return Err(ScenarioError::not_accepted(path, "lossless_queues", cfg.lossless_queues, "1 to 8"));
        }
        if cfg.headroom == HeadroomRule::Size(Bytes(0)) && !cfg.classes.is_empty() {
            return Err(ScenarioError::not_accepted(
                path,
                "headroom",
                "0 B",
                "\"eta\", \"3cd\" or a size > 0: a port-level PAUSE needs room for the bytes in flight",
            ));
        }
        // The threshold judges the ingress port's pool, and only a pool that holds the
        // packets' egress queues too can promise room for them: the paper's switch has one
        // shared buffer.
        if let Ok(net) = crate::net::build(env.topology) {
            let mut ports = std::collections::HashMap::new();
            for link in net.links.iter().filter(|l| matches!(l.from, crate::net::NodeId::Switch(_))) {
                *ports.entry(link.from).or_insert(0u64) += 1;
            }
            let most = ports.values().copied().max().unwrap_or(0);
            if (env.ports_per_pool as u64) < most {
                return Err(ScenarioError::new(
                    "switch.ports_per_pool",
                    format!(
                        "{} splits a switch of {most} ports into pools; DSH's threshold and insurance assume one \
                         shared buffer per switch, and a packet whose egress pool differs from its ingress \
                         port's could be dropped (accepted: {most} or more with {path}.kind = \"dsh\")",
                        env.ports_per_pool
                    ),
                ));
            }
        }
        Ok(())
    }
}

impl FlowControlFacts for Dsh {
    fn pauses(_: &DshConfig) -> bool {
        true
    }

    fn paused_classes(cfg: &DshConfig) -> Option<&[u8]> {
        Some(&cfg.classes)
    }

    fn deadlock_watch(cfg: &DshConfig) -> Option<DeadlockWatch> {
        Some(cfg.deadlock_watch())
    }

    /// Its pauses, of queues and of ports, wait for their RESUME.
    fn pauses_end_by_frame(_: &DshConfig) -> bool {
        true
    }
}

/// Warns of an insurance headroom below eta (DSH Eq. 1, 2(C*D + MTU) + 3840 B) by a
/// packet or more on some kind of link: a port-level PAUSE there may not stop the bytes
/// already in flight. Less than a packet short is how eta rounds (the paper's 1,500 B MTU
/// against Shoal's 1,514 B frames: 28 B), not a mistake.
fn insurance_warning(cfg: &DshConfig, path: &str, env: &CheckEnv, warnings: &mut Warnings) {
    if cfg.classes.is_empty() {
        return;
    }
    let mtu = env.largest_packet;
    let short = super::pfc::link_classes(env.topology).into_iter().find_map(|(name, rate, delay)| {
        let (insurance, eta) = (cfg.headroom.bytes(rate, delay, mtu), HeadroomRule::Eta.bytes(rate, delay, mtu));
        (insurance + mtu <= eta).then_some((name, insurance, eta))
    });
    if let Some((name, insurance, eta)) = short {
        warnings.push(format!(
            "{path}.headroom: {insurance} B of insurance per port is below eta = {eta} B on the {name} (Eq. 1, \
             what a port-level PAUSE must absorb): lossless packets may be dropped (\"eta\" covers it)"
        ));
    }
}

impl Dsh {
    /// T = alpha x the pool's free shared bytes, every lossless byte outside insurance
    /// counted as used.
    fn threshold(&self, pool: &PoolState) -> f64 {
        let used = pool.shared_used.saturating_sub(self.pool_insurance_used[pool.index]);
        self.alpha * pool.size.saturating_sub(used) as f64
    }

    /// The shared bytes (outside insurance) of ingress queue (`port`, `class`).
    fn queue_shared(&self, ingress: &IngressAccounts, port: usize, class: usize) -> u64 {
        ingress.bytes(port, class) - self.insurance_used[port * CLASSES + class]
    }

    /// The shared bytes of `port`'s lossless queues together.
    fn port_shared(&self, ingress: &IngressAccounts, port: usize) -> u64 {
        (0..CLASSES).filter(|c| self.lossless & (1 << c) != 0).map(|c| self.queue_shared(ingress, port, c)).sum()
    }

    /// X_qoff = T - eta, at least 0.
    fn queue_pause_at(&self, port: usize, threshold: f64) -> f64 {
        (threshold - self.insurance[port] as f64).max(0.0)
    }

    /// X_poff = N_q x T.
    fn port_pause_at(&self, threshold: f64) -> f64 {
        self.lossless_queues * threshold
    }
}

impl FlowControl for Dsh {
    fn obeys_pause_frames(&self) -> bool {
        true
    }
}

impl Lossless for Dsh {
    fn reads_ingress_accounts(&self) -> bool {
        true
    }

    fn lossless_classes(&self) -> u8 {
        self.lossless
    }

    fn headroom_used(&self, port: usize, class: usize) -> u64 {
        self.insurance_used[port * CLASSES + class]
    }

    fn headroom_of_port(&self, port: usize) -> u64 {
        self.insurance[port]
    }

    fn admit(&mut self, a: &LosslessArrival) -> Verdict {
        if !self.upstream.holds_port(a.ingress) && a.shared_needed <= a.egress_pool_free {
            return Verdict::Admit;
        }
        if self.port_insurance_used[a.ingress] + a.size > self.insurance[a.ingress] {
            return Verdict::Drop(DropReason::HeadroomOverflow);
        }
        if a.shared_needed > a.egress_pool_free_with_headroom {
            // The egress pool's insurance went to packets from other pools' ports.
            return Verdict::Drop(DropReason::PoolFull);
        }
        self.insurance_used[a.ingress * CLASSES + a.class] += a.size;
        self.port_insurance_used[a.ingress] += a.size;
        self.pool_insurance_used[a.ingress_pool.index] += a.size;
        Verdict::Admit
    }

    fn on_enqueue(&mut self, charge: Charge, cx: &mut IngressCx) {
        let (port, class) = (charge.ingress as usize, charge.class as usize);
        let threshold = self.threshold(&cx.ingress_pool);
        if !self.upstream.holds(port, class)
            && self.queue_shared(cx.ingress, port, class) as f64 > self.queue_pause_at(port, threshold)
        {
            self.upstream.send(port, class as u8, Pause::UntilResume, cx.effects);
        }
        if !self.upstream.holds_port(port)
            && (self.port_insurance_used[port] > 0
                || self.port_shared(cx.ingress, port) as f64 > self.port_pause_at(threshold))
        {
            self.upstream.send(port, PORT_LEVEL, Pause::UntilResume, cx.effects);
        }
    }

    fn on_dequeue(&mut self, charge: Charge, cx: &mut IngressCx) {
        let (port, class) = (charge.ingress as usize, charge.class as usize);
        let slot = port * CLASSES + class;
        let released = self.insurance_used[slot].min(charge.size as u64);
        self.insurance_used[slot] -= released;
        self.port_insurance_used[port] -= released;
        self.pool_insurance_used[cx.ingress_pool.index] -= released;
        let queue_paused = self.upstream.holds(port, class);
        let port_may_resume = self.upstream.holds_port(port) && self.port_insurance_used[port] == 0;
        if !queue_paused && !port_may_resume {
            return;
        }
        let threshold = self.threshold(&cx.ingress_pool);
        if queue_paused {
            let shared = self.queue_shared(cx.ingress, port, class);
            let resume_below = self.queue_pause_at(port, threshold) - self.queue_resume_offset as f64;
            if shared == 0 || (shared as f64) < resume_below {
                self.upstream.send(port, class as u8, Pause::Resume, cx.effects);
            }
        }
        if port_may_resume {
            let shared = self.port_shared(cx.ingress, port);
            let resume_below = self.port_pause_at(threshold) - self.port_resume_offset as f64;
            if shared == 0 || (shared as f64) < resume_below {
                self.upstream.send(port, PORT_LEVEL, Pause::Resume, cx.effects);
            }
        }
    }

    fn check_accounting(&self, id: usize, ingress: Option<&IngressAccounts>, errors: &mut Vec<String>) {
        let Some(ingress) = ingress else {
            errors.push(format!("switch {id}: DSH runs without ingress accounts"));
            return;
        };
        for (port, &cap) in self.insurance.iter().enumerate() {
            let mut sum = 0;
            for class in 0..CLASSES {
                let used = self.insurance_used[port * CLASSES + class];
                sum += used;
                let lossless = self.lossless & (1 << class) != 0;
                if used > ingress.bytes(port, class) || (!lossless && used > 0) {
                    errors.push(format!(
                        "switch {id} port {port} class {class}: {used} B of insurance in use, {} B buffered",
                        ingress.bytes(port, class)
                    ));
                }
            }
            if sum != self.port_insurance_used[port] || sum > cap {
                errors.push(format!(
                    "switch {id} port {port}: {sum} B of insurance in use by class, {} B by port, {cap} B of it",
                    self.port_insurance_used[port]
                ));
            }
        }
    }
}

impl Steering for Dsh {}

impl FlowControlReport for Dsh {
    fn frames_sent(&self, port: usize, class: usize) -> [u64; 2] {
        self.upstream.frames_sent(port, class)
    }

    fn port_frames_sent(&self, port: usize) -> [u64; 2] {
        self.upstream.port_frames_sent(port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::flow_control::PortPauses;

    /// The egress side (Fig. 9): a queue is held while its class OR its port is paused,
    /// and a port-level RESUME leaves the class's pause in force.
    #[test]
    fn a_queue_is_held_while_its_class_or_its_port_is_paused() {
        let mut class_queues = [0u64; CLASSES];
        for (c, q) in class_queues.iter_mut().enumerate() {
            *q = 1 << c;
        }
        let mut pauses = PortPauses::new(&[100_000_000_000; 2], class_queues);
        let port = |pause| if pause { Pause::UntilResume } else { Pause::Resume };
        assert!(pauses.set(0, 3, true, 10));
        assert_eq!(pauses.held_queues(0), 1 << 3);
        assert!(pauses.obey(0, PORT_LEVEL, port(true), 20).changed);
        assert_eq!(pauses.held_queues(0), u64::MAX);
        assert!(pauses.is_paused(0, 5) && !pauses.is_paused(1, 5));
        assert_eq!(pauses.paused_since(0, 3), Some(10));
        assert_eq!(pauses.paused_since(0, 5), Some(20));
        assert!(pauses.obey(0, PORT_LEVEL, port(false), 30).changed);
        assert_eq!(pauses.held_queues(0), 1 << 3, "the class pause outlives the port's");
        assert!(pauses.any());
        assert!(pauses.set(0, 3, false, 40));
        assert!(!pauses.any());
        assert!(!pauses.obey(0, PORT_LEVEL, port(false), 50).changed, "a repeated RESUME changes nothing");
    }
}
