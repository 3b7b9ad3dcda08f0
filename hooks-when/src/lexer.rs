//! Splits `when` source text into tokens with byte spans.

use std::ops::Range;

use crate::error::WhenError;

/// A lexical token.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TokenKind {
    /// An identifier: a field root, a path key, a keyword operator or `true`/`false`.
    Ident(String),
    /// A string literal, escapes resolved.
    Str(String),
    /// An integer literal.
    Int(i64),
    /// A floating-point literal.
    Float(f64),
    Dot,
    Comma,
    LParen,
    RParen,
    LBracket,
    RBracket,
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    AndAnd,
    OrOr,
    Bang,
}

impl TokenKind {
    /// How the token reads in an error message.
    pub(crate) fn describe(&self) -> String {
        match self {
            TokenKind::Ident(name) => format!("`{name}`"),
            TokenKind::Str(_) => "a string".to_owned(),
            TokenKind::Int(_) | TokenKind::Float(_) => "a number".to_owned(),
            other => format!("`{}`", other.symbol()),
        }
    }

    fn symbol(&self) -> &'static str {
        match self {
            TokenKind::Dot => ".",
            TokenKind::Comma => ",",
            TokenKind::LParen => "(",
            TokenKind::RParen => ")",
            TokenKind::LBracket => "[",
            TokenKind::RBracket => "]",
            TokenKind::EqEq => "==",
            TokenKind::NotEq => "!=",
            TokenKind::Lt => "<",
            TokenKind::Le => "<=",
            TokenKind::Gt => ">",
            TokenKind::Ge => ">=",
            TokenKind::AndAnd => "&&",
            TokenKind::OrOr => "||",
            TokenKind::Bang => "!",
            TokenKind::Ident(_) | TokenKind::Str(_) | TokenKind::Int(_) | TokenKind::Float(_) => "",
        }
    }
}

/// A token and where it sits in the source.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub(crate) kind: TokenKind,
    pub(crate) span: Range<usize>,
}

/// Tokenizes `source`. Lexical errors are collected; the bad text is skipped.
pub(crate) fn tokenize(source: &str) -> (Vec<Token>, Vec<WhenError>) {
    let mut lexer = Lexer {
        source,
        pos: 0,
        tokens: Vec::new(),
        errors: Vec::new(),
    };
    lexer.run();
    (lexer.tokens, lexer.errors)
}

struct Lexer<'a> {
    source: &'a str,
    pos: usize,
    tokens: Vec<Token>,
    errors: Vec<WhenError>,
}

impl Lexer<'_> {
    fn peek(&self) -> Option<char> {
        self.source[self.pos..].chars().next()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.source[self.pos..].chars().nth(ahead)
    }

    fn bump(&mut self) -> Option<char> {
        let ch = self.peek()?;
        self.pos += ch.len_utf8();
        Some(ch)
    }

    fn push(&mut self, kind: TokenKind, start: usize) {
        self.tokens.push(Token {
            kind,
            span: start..self.pos,
        });
    }

    /// True when the previous token is a `.` that ends exactly here: a path index follows.
    fn after_adjacent_dot(&self) -> bool {
        self.tokens
            .last()
            .is_some_and(|token| token.kind == TokenKind::Dot && token.span.end == self.pos)
    }

    fn run(&mut self) {
        let mut last_start = None;
        while let Some(ch) = self.peek() {
            let start = self.pos;
            // Every step must consume input; if one ever did not, skip the
            // character rather than loop forever on hostile input.
            if last_start == Some(start) {
                self.bump();
                continue;
            }
            last_start = Some(start);
            if ch.is_whitespace() {
                self.bump();
                continue;
            }
            if ch == 'r' && matches!(self.peek_at(1), Some('"' | '#')) {
                self.raw_string(start);
                continue;
            }
            if ch.is_ascii_alphabetic() || ch == '_' {
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    self.bump();
                }
                let name = self.source[start..self.pos].to_owned();
                self.push(TokenKind::Ident(name), start);
                continue;
            }
            if ch.is_ascii_digit()
                || (ch == '-' && self.peek_at(1).is_some_and(|c| c.is_ascii_digit()))
            {
                self.number(start);
                continue;
            }
            if ch == '"' {
                self.string(start);
                continue;
            }
            self.bump();
            let next = self.peek();
            let kind = match (ch, next) {
                ('=', Some('=')) => Some(self.two(TokenKind::EqEq)),
                ('!', Some('=')) => Some(self.two(TokenKind::NotEq)),
                ('<', Some('=')) => Some(self.two(TokenKind::Le)),
                ('>', Some('=')) => Some(self.two(TokenKind::Ge)),
                ('&', Some('&')) => Some(self.two(TokenKind::AndAnd)),
                ('|', Some('|')) => Some(self.two(TokenKind::OrOr)),
                ('<', _) => Some(TokenKind::Lt),
                ('>', _) => Some(TokenKind::Gt),
                ('!', _) => Some(TokenKind::Bang),
                ('.', _) => Some(TokenKind::Dot),
                (',', _) => Some(TokenKind::Comma),
                ('(', _) => Some(TokenKind::LParen),
                (')', _) => Some(TokenKind::RParen),
                ('[', _) => Some(TokenKind::LBracket),
                (']', _) => Some(TokenKind::RBracket),
                _ => None,
            };
            match kind {
                Some(kind) => self.push(kind, start),
                None => {
                    let error =
                        WhenError::new(start..self.pos, format!("unexpected character `{ch}`"));
                    let error = match ch {
                        '=' => error.with_help("compare with `==`"),
                        '&' => error.with_help("join tests with `&&`"),
                        '|' => error.with_help("join alternatives with `||`"),
                        '\'' => error.with_help("string literals use double quotes: \"…\""),
                        _ => error,
                    };
                    self.errors.push(error);
                }
            }
        }
    }

    fn two(&mut self, kind: TokenKind) -> TokenKind {
        self.bump();
        kind
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit() || c == '_') {
            self.bump();
        }
    }

    fn number(&mut self, start: usize) {
        if self.after_adjacent_dot() && self.peek().is_some_and(|c| c.is_ascii_digit()) {
            // `args.items.0.name`: an index, never the start of a float.
            self.digits();
            let text: String = self.source[start..self.pos]
                .chars()
                .filter(|c| *c != '_')
                .collect();
            match text.parse::<i64>() {
                Ok(value) => self.push(TokenKind::Int(value), start),
                Err(_) => self
                    .errors
                    .push(WhenError::new(start..self.pos, "array index is too large")),
            }
            return;
        }
        if self.peek() == Some('-') {
            self.bump();
        }
        self.digits();
        let mut is_float = false;
        if self.peek() == Some('.') && self.peek_at(1).is_some_and(|c| c.is_ascii_digit()) {
            is_float = true;
            self.bump();
            self.digits();
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            let sign = usize::from(matches!(self.peek_at(1), Some('+' | '-')));
            if self.peek_at(1 + sign).is_some_and(|c| c.is_ascii_digit()) {
                is_float = true;
                self.bump();
                if sign == 1 {
                    self.bump();
                }
                self.digits();
            }
        }
        if self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            let suffix_start = self.pos;
            while self
                .peek()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                self.bump();
            }
            self.errors.push(
                WhenError::new(suffix_start..self.pos, "unexpected suffix after a number")
                    .with_help("write plain numbers such as `5`, `-2` or `0.5`"),
            );
            return;
        }
        let text: String = self.source[start..self.pos]
            .chars()
            .filter(|c| *c != '_')
            .collect();
        let kind = if is_float {
            text.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .map(TokenKind::Float)
        } else {
            text.parse::<i64>().ok().map(TokenKind::Int)
        };
        match kind {
            Some(kind) => self.push(kind, start),
            None => self.errors.push(
                WhenError::new(start..self.pos, "number is out of range")
                    .with_help("integers must fit in 64 bits and floats must be finite"),
            ),
        }
    }

    fn string(&mut self, start: usize) {
        self.bump(); // opening quote
        let mut value = String::new();
        let mut ok = true;
        loop {
            let Some(ch) = self.bump() else {
                self.errors.push(
                    WhenError::new(start..self.pos, "unterminated string literal")
                        .with_help("close the string with `\"`"),
                );
                return;
            };
            match ch {
                '"' => break,
                '\\' => {
                    let escape_start = self.pos - 1;
                    match self.escape() {
                        Some(c) => value.push(c),
                        None => {
                            ok = false;
                            self.errors.push(
                                WhenError::new(escape_start..self.pos, "invalid escape in string literal")
                                    .with_help("the accepted escapes are \\\" \\\\ \\n \\r \\t \\0 \\' \\xNN and \\u{NNNN}"),
                            );
                        }
                    }
                }
                c => value.push(c),
            }
        }
        if ok {
            self.push(TokenKind::Str(value), start);
        }
    }

    fn escape(&mut self) -> Option<char> {
        match self.bump()? {
            '"' => Some('"'),
            '\\' => Some('\\'),
            '\'' => Some('\''),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            '0' => Some('\0'),
            'x' => {
                let hi = self.bump()?.to_digit(16)?;
                let lo = self.bump()?.to_digit(16)?;
                let value = hi * 16 + lo;
                (value <= 0x7f).then(|| char::from(value as u8))
            }
            'u' => {
                if self.peek() != Some('{') {
                    return None;
                }
                self.bump();
                let mut value: u32 = 0;
                let mut count = 0;
                loop {
                    let c = self.peek()?;
                    if c == '}' {
                        self.bump();
                        break;
                    }
                    if c == '_' {
                        self.bump();
                        continue;
                    }
                    let digit = c.to_digit(16)?;
                    self.bump();
                    count += 1;
                    if count > 6 {
                        return None;
                    }
                    value = value * 16 + digit;
                }
                if count == 0 {
                    return None;
                }
                char::from_u32(value)
            }
            _ => None,
        }
    }

    fn raw_string(&mut self, start: usize) {
        self.bump(); // r
        let mut hashes = 0;
        while self.peek() == Some('#') {
            self.bump();
            hashes += 1;
        }
        if self.peek() != Some('"') {
            self.errors.push(
                WhenError::new(start..self.pos, "malformed raw string literal")
                    .with_help("write raw strings as r\"…\" or r#\"…\"#"),
            );
            return;
        }
        self.bump();
        let content_start = self.pos;
        let closing: String = std::iter::once('"')
            .chain(std::iter::repeat_n('#', hashes))
            .collect();
        match self.source[self.pos..].find(&closing) {
            Some(relative) => {
                let content_end = self.pos + relative;
                let value = self.source[content_start..content_end].to_owned();
                self.pos = content_end + closing.len();
                self.push(TokenKind::Str(value), start);
            }
            None => {
                self.pos = self.source.len();
                self.errors.push(
                    WhenError::new(start..self.pos, "unterminated raw string literal")
                        .with_help(format!("close the string with `{closing}`")),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(source: &str) -> Vec<TokenKind> {
        let (tokens, errors) = tokenize(source);
        assert!(errors.is_empty(), "{errors:?}");
        tokens.into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn operators_and_literals() {
        assert_eq!(
            kinds(r#"tool_name == "a\"b" && !x || y >= -2.5e1"#),
            vec![
                TokenKind::Ident("tool_name".into()),
                TokenKind::EqEq,
                TokenKind::Str("a\"b".into()),
                TokenKind::AndAnd,
                TokenKind::Bang,
                TokenKind::Ident("x".into()),
                TokenKind::OrOr,
                TokenKind::Ident("y".into()),
                TokenKind::Ge,
                TokenKind::Float(-25.0),
            ]
        );
    }

    #[test]
    fn path_index_is_not_a_float() {
        assert_eq!(
            kinds("args.items.0.1"),
            vec![
                TokenKind::Ident("args".into()),
                TokenKind::Dot,
                TokenKind::Ident("items".into()),
                TokenKind::Dot,
                TokenKind::Int(0),
                TokenKind::Dot,
                TokenKind::Int(1),
            ]
        );
    }

    #[test]
    fn unicode_escapes_and_raw_strings() {
        assert_eq!(
            kinds(r#""\u{4e2d}文""#),
            vec![TokenKind::Str("中文".into())]
        );
        assert_eq!(kinds(r##"r#"a"b"#"##), vec![TokenKind::Str("a\"b".into())]);
    }

    #[test]
    fn a_negative_number_after_a_dot_terminates() {
        let (tokens, _) = tokenize("args.-1");
        assert_eq!(tokens.last().map(|t| &t.kind), Some(&TokenKind::Int(-1)));
    }

    #[test]
    fn errors_do_not_stop_the_lexer() {
        let (tokens, errors) = tokenize(r#"a = "x\q" && 'b'"#);
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert!(tokens.iter().any(|t| t.kind == TokenKind::AndAnd));
    }
}
