//! DCQCN (`[rdma.cc] kind = "dcqcn"`) in two models, chosen by `model`: the Mellanox
//! version ns3-datacenter runs (`"ns3_datacenter"`, the default; `mellanox.rs`) and the
//! DCQCN paper's (`"paper"`; `paper.rs`). Each model has its own keys and defaults.

mod mellanox;
mod paper;

pub use mellanox::{Mellanox, MellanoxConfig};
pub use paper::{Paper, PaperConfig};

use super::{CongestionControl, Feedback, Probe, RdmaCcEnv, SendState};
use crate::check_env::CheckEnv;
use crate::config::keys::{keys, split_tag};
use crate::config::{ScenarioError, Warnings};
use crate::registry::Scheme;
use crate::sim::Ps;
use crate::transport::cc::{Notification, RdmaCcFacts};
use crate::units::{Rate, Time};
use serde::{Deserialize, Serialize};

/// DCQCN's keys: the model (`model`, default `"ns3_datacenter"`) and that model's keys.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "model")]
pub enum DcqcnConfig {
    #[serde(rename = "ns3_datacenter")]
    Ns3Datacenter(MellanoxConfig),
    #[serde(rename = "paper")]
    Paper(PaperConfig),
}

impl DcqcnConfig {
    const MODELS: &'static [&'static str] = &["ns3_datacenter", "paper"];
}

impl DcqcnConfig {
    /// The error for a key of `rest` that is not `model`'s but another model's (serde
    /// would only say that it is unknown).
    fn key_of_another_model(model: &str, rest: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
        let keys = |m: &str| {
            let defaults = match m {
                "paper" => serde_json::to_value(PaperConfig::default()),
                _ => serde_json::to_value(MellanoxConfig::default()),
            };
            defaults.expect("a config serializes").as_object().expect("a table").keys().cloned().collect::<Vec<_>>()
        };
        let own = keys(model);
        let key = rest.keys().find(|k| !own.contains(k))?;
        let other = Self::MODELS.iter().find(|&&m| keys(m).contains(key))?;
        Some(crate::config::keys::nested(
            key,
            &format!("is a key of model = \"{other}\", not of model = \"{model}\" (set [rdma.cc] model = \"{other}\")"),
        ))
    }
}

impl Default for DcqcnConfig {
    fn default() -> Self {
        DcqcnConfig::Ns3Datacenter(MellanoxConfig::default())
    }
}

/// Read by hand, as `registry!` reads `kind`: serde's internally tagged enums lose the
/// path of a bad key inside them.
impl<'de> Deserialize<'de> for DcqcnConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        let serde_json::Value::Object(map) = value else {
            return Err(serde::de::Error::custom(format!("{value} is not accepted (accepted: a table)")));
        };
        let (model, rest) =
            split_tag(map, "model", Self::MODELS, "ns3_datacenter").map_err(serde::de::Error::custom)?;
        if let Some(message) = Self::key_of_another_model(&model, &rest) {
            return Err(serde::de::Error::custom(message));
        }
        match model.as_str() {
            "paper" => keys(rest).map(DcqcnConfig::Paper),
            _ => keys(rest).map(DcqcnConfig::Ns3Datacenter),
        }
        .map_err(serde::de::Error::custom)
    }
}

/// A DCQCN reaction point of either model.
pub enum Dcqcn {
    Mellanox(Mellanox),
    Paper(Paper),
}

impl Scheme for Dcqcn {
    type Config = DcqcnConfig;
    type Env = RdmaCcEnv;

    fn build(cfg: &DcqcnConfig, _: &RdmaCcEnv) -> Self {
        match cfg {
            DcqcnConfig::Ns3Datacenter(c) => Dcqcn::Mellanox(Mellanox::new(c)),
            DcqcnConfig::Paper(c) => Dcqcn::Paper(Paper::new(c)),
        }
    }

    fn validate(cfg: &DcqcnConfig, path: &str, env: &CheckEnv, _: &mut Warnings) -> Result<(), ScenarioError> {
        match cfg {
            DcqcnConfig::Ns3Datacenter(c) => c.validate(path, env),
            DcqcnConfig::Paper(c) => c.validate(path, env),
        }
    }
}

impl RdmaCcFacts for Dcqcn {
    /// The DCQCN paper's notification point sends CNPs; the Mellanox model echoes marks.
    fn notification(cfg: &DcqcnConfig) -> Notification {
        match cfg {
            DcqcnConfig::Paper(p) => Notification::Cnp { interval: p.cnp_interval.0 },
            DcqcnConfig::Ns3Datacenter(_) => Notification::EchoInAcks,
        }
    }

    fn reacts_to_marks(_: &DcqcnConfig) -> bool {
        true
    }
}

crate::registry::registry!(@impl CongestionControl for Dcqcn [Mellanox Paper] {
    mut fn on_ack(s: &mut SendState, f: &Feedback);
    mut fn on_cnp(s: &mut SendState, now: Ps);
    mut fn on_send(s: &mut SendState, bytes: u64, now: Ps);
    ref fn next_timer() -> Option<Ps>;
    mut fn on_timer(s: &mut SendState, now: Ps);
    ref fn probe(p: &mut Probe);
});

/// Refuses an EWMA gain `g` outside (0, 1].
fn check_gain(path: &str, g: f64) -> Result<(), ScenarioError> {
    if g > 0.0 && g <= 1.0 {
        Ok(())
    } else {
        Err(ScenarioError::new(format!("{path}.g"), format!("{g} is not accepted (accepted: 0 < g <= 1)")))
    }
}

/// The bytes of the shortest Ethernet frame, whose time on the fastest link is the
/// floor of the rate controllers' timers (`CheckEnv::timer_floor`).
const MIN_FRAME_BYTES: u64 = 64;

/// Refuses a timer among `timers` (key, value) shorter than one minimum frame on the
/// fastest link (`CheckEnv::timer_floor`), or a zero `min_rate`.
fn check_timers(path: &str, timers: &[(&str, Time)], min_rate: Rate, env: &CheckEnv) -> Result<(), ScenarioError> {
    for &(key, time) in timers {
        env.check_timer(&format!("{path}.{key}"), time, MIN_FRAME_BYTES, "the time of a minimum frame")?;
    }
    if min_rate.0 == 0 {
        return Err(ScenarioError::new(format!("{path}.min_rate"), "must be positive"));
    }
    Ok(())
}
