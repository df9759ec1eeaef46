//! The payload of a per-flow pause frame (BFC, §3.6): a multistage bloom filter (Estan and Varghese) of the paused
//! virtual flows of one ingress link. The downstream switch keeps it as a counting filter,
//! a small counter per bit, so that resuming one flow leaves the bits another paused flow
//! shares; it sends the bits (counter > 0) upstream every half hop round trip. The
//! upstream pauses a physical queue whose head packet's flow matches on every stage.
//!
//! Shape: `bits` in `stages` equal stages, one hash per stage. The chance that a flow
//! that is not in a filter of `n` flows matches it is (1 - (1 - stages/bits)^n)^stages
//! (`BloomShape::false_positive_rate`).

use crate::sim::mix_below;

/// One hash key per stage; stages beyond the list reuse it with the stage mixed in.
const STAGE_KEYS: [u64; 4] =
    [0x3c6e_f372_fe94_f82b, 0xa54f_f53a_5f1d_36f1, 0x510e_527f_ade6_82d1, 0x9b05_688c_2b3e_6c1f];

/// The size and stage count of a filter, as every switch of a network uses them.
///
/// Invariant: `stages >= 1` and `bits` is a positive multiple of `stages`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BloomShape {
    bits: u32,
    stages: u32,
}

impl BloomShape {
    /// A filter of `bytes` bytes in `stages` stages; `None` unless the bits split evenly
    /// into at least one stage.
    pub fn new(bytes: u32, stages: u32) -> Option<Self> {
        let bits = bytes.checked_mul(8)?;
        (stages >= 1 && bits > 0 && bits % stages == 0).then_some(BloomShape { bits, stages })
    }

    /// The bits of a filter.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// Its bytes on the wire.
    pub fn bytes(&self) -> u32 {
        self.bits / 8
    }

    /// The bit that `vfid` sets in `stage`: one hash per stage, into that stage's bits.
    #[inline]
    fn bit(&self, vfid: u32, stage: u32) -> u32 {
        let per_stage = self.bits / self.stages;
        let key = STAGE_KEYS[stage as usize % STAGE_KEYS.len()] ^ ((stage as u64) << 56);
        stage * per_stage + mix_below(vfid as u64, key, per_stage as u64) as u32
    }

    /// The chance that a flow outside a filter of `members` flows matches it.
    pub fn false_positive_rate(&self, members: u32) -> f64 {
        let stage_bits = self.bits as f64 / self.stages as f64;
        let set = 1.0 - (1.0 - 1.0 / stage_bits).powi(members as i32);
        set.powi(self.stages as i32)
    }
}

/// The bits a filter frame carries: what the upstream tests packets against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BloomFilter {
    shape: BloomShape,
    words: Box<[u64]>,
}

impl BloomFilter {
    /// An empty filter: nothing paused.
    pub fn empty(shape: BloomShape) -> Self {
        BloomFilter { shape, words: vec![0; shape.bits.div_ceil(64) as usize].into_boxed_slice() }
    }

    /// Whether `vfid` matches on every stage: the upstream must hold its packets.
    pub fn matches(&self, vfid: u32) -> bool {
        (0..self.shape.stages).all(|s| self.get(self.shape.bit(vfid, s)))
    }

    /// Whether no bit is set.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    fn get(&self, bit: u32) -> bool {
        self.words[(bit / 64) as usize] & (1 << (bit % 64)) != 0
    }

    fn set(&mut self, bit: u32, on: bool) {
        let (w, b) = ((bit / 64) as usize, bit % 64);
        if on {
            self.words[w] |= 1 << b;
        } else {
            self.words[w] &= !(1 << b);
        }
    }
}

/// The downstream's filter of the flows it has paused on one ingress link: a counter per
/// bit, so that a flow can be taken out without clearing another's bits.
///
/// Invariant: bit i of `filter` is set exactly when `counts[i] > 0`, and `counts[i]` is
/// the number of inserted flows (with repeats) that set bit i.
#[derive(Clone, Debug)]
pub struct CountingBloom {
    /// Wide enough for every flow a table can hold (at most 2^20 VFIDs x 4 ways and an
    /// overflow cache of 2^20), so a count never overflows.
    counts: Box<[u32]>,
    filter: BloomFilter,
    members: u32,
}

impl CountingBloom {
    pub fn new(shape: BloomShape) -> Self {
        CountingBloom {
            counts: vec![0; shape.bits as usize].into_boxed_slice(),
            filter: BloomFilter::empty(shape),
            members: 0,
        }
    }

    /// Adds a paused flow. A flow is inserted once per pause and removed once per resume.
    pub fn insert(&mut self, vfid: u32) {
        let shape = self.filter.shape;
        for s in 0..shape.stages {
            let bit = shape.bit(vfid, s);
            let count = &mut self.counts[bit as usize];
            *count += 1;
            self.filter.set(bit, true);
        }
        self.members += 1;
    }

    /// Takes out a flow inserted before; the bits other members set stay.
    pub fn remove(&mut self, vfid: u32) {
        let shape = self.filter.shape;
        for s in 0..shape.stages {
            let bit = shape.bit(vfid, s);
            let count = &mut self.counts[bit as usize];
            debug_assert!(*count > 0, "removing vfid {vfid}, which was not inserted");
            *count -= 1;
            if *count == 0 {
                self.filter.set(bit, false);
            }
        }
        self.members -= 1;
    }

    /// The flows inserted and not removed.
    pub fn members(&self) -> u32 {
        self.members
    }

    /// The bits to send upstream.
    pub fn filter(&self) -> &BloomFilter {
        &self.filter
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::stream;
    use rand::Rng;

    #[test]
    fn a_shape_needs_whole_stages() {
        assert_eq!(BloomShape::new(128, 4).map(|s| (s.bits(), s.bytes())), Some((1024, 128)));
        assert!(BloomShape::new(128, 0).is_none());
        assert!(BloomShape::new(0, 4).is_none());
        assert!(BloomShape::new(1, 3).is_none(), "8 bits do not split into 3 stages");
    }

    /// The check: 128 B, 4 hashes, 32 paused flows give about 1 in 5,200, not the
    /// preprint's "1 in 5 million" (lossless-facts §4.1).
    #[test]
    fn the_false_positive_rate_of_128_bytes_and_32_flows_is_about_one_in_5200() {
        let shape = BloomShape::new(128, 4).unwrap();
        let p = shape.false_positive_rate(32);
        assert!((1.0 / p - 5_200.0).abs() < 100.0, "1 in {:.0}", 1.0 / p);
    }

    /// Measured over random filters, the false-positive rate is the formula's, for the
    /// paper's 128 B and the 16 B of its Fig. 14, with 8 to 64 paused flows.
    #[test]
    fn measured_false_positives_match_the_formula() {
        let mut rng = stream(3, "test.bloom", 0);
        for (bytes, members) in [(16, 8), (16, 32), (128, 32), (128, 64)] {
            let shape = BloomShape::new(bytes, 4).unwrap();
            let (mut hits, mut trials) = (0u64, 0u64);
            for _ in 0..400 {
                let mut filter = CountingBloom::new(shape);
                let inside: Vec<u32> = (0..members).map(|_| rng.gen_range(0..1 << 20)).collect();
                for &v in &inside {
                    filter.insert(v);
                }
                assert!(inside.iter().all(|&v| filter.filter().matches(v)), "no false negative");
                for _ in 0..2_000 {
                    let v = rng.gen_range(1 << 20..1 << 21);
                    trials += 1;
                    hits += filter.filter().matches(v) as u64;
                }
            }
            let p = shape.false_positive_rate(members);
            let sigma = (p * (1.0 - p) / trials as f64).sqrt();
            let measured = hits as f64 / trials as f64;
            // The filters are 400 draws, so allow 6 sigma of the Bernoulli spread plus 10%.
            assert!(
                (measured - p).abs() < 6.0 * sigma + 0.1 * p,
                "{bytes} B, {members} flows: measured {measured:.2e}, formula {p:.2e}"
            );
        }
    }

    #[test]
    fn removing_a_flow_keeps_the_others_that_share_its_bits() {
        let shape = BloomShape::new(16, 4).unwrap();
        let mut filter = CountingBloom::new(shape);
        let flows: Vec<u32> = (0..40).collect();
        for &v in &flows {
            filter.insert(v);
        }
        for &gone in &flows[..20] {
            filter.remove(gone);
        }
        assert_eq!(filter.members(), 20);
        assert!(flows[20..].iter().all(|&v| filter.filter().matches(v)), "a kept flow stopped matching");
        for &v in &flows[20..] {
            filter.remove(v);
        }
        assert!(filter.filter().is_empty(), "every bit clears with the last flow");
        assert!(filter.counts.iter().all(|&c| c == 0));
    }
}
