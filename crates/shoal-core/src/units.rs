//! Human units for scenario files: rates, times and sizes.
//!
//! Rates are bits per second, times are picoseconds and sizes are bytes. Each accepts a
//! plain non-negative integer in its base unit or a string with a unit suffix
//! ("100Gbps", "2us", "720KB"). KB/MB/GB are powers of 1000; KiB/MiB/GiB powers of 1024.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// Picoseconds per unit of time.
const TIME_UNITS: &[(&str, f64)] = &[("ps", 1.0), ("ns", 1e3), ("us", 1e6), ("ms", 1e9), ("s", 1e12)];
const RATE_UNITS: &[(&str, f64)] = &[("bps", 1.0), ("Kbps", 1e3), ("Mbps", 1e6), ("Gbps", 1e9), ("Tbps", 1e12)];
const SIZE_UNITS: &[(&str, f64)] =
    &[("B", 1.0), ("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("KiB", 1024.0), ("MiB", 1048576.0), ("GiB", 1073741824.0)];

fn parse_with_units(text: &str, units: &[(&str, f64)]) -> Result<u64, String> {
    let text = text.trim();
    let split = text.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(text.len());
    let (number, unit) = (text[..split].trim(), text[split..].trim());
    let accepted = units.iter().map(|(u, _)| *u).collect::<Vec<_>>().join(", ");
    let value: f64 = number.parse().map_err(|_| format!("cannot read a number in {text:?} (units: {accepted})"))?;
    if !value.is_finite() || value < 0.0 {
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
    let scaled = (value * factor).round();
    if scaled > u64::MAX as f64 {
        return Err(format!("{text:?} is too large"));
    }
    Ok(scaled as u64)
}

fn format_with_units(value: u64, units: &[(&str, f64)]) -> String {
    // Largest unit in which the value is a whole number, restricted to the decimal units.
    let mut best = format!("{value}{}", units[0].0);
    if value == 0 {
        return best;
    }
    for (unit, factor) in units {
        let f = *factor as u64;
        if f > 0 && value % f == 0 && !unit.contains('i') {
            best = format!("{}{unit}", value / f);
        }
    }
    best
}

macro_rules! unit_type {
    ($name:ident, $units:expr, $what:literal) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub u64);

        impl $name {
            pub fn parse(text: &str) -> Result<Self, String> {
                parse_with_units(text, $units).map($name)
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
                        Ok($name(v))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        u64::try_from(v).map($name).map_err(|_| E::custom(format!("{v} must not be negative")))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        if v >= 0.0 && v.is_finite() {
                            Ok($name(v.round() as u64))
                        } else {
                            Err(E::custom(format!("{v} must be a non-negative number")))
                        }
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

unit_type!(Rate, RATE_UNITS, "a rate such as \"100Gbps\" (bits per second)");
unit_type!(Time, TIME_UNITS, "a time such as \"2us\" (picoseconds)");
unit_type!(Bytes, SIZE_UNITS, "a size such as \"720KB\" (bytes)");

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
        assert!(Rate::parse("100Gbs").is_err());
        assert!(Rate::parse("-5Gbps").is_err());
        assert!(Bytes::parse("abc").is_err());
    }

    #[test]
    fn displays_round_trip() {
        assert_eq!(Bytes(0).to_string(), "0B");
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
