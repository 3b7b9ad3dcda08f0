//! The syntax tree of a checked `when` expression, and its canonical printing.
//!
//! A tree only exists once every check has passed, so evaluation and code
//! generation never meet an ill-typed test. Printing a tree and parsing the text
//! again yields the same tree.

use std::fmt;

use crate::glob::Glob;

/// A boolean expression over a hook's context.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// True when any alternative is true (evaluated left to right, short-circuit).
    Or(Vec<Expr>),
    /// True when every part is true (evaluated left to right, short-circuit).
    And(Vec<Expr>),
    /// Negation.
    Not(Box<Expr>),
    /// One test of one field.
    Test(Test),
}

/// A test of one field: `tool_name starts_with "sql_"`, `args.amount > 50000`.
#[derive(Debug, Clone, PartialEq)]
pub struct Test {
    /// What is tested.
    pub field: Field,
    /// How it is tested.
    pub check: Check,
}

/// A field of the hook context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field {
    /// A string field such as `tool_name`.
    Text(TextField),
    /// A JSON value reached by a path: `metadata.KEY…`, `args.KEY…` or `result…`.
    Json(JsonField),
}

/// The string fields of the context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TextField {
    /// The tool's name, e.g. `oa__purchase_pay`.
    ToolName,
    /// The part of the tool name before `__` (`oa`), unless metadata says otherwise.
    Connector,
    /// The part of the tool name after `__` (`purchase_pay`), unless metadata says otherwise.
    Action,
    /// The agent running the call.
    AgentId,
    /// The user on whose behalf the agent runs.
    UserId,
    /// The user's organisation.
    OrgId,
    /// The conversation the call belongs to.
    ConversationId,
    /// Where the agent runs: `chat`, `api`, `dag_step`, `delegated`, `workflow_node`, `evaluation`.
    Surface,
}

impl TextField {
    /// Every string field, in documentation order.
    pub const ALL: [TextField; 8] = [
        TextField::ToolName,
        TextField::Connector,
        TextField::Action,
        TextField::AgentId,
        TextField::UserId,
        TextField::OrgId,
        TextField::ConversationId,
        TextField::Surface,
    ];

    /// The field's name in the language.
    pub fn name(self) -> &'static str {
        match self {
            TextField::ToolName => "tool_name",
            TextField::Connector => "connector",
            TextField::Action => "action",
            TextField::AgentId => "agent_id",
            TextField::UserId => "user_id",
            TextField::OrgId => "org_id",
            TextField::ConversationId => "conversation_id",
            TextField::Surface => "surface",
        }
    }

    /// True for the fields that describe a tool call (absent at session start).
    pub fn is_tool_field(self) -> bool {
        matches!(
            self,
            TextField::ToolName | TextField::Connector | TextField::Action
        )
    }
}

/// A JSON field: a root and a path below it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonField {
    /// Where the path starts.
    pub root: JsonRoot,
    /// Keys and indexes below the root; empty only for `result`.
    pub path: Vec<PathSegment>,
}

/// The JSON roots of the context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonRoot {
    /// Facts the engine attaches to the call (`metadata.requires_confirmation`).
    Metadata,
    /// The tool's arguments, as rewritten by earlier hooks.
    Args,
    /// The tool's result (post hooks only).
    Result,
}

impl JsonRoot {
    /// The root's name in the language.
    pub fn name(self) -> &'static str {
        match self {
            JsonRoot::Metadata => "metadata",
            JsonRoot::Args => "args",
            JsonRoot::Result => "result",
        }
    }
}

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSegment {
    /// An object key.
    Key(String),
    /// An array index (or, on an object, the key spelled as that number).
    Index(usize),
}

/// A literal value in a test.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// A string.
    Str(String),
    /// An integer.
    Int(i64),
    /// A finite float.
    Float(f64),
    /// `true` or `false`.
    Bool(bool),
}

/// A numeric literal for ordered comparisons.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// An integer.
    Int(i64),
    /// A finite float.
    Float(f64),
}

/// An ordering operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ordering {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl Ordering {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            Ordering::Lt => "<",
            Ordering::Le => "<=",
            Ordering::Gt => ">",
            Ordering::Ge => ">=",
        }
    }
}

/// A compiled regular expression with the text it came from.
#[derive(Debug, Clone)]
pub struct Pattern {
    source: String,
    regex: regex::Regex,
}

impl Pattern {
    pub(crate) fn new(source: String, regex: regex::Regex) -> Self {
        Pattern { source, regex }
    }

    /// The pattern text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The compiled expression.
    pub fn regex(&self) -> &regex::Regex {
        &self.regex
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

/// What a test checks.
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    /// `== literal`
    Eq(Literal),
    /// `!= literal` (false when the field is missing)
    Ne(Literal),
    /// `starts_with "prefix"`
    StartsWith(String),
    /// `ends_with "suffix"`
    EndsWith(String),
    /// `contains literal`: a substring of a string, or an element of an array
    Contains(Literal),
    /// `matches "glob"`
    Matches(Glob),
    /// `matches_regex "regex"`
    MatchesRegex(Pattern),
    /// `< <= > >= number`
    Compare(Ordering, Number),
    /// `in [literal, …]` (never empty)
    In(Vec<Literal>),
    /// `exists`: the field is present (for strings: non-empty)
    Exists,
    /// A bare JSON field: true when the value is JSON `true`
    IsTrue,
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Or(items) => join(f, items, " || ", false),
            Expr::And(items) => join(f, items, " && ", true),
            Expr::Not(inner) => {
                f.write_str("!")?;
                match inner.as_ref() {
                    Expr::Not(_) => write!(f, "{inner}"),
                    _ => write!(f, "({inner})"),
                }
            }
            Expr::Test(test) => write!(f, "{test}"),
        }
    }
}

/// Joins operands, parenthesising where precedence or the tree's shape needs it:
/// a nested chain of the same operator keeps its parentheses so it re-parses
/// as the same tree, and `||` inside `&&` always needs them.
fn join(f: &mut fmt::Formatter<'_>, items: &[Expr], separator: &str, is_and: bool) -> fmt::Result {
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            f.write_str(separator)?;
        }
        match item {
            Expr::Or(_) => write!(f, "({item})")?,
            Expr::And(_) if is_and => write!(f, "({item})")?,
            _ => write!(f, "{item}")?,
        }
    }
    Ok(())
}

impl fmt::Display for Test {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.field)?;
        match &self.check {
            Check::Eq(literal) => write!(f, " == {literal}"),
            Check::Ne(literal) => write!(f, " != {literal}"),
            Check::StartsWith(text) => write!(f, " starts_with {}", Quoted(text)),
            Check::EndsWith(text) => write!(f, " ends_with {}", Quoted(text)),
            Check::Contains(literal) => write!(f, " contains {literal}"),
            Check::Matches(glob) => write!(f, " matches {}", Quoted(glob.source())),
            Check::MatchesRegex(pattern) => {
                write!(f, " matches_regex {}", Quoted(pattern.source()))
            }
            Check::Compare(ordering, number) => write!(f, " {} {number}", ordering.symbol()),
            Check::In(literals) => {
                f.write_str(" in [")?;
                for (index, literal) in literals.iter().enumerate() {
                    if index > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{literal}")?;
                }
                f.write_str("]")
            }
            Check::Exists => f.write_str(" exists"),
            Check::IsTrue => Ok(()),
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Field::Text(field) => f.write_str(field.name()),
            Field::Json(field) => {
                f.write_str(field.root.name())?;
                for segment in &field.path {
                    match segment {
                        PathSegment::Index(index) => write!(f, ".{index}")?,
                        PathSegment::Key(key) if is_identifier(key) => write!(f, ".{key}")?,
                        PathSegment::Key(key) => write!(f, ".{}", Quoted(key))?,
                    }
                }
                Ok(())
            }
        }
    }
}

pub(crate) fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Str(text) => write!(f, "{}", Quoted(text)),
            Literal::Int(value) => write!(f, "{value}"),
            Literal::Float(value) => write!(f, "{value:?}"),
            Literal::Bool(value) => write!(f, "{value}"),
        }
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Int(value) => write!(f, "{value}"),
            Number::Float(value) => write!(f, "{value:?}"),
        }
    }
}

/// A string printed as a `when` string literal, escaped.
struct Quoted<'a>(&'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for ch in self.0.chars() {
            match ch {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                '\0' => f.write_str("\\0")?,
                c if c.is_control() => write!(f, "\\u{{{:x}}}", c as u32)?,
                c => write!(f, "{c}")?,
            }
        }
        f.write_str("\"")
    }
}
