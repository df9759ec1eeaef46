//! What every section of a scenario shares, and nothing else: the error a user's mistake
//! gets (its key path, value and what is accepted), warnings, the key-path plumbing of
//! schemes' sections and the value types sections have in common. It imports no other
//! module of the crate, so every section can depend on it.

mod error;
pub(crate) mod keys;
mod values;

pub use error::{ScenarioError, Warnings};
pub use values::{PerQueue, Probability};
