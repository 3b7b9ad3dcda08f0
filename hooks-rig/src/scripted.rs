//! A scripted rig completion model, for tests and offline examples: it
//! answers each turn from a fixed script (tool calls, then an answer) and
//! records every request, so a test can read what the model was shown —
//! the tool results, blocks included — on each turn.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use rig_core::completion::message::{ToolCall, ToolFunction, ToolName, ToolResultContent};
use rig_core::completion::{AssistantContent, CompletionRequest, CompletionResponse, Usage};
use rig_core::driver::{Exchange, Model, Opened, Opening, Transport};
use rig_core::error::ProviderError;
use rig_core::message::{DocumentSourceKind, Message, Origin, UserContent};
use rig_core::test_utils::{MOCK_API, MockFrame, MockScript};
use serde_json::Value;

/// One scripted model turn.
#[derive(Debug, Clone)]
pub enum Turn {
    /// The model calls these tools (id, name, arguments), in order.
    ToolCalls(Vec<(String, String, Value)>),
    /// The model answers with this text and stops.
    Answer(String),
}

impl Turn {
    /// The model calls one tool.
    pub fn call(id: impl Into<String>, name: impl Into<String>, args: Value) -> Turn {
        Turn::ToolCalls(vec![(id.into(), name.into(), args)])
    }

    /// The model answers.
    pub fn answer(text: impl Into<String>) -> Turn {
        Turn::Answer(text.into())
    }
}

/// What the model was shown of one tool call's result.
#[derive(Debug, Clone, PartialEq)]
pub struct SeenResult {
    /// The tool's name.
    pub tool: String,
    /// The result as text (JSON blocks as their JSON text).
    pub text: String,
    /// Whether rig marked it as an error (failed or refused).
    pub is_error: bool,
}

#[derive(Default)]
struct Script {
    turns: Mutex<VecDeque<Turn>>,
    requests: Mutex<Vec<CompletionRequest>>,
}

/// The scripted model's runtime: rig's `Transport` for the scripted wire.
#[derive(Clone, Default)]
pub struct ScriptedRuntime {
    script: Arc<Script>,
}

/// A rig completion model that plays a script; clones share it.
pub type ScriptedModel = Model<MockScript, ScriptedRuntime>;

/// A model that plays `turns`, one per completion request (a request past
/// the end fails with a provider error saying so), and its runtime, which
/// records what the model was shown.
pub fn scripted_model(turns: impl IntoIterator<Item = Turn>) -> (ScriptedModel, ScriptedRuntime) {
    let runtime = ScriptedRuntime::default();
    runtime.lock_turns().extend(turns);
    (
        Model::new(MockScript::new("scripted"), runtime.clone()),
        runtime,
    )
}

impl ScriptedRuntime {
    fn lock_turns(&self) -> MutexGuard<'_, VecDeque<Turn>> {
        self.script
            .turns
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn lock_requests(&self) -> MutexGuard<'_, Vec<CompletionRequest>> {
        self.script
            .requests
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Every request the model got, in order.
    pub fn requests(&self) -> Vec<CompletionRequest> {
        self.lock_requests().clone()
    }

    /// The tool results the model was shown on request `turn` (0-based):
    /// those in that request's last user message.
    pub fn results_seen(&self, turn: usize) -> Vec<SeenResult> {
        let requests = self.lock_requests();
        let Some(request) = requests.get(turn) else {
            return Vec::new();
        };
        let Some(Message::User { content }) = request.chat_history.last() else {
            return Vec::new();
        };
        content
            .iter()
            .filter_map(|item| match item {
                UserContent::ToolResult(result) => Some(SeenResult {
                    tool: result.name.as_str().to_owned(),
                    text: result.content.iter().map(content_text).collect(),
                    is_error: result.is_error,
                }),
                _ => None,
            })
            .collect()
    }

    /// The context documents the model was shown on request `turn`
    /// (0-based), as rig rendered them into the conversation.
    pub fn documents_seen(&self, turn: usize) -> Vec<String> {
        let requests = self.lock_requests();
        let Some(request) = requests.get(turn) else {
            return Vec::new();
        };
        request
            .chat_history
            .iter()
            .filter_map(|message| match message {
                Message::User { content } => Some(content),
                _ => None,
            })
            .flatten()
            .filter_map(|item| match item {
                UserContent::Document(document) => match &document.data {
                    DocumentSourceKind::String(text) => Some(text.clone()),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    fn respond(&self, request: CompletionRequest) -> Result<CompletionResponse, ProviderError> {
        self.lock_requests().push(request);
        let turn = self.lock_turns().pop_front().ok_or_else(|| {
            ProviderError::Provider("the scripted model's script is over".to_owned())
        })?;
        let choice = match &turn {
            Turn::Answer(text) => vec![AssistantContent::text(text.clone())],
            Turn::ToolCalls(calls) => calls
                .iter()
                .map(|(id, name, args)| {
                    let name = ToolName::new(name.clone())
                        .map_err(|error| ProviderError::Provider(error.to_string()))?;
                    Ok(AssistantContent::ToolCall(ToolCall::from_wire(
                        id.clone(),
                        ToolFunction::new(name, args.clone()),
                    )))
                })
                .collect::<Result<_, ProviderError>>()?,
        };
        let origin = Origin::new(MOCK_API, "scripted", "scripted-model");
        Ok(CompletionResponse::new(
            choice,
            Usage::default(),
            origin,
            Value::Null,
        ))
    }
}

fn content_text(content: &ToolResultContent) -> String {
    match content {
        ToolResultContent::Text(text) => text.text.clone(),
        ToolResultContent::Json { value } => value.to_string(),
        ToolResultContent::Image(_) => "[image]".to_owned(),
    }
}

impl Transport<MockScript> for ScriptedRuntime {
    fn send(&self, request: CompletionRequest, _exchange: Exchange) -> Opening<MockFrame> {
        match self.respond(request) {
            Ok(response) => Opening::ready(Opened::new(futures_util::stream::iter([Ok(
                MockFrame::Response(Box::new(response)),
            )]))),
            Err(error) => Opening::failed(error),
        }
    }
}
