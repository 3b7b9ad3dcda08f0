//! Glob patterns for `matches`: `*`, `?`, `[abc]`, `[a-z]`, `[!abc]` and `\` escapes.
//!
//! Matching walks the pattern text directly (no compiled form, no allocation)
//! with the usual single-backtrack-point algorithm, so it runs in O(n·m) at
//! worst and never recurses.

/// A validated glob pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    source: String,
}

/// Why a glob pattern is invalid, with the byte offset of the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobError {
    /// Byte offset into the pattern.
    pub offset: usize,
    /// What is wrong.
    pub message: &'static str,
}

impl Glob {
    /// Validates `source` as a glob pattern.
    pub fn new(source: &str) -> Result<Glob, GlobError> {
        let mut pos = 0;
        while pos < source.len() {
            pos = match item_at(source, pos) {
                Ok((_, next)) => next,
                Err(error) => return Err(error),
            };
        }
        Ok(Glob {
            source: source.to_owned(),
        })
    }

    /// The pattern text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// True when `text` matches the whole pattern.
    pub fn is_match(&self, text: &str) -> bool {
        glob_match(&self.source, text)
    }

    /// The pattern as a plain string test, when it is one: literal text
    /// with at most a `*` at either end (`sql_*`, `*_pay`, `*delete*`).
    /// The compiled `when` then tests it directly instead of walking the
    /// pattern; `None` for anything else (`?`, classes, escapes, inner `*`).
    pub fn plain(&self) -> Option<PlainGlob<'_>> {
        let source = self.source.as_str();
        let (leading, rest) = match source.strip_prefix('*') {
            Some(rest) => (true, rest),
            None => (false, source),
        };
        let (trailing, literal) = match rest.strip_suffix('*') {
            Some(literal) => (true, literal),
            None => (false, rest),
        };
        if literal.contains(['*', '?', '[', ']', '\\']) {
            return None;
        }
        Some(match (leading, trailing) {
            (false, false) => PlainGlob::Exact(literal),
            (false, true) => PlainGlob::Prefix(literal),
            (true, false) => PlainGlob::Suffix(literal),
            (true, true) => PlainGlob::Contains(literal),
        })
    }
}

/// A glob that is a plain string test (see [`Glob::plain`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlainGlob<'p> {
    /// No wildcard: the whole text equals this.
    Exact(&'p str),
    /// `literal*`: the text starts with this.
    Prefix(&'p str),
    /// `*literal`: the text ends with this.
    Suffix(&'p str),
    /// `*literal*`: the text contains this.
    Contains(&'p str),
}

enum Item<'p> {
    Star,
    Any,
    Literal(char),
    /// The class body between `[` (after any `!`/`^`) and `]`, and whether it is negated.
    Class(&'p str, bool),
}

impl Item<'_> {
    fn matches(&self, ch: char) -> bool {
        match self {
            Item::Star => true,
            Item::Any => true,
            Item::Literal(expected) => *expected == ch,
            Item::Class(body, negated) => class_contains(body, ch) != *negated,
        }
    }
}

fn class_contains(body: &str, ch: char) -> bool {
    let mut chars = body.chars().peekable();
    while let Some(first) = chars.next() {
        let first = if first == '\\' {
            chars.next().unwrap_or('\\')
        } else {
            first
        };
        if chars.peek() == Some(&'-') {
            let mut lookahead = chars.clone();
            lookahead.next();
            if let Some(last) = lookahead.next() {
                let last = if last == '\\' {
                    lookahead.next().unwrap_or('\\')
                } else {
                    last
                };
                chars = lookahead;
                if first <= ch && ch <= last {
                    return true;
                }
                continue;
            }
        }
        if first == ch {
            return true;
        }
    }
    false
}

/// The pattern item starting at byte `pos`, and the byte offset after it.
fn item_at(pattern: &str, pos: usize) -> Result<(Item<'_>, usize), GlobError> {
    let rest = &pattern[pos..];
    let mut chars = rest.char_indices();
    let Some((_, first)) = chars.next() else {
        return Err(GlobError {
            offset: pos,
            message: "unexpected end of pattern",
        });
    };
    match first {
        '*' => Ok((Item::Star, pos + 1)),
        '?' => Ok((Item::Any, pos + 1)),
        '\\' => match chars.next() {
            Some((offset, escaped)) => {
                Ok((Item::Literal(escaped), pos + offset + escaped.len_utf8()))
            }
            None => Err(GlobError {
                offset: pos,
                message: "trailing `\\` escapes nothing",
            }),
        },
        '[' => {
            let mut body_start = 1;
            let mut negated = false;
            if rest[1..].starts_with('!') || rest[1..].starts_with('^') {
                negated = true;
                body_start = 2;
            }
            let mut iter = rest[body_start..].char_indices().peekable();
            let mut previous: Option<char> = None;
            let mut count = 0;
            while let Some((offset, ch)) = iter.next() {
                match ch {
                    ']' if count > 0 => {
                        let body = &rest[body_start..body_start + offset];
                        return Ok((Item::Class(body, negated), pos + body_start + offset + 1));
                    }
                    '\\' => {
                        let Some((_, escaped)) = iter.next() else {
                            break;
                        };
                        previous = Some(escaped);
                    }
                    '-' if count > 0 && iter.peek().is_some_and(|(_, c)| *c != ']') => {
                        let (_, mut last) = iter.next().unwrap_or((0, '-'));
                        if last == '\\' {
                            last = iter.next().map_or('\\', |(_, c)| c);
                        }
                        if previous.is_some_and(|first| first > last) {
                            return Err(GlobError {
                                offset: pos + body_start + offset,
                                message: "character range is out of order",
                            });
                        }
                        previous = None;
                    }
                    _ => previous = Some(ch),
                }
                count += 1;
            }
            Err(GlobError {
                offset: pos,
                message: "unclosed character class `[`",
            })
        }
        other => Ok((Item::Literal(other), pos + other.len_utf8())),
    }
}

/// True when `text` matches the glob `pattern` as a whole.
///
/// An invalid pattern matches nothing; validate patterns with [`Glob::new`].
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let mut p = 0;
    let mut t = 0;
    // Where to resume after the last `*`: pattern offset after it, text offset it covers up to.
    let mut backtrack: Option<(usize, usize)> = None;
    loop {
        if p < pattern.len() {
            let Ok((item, next)) = item_at(pattern, p) else {
                return false;
            };
            if let Item::Star = item {
                backtrack = Some((next, t));
                p = next;
                continue;
            }
            if let Some(ch) = text[t..].chars().next()
                && item.matches(ch)
            {
                p = next;
                t += ch.len_utf8();
                continue;
            }
        } else if t == text.len() {
            return true;
        }
        // Mismatch: let the last `*` swallow one more character, if it can.
        match backtrack {
            Some((after_star, covered)) => match text[covered..].chars().next() {
                Some(ch) => {
                    let covered = covered + ch.len_utf8();
                    backtrack = Some((after_star, covered));
                    p = after_star;
                    t = covered;
                }
                None => return false,
            },
            None => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards() {
        assert!(glob_match("sql_*", "sql_exec"));
        assert!(glob_match("sql_*", "sql_"));
        assert!(!glob_match("sql_*", "nosql_exec"));
        assert!(glob_match("*__pay", "oa__purchase__pay"));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "ac"));
        assert!(glob_match("*", ""));
        assert!(glob_match("**a*", "bab"));
        assert!(glob_match("中*", "中文"));
        assert!(glob_match("?", "文"));
    }

    #[test]
    fn classes_and_escapes() {
        assert!(glob_match("[abc]x", "bx"));
        assert!(!glob_match("[!abc]x", "bx"));
        assert!(glob_match("[a-z]1", "q1"));
        assert!(!glob_match("[a-z]1", "Q1"));
        assert!(glob_match(r"\*", "*"));
        assert!(!glob_match(r"\*", "a"));
        assert!(glob_match("[]]", "]"));
        assert!(glob_match("[a-]", "-"));
    }

    #[test]
    fn invalid_patterns() {
        assert!(Glob::new("[abc").is_err());
        assert!(Glob::new("[z-a]").is_err());
        assert!(Glob::new("abc\\").is_err());
        assert!(Glob::new("[]").is_err());
        assert!(Glob::new("ok_*").is_ok());
        assert!(!glob_match("[abc", "a"));
    }

    #[test]
    fn plain_shapes_agree_with_matching() {
        let patterns = [
            "sql_*", "*_pay", "*delete*", "exact", "*", "**", "", "中*", "*文", "a*b", "a?*",
            "[ab]*", "\\**", "*a*b*",
        ];
        let texts = [
            "",
            "sql_",
            "sql_exec",
            "nosql_exec",
            "oa_pay",
            "pay",
            "do_delete_it",
            "delete",
            "exact",
            "exactly",
            "中文",
            "文",
            "ab",
            "a",
            "*",
            "*x",
            "b",
        ];
        for pattern in patterns {
            let glob = Glob::new(pattern).unwrap();
            let Some(plain) = glob.plain() else {
                continue;
            };
            for text in texts {
                let plain_says = match plain {
                    PlainGlob::Exact(literal) => text == literal,
                    PlainGlob::Prefix(literal) => text.starts_with(literal),
                    PlainGlob::Suffix(literal) => text.ends_with(literal),
                    PlainGlob::Contains(literal) => text.contains(literal),
                };
                assert_eq!(plain_says, glob.is_match(text), "{pattern:?} on {text:?}");
            }
        }
        assert_eq!(
            Glob::new("sql_*").unwrap().plain(),
            Some(PlainGlob::Prefix("sql_"))
        );
        assert_eq!(
            Glob::new("*x*").unwrap().plain(),
            Some(PlainGlob::Contains("x"))
        );
        for not_plain in ["a*b", "a?", "[ab]*", "\\**", "*a*b*"] {
            assert_eq!(Glob::new(not_plain).unwrap().plain(), None, "{not_plain:?}");
        }
    }

    #[test]
    fn pathological_pattern_is_not_exponential() {
        let text = "a".repeat(2000);
        assert!(!glob_match("*a*a*a*a*a*b", &text));
    }
}
