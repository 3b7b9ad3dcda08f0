//! Words that pass for other words: a payee `Аcme` whose first letter is
//! Cyrillic, or `рау` written wholly in Cyrillic letters that read `pay`.
//! Hidden characters ([`super::hidden`]) are invisible; these are visible
//! but read as something they are not, so an approver is warned about them
//! in the same way (Unicode TS #39: mixed-script detection and confusable
//! skeletons).

use unicode_normalization::char::is_combining_mark;
use unicode_script::{Script, UnicodeScript};
use unicode_security::MixedScript;

/// Whether `text` holds a word that can pass for another: a word mixing
/// letters of scripts no single writing system uses together (`Аcme`, a
/// Cyrillic `А` among Latin letters; UTS #39 resolved script sets, so `東京`
/// with kana or Hangul with Han is fine), or a word without Latin letters
/// whose confusable skeleton is plain ASCII (Cyrillic `рау` reads `pay`), so
/// it reads as a Latin word.
///
/// A word is a run of letters, digits and combining marks. Ordinary text in
/// any one script, accented Latin (`Zoë`, `Ñúñez`), CJK, Arabic and Hebrew
/// are not flagged; a Russian word made only of letters that look Latin
/// (`сор`) is, which is the point.
pub fn has_look_alikes(text: &str) -> bool {
    words(text).any(is_look_alike)
}

/// Whether one word can pass for another (see [`has_look_alikes`]).
fn is_look_alike(word: &str) -> bool {
    if word.is_ascii() {
        return false;
    }
    if !word.is_single_script() {
        return true;
    }
    let latin = word.chars().any(|c| c.script() == Script::Latin);
    let foreign = word.chars().any(|c| {
        !matches!(
            c.script(),
            Script::Common | Script::Inherited | Script::Latin
        )
    });
    foreign && !latin && unicode_security::skeleton(word).all(|c| c.is_ascii_alphanumeric())
}

/// The runs of letters, digits and combining marks in `text`.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || is_combining_mark(c)))
        .filter(|word| !word.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_alike_words_are_found() {
        for text in [
            "\u{410}cme Ltd",                // Cyrillic А, then Latin
            "\u{440}\u{430}\u{443} now",     // рау: all Cyrillic, reads pay
            "\u{410}\u{441}\u{435}",         // Асе: all Cyrillic, reads Ace
            "{\"payee\":\"p\u{430}ypal\"}",  // Cyrillic а inside a Latin word
            "\u{3a4}\u{39f}\u{39a}\u{395}N", // Greek ΤΟΚΕ and Latin N
            "\u{3bf}\u{3c1}\u{3b5}n",        // Greek ορε + Latin n
            "\u{3a9}mega",                   // Greek Ω + Latin
        ] {
            assert!(has_look_alikes(text), "{text:?}");
        }
    }

    #[test]
    fn ordinary_text_is_not_flagged() {
        for text in [
            "Acme Components Inc",
            "Zoë Ñúñez café à São Paulo",
            "张三 東京タワー 서울",
            "محمد עברית",
            "Москва",
            "{\"amount\": 60000, \"note\": \"PO-7001\"}",
            "🙂👍🏽",
            "",
        ] {
            assert!(!has_look_alikes(text), "{text:?}");
        }
    }
}
