//! The `[transport]` (TCP) and `[rdma]` sections.

use crate::check_env::CheckEnv;
use crate::config::{ScenarioError, Warnings};
use crate::net::IntValues;
use crate::transport::cc::{CcConfig, RdmaCcConfig};
use crate::transport::rdma::recovery::LossRecoveryConfig;
use crate::units::{Bytes, Time};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EcnCapable {
    Auto,
    On,
    Off,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TransportConfig {
    pub cc: CcConfig,
    pub mss: u32,
    pub header: u32,
    pub ack_size: u32,
    pub init_cwnd: u32,
    pub max_cwnd: Bytes,
    pub rto_min: Time,
    pub rto_init: Time,
    pub rto_max: Time,
    pub dupack_threshold: u32,
    pub handshake: bool,
    pub ecn: EcnCapable,
    pub pias_thresholds: Vec<Bytes>,
    pub initial_rwnd: Bytes,
    pub partial_ack_rto: PartialAckRto,
    pub sack: bool,
    pub reuse_connections: bool,
    pub restart_window: RestartWindow,
    pub restart_after: RestartAfter,
}

/// The window a reused connection restarts from after an idle period longer than an RTO.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RestartWindow {
    /// min(initial window, cwnd): RFC 5681, section 4.1, and Linux.
    Min,
    /// The initial window, even above a smaller cwnd: ns-2's `slow_start_restart_`
    /// (`slowdown(CLOSE_CWND_INIT)`), which the PIAS, LossPass and BCC scripts run.
    Initial,
}

/// How long a reused connection must have been silent for its window to restart.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RestartAfter {
    /// The retransmission timeout, `rto_min` included: RFC 5681, section 4.1, and Linux.
    Rto,
    /// The RTO estimate without its floor, srtt + 4 rttvar: ns-2's FullTcp compares the
    /// idle time with `t_rtxcur_`, which `minrto_` does not bound, so with a 5 ms RTOmin
    /// a connection silent for a few round trips already restarts.
    RtoEstimate,
}

/// The RDMA transport (`[rdma]`): reliable connections of a RoCE NIC, as ns3-datacenter
/// (the HPCC code base) models them. Every default is that simulator's
/// (`rdma-hw.cc`, `qbb-net-device.cc`, and its example configurations).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RdmaConfig {
    /// Payload bytes per packet (`PACKET_PAYLOAD_SIZE` 1000).
    pub mtu: u32,
    /// Header bytes of a data packet: PPP 2 + IPv4 20 + UDP 8 + SeqTs 6.
    pub header: u32,
    /// Wire bytes of an ACK or NACK: padded to a minimal frame.
    pub ack_size: u32,
    /// The receiver ACKs every this many packets received in order, and the last one
    /// (`L2_ACK_INTERVAL` 1: every packet).
    pub ack_interval: u32,
    /// A receiver NACKs the same expected packet at most once per this interval
    /// (`m_nack_interval` 500 us).
    pub nack_interval: Time,
    /// The sender's retransmission timeout (the reference has none: `Rto::None`).
    pub rto: Rto,
    /// Most bytes in flight per connection (none, the examples' DCQCN runs, by default).
    pub window: RdmaWindow,
    /// The window shrinks with the connection's rate: window x rate / line rate
    /// (`VAR_WIN`; off, as in the examples' DCQCN runs).
    pub window_scales_with_rate: bool,
    /// The priority of ACKs and NACKs; unset, their connection's (the reference's
    /// `ACK_HIGH_PRIO 0`; with 1 it sends them at priority 0, ahead of data).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack_priority: Option<u8>,
    /// How switches write in-band telemetry records, for the controllers that read them
    /// (HPCC): exact values, or the reference's quantized fields.
    pub int_values: IntValues,
    /// `INT_MULTI`: the multiplier of the quantized fields' units (1, ns3-datacenter's
    /// `config-burst.txt:38`).
    pub int_multi: u32,
    /// How senders recover lost packets: go-back-N (the reference's, by default) or IRN's
    /// selective repeat. Left out of a resolved scenario when it is go-back-N, so that
    /// scenarios written before it existed read the same.
    #[serde(skip_serializing_if = "LossRecoveryConfig::is_go_back_n")]
    pub loss_recovery: LossRecoveryConfig,
    /// The connections' congestion control.
    pub cc: RdmaCcConfig,
}

impl Default for RdmaConfig {
    fn default() -> Self {
        RdmaConfig {
            mtu: 1000,
            header: 36,
            ack_size: 48,
            ack_interval: 1,
            nack_interval: Time(500_000_000),
            rto: Rto::None,
            window: RdmaWindow::Bytes(Bytes(0)),
            window_scales_with_rate: false,
            ack_priority: None,
            int_values: IntValues::Exact,
            int_multi: 1,
            loss_recovery: LossRecoveryConfig::default(),
            cc: RdmaCcConfig::default(),
        }
    }
}

/// An RDMA sender's retransmission timeout (`rdma.rto`): "none", or a time. While a
/// packet it sent is unacknowledged and no ACK has advanced for this long, the sender
/// goes back to the first unacknowledged packet. The timeout is fixed (no backoff).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Rto {
    /// No timeout, as in ns3-datacenter (`rdma-hw.cc` has none): a connection whose
    /// last packets are all lost stalls.
    #[default]
    None,
    After(Time),
}

impl Serialize for Rto {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Rto::None => s.serialize_str("none"),
            Rto::After(t) => t.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Rto {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match word_or(d, &["none"])? {
            Ok(_) => Rto::None,
            Err(t) => Rto::After(t),
        })
    }
}

/// An RDMA connection's cap on bytes in flight (`rdma.window`): a size (0: none), or one
/// bandwidth-delay product (the reference's `HAS_WIN 1`), of the connection's own path
/// (`GLOBAL_T 0`) or of the longest path between two hosts (`GLOBAL_T 1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RdmaWindow {
    Bytes(Bytes),
    /// "bdp": the connection's path.
    Bdp,
    /// "max_bdp": the longest path.
    MaxBdp,
}

impl Serialize for RdmaWindow {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RdmaWindow::Bytes(b) => b.serialize(s),
            RdmaWindow::Bdp => s.serialize_str("bdp"),
            RdmaWindow::MaxBdp => s.serialize_str("max_bdp"),
        }
    }
}

impl<'de> Deserialize<'de> for RdmaWindow {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match word_or(d, &["bdp", "max_bdp"])? {
            Ok("bdp") => RdmaWindow::Bdp,
            Ok(_) => RdmaWindow::MaxBdp,
            Err(b) => RdmaWindow::Bytes(b),
        })
    }
}

/// Reads a key that is one of `words` (`Ok`) or else a `T` (`Err`, a quantity); a value
/// that is neither gets `T`'s message plus the words.
fn word_or<'de, D, T>(d: D, words: &[&'static str]) -> Result<Result<&'static str, T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let value = serde_json::Value::deserialize(d)?;
    if let Some(word) = words.iter().find(|&&w| value.as_str() == Some(w)) {
        return Ok(Ok(word));
    }
    T::deserialize(value)
        .map(Err)
        .map_err(|e| serde::de::Error::custom(format!("{e}; or one of {}", crate::config::keys::listed(words))))
}

/// Checks packet and header sizes, each (key, value, least, most) in bytes.
fn check_sizes(checks: &[(&str, u32, u32, u32)]) -> Result<(), ScenarioError> {
    match checks.iter().find(|&&(_, v, lo, hi)| !(lo..=hi).contains(&v)) {
        Some(&(path, v, lo, hi)) => {
            Err(ScenarioError::new(path, format!("{v} is not accepted (accepted: {lo} to {hi} bytes)")))
        }
        None => Ok(()),
    }
}

impl RdmaConfig {
    /// Checks the packet and header sizes.
    pub fn check_sizes(&self) -> Result<(), ScenarioError> {
        check_sizes(&[
            ("rdma.mtu", self.mtu, 1, 65_000),
            ("rdma.header", self.header, 0, 1000),
            ("rdma.ack_size", self.ack_size, 1, 10_000),
        ])
    }

    /// Whether senders time out: `rto` is set, or the loss recovery times out on its own.
    pub fn times_out(&self) -> bool {
        self.rto != Rto::None || self.loss_recovery.times_out()
    }

    /// Checks the congestion control and the connection keys (the sizes: `check_sizes`).
    pub fn validate(&self, env: &CheckEnv, warnings: &mut Warnings) -> Result<(), ScenarioError> {
        self.cc.validate("rdma.cc", env, warnings)?;
        self.cc.line_rate_warnings("rdma.cc", env, warnings);
        if let Rto::After(rto) = self.rto {
            env.check_timeout("rdma.rto", rto)?;
        }
        self.loss_recovery.validate("rdma.loss_recovery", env, warnings)?;
        if !self.loss_recovery.is_go_back_n() {
            let kind = self.loss_recovery.kind();
            if let Rto::After(rto) = self.rto {
                return Err(ScenarioError::new(
                    "rdma.rto",
                    format!(
                        "{rto} is go-back-N's timeout, and rdma.loss_recovery.kind = \"{kind}\" times out on its own \
                         (its rto_low and rto_high); accepted: \"none\""
                    ),
                ));
            }
            if self.window == RdmaWindow::Bytes(Bytes(0)) {
                warnings.push(format!(
                    "rdma.loss_recovery.kind = \"{kind}\" runs without rdma.window: IRN caps what is in flight at \
                     the network's bandwidth-delay product (BDP-FC), rdma.window = \"max_bdp\""
                ));
            }
        }
        if self.ack_interval == 0 {
            return Err(ScenarioError::new(
                "rdma.ack_interval",
                "0 is not accepted (accepted: 1 or more packets; the reference's 0 sends no ACK, so no connection would complete)",
            ));
        }
        if self.int_multi == 0 {
            return Err(ScenarioError::new("rdma.int_multi", "0 is not accepted (accepted: 1 or more)"));
        }
        // The classes a workload's priority may name (`Workload::validate`).
        if let Some(p) = self.ack_priority.filter(|&p| p >= 64) {
            return Err(ScenarioError::not_accepted("rdma", "ack_priority", p, "0 to 63"));
        }
        let no_window = self.window == RdmaWindow::Bytes(Bytes(0));
        if self.window_scales_with_rate && no_window {
            warnings.push("rdma.window_scales_with_rate: has no effect without rdma.window".into());
        }
        // A sender stops at its window; a receiver that ACKs only every ack_interval
        // packets then never answers.
        if self.ack_interval > 1 && !no_window {
            match self.window {
                RdmaWindow::Bytes(w) if !self.window_scales_with_rate && w.0.div_ceil(self.mtu as u64) < self.ack_interval as u64 => {
                    return Err(ScenarioError::new(
                        "rdma.window",
                        format!(
                            "{w} holds fewer than rdma.ack_interval = {} packets of rdma.mtu = {} B: the sender would wait for an ACK the receiver sends only after {} packets (accepted: 0, or at least {} B)",
                            self.ack_interval,
                            self.mtu,
                            self.ack_interval,
                            (self.ack_interval as u64 - 1) * self.mtu as u64 + 1
                        ),
                    ));
                }
                RdmaWindow::Bytes(_) if !self.window_scales_with_rate => {}
                _ => warnings.push(format!(
                    "rdma.ack_interval: {} packets per ACK with a window that may hold fewer (rdma.window = {}, window_scales_with_rate = {}); a connection whose window holds fewer stalls until rdma.rto",
                    self.ack_interval,
                    serde_json::to_value(self.window).expect("a window serializes"),
                    self.window_scales_with_rate
                )),
            }
        }
        Ok(())
    }
}

/// When NewReno recovery restarts the retransmission timer on partial ACKs (RFC 6582,
/// section 4: the Impatient and Slow-but-Steady variants).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PartialAckRto {
    /// Impatient: on the first partial ACK only (ns-3).
    First,
    /// Slow-but-Steady: on every partial ACK.
    Every,
}

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            cc: CcConfig::default(),
            mss: 1460,
            header: 54,
            ack_size: 64,
            init_cwnd: 10,
            max_cwnd: Bytes(0),
            rto_min: Time(5_000_000_000),
            rto_init: Time(5_000_000_000),
            rto_max: Time(1_000_000_000_000),
            dupack_threshold: 3,
            handshake: false,
            ecn: EcnCapable::Auto,
            pias_thresholds: Vec::new(),
            initial_rwnd: Bytes(0),
            partial_ack_rto: PartialAckRto::First,
            sack: true,
            reuse_connections: false,
            restart_window: RestartWindow::Min,
            restart_after: RestartAfter::Rto,
        }
    }
}

impl TransportConfig {
    /// Checks the packet and header sizes.
    pub fn check_sizes(&self) -> Result<(), ScenarioError> {
        check_sizes(&[
            ("transport.mss", self.mss, 1, 65_000),
            ("transport.header", self.header, 0, 1000),
            ("transport.ack_size", self.ack_size, 1, 10_000),
        ])
    }

    /// Checks the windows, timers, congestion control and PIAS tags (the sizes:
    /// `check_sizes`).
    pub fn validate(&self, env: &CheckEnv, warnings: &mut Warnings) -> Result<(), ScenarioError> {
        let err = |path: &str, msg: String| Err(ScenarioError::new(path, msg));
        if self.init_cwnd == 0 {
            return err("transport.init_cwnd", "must be at least 1 packet".into());
        }
        env.check_timeout("transport.rto_min", self.rto_min)?;
        env.check_timeout("transport.rto_init", self.rto_init)?;
        if self.rto_max < self.rto_min {
            return err("transport.rto_max", format!("{} is below transport.rto_min = {}", self.rto_max, self.rto_min));
        }
        if self.dupack_threshold == 0 {
            return err("transport.dupack_threshold", "must be at least 1".into());
        }
        self.cc.validate("transport.cc", env, warnings)?;
        let pias = &self.pias_thresholds;
        if pias.windows(2).any(|w| w[0] >= w[1]) || pias.first() == Some(&Bytes(0)) {
            return err("transport.pias_thresholds", "must be positive and increasing, e.g. [\"1MB\"]".into());
        }
        if pias.len() >= env.queues as usize && !env.single_queue_scheduler {
            warnings.push(format!(
                "transport.pias_thresholds: {} thresholds make {} classes but switches have {} queues; the lowest classes share the last queue",
                pias.len(),
                pias.len() + 1,
                env.queues
            ));
        }
        if !pias.is_empty() && env.single_queue_scheduler {
            warnings.push(
                "transport.pias_thresholds: tags have no effect with switch.scheduler.kind = \"fifo\" (one queue)"
                    .into(),
            );
        }
        if self.max_cwnd.0 != 0 && self.max_cwnd.0 < self.mss as u64 {
            return err(
                "transport.max_cwnd",
                format!("{} is below one MSS ({} B); 0 means unlimited", self.max_cwnd, self.mss),
            );
        }
        Ok(())
    }

    /// Whether data packets are ECN-capable (ECT).
    pub fn ect(&self) -> bool {
        match self.ecn {
            EcnCapable::On => true,
            EcnCapable::Off => false,
            EcnCapable::Auto => self.cc.ecn_lambda().is_some(),
        }
    }
}
