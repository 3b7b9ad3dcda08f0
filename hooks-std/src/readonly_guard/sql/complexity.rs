//! Refusing text whose parse tree could be too deep or too slow to build.
//!
//! `sqlparser` builds operator chains (`1+1+1…`, `x::int::int…`, `a AND b
//! AND …`) in a loop, so its recursion limit does not cover them, while
//! walking, printing and dropping the resulting tree recurse once per link:
//! a few hundred bytes could overflow the stack and abort the process.
//! Nested calls (`abs(abs(…))`) take time that doubles with each level under
//! some dialects. So the token stream is measured before it is parsed, and
//! text past these bounds is a write, unparsed. The bounds are far above
//! what a hand-written or generated report query needs.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

/// More brackets (`(`, `[`, `{`) open at once than this is a write.
pub const MAX_NESTING: usize = 10;

/// More operator links than this on one path from the top of an
/// expression to a leaf (the links of every enclosing bracket level count
/// too, a `,` or `;` ends a level's chain) is a write.
pub const MAX_CHAIN_LINKS: usize = 256;

/// More tokens (not counting whitespace and comments) than this is a write.
pub const MAX_TOKENS: usize = 10_000;

/// The tokens that cost parsing time: all but whitespace and comments.
pub(crate) fn token_count(tokens: &[TokenWithSpan]) -> usize {
    tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_) | Token::EOF))
        .count()
}

/// What opened a level of the path.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Opener {
    /// The top of the text.
    Top,
    /// `(`, `[` or `{`: counts toward [`MAX_NESTING`].
    Bracket,
    /// `CASE`, closed by `END`: its `WHEN`, `THEN` and `ELSE` parts are
    /// siblings in the tree (a loop in the parser), so each starts a new
    /// chain, as a `,` does.
    Case,
}

/// One open level: what opened it and the links chained in it so far.
struct Level {
    opener: Opener,
    links: usize,
}

/// Why `tokens` are too complex to classify safely, or `None`.
pub(crate) fn too_complex(tokens: &[TokenWithSpan]) -> Option<String> {
    let mut levels = vec![Level {
        opener: Opener::Top,
        links: 0,
    }];
    let mut brackets = 0usize;
    let mut path_links = 0usize;
    let mut count = 0usize;
    for token in tokens.iter().map(|t| &t.token) {
        if matches!(token, Token::Whitespace(_) | Token::EOF) {
            continue;
        }
        count += 1;
        if count > MAX_TOKENS {
            return Some(format!(
                "it has more than {MAX_TOKENS} tokens, too complex to classify safely"
            ));
        }
        let keyword = match token {
            Token::Word(word) if word.quote_style.is_none() => word.keyword,
            _ => Keyword::NoKeyword,
        };
        match token {
            Token::LParen | Token::LBracket | Token::LBrace => {
                // `x[1][1]…` is a chain at the outer level as well.
                if matches!(token, Token::LBracket) {
                    add_link(&mut levels, &mut path_links);
                }
                levels.push(Level {
                    opener: Opener::Bracket,
                    links: 0,
                });
                brackets += 1;
                if brackets > MAX_NESTING {
                    return Some(format!(
                        "it has more than {MAX_NESTING} brackets open at once, \
                         nested too deeply to classify safely"
                    ));
                }
            }
            // An unbalanced closer fails to parse later; keep the top. A
            // CASE left open inside the brackets closes with them.
            Token::RParen | Token::RBracket | Token::RBrace if brackets > 0 => {
                while let Some(level) = levels.pop() {
                    path_links -= level.links;
                    if level.opener == Opener::Bracket {
                        break;
                    }
                }
                brackets -= 1;
            }
            Token::Comma | Token::SemiColon => restart_chain(&mut levels, &mut path_links),
            _ if keyword == Keyword::CASE => {
                add_link(&mut levels, &mut path_links);
                levels.push(Level {
                    opener: Opener::Case,
                    links: 0,
                });
            }
            _ if matches!(keyword, Keyword::WHEN | Keyword::THEN | Keyword::ELSE)
                && levels.last().is_some_and(|l| l.opener == Opener::Case) =>
            {
                restart_chain(&mut levels, &mut path_links);
            }
            _ if keyword == Keyword::END
                && levels.last().is_some_and(|l| l.opener == Opener::Case) =>
            {
                if let Some(level) = levels.pop() {
                    path_links -= level.links;
                }
            }
            token if is_link(token) => add_link(&mut levels, &mut path_links),
            _ => {}
        }
        if path_links > MAX_CHAIN_LINKS {
            return Some(format!(
                "it chains or nests more than {MAX_CHAIN_LINKS} operators, joins or \
                 prefixes in one expression, too complex to classify safely"
            ));
        }
    }
    None
}

/// One more link in the innermost level's chain, and on the path.
fn add_link(levels: &mut [Level], path_links: &mut usize) {
    *path_links += 1;
    if let Some(level) = levels.last_mut() {
        level.links += 1;
    }
}

/// The innermost level's chain ends (a `,`, `;`, or a new part of a CASE).
fn restart_chain(levels: &mut [Level], path_links: &mut usize) {
    if let Some(level) = levels.last_mut() {
        *path_links -= level.links;
        level.links = 0;
    }
}

/// Whether `token` may join two expressions (or follow one) in a chain the
/// parser builds in a loop, or start a construct it recurses on once per
/// word without any bracket: every operator symbol (prefix `-`, `+`, `~`
/// included), the keyword operators, the join words (Snowflake's parser
/// nests each following JOIN inside the previous one) and the prefixes
/// `sqlparser` reads by calling itself again below its recursion counter
/// (`INTERVAL`, `EXISTS`, `PRIOR`, `ARRAY`, typed literals like `DATE`).
/// Names, literals, placeholders, `.` (a flat list in the tree) and
/// separators are not links.
fn is_link(token: &Token) -> bool {
    match token {
        Token::Word(word) if word.quote_style.is_some() => false,
        Token::Word(word) => matches!(
            word.keyword,
            Keyword::JOIN
                | Keyword::INNER
                | Keyword::LEFT
                | Keyword::RIGHT
                | Keyword::FULL
                | Keyword::OUTER
                | Keyword::CROSS
                | Keyword::NATURAL
                | Keyword::APPLY
                | Keyword::SEMI
                | Keyword::ANTI
                | Keyword::ASOF
                | Keyword::STRAIGHT_JOIN
                | Keyword::LATERAL
                | Keyword::INTERVAL
                | Keyword::EXISTS
                | Keyword::PRIOR
                | Keyword::ARRAY
                | Keyword::DATE
                | Keyword::TIME
                | Keyword::TIMESTAMP
                | Keyword::DATETIME
                | Keyword::AND
                | Keyword::OR
                | Keyword::XOR
                | Keyword::IS
                | Keyword::NOT
                | Keyword::LIKE
                | Keyword::ILIKE
                | Keyword::RLIKE
                | Keyword::REGEXP
                | Keyword::SIMILAR
                | Keyword::BETWEEN
                | Keyword::IN
                | Keyword::COLLATE
                | Keyword::AT
                | Keyword::DIV
                | Keyword::MEMBER
                | Keyword::OVERLAPS
                | Keyword::OPERATOR
                | Keyword::MATCH
        ),
        Token::EOF
        | Token::Number(..)
        | Token::Char(_)
        | Token::SingleQuotedString(_)
        | Token::DoubleQuotedString(_)
        | Token::TripleSingleQuotedString(_)
        | Token::TripleDoubleQuotedString(_)
        | Token::DollarQuotedString(_)
        | Token::SingleQuotedByteStringLiteral(_)
        | Token::DoubleQuotedByteStringLiteral(_)
        | Token::TripleSingleQuotedByteStringLiteral(_)
        | Token::TripleDoubleQuotedByteStringLiteral(_)
        | Token::SingleQuotedRawStringLiteral(_)
        | Token::DoubleQuotedRawStringLiteral(_)
        | Token::TripleSingleQuotedRawStringLiteral(_)
        | Token::TripleDoubleQuotedRawStringLiteral(_)
        | Token::NationalStringLiteral(_)
        | Token::EscapedStringLiteral(_)
        | Token::UnicodeStringLiteral(_)
        | Token::HexStringLiteral(_)
        | Token::Placeholder(_)
        | Token::Whitespace(_)
        | Token::Comma
        | Token::SemiColon
        | Token::Period
        | Token::LParen
        | Token::RParen
        | Token::LBracket
        | Token::RBracket
        | Token::LBrace
        | Token::RBrace => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use sqlparser::dialect::GenericDialect;
    use sqlparser::tokenizer::Tokenizer;

    use super::*;

    fn check(sql: &str) -> Option<String> {
        let tokens = Tokenizer::new(&GenericDialect {}, sql)
            .tokenize_with_location()
            .expect("tokenizes");
        too_complex(&tokens)
    }

    #[test]
    fn chains_count_along_the_path_and_restart_after_a_comma() {
        let chain = |n: usize| vec!["1"; n].join(" + ");
        assert_eq!(
            check(&format!("SELECT {}", chain(MAX_CHAIN_LINKS + 1))),
            None
        );
        assert!(check(&format!("SELECT {}", chain(MAX_CHAIN_LINKS + 2))).is_some());
        // Split by commas, the same links are many short chains.
        let items = vec!["a + b"; 2 * MAX_CHAIN_LINKS].join(", ");
        assert_eq!(check(&format!("SELECT {items}")), None);
        // Links inside brackets add to the links outside.
        let half = chain(MAX_CHAIN_LINKS / 2 + 2);
        assert!(check(&format!("SELECT {half} + ({half})")).is_some());
        assert_eq!(check(&format!("SELECT ({half}), ({half})")), None);
    }

    #[test]
    fn joins_and_prefixes_count_and_case_parts_restart_the_chain() {
        let joins = |n: usize| format!("SELECT x FROM a{}", " JOIN a".repeat(n));
        assert_eq!(check(&joins(MAX_CHAIN_LINKS)), None);
        assert!(check(&joins(MAX_CHAIN_LINKS + 1)).is_some());
        let intervals = |n: usize| format!("SELECT {}'1'", "INTERVAL ".repeat(n));
        assert_eq!(check(&intervals(MAX_CHAIN_LINKS)), None);
        assert!(check(&intervals(MAX_CHAIN_LINKS + 1)).is_some());
        // A quoted "JOIN" is a name, not a link.
        assert_eq!(
            check(&format!("SELECT {}", "\"join\" ".repeat(1_000))),
            None
        );
        // Each WHEN/THEN/ELSE part is a chain of its own …
        let part = vec!["a"; MAX_CHAIN_LINKS / 2].join(" + ");
        let whens = format!("WHEN {part} THEN {part} ").repeat(8);
        assert_eq!(check(&format!("SELECT CASE {whens}ELSE {part} END")), None);
        // … on top of the chain the CASE sits in, which END returns to.
        let outer = vec!["b"; MAX_CHAIN_LINKS / 2].join(" + ");
        let long = vec!["a"; MAX_CHAIN_LINKS / 2 + 2].join(" + ");
        let sql = format!("SELECT {outer} + CASE WHEN {long} THEN 1 END");
        assert!(check(&sql).is_some());
        let sql = format!("SELECT {outer} + CASE WHEN x THEN 1 END + {long}");
        assert!(check(&sql).is_some());
        // END of a block, not of a CASE, closes nothing.
        assert_eq!(check("BEGIN SELECT 1; END; SELECT (1)"), None);
        // Nested CASEs add up.
        let nested = |n: usize| {
            format!(
                "SELECT {}1{}",
                "CASE WHEN x THEN ".repeat(n),
                " END".repeat(n)
            )
        };
        assert_eq!(check(&nested(MAX_CHAIN_LINKS)), None);
        assert!(check(&nested(MAX_CHAIN_LINKS + 1)).is_some());
        // A CASE left open inside brackets closes with them.
        let sql = format!("SELECT ({}1) + 1", "CASE WHEN x THEN ".repeat(200));
        assert_eq!(check(&sql), None);
    }

    #[test]
    fn nesting_and_size_are_bounded() {
        let nested = |n: usize| format!("SELECT {}1{}", "(".repeat(n), ")".repeat(n));
        assert_eq!(check(&nested(MAX_NESTING)), None);
        assert!(check(&nested(MAX_NESTING + 1)).is_some_and(|r| r.contains("nested")));
        let wide = format!("SELECT {}", vec!["a"; MAX_TOKENS].join(","));
        assert!(check(&wide).is_some_and(|r| r.contains("tokens")));
    }
}
