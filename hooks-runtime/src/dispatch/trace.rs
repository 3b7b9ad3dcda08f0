//! What happened at each hook of one call or session start.

use std::fmt;
use std::time::Duration;

use super::run_hook::HookFailure;
use crate::context::HookPoint;
use crate::hook::{ErrorPolicy, Hook};
use crate::printable::{MAX_CELL_CHARS, MAX_TEXT_CHARS, push_padded, shown};
use crate::registry::HookRegistry;

/// A hook's decision, as recorded in the trace. Serialized with the
/// variant as the key: `{"allowed": {"rewrote": false}}`,
/// `{"blocked": "reason"}`, `{"failed": {"failure": …, "policy": "fail_closed"}}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// It let the call (or result, or session) through.
    Allowed {
        /// Whether it replaced the arguments (pre) or the result (post).
        rewrote: bool,
    },
    /// It blocked, with this reason.
    Blocked(String),
    /// It failed; under `policy` that either blocked the call or was ignored.
    Failed {
        /// What went wrong.
        failure: HookFailure,
        /// The hook's error policy.
        policy: ErrorPolicy,
    },
}

impl Decision {
    /// True when this decision stopped the call, the result or the session.
    pub fn stopped(&self) -> bool {
        matches!(
            self,
            Decision::Blocked(_)
                | Decision::Failed {
                    policy: ErrorPolicy::FailClosed,
                    ..
                }
        )
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::Allowed { rewrote: false } => f.write_str("allowed"),
            Decision::Allowed { rewrote: true } => f.write_str("allowed, rewrote"),
            Decision::Blocked(reason) => write!(f, "blocked: {reason}"),
            Decision::Failed {
                failure,
                policy: ErrorPolicy::FailClosed,
            } => write!(f, "failed closed: {failure}"),
            Decision::Failed {
                failure,
                policy: ErrorPolicy::FailOpen,
            } => write!(f, "failed open (ignored): {failure}"),
        }
    }
}

/// Why the runtime refused a call before any hook saw it. The observation
/// ([`Observation::Blocked`](crate::Observation::Blocked) by `runtime`)
/// carries the full reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Refusal {
    /// The tool name is empty or holds a hidden character.
    ToolName,
    /// The model's argument text is not a JSON object the runtime can read:
    /// not valid JSON, a repeated key, too long, or not an object (see
    /// [`HookRegistry::run_tool_call_raw`](crate::HookRegistry::run_tool_call_raw)).
    Arguments,
    /// The front end refused the call before any hook (an MCP proxy's
    /// hidden or unlisted tool, say); see
    /// [`HookRegistry::refuse_tool_call`](crate::HookRegistry::refuse_tool_call).
    FrontEnd,
}

impl Refusal {
    /// What was wrong, in a few words.
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::ToolName => "the tool name is refused",
            Refusal::Arguments => "the arguments are not a readable JSON object",
            Refusal::FrontEnd => "the front end refused the call",
        }
    }
}

/// One hook that ran.
#[derive(Debug, Clone, PartialEq)]
pub struct HookRun {
    pub(crate) point: HookPoint,
    pub(crate) index: usize,
    /// What it decided.
    pub decision: Decision,
    /// How long it took, when it waited; `None` when it decided at once
    /// (such a hook is recorded without reading the clock).
    pub duration: Option<Duration>,
    /// What it reported doing.
    pub side_effects: Vec<String>,
}

/// Where a hook stands in a trace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EntryStatus<'t> {
    /// Its trigger did not match this call.
    NotMatched,
    /// An earlier decision stopped the chain (or the tool never ran) before it.
    NotReached,
    /// It was running (waiting) when the caller stopped waiting for the
    /// call; it never decided.
    Interrupted,
    /// It ran.
    Ran(&'t HookRun),
}

/// One hook of the registry and what it did in this call.
#[derive(Debug, Clone, Copy)]
pub struct TraceEntry<'t> {
    /// The hook's point.
    pub point: HookPoint,
    /// The hook's name.
    pub name: &'t str,
    /// The hook's priority.
    pub priority: i32,
    /// What happened.
    pub status: EntryStatus<'t>,
}

impl TraceEntry<'_> {
    /// True when the hook's trigger matched and it ran.
    pub fn matched(&self) -> bool {
        matches!(self.status, EntryStatus::Ran(_))
    }

    /// The decision, if the hook ran.
    pub fn decision(&self) -> Option<&Decision> {
        match self.status {
            EntryStatus::Ran(run) => Some(&run.decision),
            _ => None,
        }
    }
}

/// The trace of one tool call (or session start): every hook of the
/// registry at the points involved, in run order, and what each did.
///
/// It records only the hooks that ran, plus how far each chain got, so a
/// non-matching hook costs the trace nothing.
#[derive(Clone)]
pub struct CallTrace {
    registry: HookRegistry,
    points: &'static [HookPoint],
    /// How many hooks of each point were considered, indexed like `points`.
    pub(crate) considered: [usize; 2],
    pub(crate) runs: Vec<HookRun>,
    pub(crate) bypassed: bool,
    /// The point (indexed like `points`) whose hook at `considered` was in
    /// flight when the caller stopped waiting.
    pub(crate) interrupted: Option<usize>,
    /// Set when the runtime refused the call before any hook ran.
    pub(crate) refused: Option<Refusal>,
}

impl CallTrace {
    pub(crate) fn tool_call(registry: &HookRegistry) -> Self {
        CallTrace {
            registry: registry.clone(),
            points: &[HookPoint::PreToolUse, HookPoint::PostToolUse],
            considered: [0, 0],
            runs: Vec::new(),
            bypassed: false,
            interrupted: None,
            refused: None,
        }
    }

    pub(crate) fn session(registry: &HookRegistry) -> Self {
        CallTrace {
            points: &[HookPoint::SessionStart],
            ..CallTrace::tool_call(registry)
        }
    }

    /// True when the hooks were bypassed (evaluation runs) and none ran.
    pub fn bypassed(&self) -> bool {
        self.bypassed
    }

    /// Why the runtime refused the call before any hook ran, if it did
    /// (then no hook ran, and the observation gives the whole reason).
    pub fn refused(&self) -> Option<Refusal> {
        self.refused
    }

    /// The hooks that ran, in order.
    pub fn runs(&self) -> &[HookRun] {
        &self.runs
    }

    /// Every hook at the points involved, in run order, with its status.
    pub fn entries(&self) -> impl Iterator<Item = TraceEntry<'_>> {
        let mut runs = self.runs.iter().peekable();
        self.points
            .iter()
            .enumerate()
            .flat_map(move |(slot, &point)| {
                let hooks: Vec<&dyn Hook> = self.hooks_at(point);
                let considered = self.considered[slot];
                let mut entries = Vec::with_capacity(hooks.len());
                for (index, hook) in hooks.into_iter().enumerate() {
                    let status = match runs.peek() {
                        Some(run) if run.point == point && run.index == index => {
                            EntryStatus::Ran(runs.next().expect("peeked"))
                        }
                        _ if index < considered => EntryStatus::NotMatched,
                        _ if index == considered && self.interrupted == Some(slot) => {
                            EntryStatus::Interrupted
                        }
                        _ => EntryStatus::NotReached,
                    };
                    entries.push(TraceEntry {
                        point,
                        name: hook.name(),
                        priority: hook.priority(),
                        status,
                    });
                }
                entries
            })
    }

    /// The entry of the hook with this name, if it is part of the trace.
    pub fn entry(&self, name: &str) -> Option<TraceEntry<'_>> {
        self.entries().find(|entry| entry.name == name)
    }

    /// Every side effect reported, in order.
    pub fn side_effects(&self) -> impl Iterator<Item = &str> {
        self.runs
            .iter()
            .flat_map(|run| run.side_effects.iter().map(String::as_str))
    }

    /// The name of the hook behind a run of this trace.
    pub fn name_of(&self, run: &HookRun) -> &str {
        self.hooks_at(run.point)
            .get(run.index)
            .map_or("?", |hook| hook.name())
    }

    fn hooks_at(&self, point: HookPoint) -> Vec<&dyn Hook> {
        let hooks = &self.registry.hooks;
        match point {
            HookPoint::PreToolUse => hooks.pre.iter().map(|h| h.as_ref() as &dyn Hook).collect(),
            HookPoint::PostToolUse => hooks.post.iter().map(|h| h.as_ref() as &dyn Hook).collect(),
            HookPoint::SessionStart => hooks
                .session_start
                .iter()
                .map(|h| h.as_ref() as &dyn Hook)
                .collect(),
        }
    }
}

/// Serialized as `{"bypassed": bool, "hooks": [...]}` (plus `"refused":
/// "tool_name"` or `"arguments"` when the runtime refused the call before
/// any hook, see [`Refusal`]): every hook of
/// [`entries`](CallTrace::entries) in run order, each with `point`, `name`,
/// `priority` and `status` (`not_matched`, `not_reached`, `interrupted`,
/// `ran`); a hook that ran adds its `decision` (a [`Decision`]),
/// `duration_us` when it waited, and `side_effects` when it reported any.
impl serde::Serialize for CallTrace {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;

        let hooks: Vec<EntryRow<'_>> = self.entries().map(EntryRow::from).collect();
        let mut out = serializer.serialize_struct("CallTrace", 3)?;
        out.serialize_field("bypassed", &self.bypassed)?;
        if let Some(refused) = self.refused {
            out.serialize_field("refused", &refused)?;
        } else {
            out.skip_field("refused")?;
        }
        out.serialize_field("hooks", &hooks)?;
        out.end()
    }
}

/// One hook of a serialized [`CallTrace`].
#[derive(serde::Serialize)]
struct EntryRow<'t> {
    point: HookPoint,
    name: &'t str,
    priority: i32,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    decision: Option<&'t Decision>,
    #[serde(skip_serializing_if = "Option::is_none")]
    duration_us: Option<u64>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    side_effects: &'t [String],
}

impl<'t> From<TraceEntry<'t>> for EntryRow<'t> {
    fn from(entry: TraceEntry<'t>) -> Self {
        let (status, run) = match entry.status {
            EntryStatus::NotMatched => ("not_matched", None),
            EntryStatus::NotReached => ("not_reached", None),
            EntryStatus::Interrupted => ("interrupted", None),
            EntryStatus::Ran(run) => ("ran", Some(run)),
        };
        EntryRow {
            point: entry.point,
            name: entry.name,
            priority: entry.priority,
            status,
            decision: run.map(|run| &run.decision),
            duration_us: run
                .and_then(|run| run.duration)
                .map(|d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX)),
            side_effects: run.map_or(&[], |run| run.side_effects.as_slice()),
        }
    }
}

impl fmt::Debug for CallTrace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallTrace")
            .field("bypassed", &self.bypassed)
            .field("refused", &self.refused)
            .field("runs", &self.runs)
            .finish()
    }
}

impl fmt::Display for CallTrace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.bypassed {
            return writeln!(f, "  hooks bypassed (evaluation surface)");
        }
        if let Some(refused) = self.refused {
            writeln!(
                f,
                "  refused by the runtime before any hook: {}",
                refused.as_str()
            )?;
        }
        let entries: Vec<TraceEntry<'_>> = self.entries().collect();
        let names: Vec<_> = entries
            .iter()
            .map(|entry| shown(entry.name, MAX_CELL_CHARS))
            .collect();
        let width = names
            .iter()
            .map(|name| name.chars().count())
            .max()
            .unwrap_or(0);
        for (entry, name) in entries.iter().zip(&names) {
            let mut line = format!("  {:<13}  ", entry.point.as_str());
            push_padded(&mut line, name, width);
            match entry.status {
                EntryStatus::NotMatched => writeln!(f, "{line}  not matched")?,
                EntryStatus::NotReached => writeln!(f, "{line}  not reached")?,
                EntryStatus::Interrupted => writeln!(
                    f,
                    "{line}  interrupted (the caller stopped waiting while it ran)"
                )?,
                EntryStatus::Ran(run) => {
                    // Reasons, failures and side effects may quote the
                    // call's arguments: escaped, so they cannot forge a line.
                    let decision = run.decision.to_string();
                    let decision = shown(&decision, MAX_TEXT_CHARS);
                    match run.duration {
                        Some(waited) => writeln!(f, "{line}  {decision} ({waited:?})")?,
                        None => writeln!(f, "{line}  {decision} (at once)")?,
                    }
                    let mut indent = String::from("  ");
                    push_padded(&mut indent, "", 13 + 2 + width);
                    for effect in &run.side_effects {
                        writeln!(f, "{indent}    · {}", shown(effect, MAX_TEXT_CHARS))?;
                    }
                }
            }
        }
        Ok(())
    }
}
