//! Counters and time-weighted statistics.

mod occupancy;
mod pauses;

pub use occupancy::{OccupancyDistribution, TimeIntegral, TimeWeighted};
pub use pauses::{PauseEvent, PauseKey, PauseLog, PauseTally};

use crate::net::Packet;
use std::collections::BTreeMap;

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// The sending host's NIC buffer was full.
    NicBuffer,
    /// The switch pool had no shared space left.
    PoolFull,
    /// The queue was at or above its dynamic threshold.
    DynamicThreshold,
    /// A marking rule fired on a packet that is not ECN-capable.
    MarkingDrop,
    /// Pushed out of the buffer by a higher-priority or shorter-queue arrival.
    Pushout,
    /// A lossless packet found its (ingress port, class) headroom full: PFC's headroom was
    /// too small for what was in flight when it paused the upstream.
    HeadroomOverflow,
    /// Corrupted on a lossy link (`topology.error_rate`) and dropped by the receiving end.
    LinkError,
    /// Sent into a link that was down (`topology.outages`), or on its wire when it went.
    LinkDown,
}

impl DropReason {
    pub const ALL: [DropReason; 8] = [
        DropReason::NicBuffer,
        DropReason::PoolFull,
        DropReason::DynamicThreshold,
        DropReason::MarkingDrop,
        DropReason::Pushout,
        DropReason::HeadroomOverflow,
        DropReason::LinkError,
        DropReason::LinkDown,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DropReason::NicBuffer => "nic_buffer",
            DropReason::PoolFull => "pool_full",
            DropReason::DynamicThreshold => "dynamic_threshold",
            DropReason::MarkingDrop => "marking_drop",
            DropReason::Pushout => "pushout",
            DropReason::HeadroomOverflow => "headroom_overflow",
            DropReason::LinkError => "link_error",
            DropReason::LinkDown => "link_down",
        }
    }
}

/// Network-wide packet counters. Conservation: `created = delivered + dropped + in the
/// network` at every instant.
#[derive(Default, Clone, Debug)]
pub struct Counters {
    pub created: u64,
    pub delivered: u64,
    pub dropped: [u64; DropReason::ALL.len()],
    pub bytes_dropped: u64,
    /// Packets offered to a switch queue, once per hop.
    pub switch_arrivals: u64,
    /// Control frames put on a link by a node's flow control, and taken off at the far
    /// end. They are not packets: `created` and `delivered` leave them out.
    pub frames_sent: u64,
    pub frames_received: u64,
    /// Control frames lost to corruption on a lossy link.
    pub frames_corrupted: u64,
    /// Control frames lost on a link that was down.
    pub frames_lost: u64,
    /// Frames that found another still waiting on their link, so waited for more than
    /// the packet on the wire: where classes toggle faster than frames leave (48 B ACKs
    /// can toggle one every 3.84 ns, a 64 B frame takes 5.12 ns at 100 Gbps), a PAUSE
    /// waits behind the backlog, longer than headroom sized by eta allows for.
    pub frames_queued_behind: u64,
    /// Packets of a lossless class dropped, for any reason, at a switch or at a NIC
    /// (whose buffer is lossless too when a switch holds the class lossless): 0 is PFC's
    /// promise.
    pub lossless_drops: u64,
    pub data_packets_sent: u64,
    /// Packets with payload dropped at switches (every reason but a full sending NIC and a
    /// link's corruption): the numerator of loss per data packet, which ACK drops would
    /// inflate on fabrics where ACKs share the congested queues.
    pub switch_data_dropped: u64,
    /// Packets marked CE (each once).
    pub ecn_marks: u64,
    /// Data packets that reached their destination after a packet their flow sent later
    /// (counted where the switches may split flows).
    pub packets_reordered: u64,
    /// Times each rule fired (a packet may be marked by several), by `MarkRule` index.
    pub marks_by_rule: [u64; MarkRule::ALL.len()],
}

impl Counters {
    /// Adds `other`'s counts (another partition's of the same run).
    pub fn add(&mut self, other: &Counters) {
        let Counters {
            created,
            delivered,
            dropped,
            bytes_dropped,
            switch_arrivals,
            frames_sent,
            frames_received,
            frames_corrupted,
            frames_lost,
            frames_queued_behind,
            lossless_drops,
            data_packets_sent,
            switch_data_dropped,
            ecn_marks,
            packets_reordered,
            marks_by_rule,
        } = other;
        self.created += created;
        self.delivered += delivered;
        self.dropped.iter_mut().zip(dropped).for_each(|(a, b)| *a += b);
        self.bytes_dropped += bytes_dropped;
        self.switch_arrivals += switch_arrivals;
        self.frames_sent += frames_sent;
        self.frames_received += frames_received;
        self.frames_corrupted += frames_corrupted;
        self.frames_lost += frames_lost;
        self.frames_queued_behind += frames_queued_behind;
        self.lossless_drops += lossless_drops;
        self.data_packets_sent += data_packets_sent;
        self.switch_data_dropped += switch_data_dropped;
        self.packets_reordered += packets_reordered;
        self.ecn_marks += ecn_marks;
        self.marks_by_rule.iter_mut().zip(marks_by_rule).for_each(|(a, b)| *a += b);
    }
}

/// Which kind of rule marked a packet (counted separately).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkRule {
    /// Per-queue (or per-port) ECN on the packet's queue (or port).
    Queue,
    /// Shared-buffer ECN on the packet's pool.
    SharedBuffer,
    /// The cut-off of a sending host's NIC queue (`host.ecn_k`).
    HostNic,
}

impl MarkRule {
    pub const ALL: [MarkRule; 3] = [MarkRule::Queue, MarkRule::SharedBuffer, MarkRule::HostNic];

    pub fn name(self) -> &'static str {
        match self {
            MarkRule::Queue => "queue",
            MarkRule::SharedBuffer => "shared_buffer",
            MarkRule::HostNic => "host_nic",
        }
    }
}

/// The counters schemes keep of their own, by section of the run's counters (the
/// scheme's name) and key, summed over the nodes that run the scheme.
#[derive(Debug, Default)]
pub struct SchemeCounters(pub BTreeMap<&'static str, BTreeMap<&'static str, u64>>);

impl SchemeCounters {
    /// Adds `value` to `key` of `section` (both created at 0 when new).
    pub fn add(&mut self, section: &'static str, key: &'static str, value: u64) {
        *self.0.entry(section).or_default().entry(key).or_default() += value;
    }
}

impl Counters {
    pub fn drop(&mut self, reason: DropReason, pkt: &Packet) {
        self.dropped[reason as usize] += 1;
        self.bytes_dropped += pkt.size as u64;
        if !matches!(reason, DropReason::NicBuffer | DropReason::LinkError | DropReason::LinkDown)
            && pkt.kind.carries_payload()
        {
            self.switch_data_dropped += 1;
        }
    }

    pub fn total_dropped(&self) -> u64 {
        self.dropped.iter().sum()
    }

    /// Drops at switches (every reason but a full sending NIC and a link's corruption).
    pub fn switch_dropped(&self) -> u64 {
        self.total_dropped()
            - self.dropped[DropReason::NicBuffer as usize]
            - self.dropped[DropReason::LinkError as usize]
    }
}
