//! Topology files in the format of the HPCC and ns3-datacenter simulators
//! (`topology.txt`), read so that their files run unchanged:
//!
//! ```text
//! node_num switch_num link_num                      HPCC (mix/topology.txt)
//! node_num switch_num tors link_num [more numbers]  ns3-datacenter; tors and the rest unused
//! switch ids, switch_num of them on one line
//! src dst rate delay error_rate                     one line per link, link_num lines
//! ```
//!
//! Nodes are numbered 0 to node_num - 1; those not in the switch list are hosts. A rate
//! is bits per second as a plain number ("25000000000.0") or with a unit ("100Gbps"); a
//! delay has a unit ("1us") or is seconds, as ns-3 reads a plain number. Blank lines and
//! lines starting with `#` are skipped.
//!
//! Unlike the references' stream readers, lines matter (so that an error names one):
//! the header and the switch list are a line each, and a link is a line. What Shoal
//! cannot build is refused: a host without exactly one link (hosts have one NIC), a link
//! between two hosts, two links between the same nodes (the references route over only
//! the last). A link's `error_rate` is the chance that a packet crossing it, either way,
//! is corrupted and dropped by the receiving end, as ns3-datacenter's receive error model
//! (`ERROR_UNIT_PACKET` on both devices) does.

use super::spec::NodeId;
use crate::net::config::{MAX_HOSTS, MAX_SWITCH_PORTS};
use crate::sim::Ps;
use crate::units::{Rate, Time};
use std::collections::HashMap;

/// The most nodes a file may declare (Shoal runs at most 1,000,000 hosts).
const MAX_NODES: u32 = 2_000_000;
/// The largest file read: a link line is a few dozen bytes.
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// A link as the file gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct FileLink {
    pub src: u32,
    pub dst: u32,
    pub rate_bps: u64,
    pub delay: Ps,
    /// The chance that a packet crossing the link (either way) is corrupted.
    pub error_rate: f64,
}

/// A parsed topology file: its nodes and links, checked as Shoal needs them.
///
/// Invariants: at least one switch and two hosts; every host has exactly one link, to a
/// switch; no link joins a node to itself, and no two join the same nodes; no switch has
/// more than `MAX_SWITCH_PORTS` links.
#[derive(Clone, Debug, PartialEq)]
pub struct TopologyFile {
    /// Whether each node (by id) is a switch.
    pub is_switch: Vec<bool>,
    /// In file order.
    pub links: Vec<FileLink>,
}

/// A mistake in a topology file: the line it is on (none for the file as a whole) and
/// what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct FileError {
    pub line: Option<usize>,
    pub message: String,
}

impl FileError {
    fn at(line: usize, message: impl Into<String>) -> FileError {
        FileError { line: Some(line), message: message.into() }
    }

    fn whole(message: impl Into<String>) -> FileError {
        FileError { line: None, message: message.into() }
    }
}

/// The fields of a link line, for messages.
const LINK_FIELDS: &str = "src dst rate delay error_rate";

impl TopologyFile {
    pub fn parse(text: &str) -> Result<TopologyFile, FileError> {
        let mut lines = text
            .strip_prefix('\u{feff}')
            .unwrap_or(text)
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim()))
            .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
        let (n, header) = lines.next().ok_or_else(|| FileError::whole("the file is empty"))?;
        let Header { nodes, switches, links } = Header::parse(n, header)?;
        let (n, switch_line) = lines.next().ok_or_else(|| {
            FileError::whole(format!("the file ends after its header; the next line lists the {switches} switch ids"))
        })?;
        let is_switch = switch_list(n, switch_line, nodes, switches)?;
        let mut parsed = Vec::new();
        let mut seen: HashMap<(u32, u32), usize> = HashMap::new();
        let mut last = n;
        for (n, line) in lines {
            if parsed.len() as u64 == links as u64 {
                return Err(FileError::at(
                    n,
                    format!("a line after the last link (link_num = {links} in the header says how many links follow)"),
                ));
            }
            let link = link_line(n, line, nodes)?;
            if !is_switch[link.src as usize] && !is_switch[link.dst as usize] {
                return Err(FileError::at(
                    n,
                    format!(
                        "src = {} and dst = {} are both hosts (accepted: a link with a switch at one end at least)",
                        link.src, link.dst
                    ),
                ));
            }
            let key = (link.src.min(link.dst), link.src.max(link.dst));
            if let Some(first) = seen.insert(key, n) {
                return Err(FileError::at(
                    n,
                    format!(
                        "a second link between nodes {} and {} (the first is on line {first}; accepted: one link per pair of nodes)",
                        key.0, key.1
                    ),
                ));
            }
            parsed.push(link);
            last = n;
        }
        if (parsed.len() as u64) < links as u64 {
            return Err(FileError::at(
                last,
                format!("the file ends after {} links, but link_num = {links} in the header", parsed.len()),
            ));
        }
        let file = TopologyFile { is_switch, links: parsed };
        file.check_degrees()?;
        Ok(file)
    }

    /// Every host has one link, every switch at most `MAX_SWITCH_PORTS`.
    fn check_degrees(&self) -> Result<(), FileError> {
        let mut degree = vec![0u64; self.is_switch.len()];
        for l in &self.links {
            degree[l.src as usize] += 1;
            degree[l.dst as usize] += 1;
        }
        for (id, (&d, &switch)) in degree.iter().zip(&self.is_switch).enumerate() {
            if switch && d > MAX_SWITCH_PORTS {
                return Err(FileError::whole(format!(
                    "switch {id} has {d} links (accepted: at most {MAX_SWITCH_PORTS} per switch)"
                )));
            }
            if !switch && d != 1 {
                let lines = if d == 0 { "no link".to_string() } else { format!("{d} links") };
                return Err(FileError::whole(format!(
                    "node {id} is a host (it is not in the switch list) with {lines} (accepted: one link per host, to a switch)"
                )));
            }
        }
        Ok(())
    }

    /// The hosts: nodes that are not switches.
    pub fn hosts(&self) -> u32 {
        self.is_switch.iter().filter(|&&s| !s).count() as u32
    }

    /// Each node's place in the network: hosts and switches are numbered separately, each
    /// in node-id order. Where the switches come after every host (as in the references'
    /// files), host i is node i.
    pub fn nodes(&self) -> Vec<NodeId> {
        let (mut hosts, mut switches) = (0, 0);
        self.is_switch
            .iter()
            .map(|&switch| {
                let counter = if switch { &mut switches } else { &mut hosts };
                *counter += 1;
                if switch {
                    NodeId::Switch(*counter - 1)
                } else {
                    NodeId::Host(*counter - 1)
                }
            })
            .collect()
    }
}

/// The counts of the first line.
struct Header {
    nodes: u32,
    switches: u32,
    links: u32,
}

impl Header {
    fn parse(n: usize, line: &str) -> Result<Header, FileError> {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // HPCC: node_num switch_num link_num; ns3-datacenter reads node_num switch_num tors
        // link_num and more numbers that it does not use.
        let names: &[&str] = match fields.len() {
            3 => &["node_num", "switch_num", "link_num"],
            n if n >= 4 => &["node_num", "switch_num", "tors", "link_num"],
            _ => {
                return Err(FileError::at(
                    n,
                    format!(
                        "{} fields {line:?} (accepted: \"node_num switch_num link_num\", or \"node_num switch_num tors link_num\" as ns3-datacenter writes it)",
                        fields.len()
                    ),
                ))
            }
        };
        let mut values = Vec::with_capacity(names.len());
        for (name, field) in names.iter().zip(&fields) {
            values.push(count(n, name, field)?);
        }
        // ns3-datacenter's Reverie files add link capacities, which nothing reads.
        if let Some(field) = fields[names.len()..].iter().find(|f| f.parse::<f64>().is_err()) {
            return Err(FileError::at(n, format!("{field:?} after link_num is not accepted (accepted: numbers)")));
        }
        let (nodes, switches) = (values[0], values[1]);
        let links = values[names.len() - 1];
        if nodes > MAX_NODES {
            return Err(FileError::at(n, format!("node_num = {nodes} is too large (accepted: up to {MAX_NODES})")));
        }
        if switches == 0 || switches > nodes {
            return Err(FileError::at(
                n,
                format!("switch_num = {switches} is not accepted (accepted: 1 to node_num = {nodes})"),
            ));
        }
        if (nodes - switches) as u64 > MAX_HOSTS {
            return Err(FileError::at(
                n,
                format!(
                    "{} hosts (node_num - switch_num) is too many (accepted: at most {MAX_HOSTS})",
                    nodes - switches
                ),
            ));
        }
        if nodes - switches < 2 {
            return Err(FileError::at(
                n,
                format!(
                    "{nodes} nodes of which {switches} switches leave fewer than 2 hosts (accepted: at least 2 hosts)"
                ),
            ));
        }
        Ok(Header { nodes, switches, links })
    }
}

/// A non-negative integer field.
fn count(n: usize, name: &str, field: &str) -> Result<u32, FileError> {
    field.parse::<u32>().map_err(|_| {
        FileError::at(
            n,
            format!("{name} = {field:?} is not accepted (accepted: a whole number from 0 to {})", u32::MAX),
        )
    })
}

/// A node id field, below `nodes`.
fn node_id(n: usize, name: &str, field: &str, nodes: u32) -> Result<u32, FileError> {
    let id = field.parse::<u32>().ok().filter(|&id| id < nodes);
    id.ok_or_else(|| {
        FileError::at(n, format!("{name} = {field:?} is not a node id (accepted: 0 to {}, node_num - 1)", nodes - 1))
    })
}

/// The switch list: which nodes are switches.
fn switch_list(n: usize, line: &str, nodes: u32, switches: u32) -> Result<Vec<bool>, FileError> {
    let ids: Vec<&str> = line.split_whitespace().collect();
    if ids.len() != switches as usize {
        return Err(FileError::at(
            n,
            format!(
                "{} switch ids, but switch_num = {switches} in the header (accepted: the {switches} switch ids on this one line)",
                ids.len()
            ),
        ));
    }
    let mut is_switch = vec![false; nodes as usize];
    for field in ids {
        let id = node_id(n, "switch id", field, nodes)?;
        if std::mem::replace(&mut is_switch[id as usize], true) {
            return Err(FileError::at(n, format!("switch id {id} is listed twice (accepted: distinct ids)")));
        }
    }
    Ok(is_switch)
}

fn link_line(n: usize, line: &str, nodes: u32) -> Result<FileLink, FileError> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let [src, dst, rate, delay, error_rate] = fields[..] else {
        return Err(FileError::at(
            n,
            format!("{} fields {line:?} (accepted: the 5 fields {LINK_FIELDS})", fields.len()),
        ));
    };
    let (src, dst) = (node_id(n, "src", src, nodes)?, node_id(n, "dst", dst, nodes)?);
    if src == dst {
        return Err(FileError::at(n, format!("a link from node {src} to itself (accepted: two different nodes)")));
    }
    let rate_bps = Rate::parse(rate)
        .ok()
        .filter(|r| r.0 > 0)
        .ok_or_else(|| {
            FileError::at(
                n,
                format!(
                    "rate = {rate:?} is not accepted (accepted: a positive rate up to {}: bits per second as a plain number, or with a unit: bps, Kbps, Mbps, Gbps, Tbps)",
                    Rate::MAX
                ),
            )
        })?
        .0;
    let delay = link_delay(delay).map_err(|why| FileError::at(n, format!("delay = {delay:?} {why}")))?;
    let error_rate =
        error_rate.parse::<f64>().ok().filter(|&p| crate::net::config::is_probability(p)).ok_or_else(|| {
            FileError::at(
                n,
                format!("error_rate = {error_rate:?} is not accepted (accepted: a probability from 0 to 1)"),
            )
        })?;
    Ok(FileLink { src, dst, rate_bps, delay, error_rate })
}

/// A delay as ns-3 reads one: a number with a unit, or seconds.
fn link_delay(text: &str) -> Result<Ps, String> {
    let accepted =
        || format!("(accepted: a delay up to {} with a unit: ps, ns, us, ms, s; a plain number is seconds)", Time::MAX);
    let quantity = Time::split(text).map_err(|_| format!("is not accepted {}", accepted()))?;
    let parsed = match quantity.factor {
        Some(_) => Time::parse(text),
        None => Time::parse(&format!("{}s", quantity.number)),
    };
    parsed.map(|t| t.0).map_err(|_| format!("is not accepted {}", accepted()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> FileError {
        TopologyFile::parse(text).unwrap_err()
    }

    /// Two hosts on switch 2, in both header forms; the second link corrupts one packet in
    /// a thousand.
    #[test]
    fn both_headers() {
        for header in ["3 1 2", "3 1 1 2", "3 1 1 2 25000000000 25000000000"] {
            let f = TopologyFile::parse(&format!("{header}\n2\n0 2 25000000000.0 1us 0\n1 2 100Gbps 0.000002 1e-3\n"))
                .unwrap();
            assert_eq!(f.is_switch, vec![false, false, true]);
            assert_eq!(
                f.links,
                vec![
                    FileLink { src: 0, dst: 2, rate_bps: 25_000_000_000, delay: 1_000_000, error_rate: 0.0 },
                    FileLink { src: 1, dst: 2, rate_bps: 100_000_000_000, delay: 2_000_000, error_rate: 1e-3 },
                ]
            );
            assert_eq!(f.nodes(), vec![NodeId::Host(0), NodeId::Host(1), NodeId::Switch(0)]);
        }
    }

    #[test]
    fn hosts_and_switches_are_numbered_apart() {
        let f = TopologyFile::parse("# a comment\n\n4 2 3\n1 3\n0 1 1Gbps 1us 0\n2 1 1Gbps 1us 0\n1 3 1Gbps 1us 0\n")
            .unwrap();
        assert_eq!(f.nodes(), vec![NodeId::Host(0), NodeId::Switch(0), NodeId::Host(1), NodeId::Switch(1)]);
        assert_eq!(f.hosts(), 2);
    }

    /// Each mistake names its line, the field and what is accepted.
    #[test]
    fn malformed_files() {
        let ok_links = "0 2 1Gbps 1us 0\n1 2 1Gbps 1us 0\n";
        for (text, line, words) in [
            ("", None, "empty"),
            ("3 1\n2\n", Some(1), "2 fields"),
            ("3 one 2\n2\n", Some(1), "switch_num = \"one\""),
            ("3 -1 2\n2\n", Some(1), "a whole number"),
            ("3 1 1 2 x\n2\n", Some(1), "\"x\" after link_num is not accepted (accepted: numbers)"),
            ("3 0 2\n\n", Some(1), "switch_num = 0"),
            ("3000000000 1 2\n2\n", Some(1), "node_num = 3000000000 is too large"),
            ("1500000 10 2\n2\n", Some(1), "1499990 hosts (node_num - switch_num) is too many"),
            ("3 2 2\n1 2\n", Some(1), "fewer than 2 hosts"),
            ("3 1 2\n", None, "ends after its header"),
            ("3 1 2\n2 1\n", Some(2), "2 switch ids, but switch_num = 1"),
            ("4 2 2\n2 2\n", Some(2), "switch id 2 is listed twice"),
            ("3 1 2\n3\n", Some(2), "switch id = \"3\" is not a node id (accepted: 0 to 2"),
            ("3 1 2\n2\n0 2 1Gbps 1us 0\n", Some(3), "ends after 1 links, but link_num = 2"),
            ("3 1 1\n2\n0 2 1Gbps 1us 0\n1 2 1Gbps 1us 0\n", Some(4), "a line after the last link"),
            ("3 1 2\n2\n0 2 1Gbps 1us\n", Some(3), "4 fields"),
            ("3 1 2\n2\nx 2 1Gbps 1us 0\n", Some(3), "src = \"x\" is not a node id"),
            ("3 1 2\n2\n0 7 1Gbps 1us 0\n", Some(3), "dst = \"7\" is not a node id (accepted: 0 to 2"),
            ("3 1 2\n2\n2 2 1Gbps 1us 0\n", Some(3), "from node 2 to itself"),
            ("3 1 2\n2\n0 1 1Gbps 1us 0\n", Some(3), "both hosts"),
            ("3 1 2\n2\n0 2 1Gbs 1us 0\n", Some(3), "rate = \"1Gbs\" is not accepted"),
            ("3 1 2\n2\n0 2 0 1us 0\n", Some(3), "rate = \"0\" is not accepted (accepted: a positive rate"),
            ("3 1 2\n2\n0 2 1Gbps 1xs 0\n", Some(3), "delay = \"1xs\" is not accepted (accepted: a delay"),
            ("3 1 2\n2\n0 2 1Gbps 1us 1.5\n", Some(3), "error_rate = \"1.5\""),
            ("3 1 2\n2\n0 2 1Gbps 1us -0.1\n", Some(3), "a probability from 0 to 1"),
            ("3 1 2\n2\n0 2 1Gbps 1us x\n", Some(3), "error_rate = \"x\""),
            ("3 1 3\n2\n0 2 1Gbps 1us 0\n1 2 1Gbps 1us 0\n2 0 1Gbps 1us 0\n", Some(5), "first is on line 3"),
            ("4 1 3\n3\n0 3 1Gbps 1us 0\n1 3 1Gbps 1us 0\n2 3 1Gbps 1us 0\n", None, ""),
            (
                "4 1 2\n3\n0 3 1Gbps 1us 0\n1 3 1Gbps 1us 0\n",
                None,
                "node 2 is a host (it is not in the switch list) with no link",
            ),
            (
                "5 2 4\n3 4\n0 3 1Gbps 1us 0\n1 3 1Gbps 1us 0\n2 3 1Gbps 1us 0\n2 4 1Gbps 1us 0\n",
                None,
                "node 2 is a host (it is not in the switch list) with 2 links",
            ),
        ] {
            if words.is_empty() {
                assert!(TopologyFile::parse(text).is_ok(), "{text:?}");
                continue;
            }
            let e = err(text);
            assert_eq!(e.line, line, "{text:?}: {e:?}");
            assert!(e.message.contains(words), "{text:?}: {e:?}");
        }
        assert!(TopologyFile::parse(&format!("3 1 2\n2\n{ok_links}\n\n# done\n")).is_ok());
    }
}
