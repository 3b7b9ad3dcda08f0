//! Field names and paths, and which hook point has which fields.

use std::ops::Range;

use super::Checker;
use crate::ast::{Field, JsonField, JsonRoot, TextField};
use crate::error::WhenError;
use crate::point::HookPoint;
use crate::suggest::did_you_mean;
use crate::syntax::FieldPath;

impl Checker<'_> {
    /// The field a path names, if it exists and takes that path at this hook point.
    pub(super) fn field(&mut self, path: FieldPath) -> Option<(Field, Range<usize>)> {
        let FieldPath {
            root,
            root_span,
            path,
            span: field_span,
        } = path;
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
                let error = WhenError::new(root_span, format!("unknown field `{root}`"));
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
        if !self.field_at_point(&field, &root_span) {
            return None;
        }
        Some((field, field_span))
    }

    /// `result` exists only after the tool ran; tool fields and `args` only around a tool call.
    fn field_at_point(&mut self, field: &Field, span: &Range<usize>) -> bool {
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
        ) && self.point != HookPoint::PostToolUse
        {
            self.error(
                WhenError::new(
                    span.clone(),
                    format!(
                        "`result` is only available in post_tool_use hooks, not in {} hooks",
                        self.point.as_str()
                    ),
                )
                .with_help(match self.point {
                    HookPoint::PreToolUse => {
                        "the tool has not run yet when a pre_tool_use hook is asked"
                    }
                    _ => "a session-start hook runs before any tool call",
                }),
            );
            return false;
        }
        if is_tool_field && self.point == HookPoint::SessionStart {
            self.error(
                WhenError::new(span.clone(), format!("`{name}` is not available in session_start hooks"))
                    .with_help("a session-start hook runs before any tool call; test agent_id, user_id, org_id, conversation_id, surface or metadata"),
            );
            return false;
        }
        true
    }
}
