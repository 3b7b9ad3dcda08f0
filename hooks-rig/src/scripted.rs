//! A scripted rig completion model, for tests and offline examples: it
//! answers each turn from a fixed script (tool calls, then an answer) and
//! records every request, so a test can read what the model was shown —
//! the tool results, blocks included — on each turn.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use rig_core::completion::message::{ToolCall, ToolFunction, ToolName, ToolResultContent};
use rig_core::completion::{AssistantContent, CompletionRequest, CompletionResponse, Usage};
use rig_core::driver::{Exchange, Model, Opened, Opening, Transport};
use rig_core::error::ProviderError;
use rig_core::message::{DocumentSourceKind, Message, Origin, UserContent};
use rig_core::test_utils::{MOCK_API, MockFrame, MockScript};
use serde_json::Value;

/// One scripted model turn: tool calls or an answer, and optionally the
/// thought a narrated model prints before it.
#[derive(Debug, Clone)]
pub struct Turn {
    thought: Option<String>,
    step: Step,
}

#[derive(Debug, Clone)]
enum Step {
    /// The model calls these tools (id, name, arguments), in order.
    ToolCalls(Vec<(String, String, Value)>),
    /// The model answers with this text and stops.
    Answer(String),
}

impl Turn {
    /// The model calls one tool.
    pub fn call(id: impl Into<String>, name: impl Into<String>, args: Value) -> Turn {
        Turn::calls([(id.into(), name.into(), args)])
    }

    /// The model calls several tools in one turn: (id, name, arguments).
    pub fn calls(calls: impl IntoIterator<Item = (String, String, Value)>) -> Turn {
        Turn {
            thought: None,
            step: Step::ToolCalls(calls.into_iter().collect()),
        }
    }

    /// The model answers.
    pub fn answer(text: impl Into<String>) -> Turn {
        Turn {
            thought: None,
            step: Step::Answer(text.into()),
        }
    }

    /// The thought a narrated model prints before this turn.
    pub fn thinking(mut self, thought: impl Into<String>) -> Turn {
        self.thought = Some(thought.into());
        self
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
    narrate: AtomicBool,
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

    /// Prints the conversation as it goes, ReAct style: each tool result
    /// the model is shown (`Observation:`), then its `Thought:` and
    /// `Action:` (or `Answer:`).
    pub fn narrate(&self) {
        self.script.narrate.store(true, Ordering::Relaxed);
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

    fn respond(&self, request: CompletionRequest) -> Result<CompletionResponse, String> {
        let turn_index = {
            let mut requests = self.lock_requests();
            requests.push(request);
            requests.len() - 1
        };
        let turn = self
            .lock_turns()
            .pop_front()
            .ok_or_else(|| "the scripted model's script is over".to_owned())?;
        if self.script.narrate.load(Ordering::Relaxed) {
            self.print(turn_index, &turn);
        }
        let choice = match &turn.step {
            Step::Answer(text) => vec![AssistantContent::text(text.clone())],
            Step::ToolCalls(calls) => calls
                .iter()
                .map(|(id, name, args)| {
                    let name = ToolName::new(name.clone()).map_err(|error| error.to_string())?;
                    Ok(AssistantContent::ToolCall(ToolCall::from_wire(
                        id.clone(),
                        ToolFunction::new(name, args.clone()),
                    )))
                })
                .collect::<Result<_, String>>()?,
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

impl ScriptedRuntime {
    fn print(&self, turn_index: usize, turn: &Turn) {
        for result in self.results_seen(turn_index) {
            println!("Observation: {}\n", result.text);
        }
        if let Some(thought) = &turn.thought {
            println!("Thought: {thought}");
        }
        match &turn.step {
            Step::ToolCalls(calls) => {
                for (_, name, args) in calls {
                    println!("Action: {name} {args}");
                }
            }
            Step::Answer(text) => println!("Answer: {text}\n"),
        }
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
            Err(message) => Opening::failed(ProviderError::Provider(message)),
        }
    }
}
