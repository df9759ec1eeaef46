//! Value types that scenario sections share.

use serde::{Deserialize, Serialize};

/// A probability: a number from 0 to 1, refused where it is read, so that the error
/// names its key.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Probability(f64);

impl Probability {
    /// `p`, which must be a probability (for constants).
    pub const fn new(p: f64) -> Self {
        assert!(p >= 0.0 && p <= 1.0, "not a probability");
        Probability(p)
    }

    pub fn get(self) -> f64 {
        self.0
    }
}

impl TryFrom<f64> for Probability {
    type Error = String;

    fn try_from(p: f64) -> Result<Self, String> {
        if (0.0..=1.0).contains(&p) {
            Ok(Probability(p))
        } else {
            Err(format!("{p} is outside [0, 1]"))
        }
    }
}

impl From<Probability> for f64 {
    fn from(p: Probability) -> f64 {
        p.0
    }
}

/// One value for every queue, or one value per queue.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum PerQueue {
    All(f64),
    Each(Vec<f64>),
}

impl PerQueue {
    pub fn get(&self, queue: usize) -> f64 {
        match self {
            PerQueue::All(v) => *v,
            PerQueue::Each(values) => values.get(queue).copied().unwrap_or(values[values.len() - 1]),
        }
    }
    pub fn values(&self) -> Vec<f64> {
        match self {
            PerQueue::All(v) => vec![*v],
            PerQueue::Each(values) => values.clone(),
        }
    }
}
