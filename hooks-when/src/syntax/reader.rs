//! Reads tokens into a [`Syntax`] tree by recursive descent, with recovery.

use std::ops::Range;

use super::tree::{FieldPath, Node, Operation, Operator, Syntax, TestSyntax};
use crate::ast::{Literal, Ordering, PathSegment};
use crate::error::WhenError;
use crate::lexer::{Token, TokenKind};
use crate::suggest::did_you_mean;

/// Deepest nesting of `(` and `!` the parser accepts.
pub const MAX_DEPTH: usize = 64;

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

/// Reads a non-empty token list into a syntax tree.
pub(crate) fn read(source: &str, tokens: &[Token]) -> Syntax {
    let mut reader = Reader {
        source,
        tokens,
        pos: 0,
        errors: Vec::new(),
        depth: 0,
        too_deep: false,
    };
    let tree = reader.or();
    if !reader.too_deep {
        while let Some(token) = reader.peek() {
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
            reader.error(error);
            reader.pos += 1;
            reader.skip_to_boundary();
        }
    }
    Syntax {
        tree,
        errors: reader.errors,
    }
}

struct Reader<'a> {
    source: &'a str,
    tokens: &'a [Token],
    pos: usize,
    errors: Vec<WhenError>,
    depth: usize,
    too_deep: bool,
}

impl Reader<'_> {
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
        self.errors.push(error);
    }

    /// Skips to the next `&&`, `||` or unmatched `)` so reading can resume.
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

    fn or(&mut self) -> Node {
        self.chain(&TokenKind::OrOr, Reader::and, Node::Or)
    }

    fn and(&mut self) -> Node {
        self.chain(&TokenKind::AndAnd, Reader::not, Node::And)
    }

    /// Reads `operand (separator operand)*`, wrapping two or more operands.
    fn chain(
        &mut self,
        separator: &TokenKind,
        operand: fn(&mut Self) -> Node,
        wrap: fn(Vec<Node>) -> Node,
    ) -> Node {
        let mut items = vec![operand(self)];
        while !self.too_deep && self.eat(separator) {
            items.push(operand(self));
        }
        if items.len() == 1 {
            items.swap_remove(0)
        } else {
            wrap(items)
        }
    }

    fn not(&mut self) -> Node {
        if self.too_deep {
            return Node::Broken(Vec::new());
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
            return Node::Broken(Vec::new());
        }
        self.depth += 1;
        let result = self.not_inner();
        self.depth -= 1;
        result
    }

    fn not_inner(&mut self) -> Node {
        let Some(token) = self.peek().cloned() else {
            self.missing_operand(None);
            return Node::Broken(Vec::new());
        };
        match &token.kind {
            TokenKind::Bang => {
                self.pos += 1;
                Node::Not(Box::new(self.not()))
            }
            TokenKind::LParen => {
                self.pos += 1;
                let inner = self.or();
                if self.too_deep {
                    return Node::Broken(vec![inner]);
                }
                if self.eat(&TokenKind::RParen) {
                    inner
                } else {
                    self.error(
                        WhenError::new(token.span.clone(), "unclosed `(`")
                            .with_help("add the matching `)`"),
                    );
                    self.skip_to_boundary();
                    Node::Broken(vec![inner])
                }
            }
            TokenKind::Ident(_) => Node::Test(self.test()),
            _ => {
                self.missing_operand(Some(&token));
                if !matches!(
                    token.kind,
                    TokenKind::AndAnd | TokenKind::OrOr | TokenKind::RParen
                ) {
                    self.pos += 1;
                    self.skip_to_boundary();
                }
                Node::Broken(Vec::new())
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

    /// Reads a test; the next token is a name.
    fn test(&mut self) -> TestSyntax {
        let field = self.field();
        let errors_before = self.errors.len();
        let operation = self.operation();
        TestSyntax {
            field,
            operation,
            errors_before,
        }
    }

    /// Reads what follows a field.
    fn operation(&mut self) -> Operation {
        let Some(op_token) = self.peek().cloned() else {
            return Operation::Bare;
        };
        let op = match &op_token.kind {
            TokenKind::AndAnd | TokenKind::OrOr | TokenKind::RParen => return Operation::Bare,
            TokenKind::EqEq => Operator::Eq,
            TokenKind::NotEq => Operator::Ne,
            TokenKind::Lt => Operator::Order(Ordering::Lt),
            TokenKind::Le => Operator::Order(Ordering::Le),
            TokenKind::Gt => Operator::Order(Ordering::Gt),
            TokenKind::Ge => Operator::Order(Ordering::Ge),
            TokenKind::Ident(word) if word == "exists" => {
                self.pos += 1;
                return Operation::Exists;
            }
            TokenKind::Ident(word) if word == "in" => {
                self.pos += 1;
                return match self.list(&op_token) {
                    Some((values, list_span)) => Operation::In {
                        op_span: op_token.span,
                        values,
                        list_span,
                    },
                    None => Operation::Broken,
                };
            }
            TokenKind::Ident(word) => match Operator::from_word(word) {
                Some(op) => op,
                None => {
                    let error =
                        WhenError::new(op_token.span.clone(), format!("unknown operator `{word}`"));
                    let error = match did_you_mean(word, OPERATOR_WORDS) {
                        Some(suggestion) => {
                            error.with_help(format!("did you mean `{suggestion}`?"))
                        }
                        None => error.with_help(
                            "the operators are ==, !=, <, <=, >, >=, starts_with, ends_with, contains, matches, matches_regex, in and exists",
                        ),
                    };
                    self.error(error);
                    self.skip_to_boundary();
                    return Operation::Broken;
                }
            },
            kind => {
                let found = kind.describe();
                self.skip_to_boundary();
                return Operation::MissingOperator {
                    span: op_token.span,
                    found,
                };
            }
        };
        self.pos += 1;
        match self.literal(&op_token) {
            Some((literal, literal_span)) => Operation::Binary {
                op,
                op_span: op_token.span,
                literal,
                literal_span,
            },
            None => Operation::Broken,
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

    /// Reads `[literal, …]` after `in`: the values and the span from `[` to `]`.
    fn list(&mut self, op: &Token) -> Option<(Vec<Literal>, Range<usize>)> {
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
        let end = self
            .previous()
            .map_or(open_span.end, |token| token.span.end);
        Some((literals, open_span.start..end))
    }

    /// Reads a field path; the next token is a name.
    fn field(&mut self) -> Option<FieldPath> {
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
        if !path_ok {
            return None;
        }
        Some(FieldPath {
            root,
            span: span.start..end,
            root_span: span,
            path,
        })
    }
}
