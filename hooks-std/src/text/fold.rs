//! Identifiers compared the way a person reads them.
//!
//! A rate limit keyed by connector, or a redaction rule keyed by argument
//! name, is only as good as its notion of "the same name": `OA`, fullwidth
//! `ｏａ` and `o\u{200B}a` all name the connector `oa`. [`fold_identifier`]
//! gives every such spelling one form; [`skeleton`] additionally merges
//! characters that merely look alike across scripts.

use std::borrow::Cow;
use std::sync::LazyLock;

use unicode_normalization::UnicodeNormalization;

use super::hidden::is_hidden;

/// The folded form of an identifier: hidden characters (see
/// [`is_hidden`]; zero-width, bidi, tags, …) removed, NFKC,
/// full Unicode case folding, NFKC again (folding can denormalize), and
/// surrounding whitespace trimmed.
///
/// ASCII without upper-case letters, controls or surrounding spaces — the
/// usual connector or user id — is returned borrowed, without allocating.
pub fn fold_identifier(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        let plain = text
            .bytes()
            .all(|b| !b.is_ascii_uppercase() && !b.is_ascii_control());
        let trimmed = text.trim_matches(|c: char| c.is_ascii_whitespace());
        if plain {
            return Cow::Borrowed(trimmed);
        }
        let folded: String = trimmed
            .chars()
            .filter(|c| !c.is_ascii_control())
            .map(|c| c.to_ascii_lowercase())
            .collect();
        return Cow::Owned(folded.trim().to_owned());
    }
    let visible: String = text.chars().filter(|c| !is_hidden_but_space(*c)).collect();
    let compatible: String = visible.nfkc().collect();
    let folded = caseless::default_case_fold_str(&compatible);
    let normalized: String = folded.nfkc().collect();
    Cow::Owned(normalized.trim().to_owned())
}

/// Hidden characters except unusual spaces, which NFKC maps to U+0020 (so
/// `a\u{3000}b` folds to `a b`, not `ab`).
fn is_hidden_but_space(c: char) -> bool {
    is_hidden(c) && !c.is_whitespace()
}

/// The UTS #39 confusable skeleton of the [folded](fold_identifier) text,
/// in lower case: Cyrillic `раssword` and Latin `password` share one
/// skeleton. Two strings with the same skeleton can be mistaken for each
/// other by a person, so a guard that matches names treats them as one.
///
/// Folding loses the case a character was written in, and confusables.txt
/// maps some small letters elsewhere than their capitals (Greek `τ` to `ᴛ`
/// but `Τ` to `T`; `ν` to `v` but `Ν` to `N`). Each character here takes its
/// own prototype when that is ASCII, else its capital's when that is;
/// [`skeleton_of_capitals`] prefers the capital's. A name that must not be
/// missed is compared against both.
pub fn skeleton(text: &str) -> String {
    skeleton_preferring(text, false)
}

/// [`skeleton`], preferring for each character the prototype of its capital
/// when that is ASCII: Greek capitals `ΤΟΚΕΝ` read as `token`.
pub fn skeleton_of_capitals(text: &str) -> String {
    skeleton_preferring(text, true)
}

fn skeleton_preferring(text: &str, capitals_first: bool) -> String {
    let folded = fold_identifier(text);
    if folded
        .bytes()
        .all(|b| b.is_ascii() && ASCII_IS_ITS_OWN_PROTOTYPE[usize::from(b)])
    {
        // NFD leaves ASCII alone, so text made of characters that are their
        // own prototypes is its own skeleton: skip the table lookups.
        return folded.into_owned();
    }
    let prototype = |form: &str| -> String {
        unicode_security::skeleton(form)
            .flat_map(char::to_lowercase)
            .collect()
    };
    let mut out = String::with_capacity(folded.len());
    let mut buffer = [0; 4];
    for c in folded.chars() {
        let own = prototype(c.encode_utf8(&mut buffer));
        if c.is_ascii() {
            out.push_str(&own);
            continue;
        }
        let capital = prototype(&c.to_uppercase().collect::<String>());
        let (first, second) = if capitals_first {
            (capital, own)
        } else {
            (own, capital)
        };
        out.push_str(if first.is_ascii() || !second.is_ascii() {
            &first
        } else {
            &second
        });
    }
    out
}

/// For each ASCII character, whether confusables.txt leaves it as it is
/// (most letters; not `m` → `rn`, `0` → `O`, `1` → `l`, …).
static ASCII_IS_ITS_OWN_PROTOTYPE: LazyLock<[bool; 128]> = LazyLock::new(|| {
    let mut table = [false; 128];
    for (byte, slot) in (0u8..128).zip(table.iter_mut()) {
        let c = char::from(byte);
        let mut buffer = [0; 4];
        *slot = unicode_security::skeleton(c.encode_utf8(&mut buffer)).eq(std::iter::once(c));
    }
    table
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_one_name_fold_together() {
        for text in [
            "oa",
            "OA",
            "Oa",
            " oa ",
            "ｏａ",
            "ＯＡ",
            "o\u{200B}a",
            "o\u{202E}a",
            "\u{FEFF}oa",
            "o\u{E0041}a",
        ] {
            assert_eq!(fold_identifier(text), "oa", "{text:?}");
        }
        assert_eq!(fold_identifier("Straße"), "strasse");
        assert_eq!(fold_identifier("ΣΊΣΥΦΟΣ"), fold_identifier("σίσυφος"));
        assert_eq!(fold_identifier("ﬁle"), "file");
        assert_eq!(fold_identifier("a\u{3000}b"), "a b");
    }

    #[test]
    fn distinct_names_stay_distinct() {
        assert_ne!(fold_identifier("oa"), fold_identifier("ob"));
        assert_ne!(fold_identifier("oa"), fold_identifier("o a"));
        assert_ne!(
            fold_identifier("oa"),
            fold_identifier("оа"),
            "Cyrillic is not folded, only skeletoned"
        );
    }

    #[test]
    fn confusables_share_a_skeleton() {
        assert_eq!(skeleton("p\u{430}ssword"), skeleton("password"));
        assert_eq!(skeleton("ΡASSWORD"), skeleton("password"));
        assert_eq!(skeleton_of_capitals("ΤΟΚΕΝ"), skeleton("token"));
        assert_eq!(skeleton("τоκеn"), skeleton("token"));
        assert_eq!(skeleton("PRIVATE"), skeleton("private"));
        assert_eq!(skeleton("ｐａｓｓｗｏｒｄ"), skeleton("password"));
        assert_eq!(skeleton("tοken"), skeleton("token"));
        assert_ne!(skeleton("token"), skeleton("taken"));
    }
}
