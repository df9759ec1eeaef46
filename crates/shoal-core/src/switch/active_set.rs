//! The set of non-empty queues of a port, as a two-level bitmap: every operation, finding
//! the next member included, costs O(1) whatever the number of queues (up to
//! `MAX_QUEUES`).

/// The most queues a port can have: 64 words of 64 bits under one 64-bit summary.
pub const MAX_QUEUES: usize = 64 * 64;

/// A port with at most 64 queues (every switch but those with `switch.queues` above 64)
/// keeps the set in one word inline, so updating it touches nothing beyond the port.
#[derive(Clone, Debug)]
pub struct ActiveSet {
    /// With at most 64 queues: bit q is set when queue q is a member. With more: bit w is
    /// set when `words[w]` is not zero.
    bits: u64,
    /// With more than 64 queues, bit `q % 64` of word `q / 64` is set when queue q is a
    /// member (a thin pointer: the set stays two words).
    words: Option<Box<[u64; 64]>>,
}

impl ActiveSet {
    pub fn new(queues: usize) -> Self {
        assert!(queues <= MAX_QUEUES, "a port has at most {MAX_QUEUES} queues");
        ActiveSet { bits: 0, words: (queues > 64).then(|| Box::new([0; 64])) }
    }

    #[inline]
    pub fn insert(&mut self, q: usize) {
        match &mut self.words {
            None => self.bits |= 1 << q,
            Some(words) => {
                words[q / 64] |= 1 << (q % 64);
                self.bits |= 1 << (q / 64);
            }
        }
    }

    #[inline]
    pub fn remove(&mut self, q: usize) {
        match &mut self.words {
            None => self.bits &= !(1 << q),
            Some(words) => {
                let w = &mut words[q / 64];
                *w &= !(1 << (q % 64));
                if *w == 0 {
                    self.bits &= !(1 << (q / 64));
                }
            }
        }
    }

    #[inline]
    pub fn contains(&self, q: usize) -> bool {
        match &self.words {
            None => q < 64 && self.bits & (1 << q) != 0,
            Some(words) => words[q / 64] & (1 << (q % 64)) != 0,
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bits == 0
    }

    /// The members outside `mask` (bit q for queue q), for a port of at most 64 queues:
    /// the queues a scheduler may serve while those of `mask` are paused.
    #[inline]
    pub fn without(&self, mask: u64) -> ActiveSet {
        assert!(self.words.is_none(), "pauses apply to ports of at most 64 queues");
        ActiveSet { bits: self.bits & !mask, words: None }
    }

    /// The members as a mask (bit q for queue q), for a port of at most 64 queues.
    #[inline]
    pub fn mask(&self) -> u64 {
        debug_assert!(self.words.is_none(), "a mask covers ports of at most 64 queues");
        self.bits
    }

    /// Whether a member lies outside `mask` (see `without`).
    #[inline]
    pub fn any_outside(&self, mask: u64) -> bool {
        debug_assert!(self.words.is_none() || mask == 0, "pauses apply to ports of at most 64 queues");
        // With more than 64 queues `bits` marks the non-empty words, and `mask` is 0.
        self.bits & !mask != 0
    }

    /// The lowest member.
    #[inline]
    pub fn first(&self) -> Option<usize> {
        if self.bits == 0 {
            return None;
        }
        let low = self.bits.trailing_zeros() as usize;
        match &self.words {
            None => Some(low),
            Some(words) => Some(low * 64 + words[low].trailing_zeros() as usize),
        }
    }

    /// The lowest member at or above `q`.
    #[inline]
    fn first_from(&self, q: usize) -> Option<usize> {
        let Some(words) = &self.words else {
            let above = if q >= 64 { 0 } else { self.bits & (u64::MAX << q) };
            return (above != 0).then(|| above.trailing_zeros() as usize);
        };
        let w = q / 64;
        if w >= words.len() {
            return None;
        }
        let in_word = words[w] & (u64::MAX << (q % 64));
        if in_word != 0 {
            return Some(w * 64 + in_word.trailing_zeros() as usize);
        }
        let later = if w + 1 >= 64 { 0 } else { self.bits & (u64::MAX << (w + 1)) };
        (later != 0).then(|| {
            let w = later.trailing_zeros() as usize;
            w * 64 + words[w].trailing_zeros() as usize
        })
    }

    /// The first member after `q` in cyclic order (`q` itself when it is the only one).
    #[inline]
    pub fn next_after(&self, q: usize) -> Option<usize> {
        self.first_from(q + 1).or_else(|| self.first())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Against a plain vector of flags, on random inserts and removals.
    #[test]
    fn agrees_with_a_scan() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(3);
        for queues in [1, 2, 63, 64, 65, 1000, MAX_QUEUES] {
            let mut set = ActiveSet::new(queues);
            let mut flags = vec![false; queues];
            for _ in 0..5000 {
                let q = rng.gen_range(0..queues);
                if rng.gen_bool(0.5) {
                    set.insert(q);
                    flags[q] = true;
                } else {
                    set.remove(q);
                    flags[q] = false;
                }
                let at = rng.gen_range(0..queues);
                let scan_next = (1..=queues).map(|d| (at + d) % queues).find(|&i| flags[i]);
                assert_eq!(set.next_after(at), scan_next, "{queues} queues, after {at}");
                assert_eq!(set.first(), flags.iter().position(|&f| f));
                assert_eq!(set.contains(at), flags[at]);
                assert_eq!(set.is_empty(), !flags.contains(&true));
            }
        }
    }
}
