//! Selective acknowledgment (RFC 2018) bookkeeping, in segments: the receiver's record of
//! what arrived out of order, and the sender's scoreboard of what the receiver reported.
//!
//! An ACK carries one SACK block: the contiguous run of out-of-order segments that holds
//! the segment which triggered it. That is the first block RFC 2018 requires; a real ACK
//! repeats up to three older blocks as well, which only matters when ACKs are lost (the
//! cumulative ACK still covers them once the holes are filled).

use std::collections::{BTreeMap, VecDeque};

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

/// The sender's record of SACKed segments: one bit per segment, from the word of the
/// cumulative ACK (`forget_below`) to the highest SACKed segment. Segments below the
/// cumulative ACK are never read again, so their words are dropped and the bitmap spans
/// the outstanding window, not the flow: a bitmap of the whole flow would reserve 512 MB
/// of address space for a long-lived flow's 2^32 segments.
///
/// Invariant: `words[i]` holds segments `(first_word + i) * 64 ..` and ends no earlier
/// than needed to hold every SACKed segment at or above `first_word * 64`; a segment
/// below `first_word * 64` reads as not SACKed (callers read only at or above the
/// cumulative ACK).
#[derive(Debug, Default)]
pub struct Scoreboard {
    words: VecDeque<u64>,
    /// The word of `words[0]`: segments below `first_word * 64` are forgotten.
    first_word: u32,
    /// One past the highest SACKed segment (0 = none).
    pub high_sacked: u32,
}

impl Scoreboard {
    /// Records the segments of block `b` of a flow of `segments` segments.
    #[inline(always)]
    pub fn mark(&mut self, b: SackBlock, segments: u32) {
        if b.len == 0 {
            return;
        }
        let end = (b.start + b.len as u32).min(segments);
        // A stale block below the cumulative ACK sets nothing anyone reads.
        let mut s = b.start.max(self.first_word * 64);
        if s < end {
            let last_word = ((end - 1) / 64 - self.first_word) as usize;
            if self.words.len() <= last_word {
                self.words.resize(last_word + 1, 0);
            }
        }
        while s < end {
            let bit = s % 64;
            let n = (64 - bit).min(end - s);
            let mask = if n == 64 { u64::MAX } else { ((1u64 << n) - 1) << bit };
            self.words[(s / 64 - self.first_word) as usize] |= mask;
            s += n;
        }
        self.high_sacked = self.high_sacked.max(end);
    }

    /// The cumulative ACK reached `acked`: the words wholly below it are dropped.
    pub fn forget_below(&mut self, acked: u32) {
        let word = acked / 64;
        if word > self.first_word {
            let gone = ((word - self.first_word) as usize).min(self.words.len());
            self.words.drain(..gone);
            self.first_word = word;
        }
    }

    /// Bytes the bitmap holds allocated.
    pub fn allocated_bytes(&self) -> usize {
        self.words.capacity() * std::mem::size_of::<u64>()
    }

    /// The word holding segment `s` (0 where none is held).
    #[inline]
    fn word(&self, s: u32) -> u64 {
        debug_assert!(s >= self.first_word * 64, "segment {s} is below the cumulative ACK");
        (s / 64).checked_sub(self.first_word).and_then(|i| self.words.get(i as usize)).copied().unwrap_or(0)
    }

    pub fn is_sacked(&self, s: u32) -> bool {
        self.word(s) >> (s % 64) & 1 == 1
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
            n += (self.word(s) & mask).count_ones();
            s += k;
        }
        n
    }

    /// The lowest segment in `[from, to)` not SACKed.
    pub fn first_unsacked(&self, from: u32, to: u32) -> Option<u32> {
        let mut s = from;
        while s < to.min(self.high_sacked) {
            let holes = !self.word(s) >> (s % 64);
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

    #[test]
    fn the_scoreboard_of_an_endless_flow_spans_its_window_not_the_flow() {
        // A long-lived flow has u32::MAX segments; a bitmap of them all is 512 MB.
        let mut sb = Scoreboard::default();
        sb.mark(SackBlock { start: 10, len: 5 }, u32::MAX);
        assert!(sb.allocated_bytes() <= 1024, "{} B", sb.allocated_bytes());
        // Far into the flow, with the cumulative ACK following it.
        let far = 3_000_000_000;
        sb.forget_below(far);
        sb.mark(SackBlock { start: far + 100, len: 50 }, u32::MAX);
        assert!(sb.allocated_bytes() <= 1024, "{} B", sb.allocated_bytes());
        assert_eq!(sb.count(far, far + 1000), 50);
        assert_eq!(sb.first_unsacked(far + 100, far + 1000), Some(far + 150));
        assert_eq!(sb.nth_highest(2, far), Some(far + 148));
        // A stale block below the cumulative ACK is ignored but for high_sacked, as before.
        sb.mark(SackBlock { start: 5, len: 5 }, u32::MAX);
        assert_eq!(sb.count(far, far + 1000), 50);
    }

    /// The scoreboard answers as a bitmap of the whole flow does, at or above the
    /// cumulative ACK, whatever the order of marks and ACKs.
    #[test]
    fn the_scoreboard_reads_as_a_bitmap_of_the_whole_flow() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        for _ in 0..200 {
            let segments = rng.gen_range(1..2000u32);
            let mut sb = Scoreboard::default();
            let mut whole = vec![false; segments as usize];
            let mut high = 0;
            let mut una = 0;
            for _ in 0..50 {
                if rng.gen_bool(0.3) {
                    una = rng.gen_range(una..=segments);
                    sb.forget_below(una);
                }
                let start = rng.gen_range(0..segments);
                let len = rng.gen_range(0..300u16);
                sb.mark(SackBlock { start, len }, segments);
                let end = (start + len as u32).min(segments);
                if len > 0 {
                    whole[start as usize..end as usize].iter_mut().for_each(|b| *b = true);
                    high = high.max(end);
                }
                assert_eq!(sb.high_sacked, high);
                let from = rng.gen_range(una..=segments);
                let to = rng.gen_range(from..=segments);
                let count = (from..to.min(high)).filter(|&s| whole[s as usize]).count() as u32;
                assert_eq!(sb.count(from, to), count);
                let unsacked = (from..to).find(|&s| !whole[s as usize] || s >= high);
                assert_eq!(sb.first_unsacked(from, to), unsacked);
                for s in from..to {
                    assert_eq!(sb.is_sacked(s), whole[s as usize] && s < high, "segment {s}");
                }
                let n = rng.gen_range(1..4);
                let nth = (una..high).rev().filter(|&s| whole[s as usize]).nth(n as usize - 1);
                assert_eq!(sb.nth_highest(n, una), nth);
            }
        }
    }
}
