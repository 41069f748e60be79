//! How serde reads and writes a scenario's fields: an object only, whole numbers and numbers
//! with messages in words a scenario's author understands, matrices, the scale mode by its key,
//! the defaults of absent fields, and the reader's errors naming the field.

use super::{Scenario, ScenarioError};
use crate::attention::{Config, ScaleMode};
use serde::de::{self, Deserializer, MapAccess, Unexpected, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

/// The fields of scenario JSON, in the order [`Scenario::to_json`] writes them. An error is
/// inside a field when its path starts with one of these; otherwise the path is an unknown key.
const FIELDS: [&str; 22] = [
    "version",
    "title",
    "caption",
    "sentence",
    "d_model",
    "n_heads",
    "causal",
    "positional_encoding",
    "scale",
    "temperature",
    "rope",
    "n_kv_heads",
    "window",
    "embeddings",
    "w_q",
    "w_k",
    "w_v",
    "w_o",
    "source",
    "source_embeddings",
    "block",
    "training",
];

/// The longest message of the JSON reader quoted in an error, in characters: enough for every
/// message about a real scenario, while a hostile file's megabyte-long key or string is not
/// echoed back in full.
const MAX_MESSAGE_CHARS: usize = 300;
/// A scenario from a JSON object only: serde's derived reader of a struct also takes an array
/// of the fields in order, which the format does not allow.
pub(super) struct ObjectOnly(pub(super) Scenario);

impl<'de> Deserialize<'de> for ObjectOnly {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor;

        impl<'de> Visitor<'de> for ObjectVisitor {
            type Value = Scenario;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of named fields")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Scenario, A::Error> {
                Scenario::deserialize(de::value::MapAccessDeserializer::new(map))
            }
        }

        deserializer.deserialize_map(ObjectVisitor).map(Self)
    }
}

/// The reader's error, naming the field when it is inside one: `field `w_q[1][2]`: …`.
pub(super) fn json_error(error: serde_path_to_error::Error<serde_json::Error>) -> ScenarioError {
    // An unknown key is the path's first segment too, and its message already names it.
    let in_field = matches!(
        error.path().iter().next(),
        Some(serde_path_to_error::Segment::Map { key }) if FIELDS.contains(&key.as_str())
    );
    let text = message(error.inner());
    ScenarioError::Json(if in_field {
        format!("field `{}`: {text}", error.path())
    } else {
        text
    })
}

/// serde_json's message, cut to [`MAX_MESSAGE_CHARS`], then its line and column.
pub(super) fn message(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let location = format!(" at line {} column {}", error.line(), error.column());
    match text.strip_suffix(&location) {
        Some(what) => format!("{}{location}", shorten(what)),
        None => shorten(&text),
    }
}

/// `text`, cut to its first [`MAX_MESSAGE_CHARS`] characters and an ellipsis when longer.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((end, _)) => format!("{}…", text.get(..end).unwrap_or(text)),
        None => text.to_string(),
    }
}

pub(super) fn default_d_model() -> usize {
    Config::default().d_model
}

pub(super) fn default_n_heads() -> usize {
    Config::default().n_heads
}

pub(super) fn default_temperature() -> f64 {
    Config::default().temperature
}

/// The whole-number types of scenario fields, with their largest value for messages.
pub(super) trait WholeNumber: TryFrom<u64> {
    const MAX: u64;
}

impl WholeNumber for u32 {
    const MAX: u64 = u32::MAX as u64;
}

impl WholeNumber for usize {
    const MAX: u64 = usize::MAX as u64;
}

/// A whole number that fits `T`. serde's own messages name the Rust type (`u32`, `usize`),
/// which means nothing to the author of a scenario; these say what is expected in words.
pub(super) fn whole_number<'de, D: Deserializer<'de>, T: WholeNumber>(
    deserializer: D,
) -> Result<T, D::Error> {
    struct WholeNumberVisitor<T>(PhantomData<T>);

    impl<T: WholeNumber> Visitor<'_> for WholeNumberVisitor<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a whole number")
        }

        fn visit_u64<E: de::Error>(self, n: u64) -> Result<T, E> {
            T::try_from(n).map_err(|_| {
                let expected = format!("a whole number up to {}", T::MAX);
                E::invalid_value(Unexpected::Unsigned(n), &expected.as_str())
            })
        }

        fn visit_i64<E: de::Error>(self, n: i64) -> Result<T, E> {
            match u64::try_from(n) {
                Ok(n) => self.visit_u64(n),
                Err(_) => Err(E::invalid_value(
                    Unexpected::Signed(n),
                    &"a whole number of 0 or more",
                )),
            }
        }
    }

    deserializer.deserialize_u64(WholeNumberVisitor(PhantomData))
}

/// A number, whole or not, as an `f64`; serde's own message would call it `f64`.
pub(super) struct Number(pub(super) f64);

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NumberVisitor;

        impl Visitor<'_> for NumberVisitor {
            type Value = f64;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number")
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
                Ok(v)
            }

            // A whole number beyond 2^53 becomes the nearest f64, as it does written with a
            // fraction.
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
                Ok(v as f64)
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
                Ok(v as f64)
            }
        }

        deserializer.deserialize_f64(NumberVisitor).map(Self)
    }
}

pub(super) fn number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    Number::deserialize(deserializer).map(|n| n.0)
}

/// A matrix field: `null` for absent, otherwise an array of rows, each an array of numbers.
/// Rows of different lengths are refused later, by [`Scenario::to_inputs`].
pub(super) fn matrix<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Vec<Vec<f64>>>, D::Error> {
    let rows = Option::<Vec<Vec<Number>>>::deserialize(deserializer)?;
    Ok(rows.map(|rows| {
        rows.into_iter()
            .map(|row| row.into_iter().map(|n| n.0).collect())
            .collect()
    }))
}

/// An optional plain array of numbers.
pub(super) fn vector<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Vec<f64>>, D::Error> {
    let values = Option::<Vec<Number>>::deserialize(deserializer)?;
    Ok(values.map(|v| v.into_iter().map(|n| n.0).collect()))
}

/// An optional whole number.
pub(super) fn optional_whole_number<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<usize>, D::Error> {
    #[derive(serde::Deserialize)]
    struct Whole(#[serde(deserialize_with = "whole_number")] usize);
    Ok(Option::<Whole>::deserialize(deserializer)?.map(|w| w.0))
}

/// An optional object of named fields; `null` counts as absent. serde's derived reader of a
/// struct also takes an array of its fields in order, which the format does not allow.
pub(super) fn optional_object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    struct ObjectVisitor<T>(PhantomData<T>);

    impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object of named fields")
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::deserialize(de::value::MapAccessDeserializer::new(map))
        }
    }

    struct OptionVisitor<T>(PhantomData<T>);

    impl<'de, T: Deserialize<'de>> Visitor<'de> for OptionVisitor<T> {
        type Value = Option<T>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object of named fields")
        }

        fn visit_none<E: de::Error>(self) -> Result<Option<T>, E> {
            Ok(None)
        }

        fn visit_unit<E: de::Error>(self) -> Result<Option<T>, E> {
            Ok(None)
        }

        fn visit_some<D2: Deserializer<'de>>(self, inner: D2) -> Result<Option<T>, D2::Error> {
            inner.deserialize_map(ObjectVisitor(PhantomData)).map(Some)
        }
    }

    deserializer.deserialize_option(OptionVisitor(PhantomData))
}

/// An optional number; `null` counts as absent.
pub(super) fn optional_number<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<f64>, D::Error> {
    Ok(Option::<Number>::deserialize(deserializer)?.map(|n| n.0))
}

/// A choice written as its key, such as `"adam"`: read with its `FromStr`, whose message lists
/// the choices, and written with its `Display`, which is the key. The attention core knows
/// nothing of file formats, so the mapping lives here rather than in a derive on its enums.
pub(super) struct Keyed<T>(pub(super) T);

impl<T: fmt::Display> Serialize for Keyed<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.0)
    }
}

impl<'de, T: FromStr<Err = String>> Deserialize<'de> for Keyed<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor<T>(PhantomData<T>);

        impl<T: FromStr<Err = String>> Visitor<'_> for KeyVisitor<T> {
            type Value = T;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a name, as a string")
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<T, E> {
                text.parse().map_err(E::custom)
            }
        }

        deserializer
            .deserialize_str(KeyVisitor(PhantomData))
            .map(Self)
    }
}

/// An optional choice by its key; `null` counts as absent.
pub(super) mod optional_key {
    use super::{Deserialize, Deserializer, Keyed, Serialize, Serializer};
    use std::fmt::Display;
    use std::str::FromStr;

    pub fn serialize<T: Display, S: Serializer>(
        value: &Option<T>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        value.as_ref().map(Keyed).serialize(serializer)
    }

    pub fn deserialize<'de, T: FromStr<Err = String>, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<T>, D::Error> {
        Ok(Option::<Keyed<T>>::deserialize(deserializer)?.map(|k| k.0))
    }
}

/// An optional list of choices by their keys; `null` counts as absent.
pub(super) mod optional_keys {
    use super::{Deserialize, Deserializer, Keyed, Serialize, Serializer};
    use std::fmt::Display;
    use std::str::FromStr;

    pub fn serialize<T: Display, S: Serializer>(
        value: &Option<Vec<T>>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        value
            .as_ref()
            .map(|list| list.iter().map(Keyed).collect::<Vec<_>>())
            .serialize(serializer)
    }

    pub fn deserialize<'de, T: FromStr<Err = String>, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Vec<T>>, D::Error> {
        let keys = Option::<Vec<Keyed<T>>>::deserialize(deserializer)?;
        Ok(keys.map(|list| list.into_iter().map(|k| k.0).collect()))
    }
}

/// [`ScaleMode`] as its key, such as `"sqrt_head_dim"`. The attention core knows nothing of
/// file formats, so the mapping lives here rather than in a derive on the enum.
pub(super) mod scale_key {
    use super::{de, fmt, Deserializer, ScaleMode, Serializer, Visitor};

    pub fn serialize<S: Serializer>(scale: &ScaleMode, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(scale.key())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ScaleMode, D::Error> {
        struct KeyVisitor;

        impl Visitor<'_> for KeyVisitor {
            type Value = ScaleMode;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let keys: Vec<String> = ScaleMode::ALL
                    .iter()
                    .map(|mode| format!("`{}`", mode.key()))
                    .collect();
                write!(f, "one of {}", keys.join(", "))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<ScaleMode, E> {
                text.parse().map_err(E::custom)
            }
        }

        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_types_say_which_field_what_was_expected_and_what_was_found() {
        let cases = [
            (
                r#"{"version": 1, "sentence": "a", "causal": 3}"#,
                "field `causal`: invalid type: integer `3`, expected a boolean at line 1 column 43",
            ),
            (
                r#"{"version": 1, "sentence": "a", "d_model": 4.0}"#,
                "field `d_model`: invalid type: floating point `4.0`, expected a whole number at line 1 column 46",
            ),
            (
                r#"{"version": 1, "sentence": "a", "n_heads": -1}"#,
                "field `n_heads`: invalid value: integer `-1`, expected a whole number of 0 or more at line 1 column 45",
            ),
            (
                r#"{"version": 5000000000, "sentence": "a"}"#,
                "field `version`: invalid value: integer `5000000000`, expected a whole number up to 4294967295 at line 1 column 22",
            ),
            (
                r#"{"version": 1, "sentence": ["a"]}"#,
                "field `sentence`: invalid type: sequence, expected a string at line 1 column 27",
            ),
            (
                r#"{"version": 1, "sentence": "a", "title": {}}"#,
                "field `title`: invalid type: map, expected a string at line 1 column 41",
            ),
            (
                r#"{"version": 1, "sentence": "a", "temperature": null}"#,
                "field `temperature`: invalid type: null, expected a number at line 1 column 51",
            ),
            (
                r#"{"version": 1, "sentence": "a", "scale": true}"#,
                "field `scale`: invalid type: boolean `true`, expected one of `sqrt_head_dim`, `sqrt_seq_len`, `none` at line 1 column 45",
            ),
            (
                r#"{"version": 1, "sentence": "a", "scale": "sqrt"}"#,
                "field `scale`: unknown scale mode “sqrt”: use sqrt_head_dim, sqrt_seq_len or none at line 1 column 47",
            ),
            (
                r#"{"version": 1, "sentence": "a", "w_o": [[1], 2]}"#,
                "field `w_o[1]`: invalid type: integer `2`, expected a sequence at line 1 column 46",
            ),
            (
                r#"{"version": 1, "sentence": "a", "embeddings": [[1, null]]}"#,
                "field `embeddings[0][1]`: invalid type: null, expected a number at line 1 column 55",
            ),
            (
                r#"{"version": 1, "sentence": "a", "version": 1}"#,
                "duplicate field `version` at line 1 column 41",
            ),
            (r#"{"version": 1}"#, "missing field `sentence` at line 1 column 14"),
            (r#"{"sentence": "a"}"#, "missing field `version` at line 1 column 17"),
            (
                r#"[1, "a"]"#,
                "invalid type: sequence, expected an object of named fields at line 1 column 0",
            ),
            (
                "{\"version\": 1,\n \"sentence\": \"a\",\n}",
                "trailing comma at line 3 column 1",
            ),
            (
                r#"{"version": 1, "sentence": "a"} {}"#,
                "trailing characters at line 1 column 33",
            ),
        ];
        for (json, message) in cases {
            let err = Scenario::from_json(json).unwrap_err();
            assert_eq!(
                err,
                ScenarioError::Json(message.to_string()),
                "{json}: {err}"
            );
        }
        let err = Scenario::from_json(r#"{"version": 1, "sentence": "a", "colour": 1}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("This is not a valid scenario: unknown field `colour`, expected one of `version`, `title`,"),
            "{err}"
        );
    }

    #[test]
    fn a_wrong_type_deep_in_a_matrix_is_named_by_its_path() {
        let json = r#"{"version": 1, "sentence": "a b", "d_model": 4,
            "w_q": [[1, 2, 3, 4], [5, 6, "7", 8], [0, 0, 0, 0], [0, 0, 0, 0]]}"#;
        let err = Scenario::from_json(json).unwrap_err().to_string();
        assert!(
            err.starts_with(
                r#"This is not a valid scenario: field `w_q[1][2]`: invalid type: string "7", expected a number at line 2"#
            ),
            "{err}"
        );
    }

    #[test]
    fn a_repeated_field_is_refused_wherever_it_is() {
        for (json, field) in [
            (
                r#"{"version": 1, "version": 1, "sentence": "a"}"#,
                "version",
            ),
            (
                r#"{"version": 1, "sentence": "a", "title": "x", "title": null}"#,
                "title",
            ),
            (
                r#"{"version": 1, "sentence": "a", "w_q": null, "w_q": [[1]]}"#,
                "w_q",
            ),
        ] {
            let err = Scenario::from_json(json).unwrap_err().to_string();
            assert!(
                err.contains(&format!("duplicate field `{field}`")),
                "{json}: {err}"
            );
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = "[".repeat(10_000);
        let objects = r#"{"a":"#.repeat(10_000);
        for json in [
            deep.clone(),
            objects.clone(),
            format!(r#"{{"version": 1, "sentence": "a", "w_q": {deep}"#),
            format!(r#"{{"version": 1, "sentence": {deep}"#),
            format!(r#"{{"version": 1, "sentence": "a", "extra": {objects}"#),
            format!(r#"{{"version": 1, "sentence": "a", "title": {objects}"#),
        ] {
            assert!(
                matches!(Scenario::from_json(&json), Err(ScenarioError::Json(_))),
                "{}",
                &json[..60]
            );
        }
    }

    #[test]
    fn a_long_hostile_key_or_string_is_not_echoed_in_full() {
        let long = "x".repeat(100_000);
        for json in [
            format!(r#"{{"version": 1, "sentence": "a", "{long}": 1}}"#),
            format!(r#"{{"version": "{long}", "sentence": "a"}}"#),
            format!(r#"{{"version": 1, "sentence": "a", "scale": "{long}"}}"#),
        ] {
            let err = Scenario::from_json(&json).unwrap_err().to_string();
            assert!(err.chars().count() < 400, "{} characters", err.len());
            assert!(
                err.contains("…") && err.contains(" at line 1 column "),
                "{err}"
            );
        }
    }

    #[test]
    fn floats_read_back_bit_for_bit() {
        let awkward = [
            5e-324,
            -5e-324,
            2.2250738585072014e-308,
            1.7976931348623157e308,
            -1.7976931348623157e308,
            1e300,
            0.1 + 0.2,
            1.0 / 3.0,
            std::f64::consts::PI,
            123456789012345680.0,
            -1.1893854837400641,
            0.0,
            -0.0,
        ];
        // And many bit patterns, spread over the whole range.
        let mut bits: u64 = 0x9E37_79B9_7F4A_7C15;
        let spread = std::iter::repeat_with(|| {
            bits = bits
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            f64::from_bits(bits)
        })
        .filter(|v| v.is_finite())
        .take(20_000);
        let values: Vec<f64> = awkward.into_iter().chain(spread).collect();
        let scenario = Scenario {
            temperature: -0.0,
            embeddings: Some(values.chunks(100).map(<[f64]>::to_vec).collect()),
            ..Scenario::default()
        };
        let back = Scenario::from_json(&scenario.to_json()).unwrap();
        assert!(back.temperature.is_sign_negative());
        let read: Vec<f64> = back.embeddings.unwrap().into_iter().flatten().collect();
        assert_eq!(read.len(), values.len());
        for (r, v) in read.iter().zip(&values) {
            assert_eq!(r.to_bits(), v.to_bits(), "{v:?} read back as {r:?}");
        }
        // Whole numbers are read as floats too, and a huge one as the nearest float.
        let json = r#"{"version": 1, "sentence": "a", "w_q": [[-0, 7, 123456789012345678901234]]}"#;
        let row = &Scenario::from_json(json).unwrap().w_q.unwrap()[0];
        assert!(row[0] == 0.0 && row[0].is_sign_negative());
        assert_eq!(row[1..], [7.0, 123456789012345678901234.0]);
    }

    #[test]
    fn the_field_list_is_the_order_fields_are_written_in() {
        let scenario = Scenario {
            version: 4,
            title: Some("t".into()),
            caption: Some("c".into()),
            rope: Some(super::super::RopeFields::from_rope(&Default::default())),
            n_kv_heads: Some(1),
            window: Some(2),
            source: Some("s".into()),
            source_embeddings: Some(vec![vec![0.0; 4]]),
            block: Some(super::super::BlockFields::default()),
            training: Some(super::super::TrainingFields::default()),
            ..Scenario::default()
        };
        let json = scenario.to_json();
        let at: Vec<usize> = FIELDS
            .iter()
            .map(|f| json.find(&format!("\n  \"{f}\": ")).unwrap_or(usize::MAX))
            .collect();
        assert!(at.iter().all(|&i| i < json.len()), "{json}");
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{at:?}");
        assert_eq!(json.matches("\n  \"").count(), FIELDS.len());
    }

    #[test]
    fn null_leaves_an_optional_field_out_and_whole_numbers_count_as_floats() {
        let json = r#"{"version": 1, "sentence": "a b", "title": null, "w_q": null,
            "temperature": 2, "embeddings": [[1, 2, 3, 4], [0.5, -1, 1e-3, 0]]}"#;
        let scenario = Scenario::from_json(json).unwrap();
        assert_eq!((scenario.title, scenario.w_q), (None, None));
        assert_eq!(scenario.temperature, 2.0);
        assert_eq!(scenario.embeddings.unwrap()[1], [0.5, -1.0, 0.001, 0.0]);
    }
}
