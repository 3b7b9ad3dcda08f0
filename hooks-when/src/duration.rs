//! The duration syntax shared by attributes and config files: `500ms`, `2s`, `2m`, `1h`.

use std::time::Duration;

/// Parses a whole number followed by `ms`, `s`, `m` or `h` (`"500ms"`, `"2s"`, `"2m"`).
///
/// Zero is rejected: a hook with no time at all could never finish.
///
/// ```
/// use std::time::Duration;
/// assert_eq!(hooks_when::parse_duration("500ms"), Ok(Duration::from_millis(500)));
/// assert_eq!(hooks_when::parse_duration("2m"), Ok(Duration::from_secs(120)));
/// assert!(hooks_when::parse_duration("2 parsecs").is_err());
/// ```
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    let digits_end = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (digits, unit) = trimmed.split_at(digits_end);
    let expected = || {
        format!(
            "invalid duration \"{text}\": expected a whole number followed by ms, s, m or h, e.g. \"500ms\", \"2s\" or \"2m\""
        )
    };
    if digits.is_empty() {
        return Err(expected());
    }
    let value: u64 = digits
        .parse()
        .map_err(|_| format!("invalid duration \"{text}\": the number is too large"))?;
    let millis_per_unit: u64 = match unit.trim() {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return Err(expected()),
    };
    let millis = value
        .checked_mul(millis_per_unit)
        .ok_or_else(|| format!("invalid duration \"{text}\": the number is too large"))?;
    if millis == 0 {
        return Err(format!(
            "invalid duration \"{text}\": it must be longer than zero"
        ));
    }
    Ok(Duration::from_millis(millis))
}
