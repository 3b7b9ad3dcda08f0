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

/// Why `tokens` are too complex to classify safely, or `None`.
pub(crate) fn too_complex(tokens: &[TokenWithSpan]) -> Option<String> {
    // The chain length of each open bracket level, outermost first.
    let mut chains: Vec<usize> = vec![0];
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
        match token {
            Token::LParen | Token::LBracket | Token::LBrace => {
                // `x[1][1]…` is a chain at the outer level as well.
                if matches!(token, Token::LBracket) {
                    path_links += 1;
                    if let Some(chain) = chains.last_mut() {
                        *chain += 1;
                    }
                }
                chains.push(0);
                if chains.len() - 1 > MAX_NESTING {
                    return Some(format!(
                        "it has more than {MAX_NESTING} brackets open at once, \
                         nested too deeply to classify safely"
                    ));
                }
            }
            Token::RParen | Token::RBracket | Token::RBrace => {
                // An unbalanced closer fails to parse later; keep one level.
                if chains.len() > 1
                    && let Some(closed) = chains.pop()
                {
                    path_links -= closed;
                }
            }
            Token::Comma | Token::SemiColon => {
                if let Some(chain) = chains.last_mut() {
                    path_links -= *chain;
                    *chain = 0;
                }
            }
            token if is_link(token) => {
                path_links += 1;
                if let Some(chain) = chains.last_mut() {
                    *chain += 1;
                }
            }
            _ => {}
        }
        if path_links > MAX_CHAIN_LINKS {
            return Some(format!(
                "it chains more than {MAX_CHAIN_LINKS} operators in one expression, \
                 too complex to classify safely"
            ));
        }
    }
    None
}

/// Whether `token` may join two expressions (or follow one) in a chain the
/// parser builds in a loop: every operator symbol and the keyword operators.
/// Names, literals, placeholders, `.` (a flat list in the tree) and
/// separators are not links.
fn is_link(token: &Token) -> bool {
    match token {
        Token::Word(word) => matches!(
            word.keyword,
            Keyword::AND
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
    fn nesting_and_size_are_bounded() {
        let nested = |n: usize| format!("SELECT {}1{}", "(".repeat(n), ")".repeat(n));
        assert_eq!(check(&nested(MAX_NESTING)), None);
        assert!(check(&nested(MAX_NESTING + 1)).is_some_and(|r| r.contains("nested")));
        let wide = format!("SELECT {}", vec!["a"; MAX_TOKENS].join(","));
        assert!(check(&wide).is_some_and(|r| r.contains("tokens")));
    }
}
