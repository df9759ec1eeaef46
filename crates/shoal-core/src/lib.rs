//! Shoal's core: a packet-level simulator of datacenter networks built around the switch
//! buffer. Pure Rust; the Python bindings live in `shoal-py`.
//!
//! Layers: `sim` (time, events, random streams), `net` (packets, topologies, routing),
//! `switch` (MMU, admission, marking, scheduling), `host` (the NIC), `transport` (TCP
//! family, UDP), `workload` (flow sizes, arrivals, patterns, traces), `stats`, `scenario`
//! (schema and validation), `registry` (the schemes of each decision point), `observe`
//! (samplers), `input_checks` (the scenario as written, old spellings), `files` (reading
//! the input files a scenario names), `budget` (the memory a run needs), `engine` (the
//! run loop) and `results` (flow tables, the summary, run directories).

pub mod budget;
pub mod check_env;
pub mod collect;
pub mod config;
pub mod engine;
mod files;
pub mod host;
pub mod net;
pub mod observe;
pub mod registry;
pub mod results;
pub mod scenario;
pub mod sim;
pub mod stats;
pub mod switch;
pub mod transport;
pub mod units;
pub mod workload;

pub use engine::Simulation;
pub use results::FlowRecord;
pub use scenario::{Scenario, ScenarioError};

pub const VERSION: &str = env!("CARGO_PKG_VERSION");
