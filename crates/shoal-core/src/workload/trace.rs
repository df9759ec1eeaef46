//! Flow traces: CSV `id,src,dst,bytes,start_ns` with an optional `priority` column.

use super::MAX_FLOWS;
use super::{FlowKind, FlowSpec};
use crate::config::ScenarioError;
use crate::files::open_regular_file;
use crate::sim::{Ps, PS_PER_NS};
use crate::units::{MAX_BYTES, MAX_TIME};
use std::io::BufRead;

/// The number of flows in the trace `file` (rows after the header), without parsing them.
pub fn count_rows(file: &str) -> Result<u64, String> {
    let mut rows = 0u64;
    for line in data_lines(file)? {
        line?;
        rows += 1;
    }
    Ok(rows.saturating_sub(1))
}

/// The largest trace file read: 10^8 flows of up to 80 characters each.
const MAX_TRACE_FILE: u64 = 8_000_000_000;

/// The lines of the trace `file` that hold a header or a flow (not blank, not a `#`
/// comment), with their 0-based line index, read one at a time: a trace's text is never
/// held whole.
fn data_lines(file: &str) -> Result<impl Iterator<Item = Result<(usize, String), String>>, String> {
    let reader = open_regular_file(file, MAX_TRACE_FILE).map_err(|e| format!("cannot read trace {file:?}: {e}"))?;
    let file = file.to_owned();
    Ok(reader
        .lines()
        .enumerate()
        .map(move |(n, line)| match line {
            // Spreadsheet programs often start a CSV file with a UTF-8 byte-order mark.
            Ok(line) if n == 0 => Ok((n, line.strip_prefix('\u{feff}').map(str::to_owned).unwrap_or(line))),
            Ok(line) => Ok((n, line)),
            Err(e) => Err(format!("cannot read trace {file:?}: line {}: {e}", n + 1)),
        })
        .filter(|line| line.as_ref().map_or(true, |(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))))
}

/// A flow of a trace: what the file says of it, in 40 bytes (a `FlowSpec` is 88), since a
/// trace is held whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceRow {
    pub id: u64,
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    pub start: Ps,
    /// `u8::MAX` when the file gives none (the workload's priority applies).
    pub priority: u8,
}

impl TraceRow {
    /// The flow, of `kind`, with `priority` unless the row gives its own.
    pub fn spec(&self, kind: FlowKind, priority: u8) -> FlowSpec {
        FlowSpec {
            id: self.id,
            src: self.src,
            dst: self.dst,
            bytes: self.bytes,
            start: self.start,
            priority: if self.priority == u8::MAX { priority } else { self.priority },
            kind,
            query: None,
        }
    }
}

/// Reads a trace; hosts must be below `hosts`.
pub fn read_trace(file: &str, hosts: u64, path: &str) -> Result<Vec<TraceRow>, ScenarioError> {
    let mut lines = data_lines(file).map_err(|e| ScenarioError::new(path, e))?;
    let err = |line: usize, msg: String| ScenarioError::new(path, format!("{file}: line {line}: {msg}"));
    let (_, header) = lines
        .next()
        .ok_or_else(|| ScenarioError::new(path, format!("{file}: the trace is empty")))?
        .map_err(|e| ScenarioError::new(path, e))?;
    let columns: Vec<String> = header.split(',').map(|c| c.trim().to_ascii_lowercase()).collect();
    let expected = ["id", "src", "dst", "bytes", "start_ns"];
    if columns.len() < 5
        || columns[..5] != expected
        || (columns.len() == 6 && columns[5] != "priority")
        || columns.len() > 6
    {
        return Err(err(
            1,
            format!("the header is {header:?}; expected \"id,src,dst,bytes,start_ns\" with an optional \",priority\""),
        ));
    }
    // Counted first, so that the rows are held once, not in a vector growing by doubling.
    let rows = count_rows(file).map_err(|e| ScenarioError::new(path, e))?.min(MAX_FLOWS) as usize;
    let mut flows = Vec::with_capacity(rows);
    // (id, line) of every flow: sorted at the end to find a repeated id, in 16 bytes a
    // flow instead of a hash set's 30-40.
    let mut ids = Vec::with_capacity(rows);
    for line in lines {
        let (n, line) = line.map_err(|e| ScenarioError::new(path, e))?;
        let n = n + 1;
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != columns.len() {
            return Err(err(n, format!("{} fields, expected {}", fields.len(), columns.len())));
        }
        let int = |i: usize| -> Result<u64, ScenarioError> {
            fields[i]
                .parse::<u64>()
                .map_err(|_| err(n, format!("{} = {:?} is not a non-negative integer", columns[i], fields[i])))
        };
        let id = int(0)?;
        let (src, dst, bytes) = (int(1)?, int(2)?, int(3)?);
        let start_ns: f64 = fields[4]
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| err(n, format!("start_ns = {:?} is not a non-negative number", fields[4])))?;
        let start = (start_ns * PS_PER_NS as f64).round();
        if start > MAX_TIME as f64 {
            return Err(err(
                n,
                format!("start_ns = {} is too late (accepted: up to {} ns)", fields[4], MAX_TIME / PS_PER_NS),
            ));
        }
        if bytes > MAX_BYTES {
            return Err(err(n, format!("bytes = {bytes} is too large (accepted: up to {MAX_BYTES})")));
        }
        if flows.len() as u64 >= MAX_FLOWS {
            return Err(err(n, format!("more than {MAX_FLOWS} flows (accepted: at most {MAX_FLOWS})")));
        }
        for (name, host) in [("src", src), ("dst", dst)] {
            if host >= hosts {
                return Err(err(
                    n,
                    format!("{name} = {host} is out of range (the topology has hosts 0..={})", hosts - 1),
                ));
            }
        }
        if src == dst {
            return Err(err(n, format!("src and dst are both {src}")));
        }
        if bytes == 0 {
            return Err(err(n, "bytes = 0 (a flow needs at least one byte)".into()));
        }
        ids.push((id, n));
        let priority = if columns.len() == 6 {
            let p = int(5)?;
            if p >= 64 {
                return Err(err(n, format!("priority = {p} is out of range (0..=63)")));
            }
            p as u8
        } else {
            u8::MAX
        };
        flows.push(TraceRow { id, src: src as u32, dst: dst as u32, bytes, start: start as u64, priority });
    }
    ids.sort_unstable();
    // The first line, in the file's order, whose id an earlier line has.
    if let Some((id, n)) = ids.windows(2).filter(|w| w[0].0 == w[1].0).map(|w| w[1]).min_by_key(|&(_, n)| n) {
        return Err(err(n, format!("id {id} appears twice")));
    }
    Ok(flows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace_file(name: &str, bytes: &[u8]) -> String {
        let path = std::env::temp_dir().join(format!("shoal-trace-{}-{name}.csv", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_owned()
    }

    /// Of two repeated ids, the error names the line that repeats one first in the file,
    /// as reading in order and remembering every id would.
    #[test]
    fn a_repeated_id_is_reported_at_its_first_repetition() {
        let file = trace_file(
            "repeat",
            b"id,src,dst,bytes,start_ns\n9,0,1,10,0\n5,0,1,10,0\n7,1,0,10,0\n5,1,0,10,0\n9,0,1,10,0\n",
        );
        let e = read_trace(&file, 2, "workload.trace").unwrap_err();
        assert!(e.message.ends_with("line 5: id 5 appears twice"), "{}", e.message);
        std::fs::remove_file(file).unwrap();
    }

    /// A byte-order mark, CRLF line ends, comments and blank lines: the rows a
    /// spreadsheet writes are read as they are meant, and counted alike.
    #[test]
    fn spreadsheet_files_are_read_and_counted() {
        let file = trace_file(
            "crlf",
            "\u{feff}id,src,dst,bytes,start_ns,priority\r\n# a comment\r\n\r\n3,0,1,1000,1.5,2\r\n4,1,0,5,0,3\r\n"
                .as_bytes(),
        );
        let flows = read_trace(&file, 2, "workload.trace").unwrap();
        assert_eq!(flows.iter().map(|f| (f.id, f.start, f.priority)).collect::<Vec<_>>(), [(3, 1500, 2), (4, 0, 3)]);
        assert_eq!(count_rows(&file), Ok(2));
        std::fs::remove_file(file).unwrap();
    }

    #[test]
    fn text_that_is_not_utf8_is_refused_at_its_line() {
        let file = trace_file("latin1", b"id,src,dst,bytes,start_ns\n1,0,1,10,0\n2,0,1,10,\xe9\n");
        let e = read_trace(&file, 2, "workload.trace").unwrap_err();
        assert!(e.message.contains("cannot read trace") && e.message.contains("line 3"), "{}", e.message);
        assert!(count_rows(&file).unwrap_err().contains("line 3"));
        std::fs::remove_file(file).unwrap();
    }
}
