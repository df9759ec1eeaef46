//! The spelling of a run directory's JSON files (`summary.json`, `scenario.json`), fixed
//! so that the same results always give the same bytes, release after release. It is the
//! spelling of Python's `json.dumps(value, indent=2)`, which wrote these files first (and
//! which any reader handles): two-space indentation, `", "`-free separators, non-ASCII
//! characters escaped as `\uXXXX`, and floats as Python's `repr` prints them (shortest
//! round-trip digits, ties to even; `1e+16`, `1e-05`, `100.0`). Non-finite floats become
//! `null`.

use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter, PrettyFormatter};
use std::io::{self, Write};

/// `value` as `json.dumps(value, indent=2) + "\n"` would write it.
pub fn to_python_json<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(4096);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, PythonFormatter::default());
    value.serialize(&mut ser).expect("serializing to memory cannot fail");
    out.push(b'\n');
    String::from_utf8(out).expect("the formatter writes ASCII")
}

/// A finite float as Python's `repr(float)` writes it.
fn python_float_repr(x: f64) -> String {
    debug_assert!(x.is_finite());
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.to_string();
    }
    // The shortest digit count that round-trips, then the digits correctly rounded to that
    // count with ties to even (Rust's shortest form breaks exact ties upwards; Python's
    // repr, like David Gay's dtoa, to even).
    let shortest = format!("{x:e}");
    let digits = shortest.split_once('e').map_or(0, |(m, _)| m.bytes().filter(u8::is_ascii_digit).count());
    let exact = format!("{:.*e}", digits.saturating_sub(1), x);
    let (mantissa, exponent) = exact.split_once('e').expect("exponent form");
    let exponent: i32 = exponent.parse().expect("an integer exponent");
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let n = digits.len() as i32;
    // The value is 0.DIGITS x 10^point.
    let point = exponent + 1;
    let mut out = String::with_capacity(n as usize + 8);
    if negative {
        out.push('-');
    }
    if -4 < point && point <= 16 {
        if point <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-point) as usize));
            out.push_str(&digits);
        } else if point >= n {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', (point - n) as usize));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..point as usize]);
            out.push('.');
            out.push_str(&digits[point as usize..]);
        }
    } else {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = point - 1;
        out.push_str(&format!("e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs()));
    }
    out
}

/// serde_json's pretty printer (two-space indent, as Python's `indent=2`) with Python's
/// float and string spelling.
struct PythonFormatter {
    pretty: PrettyFormatter<'static>,
}

impl Default for PythonFormatter {
    fn default() -> Self {
        PythonFormatter { pretty: PrettyFormatter::with_indent(b"  ") }
    }
}

impl Formatter for PythonFormatter {
    fn write_f64<W: ?Sized + Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        writer.write_all(python_float_repr(value).as_bytes())
    }

    fn write_f32<W: ?Sized + Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(writer, value as f64)
    }

    /// `json.dumps(ensure_ascii=True)`: everything outside printable ASCII is escaped,
    /// as UTF-16 code units (serde_json has already escaped quotes, backslashes and
    /// control characters below 0x20, the way Python does).
    fn write_string_fragment<W: ?Sized + Write>(&mut self, writer: &mut W, fragment: &str) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if (' '..='~').contains(&c) {
                continue;
            }
            writer.write_all(&fragment.as_bytes()[start..i])?;
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(writer, "\\u{unit:04x}")?;
            }
            start = i + c.len_utf8();
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    fn write_char_escape<W: ?Sized + Write>(&mut self, writer: &mut W, escape: CharEscape) -> io::Result<()> {
        self.pretty.write_char_escape(writer, escape)
    }

    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.pretty.begin_array(writer)
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.pretty.end_array(writer)
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.pretty.begin_array_value(writer, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.pretty.end_array_value(writer)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.pretty.begin_object(writer)
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.pretty.end_object(writer)
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.pretty.begin_object_key(writer, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.pretty.begin_object_value(writer)
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.pretty.end_object_value(writer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    #[allow(clippy::excessive_precision)] // the exact decimal of a tie is the point
    fn floats_are_spelled_as_python_repr() {
        // (value, repr(value)) pairs printed by CPython 3.11.
        let cases = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (100.0, "100.0"),
            (0.1, "0.1"),
            (0.5, "0.5"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (1e22, "1e+22"),
            (0.0001, "0.0001"),
            (1e-5, "1e-05"),
            (2.5e-5, "2.5e-05"),
            (1.5e-7, "1.5e-07"),
            (123456789012345680.0, "1.2345678901234568e+17"),
            (9007199254740993.0, "9007199254740992.0"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (-3.25, "-3.25"),
            // An exact tie at the shortest length: Python rounds it to even.
            (569989842070137.25, "569989842070137.2"),
        ];
        for (value, repr) in cases {
            assert_eq!(python_float_repr(value), repr, "{value:e}");
        }
    }

    #[test]
    fn layout_matches_json_dumps_indent_2() {
        let value = json!({"a": [1, 2.0, null], "b": {}, "c": [], "d": {"e": true, "f": "x"}});
        let expected = "{\n  \"a\": [\n    1,\n    2.0,\n    null\n  ],\n  \"b\": {},\n  \"c\": [],\n  \"d\": {\n    \"e\": true,\n    \"f\": \"x\"\n  }\n}\n";
        assert_eq!(to_python_json(&value), expected);
    }

    #[test]
    fn strings_are_ascii_escaped_like_python() {
        // json.dumps("µs \"q\" \\ \n \x01 \x7f 😀") in CPython.
        let text = "µs \"q\" \\ \n \u{1} \u{7f} 😀";
        assert_eq!(to_python_json(text), "\"\\u00b5s \\\"q\\\" \\\\ \\n \\u0001 \\u007f \\ud83d\\ude00\"\n");
        assert_eq!(to_python_json(&f64::NAN), "null\n");
    }
}
