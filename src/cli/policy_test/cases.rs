//! The table of cases: what a cases file says, read and checked.

use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::error::CasesError;
use crate::Surface;
use crate::config::ConfigFormat;

/// A table of policy test cases, read from a YAML, JSON or TOML file.
///
/// ```yaml
/// read_only_orgs: [frozen-co]      # orgs in read-only mode for every case
/// run_commands: false              # run command hooks (default: report them unknown)
/// defaults: { user: alice, org: acme }
/// cases:
///   - name: reads go ahead
///     tool: sql_query
///     args: { sql: "SELECT 1" }
///     expect: allowed
///   - name: writes in a frozen org are blocked
///     tool: sql_exec
///     args: { sql: "DELETE FROM t" }
///     org: frozen-co
///     expect: { verdict: blocked, by: readonly_guard, reason_contains: read-only }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyCases {
    /// Where the cases came from (the file's path), for messages.
    pub source: String,
    /// Orgs in read-only mode while the cases run.
    pub read_only_orgs: Vec<String>,
    /// Whether command hooks run (otherwise a call that meets one is
    /// [`CaseVerdict::Unknown`]).
    pub run_commands: bool,
    /// The cases, in file order.
    pub cases: Vec<PolicyCase>,
}

/// One call and the verdict it must get.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyCase {
    /// The case's name, unique in its table.
    pub name: String,
    /// The tool the model calls.
    pub tool: String,
    /// The arguments the model writes.
    pub args: Value,
    /// Who asked (the table's default, else `test-user`).
    pub user: String,
    /// Their org (the table's default, else `test-org`).
    pub org: String,
    /// The conversation (the table's default, else `hooks-test`).
    pub conversation: String,
    /// Where the agent runs.
    pub surface: Surface,
    /// The call's metadata (the table's defaults, then the case's own keys).
    pub metadata: Map<String, Value>,
    /// The approver's scripted answer, for a call a hook asks about.
    pub approval: Option<ScriptedApproval>,
    /// The tool's scripted outcome, for the post hooks to see.
    pub outcome: Option<crate::ToolOutcome>,
    /// What must happen.
    pub expect: Expectation,
}

/// An approver's answer, scripted in a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptedApproval {
    /// The approver approves: the call goes on with its arguments sealed.
    Approve,
    /// The approver rejects: the call is blocked by the hook that asked.
    Reject,
}

/// What happens to a call, as a case states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseVerdict {
    /// The tool runs (and, with a scripted result, its result reaches the model).
    Allowed,
    /// A pre hook blocks the call: the tool does not run.
    Blocked,
    /// A hook asks a person, and the case scripts no answer.
    Asks,
    /// The tool runs but a post hook withholds its result.
    Withheld,
    /// A command hook that was not run decides (no `run_commands`).
    Unknown,
}

impl CaseVerdict {
    /// The verdict with the hook it names, for messages: `blocked by
    /// `readonly_guard``, `asks (`approval_gate`)`.
    pub fn describe(self, by: Option<&str>) -> String {
        match (self, by) {
            (CaseVerdict::Blocked | CaseVerdict::Withheld, Some(hook)) => {
                format!("{} by `{hook}`", self.as_str())
            }
            (CaseVerdict::Asks, Some(hook)) => format!("asks (`{hook}`)"),
            (CaseVerdict::Unknown, Some(hook)) => format!("unknown (`{hook}` not run)"),
            _ => self.as_str().to_owned(),
        }
    }

    /// The name a cases file uses.
    pub fn as_str(self) -> &'static str {
        match self {
            CaseVerdict::Allowed => "allowed",
            CaseVerdict::Blocked => "blocked",
            CaseVerdict::Asks => "asks",
            CaseVerdict::Withheld => "withheld",
            CaseVerdict::Unknown => "unknown",
        }
    }
}

/// A case's expectation: the verdict, and optionally who decides, why, and
/// what the tool and the model get. Unset parts are not checked.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// The verdict.
    pub verdict: CaseVerdict,
    /// The hook that blocks, withholds or asks.
    #[serde(default)]
    pub by: Option<String>,
    /// Text the reason for a block or a withheld result contains.
    #[serde(default)]
    pub reason_contains: Option<String>,
    /// The arguments the tool gets, after every rewrite.
    #[serde(default)]
    pub args: Option<Value>,
    /// The result the model sees, after every post hook (needs a scripted
    /// `result` or `tool_error`).
    #[serde(default)]
    pub output: Option<Value>,
    /// Text the model's observation contains (what it reads back).
    #[serde(default)]
    pub observation_contains: Option<String>,
}

/// A case as written: the file's keys.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseEntry {
    name: String,
    tool: String,
    #[serde(default)]
    args: Option<Value>,
    #[serde(default)]
    user: Option<String>,
    #[serde(default)]
    org: Option<String>,
    #[serde(default)]
    conversation: Option<String>,
    #[serde(default)]
    surface: Option<String>,
    #[serde(default)]
    metadata: Map<String, Value>,
    #[serde(default)]
    approval: Option<ScriptedApproval>,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    tool_error: Option<String>,
    expect: Value,
}

/// The identity every case starts from.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Defaults {
    #[serde(default)]
    user: Option<String>,
    #[serde(default)]
    org: Option<String>,
    #[serde(default)]
    conversation: Option<String>,
    #[serde(default)]
    surface: Option<String>,
    #[serde(default)]
    metadata: Map<String, Value>,
}

/// The file's top level.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TableEntry {
    #[serde(default)]
    read_only_orgs: Vec<String>,
    #[serde(default)]
    run_commands: bool,
    #[serde(default)]
    defaults: Defaults,
    cases: Vec<Value>,
}

impl PolicyCases {
    /// Reads a cases file (`.yaml`, `.yml`, `.json` or `.toml`, at most
    /// 1 MiB). Every problem in it is reported together, each naming its
    /// case; a table with a problem runs no case.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, CasesError> {
        let path = path.as_ref();
        let source = path.display().to_string();
        let value =
            ConfigFormat::read(path).map_err(|message| CasesError::new(&source, message))?;
        Self::from_value(&value, &source)
    }

    /// Reads an already-parsed cases table; `source` names it in messages.
    pub fn from_value(value: &Value, source: &str) -> Result<Self, CasesError> {
        let mut problems = unknown_keys(value, TABLE_KEYS, "the table");
        if let Some(defaults) = value.get("defaults") {
            problems.extend(unknown_keys(defaults, DEFAULTS_KEYS, "defaults"));
        }
        if !problems.is_empty() {
            return Err(CasesError::many(source, problems));
        }
        let table = TableEntry::deserialize(value)
            .map_err(|error| CasesError::new(source, format!("the table: {error}")))?;
        let defaults = &table.defaults;
        let default_surface = match defaults.surface.as_deref().map(surface) {
            Some(Err(problem)) => {
                problems.push(format!("defaults: {problem}"));
                Surface::default()
            }
            Some(Ok(surface)) => surface,
            None => Surface::default(),
        };
        let mut cases: Vec<PolicyCase> = Vec::with_capacity(table.cases.len());
        let mut names = std::collections::HashSet::new();
        for (index, entry) in table.cases.iter().enumerate() {
            let label = entry.get("name").and_then(Value::as_str).map_or_else(
                || format!("case {}", index + 1),
                |name| format!("case {} (`{name}`)", index + 1),
            );
            if let Some(name) = entry.get("name").and_then(Value::as_str)
                && !names.insert(name)
            {
                problems.push(format!(
                    "{label}: another case has this name; names must be unique"
                ));
            }
            match case(entry, defaults, default_surface) {
                Ok(case) => cases.push(case),
                Err(problem) => problems.push(format!("{label}: {problem}")),
            }
        }
        if table.cases.is_empty() {
            problems.push("`cases` is empty: there is nothing to test".to_owned());
        }
        if !problems.is_empty() {
            return Err(CasesError::many(source, problems));
        }
        Ok(PolicyCases {
            source: source.to_owned(),
            read_only_orgs: table.read_only_orgs,
            run_commands: table.run_commands,
            cases,
        })
    }
}

/// One case from its entry, the table's defaults filled in.
fn case(
    entry: &Value,
    defaults: &Defaults,
    default_surface: Surface,
) -> Result<PolicyCase, String> {
    let mut unknown = unknown_keys(entry, CASE_KEYS, "the case");
    if let Some(expect @ Value::Object(_)) = entry.get("expect") {
        unknown.extend(unknown_keys(expect, EXPECT_KEYS, "expect"));
    }
    if !unknown.is_empty() {
        return Err(unknown.join("; "));
    }
    let entry = CaseEntry::deserialize(entry).map_err(|error| error.to_string())?;
    // Every problem of the case, not only the first.
    let mut problems = Vec::new();
    let expect = expectation(&entry.expect).map_err(|problem| problems.push(problem));
    let outcome = match (entry.result, entry.tool_error) {
        (Some(_), Some(_)) => {
            problems.push(
                "give `result` or `tool_error`, not both: a tool either returns or fails".into(),
            );
            None
        }
        (Some(result), None) => Some(crate::ToolOutcome::Success(result)),
        (None, Some(error)) => Some(crate::ToolOutcome::Error(error)),
        (None, None) => None,
    };
    if let Ok(expect) = &expect
        && outcome.is_none()
        && (expect.output.is_some() || expect.verdict == CaseVerdict::Withheld)
    {
        problems.push(
            "the expectation is about the tool's result: script it with `result` (or `tool_error`)"
                .into(),
        );
    }
    let surface = match entry.surface.as_deref() {
        Some(name) => surface(name).unwrap_or_else(|problem| {
            problems.push(problem);
            default_surface
        }),
        None => default_surface,
    };
    let expect = match expect {
        Ok(expect) if problems.is_empty() => expect,
        _ => return Err(problems.join("; ")),
    };
    let mut metadata = defaults.metadata.clone();
    metadata.extend(entry.metadata);
    let pick = |own: Option<String>, default: &Option<String>, fallback: &str| {
        own.or_else(|| default.clone())
            .unwrap_or_else(|| fallback.to_owned())
    };
    Ok(PolicyCase {
        name: entry.name,
        tool: entry.tool,
        args: entry.args.unwrap_or_else(|| Value::Object(Map::new())),
        user: pick(entry.user, &defaults.user, "test-user"),
        org: pick(entry.org, &defaults.org, "test-org"),
        conversation: pick(entry.conversation, &defaults.conversation, "hooks-test"),
        surface,
        metadata,
        approval: entry.approval,
        outcome,
        expect,
    })
}

const TABLE_KEYS: &[&str] = &["read_only_orgs", "run_commands", "defaults", "cases"];
const DEFAULTS_KEYS: &[&str] = &["user", "org", "conversation", "surface", "metadata"];
const CASE_KEYS: &[&str] = &[
    "name",
    "tool",
    "args",
    "user",
    "org",
    "conversation",
    "surface",
    "metadata",
    "approval",
    "result",
    "tool_error",
    "expect",
];
const EXPECT_KEYS: &[&str] = &[
    "verdict",
    "by",
    "reason_contains",
    "args",
    "output",
    "observation_contains",
];

/// A problem for each key of the mapping `value` that is not one of
/// `known`, with a did-you-mean: a misspelled key would otherwise leave a
/// check out of the case without a word.
fn unknown_keys(value: &Value, known: &[&str], what: &str) -> Vec<String> {
    let Some(map) = value.as_object() else {
        return Vec::new();
    };
    map.keys()
        .filter(|key| !known.contains(&key.as_str()))
        .map(|key| {
            let hint = crate::text::did_you_mean(key, known.iter().copied())
                .map(|near| format!("did you mean `{near}`?"))
                .unwrap_or_else(|| format!("use {}", known.join(", ")));
            format!("{what}: unknown key `{key}` ({hint})")
        })
        .collect()
}

/// `expect: blocked` or `expect: { verdict: blocked, … }`.
fn expectation(value: &Value) -> Result<Expectation, String> {
    let problem = |error: serde_json::Error| format!("expect: {error}");
    match value {
        Value::String(_) => Ok(Expectation {
            verdict: CaseVerdict::deserialize(value).map_err(problem)?,
            by: None,
            reason_contains: None,
            args: None,
            output: None,
            observation_contains: None,
        }),
        Value::Object(_) => Expectation::deserialize(value).map_err(problem),
        _ => Err(
            "expect: write a verdict (`allowed`, `blocked`, `asks`, `withheld`, `unknown`) \
             or a mapping with `verdict:` and the details to check"
                .into(),
        ),
    }
}

/// The surface of that name; `evaluation` is refused (hooks are bypassed
/// there, so there is nothing to test).
fn surface(name: &str) -> Result<Surface, String> {
    match Surface::from_name(name) {
        Some(Surface::Evaluation) => {
            Err("surface `evaluation` bypasses every hook: there is nothing to test there".into())
        }
        Some(surface) => Ok(surface),
        None => {
            let names: Vec<&str> = Surface::ALL.iter().map(|s| s.as_str()).collect();
            let hint = crate::text::did_you_mean(name, names.iter().copied())
                .map(|near| format!(" (did you mean `{near}`?)"))
                .unwrap_or_default();
            Err(format!(
                "unknown surface `{name}`{hint}: use one of {}",
                names.join(", ")
            ))
        }
    }
}
