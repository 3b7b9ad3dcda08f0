//! "Did you mean …?" suggestions by edit distance.

/// The longest name [`did_you_mean`] compares, in characters.
pub const SUGGESTION_MAX_CHARS: usize = 128;

/// The candidate closest to `input`, if it is close enough to be a plausible typo.
///
/// Close enough means an edit distance of at most a third of the input's length
/// (at least 1), so `readonly_gaurd` suggests `readonly_guard` but `x` suggests
/// nothing. Names longer than [`SUGGESTION_MAX_CHARS`], and candidates whose
/// length alone puts them past the limit, are not compared: the distance
/// table grows with the product of the two lengths, and a name that long is
/// no typo.
pub fn did_you_mean<'a, I>(input: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let length = input.chars().count();
    if length > SUGGESTION_MAX_CHARS {
        return None;
    }
    let limit = (length / 3).max(1);
    candidates
        .into_iter()
        .filter(|candidate| {
            let other = candidate.chars().count();
            other <= SUGGESTION_MAX_CHARS && other.abs_diff(length) <= limit
        })
        .map(|candidate| (edit_distance(input, candidate), candidate))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance over characters, with adjacent transpositions counted as one edit.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut table = vec![0usize; (a.len() + 1) * width];
    for (i, cell) in table.iter_mut().step_by(width).enumerate() {
        *cell = i;
    }
    for (j, cell) in table.iter_mut().take(width).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (table[(i - 1) * width + j] + 1)
                .min(table[i * width + j - 1] + 1)
                .min(table[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(table[(i - 2) * width + j - 2] + 1);
            }
            table[i * width + j] = best;
        }
    }
    table[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let names = ["readonly_guard", "audit_log", "rate_limit"];
        assert_eq!(
            did_you_mean("readonly_gaurd", names),
            Some("readonly_guard")
        );
        assert_eq!(did_you_mean("audit_lgo", names), Some("audit_log"));
        assert_eq!(did_you_mean("something_else", names), None);
    }

    #[test]
    fn huge_names_are_not_compared() {
        // Two 300,000-character names would need a table of 90 billion
        // cells; they are simply not suggested.
        let long = "k".repeat(300_000);
        let other = format!("{long}x");
        assert_eq!(did_you_mean(&long, [other.as_str()]), None);
        let near = format!("{}x", "k".repeat(100));
        assert_eq!(
            did_you_mean(&"k".repeat(101), [near.as_str()]),
            Some(near.as_str())
        );
    }

    #[test]
    fn distance_counts_transpositions_once() {
        assert_eq!(edit_distance("ab", "ba"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
