//! Whether an argument name names a secret, whatever its spelling.
//!
//! A name is split into words at separators (`_`, `-`, `.`, spaces, any
//! character that is not a letter or digit) and at camelCase boundaries
//! (`apiKey`, `APIKey`), after invisible characters are dropped and NFKC is
//! applied (fullwidth `ＡＰＩ＿ＫＥＹ` splits like `API_KEY`). Each word is then
//! case-folded and reduced to its UTS #39 confusable skeleton, so a Cyrillic
//! `а` in `pаssword` or a digit `0` in `passw0rd` does not hide the word.

use std::borrow::Cow;
use std::sync::LazyLock;

use unicode_normalization::UnicodeNormalization;

use crate::text::{is_hidden, skeleton, skeleton_of_capitals};

/// How many characters of a key are analysed. Real keys are far shorter;
/// the cap bounds the work per key (splitting, folding and matching are
/// linear in what is analysed), and a longer key is redacted whole by the
/// [`Redactor`](super::Redactor) rather than read further (fail safe).
pub(super) const MAX_KEY_CHARS: usize = 256;

/// Names this short match only whole words (`auth` matches `auth` and
/// `basic_auth`, not `author`); longer names match anywhere in the key's
/// joined words (`password` matches `dbpassword` and `user_password`).
const WHOLE_WORD_ONLY_UP_TO: usize = 4;

/// Words that make a number or a boolean under a secret-sounding key a fact
/// *about* the secret (`session_count: 3`, `max_tokens: 100`,
/// `password_required: true`), which is kept.
const DESCRIPTORS: [&str; 18] = [
    "count",
    "counts",
    "length",
    "len",
    "size",
    "max",
    "min",
    "num",
    "limit",
    "total",
    "used",
    "remaining",
    "enabled",
    "required",
    "expires",
    "expiry",
    "ttl",
    "timeout",
];

/// [`DESCRIPTORS`] as key words are compared: skeletons (`max` is `rnax`).
static DESCRIPTOR_WORDS: LazyLock<Vec<String>> =
    LazyLock::new(|| DESCRIPTORS.iter().map(|word| skeleton(word)).collect());

/// A key (or a name from the redaction list) split into folded words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct KeyWords {
    words: Vec<String>,
    joined: String,
    /// The same words read as capitals (Greek `ΤΟΚΕΝ` is `token`), when
    /// that reading differs.
    capitals: Option<(Vec<String>, String)>,
    /// Whether the key had more than [`MAX_KEY_CHARS`] characters (only
    /// those were analysed).
    over_long: bool,
}

impl KeyWords {
    /// Splits and folds `key`.
    pub(super) fn new(key: &str) -> Self {
        let (key, over_long) = match key.char_indices().nth(MAX_KEY_CHARS) {
            Some((at, _)) => (&key[..at], true),
            None => (key, false),
        };
        let key = symbols_as_letters(key);
        // Printable ASCII, the usual key, needs neither filtering nor NFKC.
        let compatible: Cow<'_, str> = if key.bytes().all(|b| (b' '..=b'~').contains(&b)) {
            Cow::Borrowed(&*key)
        } else {
            let visible: String = key.chars().filter(|c| !is_hidden(*c)).collect();
            Cow::Owned(visible.nfkc().collect())
        };
        let split = split_words(&compatible);
        let fold = |reading: fn(&str) -> String| -> Vec<String> {
            split
                .iter()
                .map(|word| reading(word))
                .filter(|word| !word.is_empty())
                .collect()
        };
        let words = fold(skeleton);
        let capitals = if compatible.is_ascii() {
            None
        } else {
            Some(fold(skeleton_of_capitals))
                .filter(|capitals| *capitals != words)
                .map(|capitals| {
                    let joined = capitals.concat();
                    (capitals, joined)
                })
        };
        KeyWords {
            joined: words.concat(),
            words,
            capitals,
            over_long,
        }
    }

    /// Whether the key was longer than [`MAX_KEY_CHARS`].
    pub(super) fn is_over_long(&self) -> bool {
        self.over_long
    }

    /// How many characters of the key were analysed (at most
    /// [`MAX_KEY_CHARS`]).
    #[cfg(test)]
    pub(super) fn analysed_chars(&self) -> usize {
        self.joined.chars().count()
    }

    /// Whether the key has no letters or digits at all.
    pub(super) fn is_empty(&self) -> bool {
        self.joined.is_empty()
    }

    /// Whether this key contains the secret `name` (see
    /// [`WHOLE_WORD_ONLY_UP_TO`] for how).
    pub(super) fn contains(&self, name: &KeyWords) -> bool {
        contains(&self.words, &self.joined, &name.joined)
            || self
                .capitals
                .as_ref()
                .is_some_and(|(words, joined)| contains(words, joined, &name.joined))
    }

    /// Whether one of the key's words says the value describes a secret
    /// rather than being one.
    pub(super) fn has_descriptor(&self) -> bool {
        self.words
            .iter()
            .any(|word| DESCRIPTOR_WORDS.contains(word))
    }
}

/// Whether `words` (joined: `joined`) hold the secret name `name`.
fn contains(words: &[String], joined: &str, name: &str) -> bool {
    if name.chars().count() > WHOLE_WORD_ONLY_UP_TO {
        return joined.contains(name);
    }
    // A run of whole words spelling the name: `auth`, `x_auth`, and `pWd`
    // (split as `p`, `wd`) all hold `pwd`.
    // Each start reads its run of words only as far as the name goes, with
    // no allocation: linear in the key for a fixed name.
    (0..words.len()).any(|start| {
        let mut rest = name;
        for word in &words[start..] {
            match rest.strip_prefix(word.as_str()) {
                Some("") => return true,
                Some(shorter) => rest = shorter,
                None => return false,
            }
        }
        false
    })
}

/// `key` with a run of `$` or `@` between letters read as the letters they
/// stand for (`pa$$word`, `p@ssword`), so the symbol does not split the word.
fn symbols_as_letters(key: &str) -> Cow<'_, str> {
    if !key.contains(['$', '@']) {
        return Cow::Borrowed(key);
    }
    let chars: Vec<char> = key.chars().collect();
    let mut out = String::with_capacity(key.len());
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        if !matches!(c, '$' | '@') {
            out.push(c);
            at += 1;
            continue;
        }
        let run_end = chars[at..]
            .iter()
            .position(|c| !matches!(c, '$' | '@'))
            .map_or(chars.len(), |length| at + length);
        let between_letters = at > 0
            && chars[at - 1].is_alphabetic()
            && chars.get(run_end).is_some_and(|c| c.is_alphabetic());
        for &symbol in &chars[at..run_end] {
            out.push(match (between_letters, symbol) {
                (true, '$') => 's',
                (true, _) => 'a',
                (false, symbol) => symbol,
            });
        }
        at = run_end;
    }
    Cow::Owned(out)
}

/// Splits at non-alphanumeric characters and camelCase boundaries: a lower
/// case letter or digit followed by an upper case one (`apiKey`), and the
/// last of several upper case letters followed by a lower case one
/// (`APIKey` → `API`, `Key`).
fn split_words(text: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut start: Option<usize> = None;
    for (i, &(at, c)) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if let Some(begin) = start.take() {
                words.push(&text[begin..at]);
            }
            continue;
        }
        let Some(begin) = start else {
            start = Some(at);
            continue;
        };
        let previous = chars[i - 1].1;
        let next = chars.get(i + 1).map(|&(_, next)| next);
        let camel = c.is_uppercase() && (previous.is_lowercase() || previous.is_numeric());
        let acronym_end =
            c.is_uppercase() && previous.is_uppercase() && next.is_some_and(char::is_lowercase);
        if camel || acronym_end {
            words.push(&text[begin..at]);
            start = Some(at);
        }
    }
    if let Some(begin) = start {
        words.push(&text[begin..]);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(key: &str) -> Vec<String> {
        KeyWords::new(key).words
    }

    #[test]
    fn keys_split_into_words() {
        assert_eq!(words("apiKey"), ["api", "key"]);
        assert_eq!(words("APIKey"), ["api", "key"]);
        assert_eq!(words("API-KEY"), ["api", "key"]);
        assert_eq!(words("x_api key.v2"), ["x", "api", "key", "v2"]);
        assert_eq!(words("ＡＰＩ＿ＫＥＹ"), ["api", "key"]);
        assert_eq!(words("pass\u{200B}word"), ["password"]);
        assert_eq!(words("___"), Vec::<String>::new());
    }

    #[test]
    fn short_names_match_whole_words_only() {
        let auth = KeyWords::new("auth");
        assert!(KeyWords::new("auth").contains(&auth));
        assert!(KeyWords::new("basic_auth").contains(&auth));
        assert!(KeyWords::new("AUTH-header").contains(&auth));
        assert!(!KeyWords::new("author").contains(&auth));
        assert!(!KeyWords::new("oauth_scopes").contains(&auth));
        assert!(KeyWords::new("pWd").contains(&KeyWords::new("pwd")));
    }

    #[test]
    fn long_names_match_inside_words() {
        let password = KeyWords::new("password");
        for key in [
            "dbpassword",
            "user_password",
            "PassWord",
            "p\u{430}ssword",
            "passw0rd",
        ] {
            assert!(KeyWords::new(key).contains(&password), "{key}");
        }
        assert!(!KeyWords::new("passport").contains(&password));
        assert!(KeyWords::new("pa$$word").contains(&password));
        assert!(KeyWords::new("p@ssword").contains(&password));
        assert!(!KeyWords::new("user@password_host").is_empty());
    }

    /// A key of many short words is analysed only up to the cap, and the
    /// whole-word search reads each start's run only as far as the name.
    #[test]
    fn long_keys_are_cut_at_the_cap() {
        let key = KeyWords::new(&"a_".repeat(16_000));
        assert!(key.is_over_long());
        assert!(key.analysed_chars() <= MAX_KEY_CHARS);
        assert!(!key.contains(&KeyWords::new("auth")));
        let exact = KeyWords::new(&"a".repeat(MAX_KEY_CHARS));
        assert!(!exact.is_over_long());
        assert!(
            KeyWords::new(&format!("{}_pwd", "x_".repeat(100))).contains(&KeyWords::new("pwd"))
        );
    }
}
