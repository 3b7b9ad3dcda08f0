//! The one enum of hook points, shared by the parser, the macros and the runtime.
//!
//! Which point a hook runs at decides which fields its `when` may test, so the
//! `when` language owns the list; the macros and the runtime re-use it rather
//! than keeping copies that could drift.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

/// The point of the agent loop at which a hook runs.
///
/// It has two spellings: [`as_str`](Self::as_str) (`pre_tool_use`, what
/// [`Display`](fmt::Display) prints) for attributes, tables and messages, and
/// [`event_name`](Self::event_name) (`PreToolUse`), Claude Code's hook event
/// name, which [`FromStr`], serde and command hooks' `event` use.
///
/// The order (`SessionStart < PreToolUse < PostToolUse`) is the order of the
/// loop, which tables sort by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HookPoint {
    /// Once, before the first LLM call of a session: inject context or stop the
    /// session. Its `when` has no tool fields, no `args` and no `result`.
    SessionStart,
    /// Before a tool runs: validate, block or rewrite its arguments. Its `when`
    /// has tool fields and `args`, but no `result`.
    PreToolUse,
    /// After a tool ran (successfully or not): side effects, rewrite or
    /// withhold the result. Its `when` may test every field, `result` included.
    PostToolUse,
}

impl HookPoint {
    /// Every hook point, in the order of the agent loop.
    pub const ALL: [HookPoint; 3] = [
        HookPoint::SessionStart,
        HookPoint::PreToolUse,
        HookPoint::PostToolUse,
    ];

    /// The snake_case name used in attributes, tables, error messages and
    /// config files (`pre_tool_use`).
    pub fn as_str(self) -> &'static str {
        match self {
            HookPoint::SessionStart => "session_start",
            HookPoint::PreToolUse => "pre_tool_use",
            HookPoint::PostToolUse => "post_tool_use",
        }
    }

    /// Claude Code's name for the hook event at this point (`PreToolUse`,
    /// `PostToolUse`, `SessionStart`): a command hook's `event`, and the
    /// `hook_event_name` a command reads.
    pub fn event_name(self) -> &'static str {
        match self {
            HookPoint::SessionStart => "SessionStart",
            HookPoint::PreToolUse => "PreToolUse",
            HookPoint::PostToolUse => "PostToolUse",
        }
    }
}

/// A name that is not one of Claude Code's hook events this project runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown hook event {name:?}: expected PreToolUse, PostToolUse or SessionStart (Claude Code's names; other Claude Code events have no hook point here)"
)]
pub struct UnknownEvent {
    /// The name as written.
    pub name: String,
}

/// Reads Claude Code's event name ([`HookPoint::event_name`]), exactly as
/// Claude Code spells it.
///
/// ```
/// use hooks_when::HookPoint;
/// assert_eq!("PostToolUse".parse(), Ok(HookPoint::PostToolUse));
/// assert!("post_tool_use".parse::<HookPoint>().is_err());
/// ```
impl FromStr for HookPoint {
    type Err = UnknownEvent;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        HookPoint::ALL
            .into_iter()
            .find(|point| point.event_name() == name)
            .ok_or_else(|| UnknownEvent {
                name: name.to_owned(),
            })
    }
}

/// Claude Code's event name, as [`FromStr`] reads it.
impl<'de> Deserialize<'de> for HookPoint {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        name.parse().map_err(de::Error::custom)
    }
}

/// Claude Code's event name ([`HookPoint::event_name`]).
impl Serialize for HookPoint {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.event_name())
    }
}

impl fmt::Display for HookPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_names_round_trip_and_nothing_else_reads() {
        for point in HookPoint::ALL {
            assert_eq!(point.event_name().parse(), Ok(point));
            let json = serde_json::to_value(point).unwrap();
            assert_eq!(json, point.event_name());
            assert_eq!(serde_json::from_value::<HookPoint>(json).unwrap(), point);
        }
        for wrong in ["Stop", "pre_tool_use", "pretooluse", " PreToolUse", ""] {
            let error = wrong.parse::<HookPoint>().unwrap_err().to_string();
            assert!(
                error.contains("PreToolUse, PostToolUse or SessionStart"),
                "{error}"
            );
        }
        let error = serde_json::from_value::<HookPoint>(serde_json::json!(1)).unwrap_err();
        assert!(error.to_string().contains("string"), "{error}");
    }
}
