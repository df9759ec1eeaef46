//! Human units for scenario files: rates, times and sizes.
//!
//! Rates are bits per second, times are picoseconds and sizes are bytes. Each accepts a
//! plain non-negative integer in its base unit or a string with a unit suffix
//! ("100Gbps", "2us", "720KB"). KB/MB/GB are powers of 1000; KiB/MiB/GiB powers of 1024.
//!
//! Units are read without regard to case ("100gbps", "3kB", "2US"), with one exception:
//! a capital B always means bytes and a small b bits, so a rate (bits per second)
//! refuses "GBps" and a size (bytes) refuses "3Mb", which a networking reader takes for
//! megabits (say "3MB"). Rates may also be written with "/s" ("2.5 Gb/s"). This is the one grammar of quantities: the
//! Python package (the advisor, analyses of stored scenarios) reads them through the
//! binding.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// Picoseconds per unit of time ("µs" and the Greek "μs" are "us").
const TIME_UNITS: &[(&str, f64)] =
    &[("ps", 1.0), ("ns", 1e3), ("us", 1e6), ("µs", 1e6), ("μs", 1e6), ("ms", 1e9), ("s", 1e12)];
/// Bits per second per unit of rate; the "/s" spellings are aliases.
const RATE_UNITS: &[(&str, f64)] = &[
    ("bps", 1.0),
    ("Kbps", 1e3),
    ("Mbps", 1e6),
    ("Gbps", 1e9),
    ("Tbps", 1e12),
    ("b/s", 1.0),
    ("Kb/s", 1e3),
    ("Mb/s", 1e6),
    ("Gb/s", 1e9),
    ("Tb/s", 1e12),
];
const SIZE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("KB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("TB", 1e12),
    ("PB", 1e15),
    ("KiB", 1024.0),
    ("MiB", 1048576.0),
    ("GiB", 1073741824.0),
    ("TiB", 1099511627776.0),
];
/// The units a size is written back in (resolved scenarios, results): up to GB, as
/// before TB and PB were read, so that every stored scenario reads the same.
const SHOWN_SIZE_UNITS: &[(&str, f64)] = &[("B", 1.0), ("KB", 1e3), ("MB", 1e6), ("GB", 1e9)];

/// The largest time a scenario may name: 10^6 s (11.6 days), far beyond any experiment,
/// and small enough that sums of a few times cannot overflow the u64 picosecond clock
/// (2^64 ps is 213 days).
pub const MAX_TIME: u64 = 1_000_000 * 1_000_000_000_000;
/// The largest rate: 100 Tbps. Faster links or sources would send a packet in less
/// than a picosecond, and simulated time would stop advancing.
pub const MAX_RATE: u64 = 100_000_000_000_000;
/// The largest size: 1 PB, so that sums over many flows or packets stay within u64.
pub const MAX_BYTES: u64 = 1_000_000_000_000_000;

/// The number at the start of `text` (digits, a decimal point, an exponent such as
/// "1e3"), and the rest.
fn split_number(text: &str) -> (&str, &str) {
    let bytes = text.as_bytes();
    let mut end = 0;
    while end < bytes.len() && (bytes[end].is_ascii_digit() || matches!(bytes[end], b'.' | b'+' | b'-')) {
        end += 1;
    }
    // An exponent only when digits follow ("1e3us"), so that "5e" stays a unit error.
    if end < bytes.len() && matches!(bytes[end], b'e' | b'E') {
        let mut exp = end + 1;
        if exp < bytes.len() && matches!(bytes[exp], b'+' | b'-') {
            exp += 1;
        }
        if exp < bytes.len() && bytes[exp].is_ascii_digit() {
            end = exp;
            while end < bytes.len() && bytes[end].is_ascii_digit() {
                end += 1;
            }
        }
    }
    (text[..end].trim(), text[end..].trim())
}

/// A quantity as written: its number (as written; it reads as a float) and its unit's
/// factor in the base unit, `None` when it has no unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quantity<'a> {
    pub number: &'a str,
    pub factor: Option<u64>,
}

/// The spellings of `units` that are not aliases (the first of each factor), for messages.
fn accepted(units: &[(&str, f64)]) -> String {
    let first = |i: usize| !units[..i].iter().any(|(_, f)| *f == units[i].1);
    units.iter().enumerate().filter(|&(i, _)| first(i)).map(|(_, (u, _))| *u).collect::<Vec<_>>().join(", ")
}

/// Whether `unit` as written is `spelling`: equal without regard to ASCII case, except
/// that a capital B (bytes) and a small b (bits) are never each other.
fn spells(unit: &str, spelling: &str) -> bool {
    let b = |c: char| c.eq_ignore_ascii_case(&'b');
    unit.len() == spelling.len()
        && unit.chars().zip(spelling.chars()).all(|(u, s)| u == s || (!b(u) && u.eq_ignore_ascii_case(&s)))
}

/// Splits `text` into its number and its unit, read with `units` (see [`Quantity`]).
fn split_quantity<'a>(text: &'a str, units: &[(&str, f64)]) -> Result<Quantity<'a>, String> {
    let text = text.trim();
    let (number, unit) = split_number(text);
    if number.parse::<f64>().is_err() {
        return Err(format!("cannot read a number in {text:?} (units: {})", accepted(units)));
    }
    if unit.is_empty() {
        return Ok(Quantity { number, factor: None });
    }
    // A size in bits ("3Mb"): the unit of bytes that was meant.
    let in_bytes = units.iter().find(|(u, _)| u.contains('B') && u.eq_ignore_ascii_case(unit));
    match units.iter().find(|(u, _)| spells(unit, u)) {
        Some((_, f)) => Ok(Quantity { number, factor: Some(*f as u64) }),
        None if in_bytes.is_some() => Err(format!(
            "unknown unit {unit:?} in {text:?}: a small b is bits, and sizes are bytes (a capital B): \
             write \"{number}{}\" (accepted: {})",
            in_bytes.map_or("", |(u, _)| u),
            accepted(units)
        )),
        None if units.iter().any(|(u, _)| u.eq_ignore_ascii_case(unit)) => Err(format!(
            "unknown unit {unit:?} in {text:?}: a capital B is bytes, and rates are bits per second \
             (accepted: {})",
            accepted(units)
        )),
        None => Err(format!("unknown unit {unit:?} in {text:?} (accepted: {})", accepted(units))),
    }
}

fn parse_with_units(text: &str, units: &[(&str, f64)], max: u64) -> Result<u64, String> {
    let text = text.trim();
    let Quantity { number, factor } = split_quantity(text, units)?;
    let value: f64 = number.parse().expect("split_quantity read it");
    if value.is_nan() || value < 0.0 {
        return Err(format!("{text:?} must be a non-negative number (units: {})", accepted(units)));
    }
    let factor = factor.unwrap_or(1);
    // Whole numbers are scaled exactly (a float would lose digits above 2^53).
    if let Ok(whole) = number.parse::<u128>() {
        let scaled = whole.saturating_mul(factor as u128);
        if scaled > max as u128 {
            return Err(format!("{text:?} is too large (accepted: up to {})", format_with_units(max, units)));
        }
        return Ok(scaled as u64);
    }
    in_range(value * factor as f64, max, units).map_err(|why| format!("{text:?} {why}"))
}

/// `value` rounded to a whole number of base units, if at most `max`.
fn in_range(value: f64, max: u64, units: &[(&str, f64)]) -> Result<u64, String> {
    let scaled = value.round();
    // Every maximum is exactly a float, so the comparison is exact and the cast cannot
    // saturate.
    if scaled > max as f64 {
        return Err(format!("is too large (accepted: up to {})", format_with_units(max, units)));
    }
    Ok(scaled as u64)
}

fn format_with_units(value: u64, units: &[(&str, f64)]) -> String {
    // Largest unit in which the value is a whole number, restricted to the decimal units
    // and to each factor's first spelling (not the aliases "µs", "Gb/s", ...).
    let mut best = format!("{value}{}", units[0].0);
    if value == 0 {
        return best;
    }
    for (i, (unit, factor)) in units.iter().enumerate() {
        let f = *factor as u64;
        let alias = units[..i].iter().any(|(_, g)| g == factor);
        if f > 0 && value.is_multiple_of(f) && !unit.contains('i') && !alias {
            best = format!("{}{unit}", value / f);
        }
    }
    best
}

macro_rules! unit_type {
    ($name:ident, $units:expr, $max:expr, $what:literal) => {
        unit_type!($name, $units, $units, $max, $what);
    };
    // `$shown`: the units `Display` writes a value in.
    ($name:ident, $units:expr, $shown:expr, $max:expr, $what:literal) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub u64);

        impl $name {
            /// The largest value a scenario may give.
            pub const MAX: $name = $name($max);

            pub fn parse(text: &str) -> Result<Self, String> {
                parse_with_units(text, $units, $max).map($name)
            }

            /// `text`'s number and unit, for a caller that does its own (exact)
            /// arithmetic: no range check.
            pub fn split(text: &str) -> Result<Quantity<'_>, String> {
                split_quantity(text, $units)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&format_with_units(self.0, $shown))
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_string())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        write!(f, "{}", $what)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        if v > $max {
                            let max = format_with_units($max, $units);
                            return Err(E::custom(format!("{v} is too large (accepted: up to {max})")));
                        }
                        Ok($name(v))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        let v = u64::try_from(v).map_err(|_| E::custom(format!("{v} must not be negative")))?;
                        self.visit_u64(v)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        if !(v >= 0.0 && v.is_finite()) {
                            return Err(E::custom(format!("{v} must be a non-negative number")));
                        }
                        in_range(v, $max, $units).map($name).map_err(|why| E::custom(format!("{v} {why}")))
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$name, E> {
                        $name::parse(v).map_err(E::custom)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

unit_type!(Rate, RATE_UNITS, MAX_RATE, "a rate such as \"100Gbps\" (bits per second)");
unit_type!(Time, TIME_UNITS, MAX_TIME, "a time such as \"2us\" (picoseconds)");
unit_type!(Bytes, SIZE_UNITS, SHOWN_SIZE_UNITS, MAX_BYTES, "a size such as \"720KB\" (bytes)");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(Rate::parse("100Gbps").unwrap().0, 100_000_000_000);
        assert_eq!(Time::parse("2us").unwrap().0, 2_000_000);
        assert_eq!(Time::parse("1.5ms").unwrap().0, 1_500_000_000);
        assert_eq!(Bytes::parse("720KB").unwrap().0, 720_000);
        assert_eq!(Bytes::parse("1KiB").unwrap().0, 1024);
        assert_eq!(Bytes::parse("3 MB").unwrap().0, 3_000_000);
        assert_eq!(Time::parse("1e3us").unwrap().0, 1_000_000_000);
        assert_eq!(Time::parse("2.5E-3s").unwrap().0, 2_500_000_000);
        assert_eq!(Time::parse("5µs").unwrap(), Time::parse("5us").unwrap());
        assert_eq!(Time::parse("5μs").unwrap(), Time::parse("5us").unwrap());
        assert_eq!(Bytes::parse("720kB").unwrap().0, 720_000);
        assert_eq!(Rate::parse("10kbps").unwrap().0, 10_000);
        assert!(Time::parse("5e").is_err());
        assert!(Time::parse("1e3").is_ok());
        assert!(Rate::parse("100Gbs").is_err());
        assert!(Bytes::parse("5").is_ok() && Bytes::parse("5 XB").unwrap_err().contains("accepted: B, KB, MB"));
        assert!(Rate::parse("-5Gbps").is_err());
        assert!(Bytes::parse("abc").is_err());
    }

    #[test]
    fn units_are_read_without_regard_to_case_but_b_is_not_b() {
        assert_eq!(Rate::parse("100gbps").unwrap(), Rate::parse("100Gbps").unwrap());
        assert!(Rate::parse("100GBPS").is_err());
        assert_eq!(Rate::parse("2.5 Gb/s").unwrap().0, 2_500_000_000);
        assert_eq!(Rate::parse("10 kb/s").unwrap().0, 10_000);
        assert_eq!(Time::parse("2US").unwrap().0, 2_000_000);
        assert_eq!(Time::parse("3Ms").unwrap().0, 3_000_000_000);
        assert_eq!(Bytes::parse("3mB").unwrap().0, 3_000_000);
        assert_eq!(Bytes::parse("128kiB").unwrap().0, 131_072);
        // A small b is bits, which a size refuses, saying which unit of bytes to write.
        for (text, says) in [("3mb", "\"3MB\""), ("3Mb", "\"3MB\""), ("1500b", "\"1500B\""), ("128kib", "\"128KiB\"")] {
            let e = Bytes::parse(text).unwrap_err();
            assert!(e.contains("a small b is bits") && e.contains(says), "{text}: {e}");
        }
        // A capital B is bytes: a rate refuses it and says why.
        let e = Rate::parse("100GBps").unwrap_err();
        assert!(e.contains("capital B is bytes") && e.contains("accepted: bps, Kbps, Mbps, Gbps, Tbps"), "{e}");
        // Every spelling the schema accepted before still means the same.
        for (text, value) in [("10kbps", 10_000), ("10Kbps", 10_000), ("1Tbps", 1_000_000_000_000)] {
            assert_eq!(Rate::parse(text).unwrap().0, value);
        }
        assert_eq!(Bytes::parse("2kB").unwrap().0, 2_000);
        assert_eq!(Time::parse("7µs").unwrap().0, 7_000_000);
    }

    #[test]
    fn split_gives_the_number_as_written_and_the_unit_factor() {
        assert_eq!(Time::split(" 1.5us ").unwrap(), Quantity { number: "1.5", factor: Some(1_000_000) });
        assert_eq!(Rate::split("-100 Gb/s").unwrap(), Quantity { number: "-100", factor: Some(1_000_000_000) });
        assert_eq!(Bytes::split("1e30").unwrap(), Quantity { number: "1e30", factor: None });
        assert!(Time::split("2 fortnights").unwrap_err().contains("accepted: ps, ns, us, ms, s"));
        assert!(Bytes::split("lots").unwrap_err().contains("cannot read a number in \"lots\""));
    }

    #[test]
    fn refuses_values_beyond_the_limits() {
        // The limits themselves are accepted, in any spelling; one unit more is not.
        assert_eq!(Time::parse("1000000s").unwrap(), Time::MAX);
        assert_eq!(Rate::parse("100Tbps").unwrap(), Rate::MAX);
        assert_eq!(Bytes::parse("1000000GB").unwrap(), Bytes::MAX);
        assert_eq!(Time::parse("9007199254740993ps").unwrap().0, 9_007_199_254_740_993);
        for text in ["1000000.000001s", "18446744073709551615ps", "18446744073709551616ps", "1e300s", "1e400s"] {
            let e = Time::parse(text).unwrap_err();
            assert!(e.contains("too large (accepted: up to 1000000s)"), "{text}: {e}");
        }
        assert!(Rate::parse("1e30bps").unwrap_err().contains("up to 100Tbps"));
        assert!(Bytes::parse("1e30").is_err());
        // Plain numbers in the scenario file: integers, floats and integers beyond u64.
        let de = |v: serde_json::Value| serde_json::from_value::<Time>(v).map_err(|e| e.to_string());
        assert_eq!(de(serde_json::json!(1_000_000_000_000_000_000u64)).unwrap(), Time::MAX);
        assert!(de(serde_json::json!(1_000_000_000_000_000_001u64)).unwrap_err().contains("too large"));
        assert!(de(serde_json::json!(u64::MAX)).unwrap_err().contains("too large"));
        assert!(de(serde_json::json!(1.8446744073709552e19)).unwrap_err().contains("too large"));
        assert!(de(serde_json::json!(-1)).unwrap_err().contains("negative"));
        assert_eq!(de(serde_json::json!(2.4)).unwrap(), Time(2));
    }

    #[test]
    fn displays_round_trip() {
        assert_eq!(Bytes(0).to_string(), "0B");
        assert_eq!(Time::parse("5µs").unwrap().to_string(), "5us");
        assert_eq!(Bytes::parse("2kB").unwrap().to_string(), "2KB");
        for text in ["100Gbps", "2us", "720KB", "3MB", "1500B"] {
            let shown = match text.chars().last() {
                Some('s') if text.ends_with("bps") => Rate::parse(text).unwrap().to_string(),
                Some('s') => Time::parse(text).unwrap().to_string(),
                _ => Bytes::parse(text).unwrap().to_string(),
            };
            assert_eq!(shown, text);
        }
    }
}
