//! Per-component random streams. Each component (a switch, a workload, ...) draws from its
//! own generator derived from the run seed and the component's name and index, so adding a
//! component does not reshuffle the draws of the others.

pub type Rng = rand_pcg::Pcg64Mcg;

/// SplitMix64 finalizer: a well-mixed 64-bit hash step.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `value` hashed with `key` into `0..n`, evenly: the high 32 bits of the mixed value
/// scaled by `n` (multiply-shift, no division). For `n` up to 2^32.
#[inline]
pub fn mix_below(value: u64, key: u64, n: u64) -> u64 {
    ((mix64(value ^ key) >> 32) * n) >> 32
}

/// The generator of component `index` of kind `component` under run seed `seed`.
pub fn stream(seed: u64, component: &str, index: u64) -> Rng {
    let mut h = mix64(seed);
    for b in component.bytes() {
        h = mix64(h ^ b as u64);
    }
    h = mix64(h ^ index);
    let lo = mix64(h ^ 0x5151);
    <Rng as rand::SeedableRng>::seed_from_u64(h ^ lo.rotate_left(17))
}
