//! Human units for scenario files: rates, times and sizes.
//!
//! Rates are bits per second, times are picoseconds and sizes are bytes. Each accepts a
//! plain non-negative integer in its base unit or a string with a unit suffix
//! ("100Gbps", "2us", "720KB"). KB/MB/GB are powers of 1000; KiB/MiB/GiB powers of 1024.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// Picoseconds per unit of time ("µs" and the Greek "μs" are "us").
const TIME_UNITS: &[(&str, f64)] =
    &[("ps", 1.0), ("ns", 1e3), ("us", 1e6), ("µs", 1e6), ("μs", 1e6), ("ms", 1e9), ("s", 1e12)];
const RATE_UNITS: &[(&str, f64)] =
    &[("bps", 1.0), ("Kbps", 1e3), ("kbps", 1e3), ("Mbps", 1e6), ("Gbps", 1e9), ("Tbps", 1e12)];
const SIZE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("KB", 1e3),
    ("kB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("KiB", 1024.0),
    ("MiB", 1048576.0),
    ("GiB", 1073741824.0),
];

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

fn parse_with_units(text: &str, units: &[(&str, f64)], max: u64) -> Result<u64, String> {
    let text = text.trim();
    let (number, unit) = split_number(text);
    let accepted = units.iter().map(|(u, _)| *u).collect::<Vec<_>>().join(", ");
    let value: f64 = number.parse().map_err(|_| format!("cannot read a number in {text:?} (units: {accepted})"))?;
    if value.is_nan() || value < 0.0 {
        return Err(format!("{text:?} must be a non-negative number (units: {accepted})"));
    }
    let factor = if unit.is_empty() {
        1.0
    } else {
        units
            .iter()
            .find(|(u, _)| *u == unit)
            .map(|(_, f)| *f)
            .ok_or_else(|| format!("unknown unit {unit:?} in {text:?} (accepted: {accepted})"))?
    };
    // Whole numbers are scaled exactly (a float would lose digits above 2^53).
    if let Ok(whole) = number.parse::<u128>() {
        let scaled = whole.saturating_mul(factor as u128);
        if scaled > max as u128 {
            return Err(format!("{text:?} is too large (accepted: up to {})", format_with_units(max, units)));
        }
        return Ok(scaled as u64);
    }
    in_range(value * factor, max, units).map_err(|why| format!("{text:?} {why}"))
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
    // and to each factor's first spelling (not the aliases "µs", "kB", ...).
    let mut best = format!("{value}{}", units[0].0);
    if value == 0 {
        return best;
    }
    for (i, (unit, factor)) in units.iter().enumerate() {
        let f = *factor as u64;
        let alias = units[..i].iter().any(|(_, g)| g == factor);
        if f > 0 && value % f == 0 && !unit.contains('i') && !alias {
            best = format!("{}{unit}", value / f);
        }
    }
    best
}

macro_rules! unit_type {
    ($name:ident, $units:expr, $max:expr, $what:literal) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub u64);

        impl $name {
            /// The largest value a scenario may give.
            pub const MAX: $name = $name($max);

            pub fn parse(text: &str) -> Result<Self, String> {
                parse_with_units(text, $units, $max).map($name)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&format_with_units(self.0, $units))
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
                            return Err(E::custom(format!("{v} is too large (accepted: up to {})", $name::MAX)));
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
unit_type!(Bytes, SIZE_UNITS, MAX_BYTES, "a size such as \"720KB\" (bytes)");

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
        assert!(Rate::parse("-5Gbps").is_err());
        assert!(Bytes::parse("abc").is_err());
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
