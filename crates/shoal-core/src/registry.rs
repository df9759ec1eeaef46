//! Scheme registries. A scheme (an admission policy, a marking rule, a scheduler, a
//! congestion controller) is one type implementing [`Scheme`] and its decision-point
//! trait, in its own file; `registry!` lists the schemes of a decision point, one line
//! each, and generates:
//!
//! - the config enum, read from `{ kind = "...", <the scheme's keys> }` (or just the kind
//!   as a string) and written back in the same form; the first scheme is the default,
//!   also of a section without `kind`;
//! - `KINDS`, `kind()`, `build` and `validate` on it;
//! - the `Any*` enum of the built schemes, implementing the decision-point trait by
//!   `match` (static dispatch).
//!
//! The `kind` tag is dispatched by hand rather than with `#[serde(tag = "kind")]`: serde
//! buffers an internally tagged value, so an error inside it would lose its key path.
//! Here the scheme's keys are deserialized with `serde_path_to_error`, and the inner path
//! travels out in the error message (see [`crate::config::keys::nested`]) until `Scenario::from_json` joins it
//! to the outer one.

use crate::check_env::CheckEnv;
use crate::config::{ScenarioError, Warnings};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// A scheme: its configuration and how it is built from it.
pub trait Scheme: Sized {
    /// Its keys (`deny_unknown_fields`, every key defaulted).
    type Config: Serialize + DeserializeOwned + Default + Clone + PartialEq + std::fmt::Debug;
    /// What it is built from besides its keys (a switch's queue count, a buffer pool).
    type Env;

    fn build(cfg: &Self::Config, env: &Self::Env) -> Self;

    /// Checks `cfg` against the scenario's facts `env`; `path` is the scheme's section
    /// (`switch.admission`).
    /// Legal but suspicious settings add to `warnings`.
    fn validate(
        _cfg: &Self::Config,
        _path: &str,
        _env: &CheckEnv,
        _warnings: &mut Warnings,
    ) -> Result<(), ScenarioError> {
        Ok(())
    }
}

/// The configuration of a scheme without keys of its own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoKeys {}

/// Generates a registry; see the module documentation. The methods listed after the
/// schemes are the decision-point trait's, forwarded by `match` (a trait split by role
/// lists each role's after it, as `forward Role { methods }`); those listed under
/// `facts` are what the rest of Shoal asks of a scheme's config, each scheme answering in
/// its own file. Its `@impl` form alone,
/// `registry!(@impl Trait for AnyX [Variant ...] { methods })`, forwards a trait over an
/// enum whose members are chosen otherwise (the transports, chosen per flow).
macro_rules! registry {
    (
        $(#[$meta:meta])*
        $vis:vis enum $Config:ident => $Any:ident: $Trait:ident, env $Env:ty;
        $( $kind:literal => $Variant:ident($Scheme:ty), )+
        $( facts $Facts:ident { $( $(#[$fm:meta])* fn $f:ident -> $ft:ty; )* } )?
        forward { $( $recv:ident fn $m:ident($($a:ident: $t:ty),*) $(-> $r:ty)?; )* }
        $( forward $Role:ident $role_methods:tt )*
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize)]
        #[serde(tag = "kind")]
        $vis enum $Config {
            $( #[serde(rename = $kind)] $Variant(<$Scheme as $crate::registry::Scheme>::Config), )+
        }

        /// A built scheme of this decision point.
        $vis enum $Any {
            $( $Variant($Scheme), )+
        }

        impl $Config {
            /// Every registered kind, in registration order.
            pub const KINDS: &'static [&'static str] = &[$($kind),+];

            pub fn kind(&self) -> &'static str {
                match self { $( Self::$Variant(_) => $kind, )+ }
            }

            /// The scheme `kind` with its default keys.
            pub fn of_kind(kind: &str) -> Option<Self> {
                match kind { $( $kind => Some(Self::$Variant(Default::default())), )+ _ => None }
            }

            pub fn build(&self, env: &$Env) -> $Any {
                match self {
                    $( Self::$Variant(c) => $Any::$Variant(<$Scheme as $crate::registry::Scheme>::build(c, env)), )+
                }
            }

            /// Checks the scheme's keys; `path` is its section.
            pub fn validate(
                &self,
                path: &str,
                env: &$crate::check_env::CheckEnv,
                warnings: &mut $crate::config::Warnings,
            ) -> Result<(), $crate::config::ScenarioError> {
                match self {
                    $( Self::$Variant(c) => <$Scheme as $crate::registry::Scheme>::validate(c, path, env, warnings), )+
                }
            }

            /// The scheme `kind` with keys `rest` (without `kind`).
            pub fn from_keys(kind: &str, rest: serde_json::Map<String, serde_json::Value>) -> Result<Self, String> {
                match kind {
                    $( $kind => $crate::config::keys::keys(rest).map(Self::$Variant), )+
                    _ => unreachable!("split_kind checked the kind"),
                }
            }

            /// The keys scheme `kind` accepts besides `kind` (None for an unknown kind, or
            /// keys read by hand).
            pub fn keys_of(kind: &str) -> Option<&'static [&'static str]> {
                match kind {
                    $( $kind => $crate::config::keys::key_names::<<$Scheme as $crate::registry::Scheme>::Config>(), )+
                    _ => None,
                }
            }

            /// The scheme's keys without `kind`.
            pub fn keys_value(&self) -> serde_json::Value {
                match self {
                    $( Self::$Variant(c) => serde_json::to_value(c).expect("a config always serializes"), )+
                }
            }
        }

        impl Default for $Config {
            fn default() -> Self {
                $crate::registry::registry!(@first $Config $($Variant)+)
            }
        }

        impl<'de> serde::Deserialize<'de> for $Config {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let value = <serde_json::Value as serde::Deserialize>::deserialize(d)?;
                let kind_given = value.is_string() || value.get("kind").is_some();
                $crate::config::keys::split_kind(value, Self::KINDS, Self::default().kind())
                    .and_then(|(kind, rest)| {
                        Self::from_keys(&kind, rest).map_err(|message| {
                            let section = $crate::config::keys::Section {
                                kind: &kind,
                                kind_given,
                                kinds: Self::KINDS,
                                keys_of: &Self::keys_of,
                            };
                            $crate::config::keys::explain_unknown_key(message, &section)
                        })
                    })
                    .map_err(<D::Error as serde::de::Error>::custom)
            }
        }

        $crate::registry::registry!(@facts_of $Config [$( ($Variant, $Scheme) )+] $( facts $Facts { $( $(#[$fm])* fn $f -> $ft; )* } )?);
        $crate::registry::registry!(@impl $Trait for $Any [$($Variant)+] { $( $recv fn $m($($a: $t),*) $(-> $r)?; )* });
        $crate::registry::registry!(@roles $Any [$($Variant)+] $( $Role $role_methods )*);
    };
    // A decision point split by role (`forward Role { methods }` after the main trait's
    // list): each role trait forwarded like the main one.
    (@roles $Any:ident $vs:tt $( $Role:ident $methods:tt )*) => {
        $( $crate::registry::registry!(@impl $Role for $Any $vs $methods); )*
    };
    // A scheme's facts (`facts Trait { fn name -> Type; }`): the config enum's method
    // `name` asks the chosen scheme's `Trait::name(its config)`. The variants travel as one
    // token tree, as for the forwarded methods.
    (@facts_of $Config:ident $vs:tt) => {};
    (@facts_of $Config:ident $vs:tt facts $Facts:ident { $( $(#[$fm:meta])* fn $f:ident -> $ft:ty; )* }) => {
        impl $Config {
            $( $crate::registry::registry!(@fact $Facts, $vs, [$(#[$fm])*] $f, $ft); )*
        }
    };
    (@fact $Facts:ident, [$( ($V:ident, $S:ty) )+], [$(#[$fm:meta])*] $f:ident, $ft:ty) => {
        $(#[$fm])*
        pub fn $f(&self) -> $ft {
            match self { $( Self::$V(c) => <$S as $Facts>::$f(c), )+ }
        }
    };
    // The variants travel as one token tree: a repetition over them cannot nest in the
    // repetition over methods.
    (@impl $Trait:ident for $Any:ident $vs:tt { $( $recv:ident fn $m:ident($($a:ident: $t:ty),*) $(-> $r:ty)?; )* }) => {
        impl $Trait for $Any {
            $( $crate::registry::registry!(@forward $Any $vs $recv fn $m($($a: $t),*) $(-> $r)?); )*
        }
    };
    (@first $Config:ident $First:ident $($Rest:ident)*) => {
        $Config::$First(Default::default())
    };
    (@forward $Any:ident $vs:tt mut fn $m:ident($($a:ident: $t:ty),*) $(-> $r:ty)?) => {
        #[inline]
        fn $m(&mut self $(, $a: $t)*) $(-> $r)? {
            $crate::registry::registry!(@match self, $Any, $vs, $m, ($($a),*))
        }
    };
    (@forward $Any:ident $vs:tt ref fn $m:ident($($a:ident: $t:ty),*) $(-> $r:ty)?) => {
        #[inline]
        fn $m(&self $(, $a: $t)*) $(-> $r)? {
            $crate::registry::registry!(@match self, $Any, $vs, $m, ($($a),*))
        }
    };
    (@match $s:ident, $Any:ident, [$($V:ident)+], $m:ident, $call:tt) => {
        match $s { $( $Any::$V(x) => x.$m $call, )+ }
    };
}

pub(crate) use registry;

/// `Scheme` for a scheme without keys of its own: built as `value` (the unit struct
/// itself unless given) whatever its environment (`()` unless given).
macro_rules! keyless_scheme {
    ($T:ident) => {
        $crate::registry::keyless_scheme!($T, env (), $T);
    };
    ($T:ident, env $Env:ty) => {
        $crate::registry::keyless_scheme!($T, env $Env, $T);
    };
    ($T:ident, env $Env:ty, $value:expr) => {
        impl $crate::registry::Scheme for $T {
            type Config = $crate::registry::NoKeys;
            type Env = $Env;

            fn build(_: &$crate::registry::NoKeys, _: &$Env) -> Self {
                $value
            }
        }
    };
}

pub(crate) use keyless_scheme;
