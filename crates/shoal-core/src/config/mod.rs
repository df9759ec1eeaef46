//! What every section of a scenario shares, and nothing else: the error a user's mistake
//! gets (its key path, value and what is accepted), warnings, the key-path plumbing of
//! schemes' sections and the value types sections have in common. It imports no other
//! module of the crate but `units`, so every section can depend on it; `run.rs` is the
//! `[run]` section, which belongs to no layer below the scenario.

mod error;
pub(crate) mod keys;
pub mod run;
mod values;

pub use error::{ScenarioError, Warnings};
pub use values::{PerQueue, Probability};
