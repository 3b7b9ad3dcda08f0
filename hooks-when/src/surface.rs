//! The one list of surfaces, shared by the parser and the runtime.
//!
//! `when` checks `surface == "…"` against these names at parse time, and the
//! runtime reports a call's surface under the same names, so a typo in a
//! trigger is an error instead of a test that can never be true.

use std::fmt;

/// Where the agent is running. Hooks fire on every surface but [`Surface::Evaluation`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Surface {
    /// An interactive chat.
    #[default]
    Chat,
    /// A programmatic API call.
    Api,
    /// A step of a DAG plan.
    DagStep,
    /// A sub-agent that another agent delegated to.
    Delegated,
    /// A node of a workflow.
    WorkflowNode,
    /// An offline evaluation run: hooks are bypassed, and the trace says so.
    Evaluation,
}

impl Surface {
    /// Every surface, in documentation order (the order error messages list them in).
    pub const ALL: [Surface; 6] = [
        Surface::Chat,
        Surface::Api,
        Surface::DagStep,
        Surface::Delegated,
        Surface::WorkflowNode,
        Surface::Evaluation,
    ];

    /// The name `when` expressions compare against (`surface == "dag_step"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Surface::Chat => "chat",
            Surface::Api => "api",
            Surface::DagStep => "dag_step",
            Surface::Delegated => "delegated",
            Surface::WorkflowNode => "workflow_node",
            Surface::Evaluation => "evaluation",
        }
    }

    /// The surface of that name, if there is one (names are exact: `Chat` is not `chat`).
    pub fn from_name(name: &str) -> Option<Surface> {
        Surface::ALL
            .into_iter()
            .find(|surface| surface.as_str() == name)
    }
}

/// Serialized as the name `when` expressions use (`chat`, `dag_step`, …): [`Surface::as_str`].
impl serde::Serialize for Surface {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl fmt::Display for Surface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
