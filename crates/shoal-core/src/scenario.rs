//! The scenario: a serde schema with documented defaults (`defaults.toml`), and its
//! validation. Every error names the key path, the value and what is accepted.

pub use crate::config::{PerQueue, Probability, ScenarioError, Warnings};
use crate::net::IntValues;
use crate::switch::admission::AdmissionConfig;
use crate::switch::classify::ClassifierConfig;
use crate::switch::flow_control::FlowControlConfig;
use crate::switch::marking::{CutoffConfig, MarkerConfig, MarkingConfig};
use crate::switch::mmu::class_of;
use crate::switch::scheduler::SchedulerConfig;
use crate::transport::cc::{CcConfig, RdmaCcConfig};
use crate::units::{Bytes, Rate, Time};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The commented defaults file; `Scenario::default()` equals what it parses to.
pub const DEFAULTS_TOML: &str = include_str!("defaults.toml");

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub struct Scenario {
    /// The named preset laid under the scenario's keys (`presets.toml`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    pub topology: Topology,
    pub host: HostConfig,
    pub switch: SwitchConfig,
    pub transport: TransportConfig,
    pub rdma: RdmaConfig,
    pub workload: Workload,
    pub run: RunConfig,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TopologyKind {
    Star,
    LeafSpine,
    FatTree,
    Dumbbell,
    /// Read from `path`, a topology file of the HPCC / ns3-datacenter format
    /// (`net::topology_file`), with each link's own rate and delay.
    File,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Topology {
    pub kind: TopologyKind,
    pub hosts: u32,
    pub hosts_right: u32,
    pub leaves: u32,
    pub spines: u32,
    pub hosts_per_leaf: u32,
    pub k: u32,
    pub link_rate: Rate,
    pub uplink_rate: Rate,
    pub link_delay: Time,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uplink_delay: Option<Time>,
    /// The topology file of `kind = "file"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Links that are down, each named by the node ids at its two ends (see
    /// `net::NodeIds`): they are not built, and routing goes around them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed_links: Vec<[u32; 2]>,
}

impl Default for Topology {
    fn default() -> Self {
        Topology {
            kind: TopologyKind::Star,
            hosts: 32,
            hosts_right: 8,
            leaves: 8,
            spines: 8,
            hosts_per_leaf: 16,
            k: 4,
            link_rate: Rate(100_000_000_000),
            uplink_rate: Rate(100_000_000_000),
            link_delay: Time(1_000_000),
            uplink_delay: None,
            path: None,
            failed_links: Vec::new(),
        }
    }
}

/// The most ports one switch may have: a port index is 16 bits wide.
pub const MAX_SWITCH_PORTS: u64 = u16::MAX as u64;

/// The most hosts a network may have.
pub const MAX_HOSTS: u64 = 1_000_000;

impl Topology {
    /// The port count of the largest switch of a built-in kind (None for a file: the
    /// reader checks its switches).
    pub fn max_switch_ports(&self) -> Option<u64> {
        let (hosts, right) = (self.hosts as u64, self.hosts_right as u64);
        Some(match self.kind {
            TopologyKind::Star => hosts,
            TopologyKind::Dumbbell => hosts.max(right) + 1,
            TopologyKind::LeafSpine => (self.hosts_per_leaf as u64 + self.spines as u64).max(self.leaves as u64),
            TopologyKind::FatTree => self.k as u64,
            TopologyKind::File => return None,
        })
    }

    /// The keys that set the largest switch's port count.
    fn port_keys(&self) -> &'static str {
        match self.kind {
            TopologyKind::Star => "lower topology.hosts",
            TopologyKind::Dumbbell => "lower topology.hosts or topology.hosts_right",
            TopologyKind::LeafSpine => "lower topology.hosts_per_leaf, topology.spines or topology.leaves",
            TopologyKind::FatTree => "lower topology.k",
            TopologyKind::File => "fewer links per switch in topology.path",
        }
    }

    /// (rate, one-way delay) of each link on the topology's longest host-to-host route:
    /// for a built-in kind, the route of most hops (which costs the most by any `cost`
    /// that grows with the delay and falls with the rate); for a network with failed
    /// links or read from a file, the shortest route (as routing takes them) that costs
    /// the most by `cost`.
    pub fn longest_path(&self, cost: impl Fn(Rate, Time) -> u64) -> Result<Vec<(Rate, Time)>, ScenarioError> {
        let host = (self.link_rate, self.link_delay);
        let up = (self.uplink_rate, self.uplink_delay.unwrap_or(self.link_delay));
        let known = match self.kind {
            _ if !self.failed_links.is_empty() => None,
            TopologyKind::Star => Some(vec![host, host]),
            TopologyKind::Dumbbell => Some(vec![host, up, host]),
            TopologyKind::LeafSpine if self.leaves > 1 => Some(vec![host, up, up, host]),
            TopologyKind::LeafSpine => Some(vec![host, host]),
            TopologyKind::FatTree => Some(vec![host, up, up, up, up, host]),
            TopologyKind::File => None,
        };
        if let Some(path) = known {
            return Ok(path);
        }
        let net = crate::net::build(self)?;
        let link = |l: u32| {
            let spec = &net.links[l as usize];
            (Rate(spec.rate_bps), Time(spec.delay))
        };
        let route = crate::net::costliest_route(&net, |l| {
            let (rate, delay) = link(l);
            cost(rate, delay)
        });
        Ok(route.into_iter().map(link).collect())
    }

    /// The rate of the fastest link of a host (the C of rules that scale with the host
    /// link rate).
    pub fn host_rate(&self) -> Result<Rate, ScenarioError> {
        self.fastest(|l| !l.core, self.link_rate)
    }

    /// The rate of the fastest link.
    pub fn fastest_rate(&self) -> Result<Rate, ScenarioError> {
        self.fastest(|_| true, self.link_rate.max(self.uplink_rate))
    }

    /// The fastest rate of the links `which` selects: `built_in` unless the network is
    /// read from a file.
    fn fastest(&self, which: impl Fn(&crate::net::LinkSpec) -> bool, built_in: Rate) -> Result<Rate, ScenarioError> {
        if self.kind != TopologyKind::File {
            return Ok(built_in);
        }
        let net = crate::net::build(self)?;
        Ok(Rate(net.links.iter().filter(|l| which(l)).map(|l| l.rate_bps).max().unwrap_or(0)))
    }

    /// Number of hosts a built-in kind builds (None for a file: its network says).
    pub fn host_count(&self) -> Option<u64> {
        Some(match self.kind {
            TopologyKind::Star => self.hosts as u64,
            TopologyKind::Dumbbell => self.hosts as u64 + self.hosts_right as u64,
            TopologyKind::LeafSpine => self.leaves as u64 * self.hosts_per_leaf as u64,
            TopologyKind::FatTree => (self.k as u64).pow(3) / 4,
            TopologyKind::File => return None,
        })
    }

    /// Checks the topology's keys, and its network where only building it tells (a
    /// file, failed links); returns the number of hosts.
    fn check(&self) -> Result<u64, ScenarioError> {
        let err = |path: &str, msg: String| Err(ScenarioError::new(path, msg));
        let t = self;
        match t.kind {
            TopologyKind::Star if t.hosts < 2 => {
                return err("topology.hosts", format!("{} is too few (accepted: 2 or more hosts)", t.hosts))
            }
            TopologyKind::Dumbbell if t.hosts < 1 || t.hosts_right < 1 => {
                return err(
                    if t.hosts < 1 { "topology.hosts" } else { "topology.hosts_right" },
                    "must be at least 1 for a dumbbell".into(),
                )
            }
            TopologyKind::LeafSpine if t.leaves < 1 || t.spines < 1 || t.hosts_per_leaf < 1 => {
                let key = if t.leaves < 1 {
                    "topology.leaves"
                } else if t.spines < 1 {
                    "topology.spines"
                } else {
                    "topology.hosts_per_leaf"
                };
                return err(key, "must be at least 1 (accepted: 1 or more)".into());
            }
            TopologyKind::LeafSpine if (t.leaves as u64) * (t.hosts_per_leaf as u64) < 2 => {
                return err("topology.hosts_per_leaf", "the fabric needs at least 2 hosts".into())
            }
            TopologyKind::FatTree if t.k < 2 || t.k % 2 == 1 || t.k > 64 => {
                return err("topology.k", format!("{} is not accepted (accepted: an even number from 2 to 64)", t.k))
            }
            TopologyKind::File if t.path.as_deref().is_none_or(str::is_empty) => {
                return err(
                    "topology.path",
                    "kind = \"file\" needs a topology file (accepted: path = \"topology.txt\", in the HPCC / ns3-datacenter format)".into(),
                )
            }
            _ => {}
        }
        if let Some(ports) = t.max_switch_ports().filter(|&p| p > MAX_SWITCH_PORTS) {
            return err(
                "topology",
                format!(
                    "a switch would have {ports} ports (accepted: at most {MAX_SWITCH_PORTS} per switch; {})",
                    t.port_keys()
                ),
            );
        }
        if let Some(hosts) = t.host_count().filter(|&h| h > MAX_HOSTS) {
            return err("topology", format!("{hosts} hosts is too many (accepted: at most 1,000,000)"));
        }
        if t.kind != TopologyKind::File {
            for (key, rate) in [("topology.link_rate", t.link_rate), ("topology.uplink_rate", t.uplink_rate)] {
                if rate.0 == 0 {
                    return err(key, "must be positive (for example \"100Gbps\")".into());
                }
            }
        }
        match t.host_count() {
            Some(hosts) if t.failed_links.is_empty() => Ok(hosts),
            _ => Ok(crate::net::build(t)?.hosts as u64),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    pub nic_buffer: Bytes,
    pub tsq: Bytes,
    pub ecn_k: Bytes,
    pub nic_order: NicOrder,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig { nic_buffer: Bytes(10_000_000), tsq: Bytes(0), ecn_k: Bytes(0), nic_order: NicOrder::Creation }
    }
}

/// The round-robin order in which a NIC serves its paced flows (RDMA queue pairs, or UDP
/// with `pacing = "nic"`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NicOrder {
    /// In the order the flows started, from the one after the last served, wrapping
    /// around: a new flow waits for the end of the round (ns3-datacenter's queue-pair
    /// array, `qbb-net-device.cc:105-150`).
    Creation,
    /// The flow served moves to the back, a flow with a new packet joins the back.
    Rotate,
}

/// Where `switch.reserved` sits (`switch.reserve_per`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ReservePer {
    /// Every queue has `reserved` bytes of its own.
    #[default]
    Queue,
    /// Every port has `reserved` bytes, used by whichever of its queues comes first (for
    /// ports with many queues: a thousand queues of their own reserve each would hold
    /// the whole buffer).
    Port,
}

/// The most queues a switch port may have. Packets reach queues 0 to 255 by priority;
/// more queues serve schemes that spread flows over them.
pub const MAX_QUEUES: u32 = 1024;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchConfig {
    pub queues: u32,
    pub ports_per_pool: u32,
    pub pool_size: Bytes,
    /// The whole buffer of each pool, when set: the pool's shared size is what its
    /// reserves and its ports' headroom (PFC, DSH) leave of it, and `pool_size` is not
    /// read. A chip's buffer compares schemes that reserve differently.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer: Option<Bytes>,
    /// Switches whose buffer is not `buffer`: by node id (as `topology.failed_links` names
    /// nodes: a built-in kind's hosts first, then its switches; a file's own ids), the
    /// whole buffer of each pool of that switch, read as `buffer` is (the reserves and
    /// headroom come out of it). Set on a switch, it applies whether or not `buffer` is
    /// set. Every key names a switch of the network (`engine::switch_buffers` checks).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub buffer_of_node: BTreeMap<String, Bytes>,
    pub reserved: Bytes,
    pub reserve_per: ReservePer,
    pub alpha: PerQueue,
    pub admission: AdmissionConfig,
    pub scheduler: SchedulerConfig,
    /// Unset: `SwitchConfig::classifier()` derives it from the scheduler.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classifier: Option<ClassifierConfig>,
    pub flow_control: FlowControlConfig,
    pub ecn: EcnConfig,
    pub marking: MarkingConfig,
}

impl SwitchConfig {
    /// The classifier in effect: as set, else one queue under `fifo` and a queue per
    /// priority under every other scheduler.
    pub fn classifier(&self) -> ClassifierConfig {
        self.classifier.clone().unwrap_or_else(|| {
            let kind = if self.scheduler.single_queue() { "single_queue" } else { "by_priority" };
            ClassifierConfig::of_kind(kind).expect("a registered classifier")
        })
    }
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            queues: 8,
            ports_per_pool: 8,
            pool_size: Bytes(3_000_000),
            buffer: None,
            buffer_of_node: BTreeMap::new(),
            reserved: Bytes(128_000),
            reserve_per: ReservePer::Queue,
            alpha: PerQueue::All(4.0),
            admission: AdmissionConfig::default(),
            scheduler: SchedulerConfig::default(),
            classifier: None,
            flow_control: FlowControlConfig::default(),
            ecn: EcnConfig::default(),
            marking: MarkingConfig::default(),
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MarkPoint {
    Enqueue,
    Dequeue,
}

/// What the per-queue rules of `[switch.marking]` measure.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EcnScope {
    /// The packet's own queue.
    Queue,
    /// Every queue of the packet's egress port together (PIAS's per-port ECN).
    Port,
}

/// How a switch applies its marking rules (`[switch.ecn]`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct EcnConfig {
    /// When ECN-capable packets are marked.
    pub at: MarkPoint,
    /// What per-queue rules measure.
    pub scope: EcnScope,
    /// What happens to packets that are not ECN-capable where a rule fires.
    pub non_ect: NonEct,
}

impl Default for EcnConfig {
    fn default() -> Self {
        EcnConfig { at: MarkPoint::Dequeue, scope: EcnScope::Queue, non_ect: NonEct::Drop }
    }
}

/// What marking rules do to packets that are not ECN-capable.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NonEct {
    /// Dropped at enqueue where a rule would mark (WRED with ECN).
    Drop,
    /// Left alone: only tail drop limits them (an ECN-only marking profile).
    Pass,
}

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

impl RdmaConfig {
    /// Checks the connection keys (the packet sizes are checked with the transport's).
    fn validate(&self, warnings: &mut Warnings) -> Result<(), ScenarioError> {
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

/// The transport of a workload's flows (`workload.transport`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FlowTransport {
    #[default]
    Tcp,
    /// Reliable RDMA connections (`[rdma]`): go-back-N, paced by the NIC.
    Rdma,
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
    /// Whether data packets are ECN-capable (ECT).
    pub fn ect(&self) -> bool {
        match self.ecn {
            EcnCapable::On => true,
            EcnCapable::Off => false,
            EcnCapable::Auto => self.cc.ecn_lambda().is_some(),
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    AllToAll,
    ManyToFew,
    Incast,
    /// Poisson rounds in which `fan_in` random senders outside the receiver's rack each
    /// send `size` bytes to one random receiver at once (several flows each when
    /// `fan_in` exceeds them).
    FanIn,
    LongLived,
    Udp,
    Trace,
}

/// How a UDP flow keeps its rate (`workload.pacing`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Pacing {
    /// A timer at the sender puts packet k into the NIC queue at start + k x size / rate
    /// (a software pacer): a busy link builds a NIC queue, and a full one drops.
    #[default]
    Host,
    /// The NIC's rate limiter (as RDMA NICs do): the NIC takes the flow's next packet when
    /// its link is free and the flow's time has come, one size / rate after the packet
    /// before; ready flows share the link in round robin, behind the NIC's queues.
    Nic,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LoadOn {
    /// The receivers' access links.
    Access,
    /// The core links leaving the senders' switches, counting only the flows that cross.
    Core,
    /// The same core links, as if every flow crossed them: the senders' access load times
    /// the oversubscription ratio (the convention of the BCC authors' ns-2 scripts).
    CoreNominal,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    Poisson,
    Lognormal,
    /// Every arrival exactly one mean gap after the last (the BFC harness's incasts).
    Periodic,
}

/// What each sender of a fan-in round sends (`workload.fan_in_sizes`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FanInSizes {
    /// `size` bytes, every sender alike.
    #[default]
    Size,
    /// A size drawn from `cdf` for each sender.
    Cdf,
}

/// A set of host indices: "0-23,30" or a list of indices and ranges.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged, expecting = "a set of hosts: a string such as \"0-23,30\", or a list such as [0, \"4-7\"]")]
pub enum HostSet {
    Text(String),
    List(Vec<HostSetItem>),
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum HostSetItem {
    Index(i64),
    Text(String),
}

impl HostSet {
    /// Expands to sorted, distinct host indices, each below `hosts`.
    pub fn resolve(&self, hosts: u64, path: &str) -> Result<Vec<u32>, ScenarioError> {
        let parts: Vec<String> = match self {
            HostSet::Text(t) => t.split(',').map(|s| s.trim().to_string()).collect(),
            HostSet::List(items) => items
                .iter()
                .map(|i| match i {
                    HostSetItem::Index(n) => n.to_string(),
                    HostSetItem::Text(t) => t.trim().to_string(),
                })
                .collect(),
        };
        let bad = |part: &str, why: &str| {
            ScenarioError::new(
                path,
                format!(
                    "{part:?} {why} (accepted: host indices 0..={} as \"a-b,c\" or a list)",
                    hosts.saturating_sub(1)
                ),
            )
        };
        let mut out = Vec::new();
        for part in parts.iter().filter(|p| !p.is_empty()) {
            let (lo, hi) = match part.split_once('-') {
                Some((a, b)) if !a.trim().is_empty() => (a.trim(), b.trim()),
                _ => (part.as_str(), part.as_str()),
            };
            let lo: u64 = lo.parse().map_err(|_| bad(part, "is not a host index or range"))?;
            let hi: u64 = hi.parse().map_err(|_| bad(part, "is not a host index or range"))?;
            if lo > hi {
                return Err(bad(part, "is a decreasing range"));
            }
            if hi >= hosts {
                return Err(bad(part, "is out of range"));
            }
            out.extend(lo as u32..=hi as u32);
        }
        out.sort_unstable();
        out.dedup();
        if out.is_empty() {
            return Err(ScenarioError::new(path, "the host set is empty"));
        }
        Ok(out)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Workload {
    pub pattern: Pattern,
    pub cdf: String,
    pub load: f64,
    pub load_on: LoadOn,
    pub arrival: Arrival,
    pub lognormal_sigma: f64,
    pub flows: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<Time>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub senders: Option<HostSet>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receivers: Option<HostSet>,
    /// Disjoint groups of hosts (data centers, say) that hold every sender and receiver
    /// of an `all_to_all` or `many_to_few` workload, with `remote_fraction`: a flow's
    /// receiver is drawn from the receivers outside its sender's site with probability
    /// `remote_fraction`, else from those in it. Empty: receivers are drawn from all.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sites: Vec<HostSet>,
    /// The probability that a flow's receiver is in another site than its sender
    /// (`sites`), 0 to 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_fraction: Option<f64>,
    pub receiver: i64,
    pub size: Bytes,
    pub start: Time,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period: Option<Time>,
    pub repeats: u32,
    /// Senders per round of a `fan_in` workload. Left out of the resolved scenario at
    /// its default, so that the run keys of the other patterns do not depend on it.
    #[serde(skip_serializing_if = "is_default_fan_in")]
    pub fan_in: u32,
    /// With it, each round's fan-in is drawn uniformly from `fan_in` to this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fan_in_max: Option<u32>,
    #[serde(skip_serializing_if = "is_fixed_size")]
    pub fan_in_sizes: FanInSizes,
    pub rate: Rate,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<Time>,
    pub pacing: Pacing,
    /// The transport of the flows (not of `udp`).
    pub transport: FlowTransport,
    pub priority: u8,
    /// Classes drawn uniformly at random, one per flow, instead of `priority`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub priorities: Vec<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extra: Vec<Workload>,
}

const DEFAULT_FAN_IN: u32 = 16;

fn is_default_fan_in(fan_in: &u32) -> bool {
    *fan_in == DEFAULT_FAN_IN
}

fn is_fixed_size(sizes: &FanInSizes) -> bool {
    *sizes == FanInSizes::Size
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            pattern: Pattern::AllToAll,
            cdf: "websearch".into(),
            load: 0.6,
            load_on: LoadOn::Access,
            arrival: Arrival::Poisson,
            lognormal_sigma: 2.0,
            flows: 1000,
            duration: None,
            senders: None,
            receivers: None,
            sites: Vec::new(),
            remote_fraction: None,
            receiver: 0,
            size: Bytes(64_000),
            start: Time(0),
            period: None,
            repeats: 1,
            fan_in: DEFAULT_FAN_IN,
            fan_in_max: None,
            fan_in_sizes: FanInSizes::Size,
            rate: Rate(10_000_000_000),
            stop: None,
            pacing: Pacing::Host,
            transport: FlowTransport::Tcp,
            priority: 0,
            priorities: Vec::new(),
            trace: None,
            extra: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    pub seed: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_time: Option<Time>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample_interval: Option<Time>,
    pub size_buckets: Vec<Bytes>,
    pub fct_until: FctUntil,
    /// Writes each switch pool's time-weighted occupancy distribution
    /// (`occupancy.parquet`). Off by default and then absent from the resolved scenario,
    /// so runs that do not ask for it keep their bytes.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub occupancy_cdf: bool,
    /// The end of the window `[0, occupancy_until]` of `occupancy_cdf` (default: the
    /// whole run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occupancy_until: Option<Time>,
}

/// Where a TCP flow's completion time ends.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FctUntil {
    /// The receiver holds every byte.
    Delivered,
    /// The sender holds an acknowledgment for every byte: one ACK trip later, and a
    /// timeout later still when the last ACKs are lost. ns-2's traffic generator of the
    /// BCC, PIAS and LossPass papers ends flows here (`done_data`).
    Acked,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            seed: 1,
            stop_time: None,
            sample_interval: None,
            size_buckets: vec![Bytes(100_000), Bytes(10_000_000)],
            fct_until: FctUntil::Delivered,
            occupancy_cdf: false,
            occupancy_until: None,
        }
    }
}

impl Scenario {
    /// The largest packet any transport of the scenario sends, headers included: the MTU
    /// in PFC's headroom (lossless-facts §1.3). Summed in u64: validation asks for it
    /// before it has checked the sizes.
    pub fn largest_packet(&self) -> u64 {
        let (tr, rdma) = (&self.transport, &self.rdma);
        let wide = |a: u32, b: u32| a as u64 + b as u64;
        [wide(tr.mss, tr.header), tr.ack_size as u64, wide(rdma.mtu, rdma.header), rdma.ack_size as u64]
            .into_iter()
            .max()
            .unwrap_or(0)
    }

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
        let fastest = self.fastest_link().0;
        let cap = Time(1_000_000);
        if fastest == 0 {
            return cap;
        }
        Time(crate::sim::serialization(bytes, fastest)).min(cap)
    }

    /// The rate of the fastest link (a star has no uplinks, whatever `uplink_rate` says).
    /// 0 for a topology that cannot be built, which validation refuses first.
    fn fastest_link(&self) -> Rate {
        match self.topology.kind {
            TopologyKind::Star => self.topology.link_rate,
            _ => self.topology.fastest_rate().unwrap_or_default(),
        }
    }

    /// Refuses the timer `key` (a full key path) set to `value` below `timer_floor(bytes)`,
    /// `what` saying what the floor is.
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
                self.fastest_link()
            ),
        ))
    }

    /// Refuses a timeout or `deadlock_after` below one largest packet's time (`timer_floor`).
    pub fn check_timeout(&self, key: &str, value: Time) -> Result<(), ScenarioError> {
        self.check_timer(key, value, self.largest_packet(), "the time of the largest packet")
    }

    /// The largest packet the scenario's workloads send, headers included, and the keys
    /// that size it: TCP's segments and ACKs for TCP flows, TCP's segments for UDP
    /// (which sends them), RDMA's packets and ACKs for RDMA flows. The least a buffer
    /// must hold.
    pub fn largest_packet_sent(&self) -> (u64, &'static str) {
        let (tr, rdma) = (&self.transport, &self.rdma);
        let tcp_data = (tr.mss as u64 + tr.header as u64, "transport.mss + transport.header");
        self.workloads()
            .flat_map(|w| match (w.pattern, w.transport) {
                (Pattern::Udp, _) => vec![tcp_data],
                (_, FlowTransport::Tcp) => vec![tcp_data, (tr.ack_size as u64, "transport.ack_size")],
                (_, FlowTransport::Rdma) => {
                    vec![
                        (rdma.mtu as u64 + rdma.header as u64, "rdma.mtu + rdma.header"),
                        (rdma.ack_size as u64, "rdma.ack_size"),
                    ]
                }
            })
            .max_by_key(|&(bytes, _)| bytes)
            .unwrap_or((0, ""))
    }

    /// Parses a scenario from TOML text; errors name the key path.
    pub fn from_toml(text: &str) -> Result<Scenario, ScenarioError> {
        let value: toml::Value = serde_path_to_error::deserialize(toml::Deserializer::new(text)).map_err(|e| {
            let path = e.path().to_string();
            ScenarioError::from_serde(path, e.into_inner().message())
        })?;
        // JSON has no NaN or infinity: converted, they would become null (and an optional
        // key's null reads as unset).
        if let Some((path, number)) = non_finite(&value, String::new()) {
            return Err(not_finite(path, &number));
        }
        Scenario::from_value(serde_json::to_value(value).expect("a TOML value of finite numbers is JSON"))
    }

    /// Parses a scenario from JSON text; errors name the key path.
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            // Python writes NaN and infinities as these words, which JSON does not have;
            // the error's column is at the word, or past the sign of "-Infinity".
            let line = text.lines().nth(inner.line().saturating_sub(1)).unwrap_or("");
            let column = inner.column().saturating_sub(1);
            let at = |start: usize| line.get(start..).unwrap_or("");
            let signed = column.checked_sub(1).is_some_and(|sign| at(sign).starts_with('-'));
            let word = match ["NaN", "Infinity"].into_iter().find(|w| at(column).starts_with(w)) {
                Some("Infinity") if signed => Some("-Infinity"),
                word => word,
            };
            if let Some(word) = word {
                return not_finite(if path == "." { String::new() } else { path }, word);
            }
            let message = inner.to_string();
            let message = message.find(" at line ").map_or(message.as_str(), |at| &message[..at]).to_string();
            ScenarioError::from_serde(path, &message)
        })?;
        Scenario::from_value(value)
    }

    /// Parses a scenario as written: old spellings are read as their new keys
    /// (`input_checks::upgrade`), then every table must be a table. An error inside a
    /// value written under an old key names that key.
    fn from_value(mut value: serde_json::Value) -> Result<Scenario, ScenarioError> {
        let upgrade = crate::input_checks::upgrade(&mut value)?;
        let as_written = |mut e: ScenarioError| {
            e.path = upgrade.as_written(&e.path);
            e
        };
        crate::presets::apply(&mut value)?;
        crate::input_checks::check_tables(&value).map_err(as_written)?;
        serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            as_written(point_to_the_other_transport(ScenarioError::from_serde(path, &e.into_inner().to_string())))
        })
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a scenario always serializes")
    }

    /// The scenario with its derived defaults filled in (what a run uses and what
    /// `scenario.json` shows): the classifier the scheduler implies, when none is set
    /// (`SwitchConfig::classifier`), and the ECN cut-off. TCP traffic whose transport reacts to ECN marks
    /// (DCTCP, ECN*) on a network where no marking rule is set at all gets the cut-off
    /// `switch.marking.cutoff.k = lambda x C x RTT` (BCC paper, section II-C; lambda = 0.72 for DCTCP,
    /// 1 for ECN*), C the host link rate (the fastest host link of a topology file) and RTT
    /// the base round trip of the longest path (`Topology::longest_path`) with one data
    /// packet and one ACK serialized per link. Without it DCTCP would never see a mark and
    /// behave as loss-based TCP filling the buffer. Fails only where the network must be
    /// built to know the path and cannot be (`net::build`).
    pub fn resolved(&self) -> Result<Scenario, ScenarioError> {
        let mut sc = self.clone();
        sc.switch.classifier = Some(sc.switch.classifier());
        let tr = &sc.transport;
        let (sw, host) = (&sc.switch, &sc.host);
        let Some(lambda) = tr.cc.ecn_lambda() else { return Ok(sc) };
        let marks = !sw.marking.is_empty() || host.ecn_k.0 > 0;
        let tcp = sc.workloads().any(|w| w.pattern != Pattern::Udp && w.transport == FlowTransport::Tcp);
        if marks || !tr.ect() || !tcp {
            return Ok(sc);
        }
        let (data, ack) = (tr.mss as u64 + tr.header as u64, tr.ack_size as u64);
        let round_trip = |rate: Rate, delay: Time| 2 * delay.0 + crate::sim::serialization(data + ack, rate.0);
        let rtt_ps: u64 =
            sc.topology.longest_path(round_trip)?.iter().map(|&(rate, delay)| round_trip(rate, delay)).sum();
        let bdp = sc.topology.host_rate()?.0 as f64 / 8.0 * rtt_ps as f64 / crate::sim::PS_PER_S as f64;
        let k = Bytes((lambda * bdp).round().max(1.0) as u64);
        sc.switch.marking.set(MarkerConfig::Cutoff(CutoffConfig { k }));
        Ok(sc)
    }

    /// Why the scenario's RDMA flows (if any) are not kept lossless: no flow control, or
    /// RDMA classes outside PFC's or DSH's `classes`; `None` when they are (BFC guards
    /// its flows by its own backpressure).
    pub fn rdma_not_lossless(&self) -> Option<String> {
        let lossless = self.switch.flow_control.paused_classes()?;
        let mut exposed: Vec<u8> = self
            .workloads()
            .filter(|w| w.transport == FlowTransport::Rdma && w.pattern != Pattern::Udp)
            .flat_map(|w| w.classes().iter().map(|&p| class_of(p)))
            .filter(|c| !lossless.contains(c))
            .collect();
        exposed.sort_unstable();
        exposed.dedup();
        match (exposed.is_empty(), lossless.is_empty()) {
            (true, _) => None,
            (false, true) => Some("switch.flow_control.kind = \"lossy\": nothing keeps the fabric lossless".into()),
            (false, false) => {
                Some(format!("their classes {exposed:?} are not in switch.flow_control.classes = {lossless:?}"))
            }
        }
    }

    /// Checks every value against its accepted range; returns warnings for legal but
    /// suspicious settings.
    pub fn validate(&self) -> Result<Warnings, ScenarioError> {
        let mut warnings = Vec::new();
        let err = |path: &str, msg: String| Err(ScenarioError::new(path, msg));
        let hosts = self.topology.check()?;
        self.check_round_trip(&mut warnings)?;
        let s = &self.switch;
        if s.queues == 0 || s.queues > MAX_QUEUES {
            return err("switch.queues", format!("{} is not accepted (accepted: 1 to {MAX_QUEUES})", s.queues));
        }
        if s.ports_per_pool == 0 {
            return err("switch.ports_per_pool", "must be at least 1".into());
        }
        let alphas = s.alpha.values();
        if alphas.is_empty() {
            return err("switch.alpha", "the list is empty (accepted: a number > 0 or one per queue)".into());
        }
        for a in &alphas {
            if !(a.is_finite() && *a > 0.0) {
                return err("switch.alpha", format!("{a} is not accepted (accepted: a number > 0)"));
            }
        }
        if alphas.len() > 1 && alphas.len() != s.queues as usize {
            return err(
                "switch.alpha",
                format!(
                    "has {} values but switch.queues = {} (accepted: one value, or one per queue)",
                    alphas.len(),
                    s.queues
                ),
            );
        }
        s.admission.validate("switch.admission", self, &mut warnings)?;
        s.scheduler.validate("switch.scheduler", self, &mut warnings)?;
        s.classifier().validate("switch.classifier", self, &mut warnings)?;
        s.flow_control.validate("switch.flow_control", self, &mut warnings)?;
        s.marking.validate("switch.marking", self, &mut warnings)?;
        // Packet and header sizes, each (key, value, least, most) in bytes.
        let sizes = |checks: &[(&str, u32, u32, u32)]| -> Result<(), ScenarioError> {
            match checks.iter().find(|&&(_, v, lo, hi)| !(lo..=hi).contains(&v)) {
                Some(&(path, v, lo, hi)) => {
                    Err(ScenarioError::new(path, format!("{v} is not accepted (accepted: {lo} to {hi} bytes)")))
                }
                None => Ok(()),
            }
        };
        let tr = &self.transport;
        sizes(&[("transport.mss", tr.mss, 1, 65_000), ("transport.header", tr.header, 0, 1000)])?;
        let rdma = &self.rdma;
        sizes(&[
            ("transport.ack_size", tr.ack_size, 1, 10_000),
            ("rdma.mtu", rdma.mtu, 1, 65_000),
            ("rdma.header", rdma.header, 0, 1000),
            ("rdma.ack_size", rdma.ack_size, 1, 10_000),
        ])?;
        // Buffers that cannot hold one packet of those the workloads send drop every one:
        // the run could never finish.
        let (sent, sent_keys) = self.largest_packet_sent();
        let packet = Bytes(sent);
        if self.host.nic_buffer < packet {
            return err(
                "host.nic_buffer",
                format!(
                    "{} cannot hold one packet of {packet} ({sent_keys}); accepted: at least {packet}",
                    self.host.nic_buffer
                ),
            );
        }
        for (node, buffer) in &s.buffer_of_node {
            // A key TOML could write bare is named bare, another in quotes.
            let bare = !node.is_empty() && node.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            let key =
                if bare { format!("switch.buffer_of_node.{node}") } else { format!("switch.buffer_of_node.{node:?}") };
            if node.parse::<u32>().is_err() {
                return err(
                    &key,
                    format!("{node:?} is not a node id (accepted: a whole number, the id of a switch as topology.failed_links names nodes)"),
                );
            }
            if *buffer < packet {
                return err(
                    &key,
                    format!("{buffer} cannot hold one packet of {packet} ({sent_keys}); accepted: at least {packet}"),
                );
            }
        }
        if s.buffer.is_none() && Bytes(s.pool_size.0 + s.reserved.0) < packet {
            return err(
                "switch.pool_size",
                format!(
                    "{} plus switch.reserved = {} cannot hold one packet of {packet} ({sent_keys}); accepted: \
                     together at least {packet}",
                    s.pool_size, s.reserved
                ),
            );
        }
        warnings.extend(crate::switch::mmu::unused_reserve_warning(self));
        rdma.cc.validate("rdma.cc", self, &mut warnings)?;
        rdma.cc.line_rate_warnings("rdma.cc", self, &mut warnings);
        rdma.validate(&mut warnings)?;
        let rdma_flows = self.workloads().any(|w| w.transport == FlowTransport::Rdma && w.pattern != Pattern::Udp);
        // Lossless packets are not WRED's to drop: the ACKs are safe where PFC or DSH
        // covers their class (the flows' own, or rdma.ack_priority's).
        let acks_lossless = || {
            self.rdma_not_lossless().is_none()
                && match (s.flow_control.paused_classes(), rdma.ack_priority) {
                    (None, _) => false,
                    (Some(lossless), Some(p)) => lossless.contains(&class_of(p)),
                    (Some(_), None) => true,
                }
        };
        if rdma_flows && s.ecn.non_ect == NonEct::Drop && !s.marking.rules().is_empty() && !acks_lossless() {
            warnings.push(
                "switch.ecn.non_ect = \"drop\" drops RDMA ACKs and NACKs (not ECN-capable) where a marking rule \
                 would mark them, and a connection that loses its last ACK never completes (RDMA has no \
                 retransmission timeout); set non_ect = \"pass\": ns3-datacenter's switches mark, never drop"
                    .into(),
            );
        }
        if let (true, Rto::After(rto)) = (rdma_flows, rdma.rto) {
            // One data packet out and its ACK back over every link of the longest route.
            let (data, ack) = (rdma.mtu as u64 + rdma.header as u64, rdma.ack_size as u64);
            let link = |rate: Rate, delay: Time| -> u64 { 2 * delay.0 + crate::sim::serialization(data + ack, rate.0) };
            let rtt: u64 = self.topology.longest_path(link)?.iter().map(|&(rate, delay)| link(rate, delay)).sum();
            if rto.0 < rtt {
                warnings.push(format!(
                    "rdma.rto: {rto} is shorter than the base round trip of the longest route ({:.3} us for a \
                     packet and its ACK): its senders go back to their first unacknowledged packet before an ACK \
                     can return, and resend what is on its way",
                    rtt as f64 / 1e6
                ));
            }
        }
        if rdma_flows && rdma.cc.reacts_to_marks() && s.marking.is_empty() && self.host.ecn_k.0 == 0 {
            warnings.push(format!(
                "rdma.cc: {} reacts to ECN marks, and no switch.marking rule (nor host.ecn_k) marks any: its \
                 connections run at line rate as with kind = \"none\" (TCP's ECN controllers get a default \
                 cut-off, RDMA's do not; ns3-datacenter's at 100 Gbps: [switch.marking.red] kmin = \"400KB\", \
                 kmax = \"1600KB\", pmax = 0.2, with [switch.ecn] non_ect = \"pass\")",
                rdma.cc.kind()
            ));
        }
        if tr.init_cwnd == 0 {
            return err("transport.init_cwnd", "must be at least 1 packet".into());
        }
        self.check_timeout("transport.rto_min", tr.rto_min)?;
        self.check_timeout("transport.rto_init", tr.rto_init)?;
        if let Rto::After(rto) = rdma.rto {
            self.check_timeout("rdma.rto", rto)?;
        }
        if tr.rto_max < tr.rto_min {
            return err("transport.rto_max", format!("{} is below transport.rto_min = {}", tr.rto_max, tr.rto_min));
        }
        if tr.dupack_threshold == 0 {
            return err("transport.dupack_threshold", "must be at least 1".into());
        }
        tr.cc.validate("transport.cc", self, &mut warnings)?;
        if tr.pias_thresholds.windows(2).any(|w| w[0] >= w[1]) || tr.pias_thresholds.first() == Some(&Bytes(0)) {
            return err("transport.pias_thresholds", "must be positive and increasing, e.g. [\"1MB\"]".into());
        }
        if tr.pias_thresholds.len() >= s.queues as usize && !s.scheduler.single_queue() {
            warnings.push(format!(
                "transport.pias_thresholds: {} thresholds make {} classes but switches have {} queues; the lowest classes share the last queue",
                tr.pias_thresholds.len(),
                tr.pias_thresholds.len() + 1,
                s.queues
            ));
        }
        if !tr.pias_thresholds.is_empty() && s.scheduler.single_queue() {
            warnings.push(
                "transport.pias_thresholds: tags have no effect with switch.scheduler.kind = \"fifo\" (one queue)"
                    .into(),
            );
        }
        if tr.max_cwnd.0 != 0 && tr.max_cwnd.0 < tr.mss as u64 {
            return err(
                "transport.max_cwnd",
                format!("{} is below one MSS ({} B); 0 means unlimited", tr.max_cwnd, tr.mss),
            );
        }
        self.workload.validate("workload", hosts, self, &mut warnings)?;
        if !self.workload.extra.is_empty() {
            for (i, w) in self.workload.extra.iter().enumerate() {
                let path = format!("workload.extra[{i}]");
                if !w.extra.is_empty() {
                    return err(&path, "extra workloads cannot nest further extra workloads".into());
                }
                w.validate(&path, hosts, self, &mut warnings)?;
            }
        }
        let r = &self.run;
        if r.stop_time == Some(Time(0)) {
            return err("run.stop_time", "must be positive".into());
        }
        if let Some(interval) = r.sample_interval.filter(|i| i.0 < 1_000) {
            return err("run.sample_interval", format!("{interval} is too short (accepted: 1ns or more)"));
        }
        if let Some(until) = r.occupancy_until {
            if !r.occupancy_cdf {
                return err(
                    "run.occupancy_until",
                    format!("{until} is set but run.occupancy_cdf is not (accepted: with occupancy_cdf = true)"),
                );
            }
            if until.0 == 0 {
                return err("run.occupancy_until", "must be positive (accepted: a time above 0, e.g. \"1ms\")".into());
            }
        }
        if r.size_buckets.len() != 2 || r.size_buckets[0] >= r.size_buckets[1] {
            return err("run.size_buckets", "must be two increasing sizes, e.g. [\"100KB\", \"10MB\"]".into());
        }
        let endless = self
            .workloads()
            .any(|w| w.pattern == Pattern::LongLived || (w.pattern == Pattern::Udp && w.stop.is_none()));
        if endless && r.stop_time.is_none() {
            return err("run.stop_time", "is required with long_lived traffic or udp without workload.stop".into());
        }
        Ok(warnings)
    }

    /// Refuses a topology whose longest route one packet and its ACK cannot cross and
    /// come back within Shoal's time limit (no flow could finish: a run would only reach
    /// the limit, hours later), and warns of one whose round trip is a second or more
    /// (datacenter round trips are microseconds: a unit mistake). The key named is the
    /// one that adds the most. A built-in kind's longest route is known without building
    /// the network (so a million hosts are refused at once); a file's links are judged
    /// one by one (a route's sum would need the routes).
    fn check_round_trip(&self, warnings: &mut Warnings) -> Result<(), ScenarioError> {
        const SECOND: u128 = crate::sim::PS_PER_S as u128;
        let packet = self.largest_packet();
        let link_round_trip =
            |rate: u64, delay: u64| 2 * (delay as u128 + crate::sim::serialization(packet, rate) as u128);
        let t = &self.topology;
        let (key, value, round_trip, what) = if t.kind == TopologyKind::File {
            let (net, ids) = crate::net::build_with_ids(t)?;
            let Some(slowest) = net.links.iter().max_by_key(|l| link_round_trip(l.rate_bps, l.delay)) else {
                return Ok(());
            };
            // The lower node id first, as a file line may give it.
            let mut ends = [slowest.from, slowest.to];
            ends.sort_by_key(|&n| ids.id(n));
            let value = format!(
                "{}: the link between {} and {} ({}, {})",
                t.path.as_deref().unwrap_or_default(),
                ids.describe(ends[0]),
                ids.describe(ends[1]),
                Rate(slowest.rate_bps),
                Time(slowest.delay)
            );
            ("topology.path".to_string(), value, link_round_trip(slowest.rate_bps, slowest.delay), "over it alone")
        } else {
            // The route as if no link had failed: failures only lengthen it.
            let whole = Topology { failed_links: Vec::new(), ..t.clone() };
            let route = whole.longest_path(|rate, delay| (link_round_trip(rate.0, delay.0) / 2) as u64)?;
            let uplinks = route.len().saturating_sub(2) as u128;
            let ser = |rate: Rate| crate::sim::serialization(packet, rate.0) as u128;
            // Each key's part of the round trip: 2 ways over the route's links of it (the
            // uplinks take link_delay unless uplink_delay is set).
            let (host_delay_links, uplink_delay) = match t.uplink_delay {
                Some(d) => (2, d),
                None => (2 + uplinks, Time(0)),
            };
            let parts = [
                ("topology.link_delay", t.link_delay.to_string(), 2 * host_delay_links * t.link_delay.0 as u128),
                ("topology.link_rate", t.link_rate.to_string(), 4 * ser(t.link_rate)),
                ("topology.uplink_delay", uplink_delay.to_string(), 2 * uplinks * uplink_delay.0 as u128),
                ("topology.uplink_rate", t.uplink_rate.to_string(), 2 * uplinks * ser(t.uplink_rate)),
            ];
            let round_trip = parts.iter().map(|p| p.2).sum();
            let (key, value, _) = parts.into_iter().max_by_key(|p| p.2).expect("four parts");
            (key.to_string(), value, round_trip, "over the longest route")
        };
        let seconds = round_trip as f64 / SECOND as f64;
        let journey = format!("a round trip of {seconds:.3} s {what} for one {packet} B packet and its answer");
        if round_trip > crate::sim::TIME_LIMIT as u128 {
            return Err(ScenarioError::new(
                key,
                format!(
                    "{value} makes {journey}, beyond Shoal's time limit of {} s: no flow could finish (accepted: \
                     links whose round trips fit the limit; datacenter links take nanoseconds to microseconds)",
                    crate::sim::TIME_LIMIT / crate::sim::PS_PER_S
                ),
            ));
        }
        if round_trip >= SECOND {
            warnings.push(format!(
                "{key}: {value} makes {journey}; every flow takes at least that, where datacenter round trips \
                 take microseconds (check the units: a plain rate is bits per second)"
            ));
        }
        Ok(())
    }

    /// The primary workload followed by the extra ones.
    pub fn workloads(&self) -> impl Iterator<Item = &Workload> {
        std::iter::once(&self.workload).chain(self.workload.extra.iter())
    }

    /// The workloads (as `workloads`) with their key paths: `workload`, then
    /// `workload.extra[0]`, ...
    pub fn workload_paths(&self) -> impl Iterator<Item = (String, &Workload)> {
        self.workloads().enumerate().map(|(i, w)| match i {
            0 => ("workload".to_string(), w),
            _ => (format!("workload.extra[{}]", i - 1), w),
        })
    }
}

impl Workload {
    /// The classes the workload's flows may have: `priorities`, or else `priority`.
    pub fn classes(&self) -> &[u8] {
        match self.priorities.is_empty() {
            true => std::slice::from_ref(&self.priority),
            false => &self.priorities,
        }
    }

    /// `sites` and `remote_fraction`: both or neither, on a pattern of one flow per
    /// arrival; at least two sites, disjoint; a fraction from 0 to 1. Whether the sites
    /// hold the senders and receivers is checked where those are known
    /// (`workload::Sites::new`).
    fn validate_sites(&self, path: &str, hosts: u64) -> Result<(), ScenarioError> {
        let key = |k: &str| format!("{path}.{k}");
        let err = |k: &str, msg: String| Err(ScenarioError::new(key(k), msg));
        let fraction = match (self.sites.is_empty(), self.remote_fraction) {
            (true, None) => return Ok(()),
            (true, Some(_)) => {
                return err(
                    "remote_fraction",
                    format!("needs {} (accepted: with sites = [\"0-63\", \"64-127\"], say)", key("sites")),
                )
            }
            (false, None) => {
                return err("sites", format!("needs {} (accepted: a number from 0 to 1)", key("remote_fraction")))
            }
            (false, Some(f)) => f,
        };
        if !matches!(self.pattern, Pattern::AllToAll | Pattern::ManyToFew) {
            let pattern = serde_json::to_string(&self.pattern).expect("an enum always serializes");
            return err(
                "sites",
                format!("is not accepted with pattern = {pattern} (accepted: all_to_all, many_to_few)"),
            );
        }
        if !(0.0..=1.0).contains(&fraction) {
            return err("remote_fraction", format!("{fraction} is not accepted (accepted: a number from 0 to 1)"));
        }
        if self.sites.len() < 2 {
            return err(
                "sites",
                format!(
                    "has {} site (accepted: at least 2 groups of hosts, for a receiver in another)",
                    self.sites.len()
                ),
            );
        }
        let mut site_of: std::collections::HashMap<u32, usize> = Default::default();
        for (i, site) in self.sites.iter().enumerate() {
            let item = format!("{}[{i}]", key("sites"));
            let members = site.resolve(hosts, &item)?;
            if members.is_empty() {
                return Err(ScenarioError::new(item, "is empty (accepted: at least one host)"));
            }
            for h in members {
                if let Some(first) = site_of.insert(h, i) {
                    return Err(ScenarioError::new(
                        item,
                        format!("host {h} is in {}[{first}] too (accepted: disjoint sites)", key("sites")),
                    ));
                }
            }
        }
        Ok(())
    }

    fn validate(&self, path: &str, hosts: u64, sc: &Scenario, warnings: &mut Warnings) -> Result<(), ScenarioError> {
        let key = |k: &str| format!("{path}.{k}");
        let err = |k: &str, msg: String| Err(ScenarioError::new(key(k), msg));
        let senders = self.senders.as_ref().map(|s| s.resolve(hosts, &key("senders"))).transpose()?;
        let receivers = self.receivers.as_ref().map(|r| r.resolve(hosts, &key("receivers"))).transpose()?;
        if let (Pattern::ManyToFew, Some(senders), Some(receivers)) = (self.pattern, &senders, &receivers) {
            let both: Vec<String> = receivers.iter().filter(|r| senders.contains(r)).map(u32::to_string).collect();
            if !both.is_empty() {
                warnings.push(format!(
                    "{}: hosts {} are senders too; many_to_few usually keeps the few receivers apart from the senders",
                    key("receivers"),
                    both.join(", ")
                ));
            }
        }
        if self.priority as u32 >= 64 {
            return err("priority", format!("{} is not accepted (accepted: 0 to 63)", self.priority));
        }
        if let Some(p) = self.priorities.iter().find(|&&p| p >= 64) {
            return Err(ScenarioError::not_accepted(path, "priorities", p, "classes 0 to 63"));
        }
        if !self.priorities.is_empty() && self.priority != 0 {
            return err(
                "priorities",
                format!("is set together with priority = {} (accepted: one of the two)", self.priority),
            );
        }
        if !self.priorities.is_empty() && self.pattern == Pattern::Trace {
            return err(
                "priorities",
                "is not accepted with pattern = \"trace\" (a trace's flows take the class of its priority column, \
                 or workload.priority)"
                    .into(),
            );
        }
        self.validate_sites(path, hosts)?;
        if self.pattern == Pattern::FanIn {
            if self.size.0 == 0 {
                return err("size", "must be positive".into());
            }
            if self.fan_in == 0 {
                return Err(ScenarioError::not_accepted(path, "fan_in", 0, "1 or more senders per round"));
            }
            if let Some(max) = self.fan_in_max {
                if max < self.fan_in {
                    return Err(ScenarioError::not_accepted(
                        path,
                        "fan_in_max",
                        max,
                        &format!("at least fan_in = {}", self.fan_in),
                    ));
                }
            }
        }
        match self.pattern {
            Pattern::AllToAll | Pattern::ManyToFew | Pattern::FanIn => {
                if !(self.load.is_finite() && self.load > 0.0) {
                    return err(
                        "load",
                        format!("{} is not accepted (accepted: a number > 0, usually <= 1)", self.load),
                    );
                }
                if self.load > 1.0 {
                    warnings.push(format!("{}: {} is above 100%; the network cannot carry it", key("load"), self.load));
                }
                match self.duration {
                    Some(Time(0)) => return err("duration", "must be positive".into()),
                    None if self.flows == 0 => return err("flows", "must be at least 1 (or set duration)".into()),
                    _ => {}
                }
                if self.flows > 100_000_000 {
                    return err("flows", format!("{} is too many (accepted: up to 100,000,000)", self.flows));
                }
                if !(self.lognormal_sigma.is_finite() && self.lognormal_sigma > 0.0) {
                    return err(
                        "lognormal_sigma",
                        format!("{} is not accepted (accepted: a number > 0)", self.lognormal_sigma),
                    );
                }
                if self.load_on != LoadOn::Access && sc.topology.kind == TopologyKind::Star {
                    return err(
                        "load_on",
                        format!(
                            "{} needs a topology with core links (leaf_spine, fat_tree or dumbbell)",
                            serde_json::to_string(&self.load_on).expect("an enum always serializes")
                        ),
                    );
                }
            }
            Pattern::Incast => {
                if self.receiver < 0 || self.receiver as u64 >= hosts {
                    return err("receiver", format!("{} is out of range (accepted: 0..={})", self.receiver, hosts - 1));
                }
                if self.size.0 == 0 {
                    return err("size", "must be positive".into());
                }
                if self.repeats == 0 {
                    return err("repeats", "must be at least 1".into());
                }
                if self.repeats > 1 && self.period.is_none_or(|p| p.0 == 0) {
                    return err("period", "a positive period is required when repeats > 1".into());
                }
                let last = self.start.0 as u128 + (self.repeats as u128 - 1) * self.period.map_or(0, |p| p.0 as u128);
                if last > Time::MAX.0 as u128 {
                    return err(
                        "repeats",
                        format!(
                            "the last of {} rounds, {} apart, would start after {} (accepted: every round starts by {})",
                            self.repeats,
                            self.period.unwrap_or_default(),
                            Time::MAX,
                            Time::MAX
                        ),
                    );
                }
            }
            Pattern::Udp => {
                if self.rate.0 == 0 {
                    return err("rate", "must be positive".into());
                }
                if let Some(stop) = self.stop {
                    if stop <= self.start {
                        return err("stop", format!("{stop} is not after workload.start = {}", self.start));
                    }
                }
            }
            Pattern::LongLived => {}
            Pattern::Trace => {
                if self.trace.is_none() {
                    return err("trace", "pattern = \"trace\" needs a trace file".into());
                }
            }
        }
        Ok(())
    }
}

/// `e`, or for a congestion control set in the other transport's section (`hpcc` in
/// `transport.cc`, `newreno` in `rdma.cc`), `e` with where it belongs.
fn point_to_the_other_transport(mut e: ScenarioError) -> ScenarioError {
    let sections = [
        ("transport.cc", "rdma.cc", RdmaCcConfig::KINDS, "RDMA connections", "rdma"),
        ("rdma.cc", "transport.cc", CcConfig::KINDS, "TCP flows", "tcp"),
    ];
    for (section, other, kinds, flows, transport) in sections {
        if e.path != section && e.path != format!("{section}.kind") {
            continue;
        }
        let kind = e.message.strip_prefix("unknown kind \"").and_then(|rest| rest.split('"').next());
        if let Some(kind) = kind.filter(|k| kinds.contains(k)) {
            e.message.push_str(&format!(
                "; \"{kind}\" is a congestion control of {flows}: set it in [{other}] (kind = \"{kind}\"), \
                 for workloads with transport = \"{transport}\""
            ));
        }
    }
    e
}

/// The first number of `value` (at `path`) that is NaN or infinite: its path (as
/// `serde_path_to_error` writes paths) and the number as written.
fn non_finite(value: &toml::Value, path: String) -> Option<(String, String)> {
    match value {
        toml::Value::Float(x) if !x.is_finite() => Some((path, x.to_string())),
        toml::Value::Table(table) => table
            .iter()
            .find_map(|(key, v)| non_finite(v, if path.is_empty() { key.clone() } else { format!("{path}.{key}") })),
        toml::Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| non_finite(v, format!("{path}[{i}]"))),
        _ => None,
    }
}

/// The error for a NaN or infinite `number` at `path`.
fn not_finite(path: String, number: &str) -> ScenarioError {
    ScenarioError::new(path, format!("{number} is not accepted (accepted: a finite number)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_file_matches_default() {
        let parsed = Scenario::from_toml(DEFAULTS_TOML).unwrap();
        assert_eq!(parsed, Scenario::default());
        assert!(parsed.validate().is_ok());
    }

    #[test]
    fn workload_classes_are_checked() {
        let check = |toml: &str| Scenario::from_toml(toml).unwrap().validate().unwrap_err();
        let e = check("[workload]\npriorities = [1, 64]\n");
        assert_eq!((e.path.as_str(), e.message.contains("64 is not accepted")), ("workload.priorities", true));
        let e = check("[workload]\npriority = 2\npriorities = [1, 3]\n");
        assert_eq!((e.path.as_str(), e.message.contains("priority = 2")), ("workload.priorities", true));
        let e = check("[workload]\npattern = \"fan_in\"\nfan_in = 0\n");
        assert_eq!(e.path, "workload.fan_in");
        let e = check("[workload]\npattern = \"fan_in\"\nfan_in = 4\nfan_in_max = 3\n");
        assert_eq!(e.path, "workload.fan_in_max");
        assert_eq!(e.message, "3 is not accepted (accepted: at least fan_in = 4)");
        let e = check("[switch]\nqueues = 4\nscheduler = { kind = \"dwrr\", strict_queues = 4 }\n");
        assert_eq!(e.path, "switch.scheduler.strict_queues");
        assert_eq!(
            e.message,
            "4 is not accepted with switch.queues = 4 (accepted: 0 to 3: at least one queue takes part in the round robin)"
        );
        let e = check(
            "[switch]\nqueues = 4\nscheduler = \"dwrr\"\nclassifier = { kind = \"flow_hash\", first_queue = 4 }\n",
        );
        assert_eq!(e.path, "switch.classifier.first_queue");
        assert!(e.message.ends_with("(accepted: 0 to 3: at least one queue for the flows)"), "{e}");
    }

    #[test]
    fn unknown_key_names_path() {
        let e = Scenario::from_toml("[switch.ecnn]\nk = 1\n").unwrap_err();
        assert!(e.to_string().contains("switch"), "{e}");
        assert!(e.message.contains("ecnn"), "{e}");
    }

    #[test]
    fn json_syntax_errors_name_the_path() {
        let e = Scenario::from_json(r#"{"topology": {"kind": "star"}, "run": Infinity}"#).unwrap_err();
        assert_eq!(e.path, "run");
    }

    #[test]
    fn bad_unit_names_path() {
        let e = Scenario::from_toml("[topology]\nlink_rate = \"100Gbs\"\n").unwrap_err();
        assert_eq!(e.path, "topology.link_rate");
    }

    #[test]
    fn core_loads_need_core_links() {
        for (value, name) in [(LoadOn::Core, "\"core\""), (LoadOn::CoreNominal, "\"core_nominal\"")] {
            let mut sc = Scenario::default();
            sc.workload.load_on = value;
            let e = sc.validate().unwrap_err();
            assert_eq!(e.path, "workload.load_on");
            assert!(e.message.starts_with(&format!("{name} needs a topology with core links")), "{e}");
        }
    }

    #[test]
    fn ecn_transports_without_marking_get_lambda_c_rtt() {
        // Default star: two 1 us links at 100 Gbps; per link a 1,514 B packet and a 64 B
        // ACK take 126.24 ns, so RTT = 2 x (2 us + 126.24 ns) = 4.25248 us; C x RTT =
        // 12.5 GB/s x 4.25248 us = 53,156 B; DCTCP's lambda 0.72 gives 38,272.3 B.
        let cutoff = |sc: &Scenario| match sc.resolved().unwrap().switch.marking.rules() {
            [MarkerConfig::Cutoff(c)] => Some(c.k),
            _ => None,
        };
        let sc = Scenario::default();
        assert_eq!(cutoff(&sc), Some(Bytes(38_272)));
        let mut ecn_star = sc.clone();
        ecn_star.transport.cc = CcConfig::EcnStar(Default::default());
        assert_eq!(cutoff(&ecn_star), Some(Bytes(53_156)));
        // Leaf-spine, 10 Gbps hosts, 40 Gbps uplinks, 2 us links, host-leaf-spine-leaf-host:
        // RTT = 2 x (4 us + 1,262.4 ns) + 2 x (4 us + 315.6 ns) = 19.156 us; 1.25 GB/s x
        // 19.156 us = 23,945 B; x 0.72 = 17,240.4 B.
        let mut ls = sc.clone();
        ls.topology = Topology {
            kind: TopologyKind::LeafSpine,
            link_rate: Rate(10_000_000_000),
            uplink_rate: Rate(40_000_000_000),
            link_delay: Time(2_000_000),
            ..Topology::default()
        };
        assert_eq!(cutoff(&ls), Some(Bytes(17_240)));
        // Any marking rule, a transport that ignores marks, non-ECT packets or no TCP
        // traffic: unchanged.
        let mut variants: Vec<Scenario> = vec![sc.clone(); 4];
        variants[0].workload.pattern = Pattern::Udp;
        variants[1].host.ecn_k = Bytes(1);
        variants[2].transport.cc = CcConfig::NewReno(Default::default());
        variants[3].transport.ecn = EcnCapable::Off;
        for kind in MarkerConfig::KINDS {
            let mut v = sc.clone();
            v.switch.marking.set(MarkerConfig::of_kind(kind).unwrap());
            variants.push(v);
        }
        for v in variants {
            let resolved = v.resolved().unwrap();
            assert_eq!(resolved.switch.marking, v.switch.marking);
        }
    }

    /// Failed links lengthen the longest route, and with it the derived cut-off: leaf 0
    /// (node 12) without spine 0 (node 15) and leaf 1 (node 13) without spine 1 (node 16)
    /// reach each other through leaf 2 and both spines, 6 links instead of 4.
    /// A host set of the wrong type says what a host set is, under its key.
    #[test]
    fn a_bad_host_set_names_the_accepted_forms() {
        let err = Scenario::from_toml("[workload]\npattern = \"many_to_few\"\nsenders = 2\n").unwrap_err().to_string();
        assert!(err.contains("workload.senders") && err.contains("a set of hosts"), "{err}");
    }

    #[test]
    fn failed_links_lengthen_the_longest_path() {
        let topology =
            Topology { kind: TopologyKind::LeafSpine, leaves: 3, spines: 2, hosts_per_leaf: 4, ..Topology::default() };
        let mut sc = Scenario { topology, ..Scenario::default() };
        let hops = |sc: &Scenario| sc.topology.longest_path(|_, d| d.0).unwrap().len();
        let k = |sc: &Scenario| match sc.resolved().unwrap().switch.marking.rules() {
            [MarkerConfig::Cutoff(c)] => c.k.0,
            other => panic!("{other:?}"),
        };
        let intact = sc.clone();
        sc.topology.failed_links = vec![[12, 15], [13, 16]];
        assert_eq!((hops(&intact), hops(&sc)), (4, 6));
        // Every link the same: the round trip grows by half (each K rounded once).
        assert!((k(&sc) as f64 - k(&intact) as f64 * 1.5).abs() <= 1.0, "{} {}", k(&sc), k(&intact));
    }

    #[test]
    fn host_sets() {
        let s = HostSet::Text("0-3, 7".into());
        assert_eq!(s.resolve(8, "x").unwrap(), vec![0, 1, 2, 3, 7]);
        assert!(s.resolve(7, "x").is_err());
        assert!(HostSet::Text("3-1".into()).resolve(8, "x").is_err());
    }
}
