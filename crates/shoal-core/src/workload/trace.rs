//! Flow traces: CSV `id,src,dst,bytes,start_ns` with an optional `priority` column.

use super::MAX_FLOWS;
use super::{FlowKind, FlowSpec};
use crate::files::read_regular_file;
use crate::scenario::ScenarioError;
use crate::sim::PS_PER_NS;
use crate::units::{MAX_BYTES, MAX_TIME};

/// The number of flows in the trace `file` (rows after the header), without parsing them.
pub fn count_rows(file: &str) -> Result<u64, String> {
    Ok(data_lines(&read(file)?).count().saturating_sub(1) as u64)
}

/// The largest trace file read: 10^8 flows of up to 80 characters each.
const MAX_TRACE_FILE: u64 = 8_000_000_000;

fn read(file: &str) -> Result<String, String> {
    read_regular_file(file, MAX_TRACE_FILE).map_err(|e| format!("cannot read trace {file:?}: {e}"))
}

/// The lines of a trace that hold a header or a flow (not blank, not a `#` comment),
/// with their 0-based line index.
fn data_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    // Spreadsheet programs often start a CSV file with a UTF-8 byte-order mark.
    text.strip_prefix('\u{feff}')
        .unwrap_or(text)
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
}

/// Reads a trace; hosts must be below `hosts`. A missing priority is `u8::MAX` (the
/// workload's priority applies).
pub fn read_trace(file: &str, hosts: u64, path: &str) -> Result<Vec<FlowSpec>, ScenarioError> {
    let text = read(file).map_err(|e| ScenarioError::new(path, e))?;
    let err = |line: usize, msg: String| ScenarioError::new(path, format!("{file}: line {line}: {msg}"));
    let mut lines = data_lines(&text);
    let (_, header) = lines.next().ok_or_else(|| ScenarioError::new(path, format!("{file}: the trace is empty")))?;
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
    let mut flows = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (n, line) in lines {
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
        if !seen.insert(id) {
            return Err(err(n, format!("id {id} appears twice")));
        }
        let priority = if columns.len() == 6 {
            let p = int(5)?;
            if p >= 64 {
                return Err(err(n, format!("priority = {p} is out of range (0..=63)")));
            }
            p as u8
        } else {
            u8::MAX
        };
        flows.push(FlowSpec {
            id,
            src: src as u32,
            dst: dst as u32,
            bytes,
            start: start as u64,
            priority,
            kind: FlowKind::Tcp,
            query: None,
        });
    }
    Ok(flows)
}
