//! Selective acknowledgment (RFC 2018) bookkeeping, in segments: the receiver's record of
//! what arrived out of order, and the sender's scoreboard of what the receiver reported.
//!
//! An ACK carries one SACK block: the contiguous run of out-of-order segments that holds
//! the segment which triggered it. That is the first block RFC 2018 requires; a real ACK
//! repeats up to three older blocks as well, which only matters when ACKs are lost (the
//! cumulative ACK still covers them once the holes are filled).

use std::collections::BTreeMap;

/// A SACK block `[start, start + len)`; `len == 0` means no block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlock {
    pub start: u32,
    pub len: u16,
}

/// The segments a receiver holds above its next expected one, as disjoint runs that
/// neither overlap nor touch: `start -> end` (exclusive).
#[derive(Debug, Default)]
pub struct OutOfOrder {
    runs: BTreeMap<u32, u32>,
}

impl OutOfOrder {
    /// Records segment `seg` (above the next expected one) and returns the run now holding
    /// it, clipped to what a block can carry (its top end kept).
    pub fn insert(&mut self, seg: u32) -> SackBlock {
        let mut start = seg;
        let mut end = seg + 1;
        if let Some((&s, &e)) = self.runs.range(..=seg).next_back() {
            if e > seg {
                return block(s, e); // a duplicate
            }
            if e == seg {
                start = s;
            }
        }
        if let Some(e) = self.runs.remove(&end) {
            end = e;
        }
        self.runs.insert(start, end);
        block(start, end)
    }

    /// Removes the run starting at `seg` if there is one, returning its end: the receiver
    /// filled the hole below it.
    pub fn take_run_at(&mut self, seg: u32) -> Option<u32> {
        self.runs.remove(&seg)
    }
}

fn block(start: u32, end: u32) -> SackBlock {
    let len = (end - start).min(u16::MAX as u32);
    SackBlock { start: end - len, len: len as u16 }
}

/// The sender's record of SACKed segments: one bit per segment of the flow, allocated on
/// the first report. Bits below the cumulative ACK are never read again.
#[derive(Debug, Default)]
pub struct Scoreboard {
    words: Vec<u64>,
    /// One past the highest SACKed segment (0 = none).
    pub high_sacked: u32,
}

impl Scoreboard {
    pub fn mark(&mut self, b: SackBlock, segments: u32) {
        if b.len == 0 {
            return;
        }
        if self.words.is_empty() {
            self.words = vec![0; segments.div_ceil(64) as usize];
        }
        let end = (b.start + b.len as u32).min(segments);
        let mut s = b.start;
        while s < end {
            let bit = s % 64;
            let n = (64 - bit).min(end - s);
            let mask = if n == 64 { u64::MAX } else { ((1u64 << n) - 1) << bit };
            self.words[(s / 64) as usize] |= mask;
            s += n;
        }
        self.high_sacked = self.high_sacked.max(end);
    }

    pub fn is_sacked(&self, s: u32) -> bool {
        self.words.get((s / 64) as usize).is_some_and(|w| w >> (s % 64) & 1 == 1)
    }

    /// SACKed segments in `[from, to)`.
    pub fn count(&self, from: u32, to: u32) -> u32 {
        let to = to.min(self.high_sacked);
        let mut n = 0;
        let mut s = from;
        while s < to {
            let bit = s % 64;
            let k = (64 - bit).min(to - s);
            let mask = if k == 64 { u64::MAX } else { ((1u64 << k) - 1) << bit };
            n += (self.words[(s / 64) as usize] & mask).count_ones();
            s += k;
        }
        n
    }

    /// The lowest segment in `[from, to)` not SACKed.
    pub fn first_unsacked(&self, from: u32, to: u32) -> Option<u32> {
        let mut s = from;
        while s < to.min(self.high_sacked) {
            let holes = !self.words[(s / 64) as usize] >> (s % 64);
            if holes != 0 {
                let found = s + holes.trailing_zeros();
                return (found < to).then_some(found);
            }
            s = (s / 64 + 1) * 64;
        }
        (s < to).then_some(s)
    }

    /// The `n`-th highest SACKed segment (n >= 1), if at least `n` are SACKed at or above
    /// `floor`. RFC 6675's IsLost(s) holds for an unSACKed `s` exactly when `s` lies below
    /// the DupThresh-th highest SACKed segment.
    pub fn nth_highest(&self, n: u32, floor: u32) -> Option<u32> {
        let mut left = n;
        let mut s = self.high_sacked;
        while s > floor {
            s -= 1;
            if self.is_sacked(s) {
                left -= 1;
                if left == 0 {
                    return Some(s);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_merge_and_blocks_hold_the_arrival() {
        let mut ooo = OutOfOrder::default();
        assert_eq!(ooo.insert(5), SackBlock { start: 5, len: 1 });
        assert_eq!(ooo.insert(7), SackBlock { start: 7, len: 1 });
        // 6 joins both neighbours into one run.
        assert_eq!(ooo.insert(6), SackBlock { start: 5, len: 3 });
        assert_eq!(ooo.insert(6), SackBlock { start: 5, len: 3 });
        assert_eq!(ooo.take_run_at(5), Some(8));
        assert_eq!(ooo.take_run_at(5), None);
    }

    #[test]
    fn scoreboard_counts_across_words() {
        let mut sb = Scoreboard::default();
        sb.mark(SackBlock { start: 60, len: 10 }, 200);
        sb.mark(SackBlock { start: 130, len: 2 }, 200);
        assert_eq!(sb.count(0, 200), 12);
        assert_eq!(sb.count(62, 131), 9);
        assert!(sb.is_sacked(69) && !sb.is_sacked(70));
        assert_eq!(sb.high_sacked, 132);
        assert_eq!(sb.nth_highest(3, 0), Some(69));
        assert_eq!(sb.nth_highest(3, 70), None);
        assert_eq!(sb.first_unsacked(60, 200), Some(70));
        assert_eq!(sb.first_unsacked(60, 70), None);
        assert_eq!(sb.first_unsacked(132, 200), Some(132));
    }
}
