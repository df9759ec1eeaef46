//! The key paths of scenario errors inside a scheme's section, and the reading of a
//! scheme's `{ kind = ..., keys }`.
//!
//! serde reports an error inside a value it buffers without the key path, so a scheme's
//! keys are deserialized with `serde_path_to_error` and the inner path travels out in the
//! error message (see [`nested`]) until `Scenario::from_json` joins it to the outer one.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Prefix of a serde error message that carries a key path inside a scheme's section.
const NESTED: &str = "\u{1}";

/// A serde error message for a bad value at `path` inside the value being deserialized.
pub(crate) fn nested(path: &str, message: &str) -> String {
    match split_nested(message) {
        Some((inner, message)) => format!("{NESTED}{path}.{inner}{NESTED}{message}"),
        None => format!("{NESTED}{path}{NESTED}{message}"),
    }
}

/// The inner key path and message of an error made by [`nested`].
pub(crate) fn split_nested(message: &str) -> Option<(&str, &str)> {
    message.strip_prefix(NESTED)?.split_once(NESTED)
}

/// Reads a scheme's `{ kind = ..., keys }` (or a bare kind) into the kind and the other
/// keys; without `kind`, the kind is `default`. An unknown kind's message lists `kinds`.
pub(crate) fn split_kind(value: Value, kinds: &[&str], default: &str) -> Result<(String, Map<String, Value>), String> {
    match value {
        Value::String(kind) => check_tag("kind", kind, kinds).map(|kind| (kind, Map::new())),
        Value::Object(map) => split_tag(map, "kind", kinds, default),
        other => Err(format!("{other} is not accepted (accepted: a table with `kind`, or a kind: {})", listed(kinds))),
    }
}

/// Takes the key `tag` (a scheme's `kind`, a model's `model`) out of `map`: its value,
/// one of `tags`, or `default` without it; and the other keys. A bad value's error is
/// at the key.
pub(crate) fn split_tag(
    mut map: Map<String, Value>,
    tag: &str,
    tags: &[&str],
    default: &str,
) -> Result<(String, Map<String, Value>), String> {
    let value = match map.remove(tag) {
        Some(Value::String(value)) => value,
        Some(other) => return Err(nested(tag, &format!("{other} is not a {tag} (accepted: {})", listed(tags)))),
        None => return Ok((default.to_string(), map)),
    };
    check_tag(tag, value, tags).map(|value| (value, map)).map_err(|message| nested(tag, &message))
}

/// `value` if it is one of `tags`.
fn check_tag(tag: &str, value: String, tags: &[&str]) -> Result<String, String> {
    if tags.contains(&value.as_str()) {
        Ok(value)
    } else {
        Err(format!("unknown {tag} \"{value}\" (accepted: {})", listed(tags)))
    }
}

/// `["a", "b"]` as `"a", "b"`.
pub(crate) fn listed(words: &[&str]) -> String {
    words.iter().map(|w| format!("\"{w}\"")).collect::<Vec<_>>().join(", ")
}

/// Deserializes a scheme's keys, keeping the path of a bad one.
pub(crate) fn keys<T: DeserializeOwned>(rest: Map<String, Value>) -> Result<T, String> {
    serde_path_to_error::deserialize(Value::Object(rest)).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().to_string();
        if path == "." {
            message
        } else {
            nested(&path, &message)
        }
    })
}

/// The keys a configuration type accepts: the fields its derived `Deserialize` asks for;
/// None for a type that does not deserialize as a struct (one read by hand).
pub(crate) fn key_names<T: DeserializeOwned>() -> Option<&'static [&'static str]> {
    use serde::de::{Error, Visitor};
    /// A deserializer that stops at the first request, keeping a struct's field names.
    struct Fields(Option<&'static [&'static str]>);
    #[derive(Debug)]
    struct Stop;
    impl std::fmt::Display for Stop {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("stop")
        }
    }
    impl std::error::Error for Stop {}
    impl Error for Stop {
        fn custom<M: std::fmt::Display>(_: M) -> Self {
            Stop
        }
    }
    impl<'de> serde::Deserializer<'de> for &mut Fields {
        type Error = Stop;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            Err(Stop)
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Stop> {
            self.0 = Some(fields);
            Err(Stop)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
            unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }
    let mut fields = Fields(None);
    let _ = T::deserialize(&mut fields);
    fields.0
}

/// A scheme's section as written: which kind it names (or gets by default) and whether
/// it names one, for the messages about keys it does not accept.
pub(crate) struct Section<'a> {
    pub kind: &'a str,
    pub kind_given: bool,
    pub kinds: &'a [&'a str],
    /// The keys of each kind (None where they cannot be told).
    pub keys_of: &'a dyn Fn(&str) -> Option<&'static [&'static str]>,
}

/// `message`, an error from deserializing the keys of `section`'s kind, or, for a key the
/// kind does not have, a message that says what was meant: `kind` for a misspelling of
/// it, the kinds that have the key when the section names none (the default kind has
/// few keys, often none), else the keys the kind accepts, `kind` among them.
pub(crate) fn explain_unknown_key(message: String, section: &Section) -> String {
    let Some((key, inner)) = split_nested(&message) else { return message };
    let known = (section.keys_of)(section.kind);
    if key.contains('.')
        || key.contains('[')
        || !inner.starts_with("unknown field")
        || known.is_some_and(|k| k.contains(&key))
    {
        return message;
    }
    let kinds = listed(section.kinds);
    let of_kind = if section.kind_given {
        format!("kind \"{}\"", section.kind)
    } else {
        format!("kind \"{}\" (the default when `kind` is not set)", section.kind)
    };
    let owners: Vec<&str> = section
        .kinds
        .iter()
        .copied()
        .filter(|k| (section.keys_of)(k).is_some_and(|keys| keys.contains(&key)))
        .collect();
    let owned_by = owners.iter().map(|k| format!("kind \"{k}\"")).collect::<Vec<_>>().join(" or ");
    let explained = if !section.kind_given && is_misspelled_kind(key) {
        format!("unknown key `{key}`; did you mean `kind`? (accepted kinds: {kinds})")
    } else if !section.kind_given && !owners.is_empty() {
        format!(
            "unknown key `{key}` for {of_kind}; it is a key of {owned_by}: set kind = \"{}\" (accepted kinds: {kinds})",
            owners[0]
        )
    } else {
        let mut explained = match known {
            // Keys read by hand: their own message, which cannot know of `kind`.
            None => format!("{}; and `kind` (accepted kinds: {kinds})", clean_serde_message(inner)),
            Some([]) => format!("unknown key `{key}`: {of_kind} has no keys besides `kind` (accepted kinds: {kinds})"),
            Some(known) => {
                let accepted: Vec<String> =
                    std::iter::once("kind").chain(known.iter().copied()).map(|k| format!("`{k}`")).collect();
                format!("unknown key `{key}` for {of_kind} (accepted: {})", accepted.join(", "))
            }
        };
        if !owners.is_empty() {
            explained.push_str(&format!("; `{key}` is a key of {owned_by}"));
        }
        explained
    };
    nested(key, &explained)
}

/// serde's "unknown field" as the scenario's messages say it.
fn clean_serde_message(message: &str) -> String {
    message.replace("unknown field", "unknown key")
}

/// Whether `key` reads as a misspelling of `kind`: at most two edits (a swap of
/// neighbours is one) from it, ignoring case, and not too short to tell.
fn is_misspelled_kind(key: &str) -> bool {
    let key: Vec<char> = key.to_lowercase().chars().collect();
    let kind: Vec<char> = "kind".chars().collect();
    key.len() >= 3 && edit_distance(&key, &kind) <= 2
}

/// The optimal string alignment distance: insertions, deletions, substitutions and swaps
/// of adjacent characters.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::NoKeys;

    #[test]
    fn key_names_are_a_structs_fields_or_none() {
        #[derive(serde::Deserialize)]
        #[allow(dead_code)]
        struct Two {
            alpha: u32,
            beta: bool,
        }
        assert_eq!(key_names::<Two>(), Some(&["alpha", "beta"][..]));
        assert_eq!(key_names::<NoKeys>(), Some(&[][..]));
        assert_eq!(key_names::<serde_json::Value>(), None);
        assert_eq!(key_names::<u32>(), None);
    }

    #[test]
    fn misspellings_of_kind_are_near_it() {
        for key in ["knd", "kidn", "Kind", "kinds", "kin", "KIND"] {
            assert!(is_misspelled_kind(key), "{key}");
        }
        for key in ["k", "id", "classes", "alpha", "quantum", "kindness"] {
            assert!(!is_misspelled_kind(key), "{key}");
        }
    }
}
