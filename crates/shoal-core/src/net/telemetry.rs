//! In-band network telemetry: what a switch port reports about itself to packets that
//! ask for it (HPCC-style INT), and what a congestion controller reads back from an ACK.
//!
//! As in the reference (ns3-datacenter 6ddb4a4, `switch-node.cc:264-274`,
//! `network/utils/int-header.{h,cc}`), a switch stamps a data packet that carries a stack
//! when the packet leaves an egress port (at dequeue), and the receiver copies the stack
//! into its ACK or NACK. Records hold exact values by default; the reference's wire
//! format quantizes them (bytes in units of 128 B x `INT_MULTI`, queue lengths in units
//! of 80 B x `INT_MULTI`, 24-bit nanosecond timestamps), which `IntFormat` reproduces as
//! a setting.

use crate::sim::Ps;

/// One hop's record: the state of the egress port a packet left by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    /// Bytes queued at the port (all its queues) when the packet left, the packet itself
    /// no longer among them (the reference's `GetNBytesTotal` after the dequeue).
    pub queue_bytes: u64,
    /// Bytes the port had transmitted before this packet, ever (a running counter: two
    /// records of the same port give its throughput between them; the reference's
    /// `m_txBytes`, which counts every packet its queues sent, not the pause frames).
    pub tx_bytes: u64,
    /// Bytes the port had taken into its queues by then, ever, the packet itself included
    /// (what ns3-datacenter's PowerTCP reads instead of `tx_bytes`: `GetNBytesRxTotal`,
    /// `switch-node.cc:272`, `broadcom-egress-queue.cc:87`).
    pub rx_bytes: u64,
    /// When the record was taken: the packet's dequeue.
    pub timestamp: Ps,
    /// The port's link rate, bits per second.
    pub rate_bps: u64,
}

/// Hop slots of the reference's INT header (`IntHeader::maxHop`): its size on the wire
/// does not depend on how many hops were stamped.
pub const WIRE_HOP_SLOTS: u32 = 5;

/// Wire bytes of the reference's INT header: 8 B per hop slot and a 2 B hop count
/// (`int-header.cc:16-18`; 42 B).
pub const WIRE_STACK_BYTES: u32 = WIRE_HOP_SLOTS * 8 + 2;

/// Wire bytes of an RDMA ACK before padding: PPP 2 + IPv4 20 + the ACK header 12 (ports,
/// flags, priority group, sequence; `qbb-header.cc:101-104`). The reference pads the IPv4
/// payload to a 60 B Ethernet minimum less the 14 B MAC header (`rdma-hw.cc:342`): 48 B
/// without INT; with INT the header alone exceeds it, 34 + 42 = 76 B.
pub const ACK_UNPADDED_BYTES: u32 = 34;

/// How switches write their records (`rdma.int_values`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntValues {
    /// Exact values: bytes, picoseconds.
    #[default]
    Exact,
    /// The reference's wire format (`int-header.h`): a 24-bit nanosecond timestamp, the
    /// transmitted bytes in 20 bits of 128 B x `int_multi`, the queue in 17 bits of 80 B x
    /// `int_multi`; each field wraps (the queue by the bit field's truncation), and the
    /// two counters' differences are taken modulo their range (`GetTimeDelta`,
    /// `GetBytesDelta`).
    Quantized,
}

/// What a record looks like once written: the exact values, or the reference's
/// quantized fields read back in bytes and picoseconds (`IntValues`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntFormat {
    pub values: IntValues,
    /// `INT_MULTI`: the quantization units' multiplier (1 in ns3-datacenter's
    /// configurations; the HPCC repository's run.py uses bandwidth / 25 Gbps).
    pub multi: u64,
}

impl Default for IntFormat {
    fn default() -> Self {
        IntFormat { values: IntValues::Exact, multi: 1 }
    }
}

const TIME_BITS: u32 = 24;
const BYTES_BITS: u32 = 20;
const QUEUE_BITS: u32 = 17;
const BYTES_UNIT: u64 = 128;
const QUEUE_UNIT: u64 = 80;
const PS_PER_NS: u64 = 1000;

impl IntFormat {
    /// The record a port writes for its exact state `hop`: `hop` itself, or the quantized
    /// fields decoded (a whole number of nanoseconds and units, wrapped).
    #[inline]
    pub fn write(&self, hop: IntHop) -> IntHop {
        match self.values {
            IntValues::Exact => hop,
            IntValues::Quantized => {
                let (bytes_unit, queue_unit) = (BYTES_UNIT * self.multi, QUEUE_UNIT * self.multi);
                IntHop {
                    queue_bytes: (hop.queue_bytes / queue_unit % (1 << QUEUE_BITS)) * queue_unit,
                    tx_bytes: (hop.tx_bytes / bytes_unit % (1 << BYTES_BITS)) * bytes_unit,
                    rx_bytes: (hop.rx_bytes / bytes_unit % (1 << BYTES_BITS)) * bytes_unit,
                    timestamp: (hop.timestamp / PS_PER_NS % (1 << TIME_BITS)) * PS_PER_NS,
                    rate_bps: hop.rate_bps,
                }
            }
        }
    }

    /// The time between two records of a port, `earlier` then `later`.
    #[inline]
    pub fn time_between(&self, earlier: &IntHop, later: &IntHop) -> Ps {
        match self.values {
            IntValues::Exact => later.timestamp.saturating_sub(earlier.timestamp),
            IntValues::Quantized => wrapped(earlier.timestamp, later.timestamp, (1 << TIME_BITS) * PS_PER_NS),
        }
    }

    /// The bytes a port sent between two of its records.
    #[inline]
    pub fn bytes_between(&self, earlier: &IntHop, later: &IntHop) -> u64 {
        self.counter_between(earlier.tx_bytes, later.tx_bytes)
    }

    /// The bytes a port took into its queues between two of its records.
    #[inline]
    pub fn received_between(&self, earlier: &IntHop, later: &IntHop) -> u64 {
        self.counter_between(earlier.rx_bytes, later.rx_bytes)
    }

    fn counter_between(&self, earlier: u64, later: u64) -> u64 {
        match self.values {
            IntValues::Exact => later.saturating_sub(earlier),
            IntValues::Quantized => wrapped(earlier, later, (1 << BYTES_BITS) * BYTES_UNIT * self.multi),
        }
    }
}

/// `later - earlier` for a counter that wraps at `range`.
fn wrapped(earlier: u64, later: u64, range: u64) -> u64 {
    if later >= earlier {
        later - earlier
    } else {
        later + range - earlier
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference's fields, by hand: 1,000,000 B sent = 7,812.5 units of 128 B: 7,812
    /// units, 999,936 B; 12,345 B queued = 154 units of 80 B, 12,320 B; 20,000,000 B
    /// queued = 250,000 units, 250,000 - 131,072 = 118,928 after the 17-bit field's
    /// truncation, 9,514,240 B; 1.5 ns = 1 ns; 2^24 ns + 5 ns wraps to 5 ns, 10 ns after a
    /// record at 2^24 - 5 ns. With multi 4 the units are 512 B and 320 B.
    #[test]
    fn quantized_records_have_the_reference_units_and_wrap() {
        let q = IntFormat { values: IntValues::Quantized, multi: 1 };
        let hop = |queue_bytes, tx_bytes, timestamp| IntHop {
            queue_bytes,
            tx_bytes,
            rx_bytes: tx_bytes,
            timestamp,
            rate_bps: 1,
        };
        assert_eq!(q.write(hop(12_345, 1_000_000, 1_500)), hop(12_320, 999_936, 1_000));
        assert_eq!(q.write(hop(20_000_000, 0, 0)).queue_bytes, 9_514_240);
        let (before, after) = (q.write(hop(0, 0, ((1 << 24) - 5) * 1000)), q.write(hop(0, 0, ((1 << 24) + 5) * 1000)));
        assert_eq!(after.timestamp, 5_000);
        assert_eq!(q.time_between(&before, &after), 10_000);
        let range = (1 << 20) * 128;
        let (before, after) = (q.write(hop(0, range - 256, 0)), q.write(hop(0, range + 384, 0)));
        assert_eq!(q.bytes_between(&before, &after), 640);
        assert_eq!(q.received_between(&before, &after), 640);
        let q4 = IntFormat { values: IntValues::Quantized, multi: 4 };
        assert_eq!(q4.write(hop(12_345, 1_000_000, 0)), hop(12_160, 999_936, 0));
        let exact = IntFormat::default();
        assert_eq!(exact.write(hop(12_345, 1_000_000, 1_500)), hop(12_345, 1_000_000, 1_500));
    }
}
