//! The one parser of the `when` language, with every type and scope check.
//!
//! Grammar (usual precedence: `!` binds tightest, then `&&`, then `||`):
//!
//! ```text
//! expr  := or
//! or    := and ("||" and)*
//! and   := not ("&&" not)*
//! not   := "!" not | "(" expr ")" | test
//! test  := field op literal | field "in" "[" literal ("," literal)* "]"
//!        | field "exists" | field
//! ```
//!
//! The parser recovers after a mistake (at the next `&&`, `||` or `)`), so one
//! run reports every error in the expression.

use std::ops::Range;

use crate::ast::{
    Check, Expr, Field, JsonField, JsonRoot, Literal, Number, Ordering, PathSegment, Pattern, Test,
    TextField,
};
use crate::error::{WhenError, WhenErrors};
use crate::glob::Glob;
use crate::lexer::{Token, TokenKind, tokenize};
use crate::suggest::did_you_mean;

/// Deepest nesting of `(` and `!` the parser accepts.
pub const MAX_DEPTH: usize = 64;

/// Most errors reported for one expression; the rest are usually consequences.
const MAX_ERRORS: usize = 32;

/// The values `surface` can take.
pub const SURFACES: [&str; 6] = [
    "chat",
    "api",
    "dag_step",
    "delegated",
    "workflow_node",
    "evaluation",
];

/// The operator keywords, for suggestions.
const OPERATOR_WORDS: [&str; 7] = [
    "starts_with",
    "ends_with",
    "contains",
    "matches",
    "matches_regex",
    "in",
    "exists",
];

/// Which kind of hook an expression guards; it decides which fields exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Before the tool runs: tool fields and `args`, no `result`.
    PreToolUse,
    /// After the tool ran: everything, including `result`.
    PostToolUse,
    /// At session start: no tool fields, no `args`, no `result`.
    SessionStart,
}

impl Scope {
    /// The attribute name of this kind of hook.
    pub fn attribute(self) -> &'static str {
        match self {
            Scope::PreToolUse => "pre_tool_use",
            Scope::PostToolUse => "post_tool_use",
            Scope::SessionStart => "session_start",
        }
    }
}

/// Parses and checks a `when` expression for a hook of kind `scope`.
///
/// ```
/// use hooks_when::{parse, Scope};
///
/// let expr = parse(r#"tool_name starts_with "sql_" && !metadata.read_only"#, Scope::PreToolUse).unwrap();
/// assert_eq!(expr.to_string(), r#"tool_name starts_with "sql_" && !(metadata.read_only)"#);
///
/// let error = parse("tool_nme == \"x\"", Scope::PreToolUse).unwrap_err();
/// assert_eq!(error.to_string(), "line 1, column 1: unknown field `tool_nme`\n  help: did you mean `tool_name`?");
/// ```
pub fn parse(source: &str, scope: Scope) -> Result<Expr, WhenErrors> {
    let (tokens, lex_errors) = tokenize(source);
    if !lex_errors.is_empty() {
        return Err(WhenErrors::new(source, lex_errors));
    }
    if tokens.is_empty() {
        let error = WhenError::new(0..source.len(), "empty `when` expression")
            .with_help("write a test such as `tool_name == \"sql_exec\"`, or leave `when` out to match every call");
        return Err(WhenErrors::new(source, vec![error]));
    }
    let mut parser = Parser {
        source,
        tokens: &tokens,
        pos: 0,
        errors: Vec::new(),
        scope,
        depth: 0,
        too_deep: false,
    };
    let expr = parser.or();
    if !parser.too_deep {
        while let Some(token) = parser.peek() {
            let error = WhenError::new(
                token.span.clone(),
                format!(
                    "unexpected {} after the end of the expression",
                    token.kind.describe()
                ),
            );
            let error = if token.kind == TokenKind::RParen {
                error.with_help("this `)` has no matching `(`")
            } else {
                error.with_help("join tests with `&&` or `||`")
            };
            parser.error(error);
            parser.pos += 1;
            parser.skip_to_boundary();
        }
    }
    let mut errors = parser.errors;
    errors.sort_by_key(|error| error.span.start);
    errors.truncate(MAX_ERRORS);
    match expr {
        Some(expr) if errors.is_empty() => Ok(expr),
        _ => Err(WhenErrors::new(source, errors)),
    }
}

struct Parser<'a> {
    source: &'a str,
    tokens: &'a [Token],
    pos: usize,
    errors: Vec<WhenError>,
    scope: Scope,
    depth: usize,
    too_deep: bool,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn peek_kind(&self) -> Option<&TokenKind> {
        self.peek().map(|token| &token.kind)
    }

    fn previous(&self) -> Option<&Token> {
        self.pos
            .checked_sub(1)
            .and_then(|index| self.tokens.get(index))
    }

    fn eat(&mut self, kind: &TokenKind) -> bool {
        if self.peek_kind() == Some(kind) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Where the source ends, as an empty span.
    fn end_span(&self) -> Range<usize> {
        self.source.len()..self.source.len()
    }

    fn error(&mut self, error: WhenError) {
        if self.errors.len() < MAX_ERRORS
            && !self.errors.iter().any(|e| e.span.start == error.span.start)
        {
            self.errors.push(error);
        }
    }

    /// Skips to the next `&&`, `||` or unmatched `)` so parsing can resume.
    fn skip_to_boundary(&mut self) {
        let mut nesting = 0usize;
        while let Some(kind) = self.peek_kind() {
            match kind {
                TokenKind::AndAnd | TokenKind::OrOr if nesting == 0 => return,
                TokenKind::RParen if nesting == 0 => return,
                TokenKind::RParen => nesting -= 1,
                TokenKind::LParen => nesting += 1,
                _ => {}
            }
            self.pos += 1;
        }
    }

    fn or(&mut self) -> Option<Expr> {
        self.chain(&TokenKind::OrOr, Parser::and, Expr::Or)
    }

    fn and(&mut self) -> Option<Expr> {
        self.chain(&TokenKind::AndAnd, Parser::not, Expr::And)
    }

    /// Parses `operand (separator operand)*`, wrapping two or more operands.
    fn chain(
        &mut self,
        separator: &TokenKind,
        operand: fn(&mut Self) -> Option<Expr>,
        wrap: fn(Vec<Expr>) -> Expr,
    ) -> Option<Expr> {
        let mut items = Vec::new();
        let mut ok = true;
        match operand(self) {
            Some(expr) => items.push(expr),
            None => ok = false,
        }
        while !self.too_deep && self.eat(separator) {
            match operand(self) {
                Some(expr) => items.push(expr),
                None => ok = false,
            }
        }
        if !ok {
            return None;
        }
        if items.len() == 1 {
            items.pop()
        } else {
            Some(wrap(items))
        }
    }

    fn not(&mut self) -> Option<Expr> {
        if self.too_deep {
            return None;
        }
        if self.depth >= MAX_DEPTH {
            self.too_deep = true;
            let span = self
                .peek()
                .map_or_else(|| self.end_span(), |token| token.span.clone());
            self.error(
                WhenError::new(
                    span,
                    format!("expression is nested more than {MAX_DEPTH} levels deep"),
                )
                .with_help("simplify the expression: fewer nested `(` and `!`"),
            );
            return None;
        }
        self.depth += 1;
        let result = self.not_inner();
        self.depth -= 1;
        result
    }

    fn not_inner(&mut self) -> Option<Expr> {
        let Some(token) = self.peek().cloned() else {
            self.missing_operand(None);
            return None;
        };
        match &token.kind {
            TokenKind::Bang => {
                self.pos += 1;
                self.not().map(|expr| Expr::Not(Box::new(expr)))
            }
            TokenKind::LParen => {
                self.pos += 1;
                let inner = self.or();
                if self.too_deep {
                    return None;
                }
                if self.eat(&TokenKind::RParen) {
                    inner
                } else {
                    self.error(
                        WhenError::new(token.span.clone(), "unclosed `(`")
                            .with_help("add the matching `)`"),
                    );
                    self.skip_to_boundary();
                    None
                }
            }
            TokenKind::Ident(_) => self.test(),
            _ => {
                self.missing_operand(Some(&token));
                if !matches!(
                    token.kind,
                    TokenKind::AndAnd | TokenKind::OrOr | TokenKind::RParen
                ) {
                    self.pos += 1;
                    self.skip_to_boundary();
                }
                None
            }
        }
    }

    /// Reports a place where a test should be but is not.
    fn missing_operand(&mut self, found: Option<&Token>) {
        let previous = self.previous().map(|token| token.kind.clone());
        let after = match &previous {
            Some(
                kind @ (TokenKind::AndAnd | TokenKind::OrOr | TokenKind::Bang | TokenKind::LParen),
            ) => {
                format!(" after {}", kind.describe())
            }
            _ => String::new(),
        };
        match found {
            None => {
                let span = self
                    .previous()
                    .map_or_else(|| self.end_span(), |token| token.span.clone());
                let error = WhenError::new(
                    span,
                    format!("expected a test{after}, found the end of the expression"),
                );
                let error = match &previous {
                    Some(kind @ (TokenKind::AndAnd | TokenKind::OrOr | TokenKind::Bang)) => error
                        .with_help(format!(
                            "remove the dangling {} or add a test after it",
                            kind.describe()
                        )),
                    _ => error.with_help("add a test such as `tool_name == \"sql_exec\"`"),
                };
                self.error(error);
            }
            Some(token) => {
                let error = WhenError::new(
                    token.span.clone(),
                    format!("expected a test{after}, found {}", token.kind.describe()),
                );
                let error = match (&previous, &token.kind) {
                    (
                        Some(TokenKind::AndAnd | TokenKind::OrOr),
                        TokenKind::AndAnd | TokenKind::OrOr,
                    ) => error.with_help("remove the doubled operator"),
                    (_, TokenKind::AndAnd | TokenKind::OrOr) => error.with_help(format!(
                        "{} needs a test on its left",
                        token.kind.describe()
                    )),
                    (_, TokenKind::Str(_) | TokenKind::Int(_) | TokenKind::Float(_)) => error
                        .with_help("a test starts with a field, e.g. `tool_name == \"sql_exec\"`"),
                    _ => error.with_help("a test looks like `tool_name == \"sql_exec\"`"),
                };
                self.error(error);
            }
        }
    }

    fn test(&mut self) -> Option<Expr> {
        let field = self.field();
        let Some(op_token) = self.peek().cloned() else {
            return self.finish_test(field, None, Check::IsTrue);
        };
        let word = match &op_token.kind {
            TokenKind::Ident(word) => Some(word.as_str()),
            _ => None,
        };
        let check = match (&op_token.kind, word) {
            (TokenKind::AndAnd | TokenKind::OrOr | TokenKind::RParen, _) => {
                return self.finish_test(field, None, Check::IsTrue);
            }
            (TokenKind::Ident(_), Some("exists")) => {
                self.pos += 1;
                Check::Exists
            }
            (TokenKind::Ident(_), Some("in")) => {
                self.pos += 1;
                let list = self.list(&op_token)?;
                Check::In(list)
            }
            (
                TokenKind::EqEq
                | TokenKind::NotEq
                | TokenKind::Lt
                | TokenKind::Le
                | TokenKind::Gt
                | TokenKind::Ge,
                _,
            )
            | (
                TokenKind::Ident(_),
                Some("starts_with" | "ends_with" | "contains" | "matches" | "matches_regex"),
            ) => {
                self.pos += 1;
                let (literal, literal_span) = self.literal(&op_token)?;
                self.operator_check(field.as_ref(), &op_token, literal, literal_span)?
            }
            (TokenKind::Ident(_), Some(other)) => {
                let error =
                    WhenError::new(op_token.span.clone(), format!("unknown operator `{other}`"));
                let error = match did_you_mean(other, OPERATOR_WORDS) {
                    Some(suggestion) => error.with_help(format!("did you mean `{suggestion}`?")),
                    None => error.with_help(
                        "the operators are ==, !=, <, <=, >, >=, starts_with, ends_with, contains, matches, matches_regex, in and exists",
                    ),
                };
                self.error(error);
                self.skip_to_boundary();
                return None;
            }
            (kind, _) => {
                let name = field
                    .as_ref()
                    .map_or_else(|| "the field".to_owned(), |(f, _)| format!("`{f}`"));
                self.error(
                    WhenError::new(op_token.span.clone(), format!("expected an operator after {name}, found {}", kind.describe()))
                        .with_help("write e.g. `tool_name == \"sql_exec\"`, `args.amount > 100` or `metadata.flag`"),
                );
                self.skip_to_boundary();
                return None;
            }
        };
        self.finish_test(field, Some(&op_token), check)
    }

    /// Applies the checks that depend on the field alone (bare tests, `in` lists, `exists`).
    fn finish_test(
        &mut self,
        field: Option<(Field, Range<usize>)>,
        op: Option<&Token>,
        check: Check,
    ) -> Option<Expr> {
        let (field, field_span) = field?;
        match (&field, &check) {
            (Field::Text(text), Check::IsTrue) => {
                self.error(
                    WhenError::new(
                        field_span,
                        format!("`{}` is a string, not a boolean", text.name()),
                    )
                    .with_help(format!(
                        "test it, e.g. `{0} == \"…\"` or `{0} exists`",
                        text.name()
                    )),
                );
                return None;
            }
            (Field::Text(text), Check::In(literals)) => {
                let span = op.map_or(field_span.clone(), |token| token.span.clone());
                if literals
                    .iter()
                    .any(|literal| !matches!(literal, Literal::Str(_)))
                {
                    self.error(
                        WhenError::new(
                            span,
                            format!(
                                "`{}` is a string, so `in` needs a list of strings",
                                text.name()
                            ),
                        )
                        .with_help(format!(
                            "quote the values, e.g. `{} in [\"a\", \"b\"]`",
                            text.name()
                        )),
                    );
                    return None;
                }
                if *text == TextField::Surface {
                    for literal in literals {
                        if let Literal::Str(value) = literal
                            && !self.surface_ok(value, span.clone())
                        {
                            return None;
                        }
                    }
                }
            }
            _ => {}
        }
        Some(Expr::Test(Test { field, check }))
    }

    fn surface_ok(&mut self, value: &str, span: Range<usize>) -> bool {
        if SURFACES.contains(&value) {
            return true;
        }
        let error = WhenError::new(span, format!("unknown surface \"{value}\""));
        let error = match did_you_mean(value, SURFACES) {
            Some(suggestion) => error.with_help(format!("did you mean \"{suggestion}\"?")),
            None => error.with_help(format!("the surfaces are {}", SURFACES.join(", "))),
        };
        self.error(error);
        false
    }

    /// Checks an operator with a literal against the field's type and builds the check.
    fn operator_check(
        &mut self,
        field: Option<&(Field, Range<usize>)>,
        op: &Token,
        literal: Literal,
        literal_span: Range<usize>,
    ) -> Option<Check> {
        let (field, _) = field?;
        let op_name = match &op.kind {
            TokenKind::Ident(word) => word.clone(),
            kind => kind.describe().trim_matches('`').to_owned(),
        };
        let ordering = match op.kind {
            TokenKind::Lt => Some(Ordering::Lt),
            TokenKind::Le => Some(Ordering::Le),
            TokenKind::Gt => Some(Ordering::Gt),
            TokenKind::Ge => Some(Ordering::Ge),
            _ => None,
        };
        if let Some(ordering) = ordering {
            if let Field::Text(text) = field {
                self.error(
                    WhenError::new(op.span.clone(), format!("`{op_name}` compares numbers, but `{}` is a string", text.name()))
                        .with_help("strings take ==, !=, starts_with, ends_with, contains, matches, matches_regex, in or exists"),
                );
                return None;
            }
            let number = match literal {
                Literal::Int(value) => Number::Int(value),
                Literal::Float(value) => Number::Float(value),
                other => {
                    self.error(
                        WhenError::new(
                            literal_span,
                            format!(
                                "`{op_name}` compares numbers, but this is {}",
                                literal_kind(&other)
                            ),
                        )
                        .with_help(format!("write a number, e.g. `{field} {op_name} 100`")),
                    );
                    return None;
                }
            };
            return Some(Check::Compare(ordering, number));
        }
        let needs_string = match &op.kind {
            TokenKind::EqEq | TokenKind::NotEq => matches!(field, Field::Text(_)),
            TokenKind::Ident(word) => word != "contains" || matches!(field, Field::Text(_)),
            _ => false,
        };
        if needs_string && !matches!(literal, Literal::Str(_)) {
            let message = match field {
                Field::Text(text) => format!(
                    "`{}` is a string, so `{op_name}` needs a string, not {}",
                    text.name(),
                    literal_kind(&literal)
                ),
                Field::Json(_) => {
                    format!("`{op_name}` needs a string, not {}", literal_kind(&literal))
                }
            };
            self.error(WhenError::new(literal_span, message).with_help(format!(
                "quote the value, e.g. `{field} {op_name} \"{}\"`",
                literal_plain(&literal)
            )));
            return None;
        }
        if let (
            Field::Text(TextField::Surface),
            TokenKind::EqEq | TokenKind::NotEq,
            Literal::Str(value),
        ) = (field, &op.kind, &literal)
            && !self.surface_ok(value, literal_span.clone())
        {
            return None;
        }
        let text = match &literal {
            Literal::Str(text) => text.clone(),
            _ => String::new(),
        };
        let check = match op.kind {
            TokenKind::EqEq => Check::Eq(literal),
            TokenKind::NotEq => Check::Ne(literal),
            _ => match op_name.as_str() {
                "starts_with" => Check::StartsWith(text),
                "ends_with" => Check::EndsWith(text),
                "contains" => Check::Contains(literal),
                "matches" => match Glob::new(&text) {
                    Ok(glob) => Check::Matches(glob),
                    Err(error) => {
                        let span = self.offset_in_literal(&literal_span, &text, error.offset);
                        self.error(
                            WhenError::new(span, format!("invalid glob pattern: {}", error.message))
                                .with_help("globs support *, ?, [abc], [a-z], [!abc] and \\ escapes; use matches_regex for more"),
                        );
                        return None;
                    }
                },
                _ => match regex::Regex::new(&text) {
                    Ok(regex) => Check::MatchesRegex(Pattern::new(text, regex)),
                    Err(error) => {
                        self.error(
                            WhenError::new(literal_span, format!("invalid regular expression: {}", regex_reason(&error)))
                                .with_help("the syntax is that of the `regex` crate: https://docs.rs/regex/latest/regex/#syntax"),
                        );
                        return None;
                    }
                },
            },
        };
        Some(check)
    }

    /// The span of byte `offset` of a string literal's value, when the literal has no escapes.
    fn offset_in_literal(
        &self,
        literal_span: &Range<usize>,
        value: &str,
        offset: usize,
    ) -> Range<usize> {
        let raw = &self.source[literal_span.clone()];
        if raw.len() == value.len() + 2 && raw.starts_with('"') && &raw[1..raw.len() - 1] == value {
            let start = literal_span.start + 1 + offset;
            let width = value[offset..].chars().next().map_or(0, char::len_utf8);
            start..start + width.max(1)
        } else {
            literal_span.clone()
        }
    }

    fn literal(&mut self, op: &Token) -> Option<(Literal, Range<usize>)> {
        let Some(token) = self.peek().cloned() else {
            self.error(
                WhenError::new(
                    op.span.clone(),
                    format!(
                        "expected a value after {}, found the end of the expression",
                        op.kind.describe()
                    ),
                )
                .with_help("add a value such as \"text\", 42 or true"),
            );
            return None;
        };
        let literal = match token.kind {
            TokenKind::Str(text) => Literal::Str(text),
            TokenKind::Int(value) => Literal::Int(value),
            TokenKind::Float(value) => Literal::Float(value),
            TokenKind::Ident(word) if word == "true" => Literal::Bool(true),
            TokenKind::Ident(word) if word == "false" => Literal::Bool(false),
            kind => {
                let error = WhenError::new(
                    token.span.clone(),
                    format!(
                        "expected a value after {}, found {}",
                        op.kind.describe(),
                        kind.describe()
                    ),
                );
                let error = match kind {
                    TokenKind::Ident(word) => {
                        error.with_help(format!("quote text values: \"{word}\""))
                    }
                    TokenKind::EqEq
                    | TokenKind::NotEq
                    | TokenKind::Lt
                    | TokenKind::Le
                    | TokenKind::Gt
                    | TokenKind::Ge => error.with_help("remove the doubled operator"),
                    _ => error.with_help("a value is a string, a number, true or false"),
                };
                self.error(error);
                self.skip_to_boundary();
                return None;
            }
        };
        self.pos += 1;
        Some((literal, token.span))
    }

    fn list(&mut self, op: &Token) -> Option<Vec<Literal>> {
        let open_span = match self.peek() {
            Some(Token {
                kind: TokenKind::LBracket,
                span,
            }) => span.clone(),
            _ => {
                let span = self
                    .peek()
                    .map_or(op.span.clone(), |token| token.span.clone());
                self.error(
                    WhenError::new(span, "expected `[` after `in`")
                        .with_help("write a list, e.g. `in [\"a\", \"b\"]`"),
                );
                self.skip_to_boundary();
                return None;
            }
        };
        self.pos += 1;
        let mut literals = Vec::new();
        loop {
            if self.eat(&TokenKind::RBracket) {
                break;
            }
            let Some((literal, _)) = self.literal(op) else {
                // `literal` reported the problem; resume after the list if it closes.
                while let Some(kind) = self.peek_kind() {
                    let done = *kind == TokenKind::RBracket;
                    if matches!(kind, TokenKind::AndAnd | TokenKind::OrOr) {
                        break;
                    }
                    self.pos += 1;
                    if done {
                        break;
                    }
                }
                return None;
            };
            literals.push(literal);
            if self.eat(&TokenKind::Comma) {
                continue;
            }
            if self.eat(&TokenKind::RBracket) {
                break;
            }
            let span = self
                .peek()
                .map_or(open_span.clone(), |token| token.span.clone());
            self.error(
                WhenError::new(span, "expected `,` or `]` in the list")
                    .with_help("separate values with `,` and close the list with `]`"),
            );
            self.skip_to_boundary();
            return None;
        }
        if literals.is_empty() {
            let end = self
                .previous()
                .map_or(open_span.end, |token| token.span.end);
            self.error(
                WhenError::new(open_span.start..end, "`in []` can never be true")
                    .with_help("list at least one value"),
            );
            return None;
        }
        Some(literals)
    }

    /// Parses a field path and checks that it exists in this scope.
    fn field(&mut self) -> Option<(Field, Range<usize>)> {
        let Some(Token {
            kind: TokenKind::Ident(root),
            span,
        }) = self.peek().cloned()
        else {
            return None;
        };
        self.pos += 1;
        let mut end = span.end;
        let mut path = Vec::new();
        let mut path_ok = true;
        while let Some(Token {
            kind: TokenKind::Dot,
            span: dot_span,
        }) = self.peek().cloned()
        {
            self.pos += 1;
            let next = self.peek().cloned();
            let adjacent = dot_span.start == end
                && next
                    .as_ref()
                    .is_some_and(|token| token.span.start == dot_span.end);
            let segment = match next.as_ref().map(|token| &token.kind) {
                Some(TokenKind::Ident(key)) | Some(TokenKind::Str(key)) => {
                    Some(PathSegment::Key(key.clone()))
                }
                Some(TokenKind::Int(index)) => usize::try_from(*index).ok().map(PathSegment::Index),
                _ => None,
            };
            match (segment, adjacent) {
                (Some(segment), true) => {
                    self.pos += 1;
                    end = next.map_or(end, |token| token.span.end);
                    path.push(segment);
                }
                (Some(_), false) => {
                    self.error(
                        WhenError::new(dot_span, "spaces inside a field path").with_help(
                            "write paths without spaces, e.g. `metadata.requires_confirmation`",
                        ),
                    );
                    self.pos += 1;
                    path_ok = false;
                }
                (None, _) => {
                    self.error(
                        WhenError::new(dot_span, "expected a key after `.`")
                            .with_help("a path continues with a name, a number or a quoted key: `args.items.0.\"content-type\"`"),
                    );
                    path_ok = false;
                    break;
                }
            }
        }
        let field_span = span.start..end;
        if !path_ok {
            return None;
        }
        let text_field = TextField::ALL
            .iter()
            .copied()
            .find(|field| field.name() == root);
        let json_root = match root.as_str() {
            "metadata" => Some(JsonRoot::Metadata),
            "args" => Some(JsonRoot::Args),
            "result" => Some(JsonRoot::Result),
            _ => None,
        };
        let field = match (text_field, json_root) {
            (Some(text), _) => {
                if !path.is_empty() {
                    self.error(
                        WhenError::new(
                            field_span,
                            format!("`{}` is a string and has no sub-fields", text.name()),
                        )
                        .with_help("only metadata.…, args.… and result.… take a path"),
                    );
                    return None;
                }
                Field::Text(text)
            }
            (None, Some(root)) => {
                if path.is_empty() && root != JsonRoot::Result {
                    self.error(
                        WhenError::new(field_span, format!("`{}` needs a key", root.name()))
                            .with_help(format!(
                                "name a key, e.g. `{}.{}`",
                                root.name(),
                                if root == JsonRoot::Args {
                                    "amount"
                                } else {
                                    "requires_confirmation"
                                }
                            )),
                    );
                    return None;
                }
                Field::Json(JsonField { root, path })
            }
            (None, None) => {
                let names = TextField::ALL
                    .iter()
                    .map(|field| field.name())
                    .chain(["metadata", "args", "result"]);
                let error = WhenError::new(span.clone(), format!("unknown field `{root}`"));
                let error = match did_you_mean(&root, names) {
                    Some(suggestion) => error.with_help(format!("did you mean `{suggestion}`?")),
                    None => error.with_help(
                        "the fields are tool_name, connector, action, agent_id, user_id, org_id, conversation_id, surface, metadata.KEY, args.KEY and result",
                    ),
                };
                self.error(error);
                return None;
            }
        };
        if !self.field_in_scope(&field, &span) {
            return None;
        }
        Some((field, field_span))
    }

    fn field_in_scope(&mut self, field: &Field, span: &Range<usize>) -> bool {
        let (name, is_tool_field) = match field {
            Field::Text(text) => (text.name(), text.is_tool_field()),
            Field::Json(json) => (json.root.name(), json.root != JsonRoot::Metadata),
        };
        if matches!(
            field,
            Field::Json(JsonField {
                root: JsonRoot::Result,
                ..
            })
        ) && self.scope != Scope::PostToolUse
        {
            self.error(
                WhenError::new(
                    span.clone(),
                    format!(
                        "`result` is only available in post_tool_use hooks, not in {} hooks",
                        self.scope.attribute()
                    ),
                )
                .with_help(match self.scope {
                    Scope::PreToolUse => {
                        "the tool has not run yet when a pre_tool_use hook is asked"
                    }
                    _ => "a session-start hook runs before any tool call",
                }),
            );
            return false;
        }
        if is_tool_field && self.scope == Scope::SessionStart {
            self.error(
                WhenError::new(span.clone(), format!("`{name}` is not available in session_start hooks"))
                    .with_help("a session-start hook runs before any tool call; test agent_id, user_id, org_id, conversation_id, surface or metadata"),
            );
            return false;
        }
        true
    }
}

fn literal_kind(literal: &Literal) -> &'static str {
    match literal {
        Literal::Str(_) => "a string",
        Literal::Int(_) | Literal::Float(_) => "a number",
        Literal::Bool(_) => "a boolean",
    }
}

fn literal_plain(literal: &Literal) -> String {
    match literal {
        Literal::Str(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The one-line reason of a `regex` syntax error (its full text draws a caret diagram).
fn regex_reason(error: &regex::Error) -> String {
    let text = error.to_string();
    text.lines()
        .rev()
        .find_map(|line| line.trim().strip_prefix("error: "))
        .map_or_else(
            || text.lines().last().unwrap_or("").trim().to_owned(),
            str::to_owned,
        )
}
