//! The one duration type of attributes and config files: `500ms`, `2s`,
//! `2m`, `1h` — and whole seconds where Claude Code writes numbers.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

const MILLIS_PER_SECOND: u64 = 1_000;
const MILLIS_PER_MINUTE: u64 = 60 * MILLIS_PER_SECOND;
const MILLIS_PER_HOUR: u64 = 60 * MILLIS_PER_MINUTE;

/// A duration as people write it in attributes and config files.
///
/// - **Text** (everywhere): a whole number followed by `ms`, `s`, `m` or `h`
///   (`"500ms"`, `"2s"`, `"2m"`, `"1h"`). Zero is refused: a wait of no time
///   at all could never finish. So is a number too large to count in
///   milliseconds.
/// - **A whole number of seconds**, only where Claude Code writes numbers (a
///   command hook's `timeout`): read those fields with
///   [`seconds_or_text`](Self::seconds_or_text). Everywhere else a bare
///   number is refused, because `30` could mean seconds or milliseconds.
///
/// It prints back in the same grammar, with the largest unit that holds it
/// exactly (`5s`, `2m`, `1500ms`), so what is printed parses to the same
/// duration. A duration built in code with a part below a millisecond, or
/// zero, prints in microseconds (`250µs`), which no config can hold.
///
/// ```
/// use std::time::Duration;
/// use hooks_when::ConfigDuration;
///
/// let read: ConfigDuration = "1500ms".parse().unwrap();
/// assert_eq!(read.get(), Duration::from_millis(1500));
/// assert_eq!(read.to_string(), "1500ms");
/// assert_eq!(ConfigDuration::from(Duration::from_secs(120)).to_string(), "2m");
/// assert!("0s".parse::<ConfigDuration>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConfigDuration(Duration);

/// Why a text or number is not a [`ConfigDuration`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DurationError {
    /// Not a whole number followed by a unit.
    #[error(
        "invalid duration \"{text}\": expected a whole number followed by ms, s, m or h, e.g. \"500ms\", \"2s\" or \"2m\""
    )]
    Syntax {
        /// The text as written.
        text: String,
    },
    /// A number too large to count in milliseconds.
    #[error(
        "invalid duration \"{text}\": the number is too large; use a duration under a few million years, e.g. \"24h\""
    )]
    TooLarge {
        /// The text as written.
        text: String,
    },
    /// Zero, which no wait can finish in.
    #[error("invalid duration \"{text}\": it must be longer than zero, e.g. \"10s\"")]
    Zero {
        /// The text as written.
        text: String,
    },
    /// A number of seconds below zero.
    #[error(
        "invalid duration {seconds}: a number must be a positive whole number of seconds, or write a duration such as \"10s\""
    )]
    Negative {
        /// The number as written.
        seconds: i64,
    },
    /// A number of seconds with a fraction.
    #[error(
        "invalid duration {seconds}: a number must be whole seconds; write fractions as a duration such as \"1500ms\""
    )]
    Fractional {
        /// The number as read.
        seconds: String,
    },
}

impl ConfigDuration {
    /// The duration.
    pub const fn get(self) -> Duration {
        self.0
    }

    /// Reads the text form (`"500ms"`, `"2s"`, `"2m"`, `"1h"`).
    pub fn parse(text: &str) -> Result<Self, DurationError> {
        let trimmed = text.trim();
        let digits_end = trimmed
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(trimmed.len());
        let (digits, unit) = trimmed.split_at(digits_end);
        let syntax = || DurationError::Syntax {
            text: text.to_owned(),
        };
        let too_large = || DurationError::TooLarge {
            text: text.to_owned(),
        };
        if digits.is_empty() {
            return Err(syntax());
        }
        let millis_per_unit = match unit.trim() {
            "ms" => 1,
            "s" => MILLIS_PER_SECOND,
            "m" => MILLIS_PER_MINUTE,
            "h" => MILLIS_PER_HOUR,
            _ => return Err(syntax()),
        };
        let value: u64 = digits.parse().map_err(|_| too_large())?;
        let millis = value.checked_mul(millis_per_unit).ok_or_else(too_large)?;
        if millis == 0 {
            return Err(DurationError::Zero {
                text: text.to_owned(),
            });
        }
        Ok(ConfigDuration(Duration::from_millis(millis)))
    }

    /// A whole number of seconds, as Claude Code writes a command's `timeout`.
    pub fn from_seconds(seconds: u64) -> Result<Self, DurationError> {
        if seconds == 0 {
            return Err(DurationError::Zero {
                text: seconds.to_string(),
            });
        }
        // Stays countable in milliseconds, like the text form.
        if seconds.checked_mul(MILLIS_PER_SECOND).is_none() {
            return Err(DurationError::TooLarge {
                text: seconds.to_string(),
            });
        }
        Ok(ConfigDuration(Duration::from_secs(seconds)))
    }

    /// For `#[serde(deserialize_with = "…")]` on a `Duration` field written
    /// as text only (`"30s"`).
    pub fn text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        ConfigDuration::deserialize(deserializer).map(ConfigDuration::get)
    }

    /// For `#[serde(deserialize_with = "…")]` on a `Duration` field where
    /// Claude Code writes numbers: the text form, or a whole number of
    /// seconds (`10` is `"10s"`).
    pub fn seconds_or_text<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Duration, D::Error> {
        deserializer
            .deserialize_any(DurationVisitor { numbers: true })
            .map(ConfigDuration::get)
    }
}

/// Parses the text form; see [`ConfigDuration::parse`].
///
/// ```
/// use std::time::Duration;
/// assert_eq!(hooks_when::parse_duration("500ms"), Ok(Duration::from_millis(500)));
/// assert_eq!(hooks_when::parse_duration("2m"), Ok(Duration::from_secs(120)));
/// assert!(hooks_when::parse_duration("2 parsecs").is_err());
/// ```
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    ConfigDuration::parse(text).map(ConfigDuration::get)
}

impl From<Duration> for ConfigDuration {
    /// Any duration, to print it; only parsing refuses zero.
    fn from(duration: Duration) -> Self {
        ConfigDuration(duration)
    }
}

impl From<ConfigDuration> for Duration {
    fn from(duration: ConfigDuration) -> Self {
        duration.0
    }
}

impl FromStr for ConfigDuration {
    type Err = DurationError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        ConfigDuration::parse(text)
    }
}

impl fmt::Display for ConfigDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let whole_millis = self.0.subsec_nanos().is_multiple_of(1_000_000);
        let millis = u64::try_from(self.0.as_millis())
            .ok()
            .filter(|_| whole_millis);
        match millis {
            Some(0) | None => write!(f, "{}µs", self.0.as_micros()),
            Some(millis) => {
                for (unit, per) in [
                    ("h", MILLIS_PER_HOUR),
                    ("m", MILLIS_PER_MINUTE),
                    ("s", MILLIS_PER_SECOND),
                ] {
                    if millis.is_multiple_of(per) {
                        return write!(f, "{}{unit}", millis / per);
                    }
                }
                write!(f, "{millis}ms")
            }
        }
    }
}

impl<'de> Deserialize<'de> for ConfigDuration {
    /// The text form only; see [`ConfigDuration::seconds_or_text`] for fields
    /// that also take numbers.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(DurationVisitor { numbers: false })
    }
}

impl Serialize for ConfigDuration {
    /// The text form, as [`Display`](fmt::Display) prints it.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Reads text, and whole seconds when `numbers` is set.
struct DurationVisitor {
    numbers: bool,
}

impl DurationVisitor {
    fn no_numbers<E: de::Error>(&self, number: &dyn fmt::Display) -> Result<ConfigDuration, E> {
        Err(E::custom(format!(
            "invalid duration {number}: write it with a unit, e.g. \"{number}s\" or \"{number}ms\""
        )))
    }
}

impl Visitor<'_> for DurationVisitor {
    type Value = ConfigDuration;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.numbers {
            f.write_str("a duration such as \"10s\" or \"500ms\", or a whole number of seconds")
        } else {
            f.write_str("a duration such as \"10s\", \"500ms\" or \"2m\"")
        }
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<ConfigDuration, E> {
        ConfigDuration::parse(text).map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, seconds: u64) -> Result<ConfigDuration, E> {
        if !self.numbers {
            return self.no_numbers(&seconds);
        }
        ConfigDuration::from_seconds(seconds).map_err(E::custom)
    }

    fn visit_i64<E: de::Error>(self, seconds: i64) -> Result<ConfigDuration, E> {
        if !self.numbers {
            return self.no_numbers(&seconds);
        }
        match u64::try_from(seconds) {
            Ok(seconds) => self.visit_u64(seconds),
            Err(_) => Err(E::custom(DurationError::Negative { seconds })),
        }
    }

    fn visit_f64<E: de::Error>(self, seconds: f64) -> Result<ConfigDuration, E> {
        if !self.numbers {
            return self.no_numbers(&seconds);
        }
        Err(E::custom(DurationError::Fractional {
            seconds: seconds.to_string(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    struct Text {
        #[serde(deserialize_with = "ConfigDuration::text")]
        wait: Duration,
    }

    #[derive(Debug, Deserialize)]
    struct Claude {
        #[serde(deserialize_with = "ConfigDuration::seconds_or_text")]
        timeout: Duration,
    }

    fn text(value: serde_json::Value) -> Result<Duration, String> {
        serde_json::from_value::<Text>(json!({ "wait": value }))
            .map(|read| read.wait)
            .map_err(|error| error.to_string())
    }

    fn claude(value: serde_json::Value) -> Result<Duration, String> {
        serde_json::from_value::<Claude>(json!({ "timeout": value }))
            .map(|read| read.timeout)
            .map_err(|error| error.to_string())
    }

    #[test]
    fn printing_and_parsing_round_trip() {
        for (written, printed) in [
            ("500ms", "500ms"),
            ("1500ms", "1500ms"),
            ("1000ms", "1s"),
            ("5s", "5s"),
            ("90s", "90s"),
            ("120s", "2m"),
            ("2m", "2m"),
            ("60m", "1h"),
            ("24h", "24h"),
            (" 7 s ", "7s"),
        ] {
            let read: ConfigDuration = written.parse().unwrap();
            assert_eq!(read.to_string(), printed, "{written}");
            assert_eq!(printed.parse::<ConfigDuration>(), Ok(read), "{printed}");
        }
        let serialized = serde_json::to_value(ConfigDuration::parse("1500ms").unwrap()).unwrap();
        assert_eq!(serialized, json!("1500ms"));
        assert_eq!(text(serialized), Ok(Duration::from_millis(1500)));
    }

    #[test]
    fn durations_from_code_print_exactly() {
        let printed = |duration| ConfigDuration::from(duration).to_string();
        assert_eq!(printed(Duration::from_millis(1500)), "1500ms");
        assert_eq!(printed(Duration::from_secs(156)), "156s");
        assert_eq!(printed(Duration::from_micros(250)), "250µs");
        assert_eq!(printed(Duration::from_micros(1500)), "1500µs");
        assert_eq!(printed(Duration::ZERO), "0µs");
        assert_eq!(
            printed(Duration::MAX),
            format!("{}µs", Duration::MAX.as_micros())
        );
    }

    #[test]
    fn zero_overflow_and_nonsense_are_refused_with_the_reason() {
        let error = ConfigDuration::parse("0s").unwrap_err();
        assert!(error.to_string().contains("longer than zero"), "{error}");
        assert!(matches!(
            ConfigDuration::parse("0ms"),
            Err(DurationError::Zero { .. })
        ));
        let error = ConfigDuration::parse("99999999999999999999s").unwrap_err();
        assert!(error.to_string().contains("too large"), "{error}");
        let error = ConfigDuration::parse("18446744073709551615h").unwrap_err();
        assert!(matches!(error, DurationError::TooLarge { .. }), "{error}");
        for bad in ["", "s", "5", "5 parsecs", "1.5s", "-5s", "5S", "5sec"] {
            let error = ConfigDuration::parse(bad).unwrap_err();
            assert!(
                error.to_string().contains("expected a whole number"),
                "{bad}: {error}"
            );
        }
    }

    #[test]
    fn numbers_are_seconds_only_where_claude_code_writes_them() {
        assert_eq!(claude(json!(10)), Ok(Duration::from_secs(10)));
        assert_eq!(claude(json!("10s")), Ok(Duration::from_secs(10)));
        assert_eq!(claude(json!("250ms")), Ok(Duration::from_millis(250)));
        let error = claude(json!(0)).unwrap_err();
        assert!(error.contains("longer than zero"), "{error}");
        let error = claude(json!(-5)).unwrap_err();
        assert!(error.contains("positive"), "{error}");
        let error = claude(json!(1.5)).unwrap_err();
        assert!(
            error.contains("whole seconds") && error.contains("1500ms"),
            "{error}"
        );
        let error = claude(json!(u64::MAX)).unwrap_err();
        assert!(error.contains("too large"), "{error}");
        let error = claude(json!(true)).unwrap_err();
        assert!(error.contains("whole number of seconds"), "{error}");

        assert_eq!(text(json!("10s")), Ok(Duration::from_secs(10)));
        let error = text(json!(10)).unwrap_err();
        assert!(
            error.contains("with a unit") && error.contains("\"10s\""),
            "{error}"
        );
        let error = text(json!(0.5)).unwrap_err();
        assert!(error.contains("with a unit"), "{error}");
    }
}
