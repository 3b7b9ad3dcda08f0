//! What the model reads of a tool's result, kept apart from the envelope
//! the result travels in.
//!
//! A tool's result reaches a hook as JSON in the shape its surface gives it:
//! a string from a Rust tool, `{"stdout", "stderr", "interrupted", …}` from
//! Claude Code's `Bash`, `{"content": [blocks], "structuredContent": …}`
//! from an MCP server. The model reads only some of it: the *text*. An
//! [`OutputForm`] says where the text is in a surface's shape, and a
//! [`ToolOutput`] edits the text while keeping the shape, so a post hook
//! written once — truncation, redaction, withholding — acts on the same
//! text under every surface, and the client still accepts the result:
//!
//! ```
//! use hooks::output::{OutputForm, ToolOutput};
//! use serde_json::json;
//!
//! // Claude Code's Bash result: the model reads stdout, then stderr.
//! let bash = json!({"stdout": "1 2 3 4 5 6", "stderr": "", "interrupted": false, "isImage": false});
//! let output = ToolOutput::new(&bash, OutputForm::claude_code("Bash"));
//! assert_eq!(output.text(), "1 2 3 4 5 6");
//! let cut = output.truncated(5).expect("longer than 5 characters");
//! assert_eq!(cut["stdout"], "1 2 3\n…[truncated: showing 5 of 11 characters]");
//! assert_eq!(cut["interrupted"], false, "the rest of the shape is kept");
//!
//! // An MCP result: the text blocks, and the structured copy cut alike.
//! let mcp = json!({"content": [{"type": "text", "text": "secret file"}],
//!                  "structuredContent": {"content": "secret file"}});
//! let output = ToolOutput::new(&mcp, OutputForm::McpResult);
//! let redacted = output.map_text(|text| text.replace("secret", "[redacted]"));
//! assert_eq!(redacted["content"][0]["text"], "[redacted] file");
//! assert_eq!(redacted["structuredContent"]["content"], "[redacted] file");
//! ```

use serde_json::Value;

/// Where the text the model reads sits in a tool's result, as the surface
/// that ran the tool shapes it. Set by the surface
/// ([`HookContext::with_output_form`](crate::HookContext::with_output_form));
/// hooks read it through [`HookContext::output`](crate::HookContext::output).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OutputForm {
    /// The result is what the model reads: a string verbatim, any other
    /// JSON as its compact rendering (the runtime, rig and tower).
    #[default]
    Value,
    /// An MCP tool result: `{"content": [blocks], "structuredContent": …}`
    /// (or a bare array of content blocks). The model reads the text blocks
    /// (and the text of embedded resources); the string leaves of
    /// `structuredContent` are a copy of that text, changed alike.
    McpResult,
    /// An object whose text is at these JSON pointers (`/stdout`,
    /// `/file/content`), in reading order. A pointer may name a string or
    /// a subtree (every string leaf under it but `type` tags). A result
    /// with none of them is read as [`Leaves`](Self::Leaves).
    Fields(&'static [&'static str]),
    /// Every string leaf of the result is text the model reads (a `type`
    /// tag excepted), in document order: a shape nothing else describes.
    Leaves,
}

impl OutputForm {
    /// The form of a Claude Code tool's `tool_response`: the fields each
    /// built-in tool's text is in, [`McpResult`](Self::McpResult) for
    /// `mcp__<server>__<tool>`, and [`Leaves`](Self::Leaves) for a tool not
    /// known here.
    pub fn claude_code(tool: &str) -> OutputForm {
        if tool.starts_with("mcp__") {
            return OutputForm::McpResult;
        }
        OutputForm::Fields(match tool {
            // Claude Code shows `structuredContent` instead of `stdout`
            // when a command left one.
            "Bash" => &["/stdout", "/stderr", "/structuredContent"],
            "Read" => &["/file/content"],
            // Claude Code tells the model "The file <filePath> has been
            // updated successfully": the path is the text it reads.
            "Write" | "Edit" | "MultiEdit" => &["/filePath"],
            "Grep" => &["/content", "/filenames"],
            "Glob" => &["/filenames"],
            "WebFetch" => &["/result"],
            "WebSearch" => &["/results"],
            "NotebookEdit" => &["/cell_id", "/new_source", "/error"],
            "Task" | "Agent" => &["/content"],
            _ => return OutputForm::Leaves,
        })
    }

    /// `rewrite`, a post hook's replacement of `previous`, in this form's
    /// shape. A rewrite of another shape than `previous` (a plain string,
    /// an object missing a field, `null`) becomes `previous` with the
    /// rewrite's text as its text (see [`ToolOutput::replaced`]): a client
    /// that reads only its own shape would otherwise keep the original. A
    /// [`Value`](Self::Value) result, a string result and an MCP result
    /// (checked by the MCP surface itself) take the rewrite as written.
    pub fn fit(self, previous: &Value, rewrite: Value) -> Value {
        match (self, previous) {
            (OutputForm::Value | OutputForm::McpResult, _) | (_, Value::String(_)) => rewrite,
            _ if same_shape(previous, &rewrite) => rewrite,
            _ => {
                let text = match &rewrite {
                    Value::String(text) => text.clone(),
                    other => ToolOutput::new(other, OutputForm::Leaves).text(),
                };
                ToolOutput::new(previous, self).replaced(&text)
            }
        }
    }
}

/// Whether `candidate` has the shape of `template`: the same keys, with
/// values of the same JSON types, all the way down; an array's items each
/// of the shape of the template's first item (an empty template array
/// takes only an empty array). What a client that checks a result against
/// its own schema accepts of a rewrite, when the original was accepted.
pub fn same_shape(template: &Value, candidate: &Value) -> bool {
    match (template, candidate) {
        (Value::Object(expected), Value::Object(found)) => {
            expected.len() == found.len()
                && expected.iter().all(|(key, value)| {
                    found.get(key).is_some_and(|other| same_shape(value, other))
                })
        }
        (Value::Array(expected), Value::Array(found)) => match expected.first() {
            Some(first) => found.iter().all(|item| same_shape(first, item)),
            None => found.is_empty(),
        },
        (Value::String(_), Value::String(_))
        | (Value::Number(_), Value::Number(_))
        | (Value::Bool(_), Value::Bool(_))
        | (Value::Null, Value::Null) => true,
        _ => false,
    }
}

/// A tool's result with the form its text is in: reads the text the model
/// will read, and writes changes to it back into the same shape.
#[derive(Debug, Clone, Copy)]
pub struct ToolOutput<'a> {
    value: &'a Value,
    form: OutputForm,
}

/// What a string of a result is to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// Part of the text, in reading order.
    Text,
    /// A copy of the text for programs (MCP's `structuredContent`).
    Copy,
}

/// Keys whose strings are binary data or its type, never text: an image's
/// base64, a blob, a MIME type. Left alone by every change.
const BINARY_KEYS: [&str; 5] = ["data", "blob", "base64", "mimeType", "media_type"];

impl<'a> ToolOutput<'a> {
    /// `value` read in `form`.
    pub fn new(value: &'a Value, form: OutputForm) -> Self {
        ToolOutput { value, form }
    }

    /// The result as it is.
    pub fn value(&self) -> &'a Value {
        self.value
    }

    /// The form its text is in.
    pub fn form(&self) -> OutputForm {
        self.form
    }

    /// The text the model reads: its parts that are not empty, in reading
    /// order, joined with newlines (as Claude Code joins `stdout` and
    /// `stderr`). An MCP result's structured copy is not part of it; see
    /// [`all_text`](Self::all_text) for a check that must see everything.
    pub fn text(&self) -> String {
        match (self.form, self.value) {
            (OutputForm::Value, Value::String(text)) => text.clone(),
            (OutputForm::Value, other) => other.to_string(),
            _ => {
                let parts = self.texts();
                let parts: Vec<&str> = parts
                    .iter()
                    .map(String::as_str)
                    .filter(|part| !part.is_empty())
                    .collect();
                parts.join("\n")
            }
        }
    }

    /// Every string of the result, joined with newlines: the text, its
    /// structured copy (some clients show that instead of the text blocks),
    /// `type` values, media, every other string. What a guard looking for
    /// something that must not reach the model should search.
    pub fn all_text(&self) -> String {
        let mut parts = Vec::new();
        let mut value = self.value.clone();
        leaves(&mut value, Skip::Nothing, &mut |text| {
            parts.push(std::mem::take(text))
        });
        parts.join("\n")
    }

    /// How many characters the model reads (the parts' characters, without
    /// the newlines [`text`](Self::text) joins them with).
    pub fn char_count(&self) -> usize {
        match (self.form, self.value) {
            (OutputForm::Value, Value::String(text)) => text.chars().count(),
            (OutputForm::Value, other) => other.to_string().chars().count(),
            _ => self.texts().iter().map(|text| text.chars().count()).sum(),
        }
    }

    /// The result with `change` applied to every string the model may be
    /// shown — the text, its copies, `type` values, every other string but
    /// media (an image's or PDF's base64, a MIME type) — in the same shape.
    /// For redaction. Object keys are left as they are.
    pub fn map_text(&self, mut change: impl FnMut(&str) -> String) -> Value {
        let mut value = self.value.clone();
        leaves(&mut value, Skip::Media, &mut |text| *text = change(text));
        value
    }

    /// The result cut so that the model reads at most `max_chars`
    /// characters of text, with a marker where it was cut saying how many
    /// characters there were, in the same shape; `None` when it fits.
    ///
    /// The parts are kept in reading order until the budget runs out; the
    /// part it runs out in is cut (never inside a character) and takes the
    /// marker, later parts become empty. A structured copy of the text
    /// (MCP's `structuredContent`) is cut alike: a string equal to a part
    /// takes that part's replacement, other strings are cut to the same
    /// budget; a copy still more than twice the budget as JSON afterwards
    /// (keys, numbers, many strings) is dropped. A
    /// [`Value`](OutputForm::Value) result that is not a string is cut as
    /// the JSON text the model reads, and becomes that string.
    pub fn truncated(&self, max_chars: usize) -> Option<Value> {
        if let (OutputForm::Value, value) = (self.form, self.value) {
            let text = match value {
                Value::String(text) => std::borrow::Cow::Borrowed(text.as_str()),
                other => std::borrow::Cow::Owned(other.to_string()),
            };
            return truncate_text(&text, max_chars).map(Value::String);
        }
        let (texts, copies) = self.texts_and_copies();
        let text_cuts = cut_parts(&texts, max_chars);
        // A copy equal to a part takes that part's fate; the rest are cut
        // to a budget of their own.
        let mut fate: std::collections::HashMap<&str, Option<&String>> =
            std::collections::HashMap::new();
        for (at, text) in texts.iter().enumerate() {
            let cut = text_cuts
                .as_ref()
                .and_then(|cuts| cuts.get(at))
                .and_then(Option::as_ref);
            fate.entry(text.as_str()).or_insert(cut);
        }
        let others: Vec<String> = copies
            .iter()
            .filter(|copy| !fate.contains_key(copy.as_str()))
            .cloned()
            .collect();
        let other_cuts = cut_parts(&others, max_chars);
        let over_copy = self.form != OutputForm::Value
            && self.value.get("structuredContent").is_some_and(|copy| {
                copy.to_string().chars().count() > copy_bound(max_chars, &texts, &copies)
            });
        if text_cuts.is_none() && other_cuts.is_none() && !over_copy {
            return None;
        }
        let mut value = self.value.clone();
        let (mut text_at, mut other_at) = (0, 0);
        walk(&mut value, self.form, &mut |part, text| match part {
            Part::Text => {
                if let Some(Some(cut)) = text_cuts.as_ref().and_then(|cuts| cuts.get(text_at)) {
                    *text = cut.clone();
                }
                text_at += 1;
            }
            Part::Copy => match fate.get(text.as_str()) {
                Some(Some(cut)) => *text = (*cut).clone(),
                Some(None) => {}
                None => {
                    if let Some(Some(cut)) = other_cuts.as_ref().and_then(|cuts| cuts.get(other_at))
                    {
                        *text = cut.clone();
                    }
                    other_at += 1;
                }
            },
        });
        if let Value::Object(result) = &mut value {
            let bound = copy_bound(max_chars, &texts, &copies);
            if result
                .get("structuredContent")
                .is_some_and(|copy| copy.to_string().chars().count() > bound)
            {
                result.remove("structuredContent");
            }
        }
        Some(value)
    }

    /// The result with `notice` as its whole text, in the same shape: the
    /// first part becomes the notice and every other part empty; numbers,
    /// flags, `type` tags and strings the model does not read (a `mode`, a
    /// file's original text the client does not show) are kept, so a
    /// client that checks its own shape accepts it. An MCP result becomes
    /// one text block (no structured copy, no images); a result with no
    /// text to put the notice in becomes the notice, a string.
    pub fn replaced(&self, notice: &str) -> Value {
        if self.value.is_string() || self.form == OutputForm::Value {
            return Value::String(notice.to_owned());
        }
        if self.form == OutputForm::McpResult {
            let block = serde_json::json!([{"type": "text", "text": notice}]);
            return match self.value {
                Value::Array(_) => block,
                _ => serde_json::json!({"content": block}),
            };
        }
        let mut value = self.value.clone();
        let mut first = true;
        walk(&mut value, self.form, &mut |part, text| {
            if part == Part::Text {
                *text = if first {
                    notice.to_owned()
                } else {
                    String::new()
                };
                first = false;
            }
        });
        if first {
            return Value::String(notice.to_owned());
        }
        // Nothing of the original stays: no image, no PDF, no structured
        // copy (Claude Code shows Bash's instead of its stdout).
        leaves(&mut value, Skip::AllButMedia, &mut |data| data.clear());
        if let Value::Object(fields) = &mut value {
            fields.remove("structuredContent");
        }
        value
    }

    /// The text's parts, in reading order.
    fn texts(&self) -> Vec<String> {
        self.texts_and_copies().0
    }

    /// The text's parts and the copy's strings, in reading order, from one
    /// walk (over a copy: the walk is the one that writes changes back, so
    /// reading and writing visit the same strings in the same order).
    fn texts_and_copies(&self) -> (Vec<String>, Vec<String>) {
        let (mut texts, mut copies) = (Vec::new(), Vec::new());
        let mut value = self.value.clone();
        walk(&mut value, self.form, &mut |part, text| match part {
            Part::Text => texts.push(std::mem::take(text)),
            Part::Copy => copies.push(std::mem::take(text)),
        });
        (texts, copies)
    }
}

/// How long an MCP result's structured copy may be as JSON once cut:
/// twice the text it may carry (the budget and a marker, for the text and
/// for strings of its own), and room for its keys and numbers.
fn copy_bound(max_chars: usize, texts: &[String], copies: &[String]) -> usize {
    let longest_marker = marker(max_chars, usize::MAX).chars().count();
    let kept: usize = texts
        .iter()
        .chain(copies)
        .map(|text| text.chars().count())
        .sum::<usize>()
        .min(max_chars);
    kept.saturating_add(longest_marker)
        .saturating_mul(2)
        .saturating_add(max_chars)
        .saturating_add(1024)
}

/// Visits the strings of `value` that `form` names, in reading order: the
/// text's parts, then (MCP) the structured copy's strings.
fn walk(value: &mut Value, form: OutputForm, visit: &mut dyn FnMut(Part, &mut String)) {
    if let Value::String(text) = value {
        visit(Part::Text, text);
        return;
    }
    match form {
        OutputForm::Value => {}
        OutputForm::McpResult => {
            let blocks = match &mut *value {
                Value::Array(blocks) => Some(blocks),
                Value::Object(result) => match result.get_mut("content") {
                    Some(Value::Array(blocks)) => Some(blocks),
                    _ => None,
                },
                _ => None,
            };
            for block in blocks.into_iter().flatten() {
                mcp_block(block, visit);
            }
            if let Some(copy) = value.get_mut("structuredContent") {
                each_leaf(copy, &mut |text| visit(Part::Copy, text));
            }
        }
        OutputForm::Fields(pointers) => {
            let found = pointers
                .iter()
                .filter(|pointer| value.pointer(pointer).is_some())
                .count();
            if found == 0 {
                each_leaf(value, &mut |text| visit(Part::Text, text));
                return;
            }
            for pointer in pointers {
                if let Some(at) = value.pointer_mut(pointer) {
                    each_leaf(at, &mut |text| visit(Part::Text, text));
                }
            }
        }
        OutputForm::Leaves => each_leaf(value, &mut |text| visit(Part::Text, text)),
    }
}

/// The text of one MCP content block: a text block's `text`, an embedded
/// resource's `text`, a resource link's `name`, `title` and `description`
/// (clients show those).
fn mcp_block(block: &mut Value, visit: &mut dyn FnMut(Part, &mut String)) {
    let Value::Object(fields) = block else {
        return;
    };
    let keys: &[&str] = match fields.get("type").and_then(Value::as_str) {
        Some("text") => &["text"],
        Some("resource_link") => &["name", "title", "description"],
        Some("resource") => {
            if let Some(Value::String(text)) = fields
                .get_mut("resource")
                .and_then(|resource| resource.get_mut("text"))
            {
                visit(Part::Text, text);
            }
            return;
        }
        _ => return,
    };
    for key in keys {
        if let Some(Value::String(text)) = fields.get_mut(*key) {
            visit(Part::Text, text);
        }
    }
}

/// Every string leaf under `value` but `type` tags and binary data, in
/// document order.
fn each_leaf(value: &mut Value, visit: &mut dyn FnMut(&mut String)) {
    leaves(value, Skip::TagsAndMedia, visit);
}

/// Which strings a walk over a whole value leaves out.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Skip {
    /// `type` tags and media (not text: changing them breaks the shape or
    /// the image).
    TagsAndMedia,
    /// Media only (redaction may change a `type` value: a tag is never
    /// what a pattern for secrets matches, and a secret may sit there).
    Media,
    /// Nothing: every string.
    Nothing,
    /// Everything but media: visits only media strings.
    AllButMedia,
}

/// Visits the string leaves under `value`, in document order, but what
/// `skip` leaves out. A `type` tag is a string under the key `type`; media
/// is a string under a key of [`BINARY_KEYS`] in an object that says what
/// it is (has a `type`, `mimeType` or `media_type` string): an MCP image
/// or audio block, a blob resource, Claude Code's image or PDF read. A
/// `data` that is an object, or a string in an object that says nothing of
/// itself, is not media.
fn leaves(value: &mut Value, skip: Skip, visit: &mut dyn FnMut(&mut String)) {
    match value {
        Value::String(text) if skip != Skip::AllButMedia => visit(text),
        Value::String(_) => {}
        Value::Array(items) => {
            for item in items {
                leaves(item, skip, visit);
            }
        }
        Value::Object(fields) => {
            let described = ["type", "mimeType", "media_type"]
                .iter()
                .any(|key| fields.get(*key).is_some_and(Value::is_string));
            for (key, item) in fields {
                let media = described && item.is_string() && BINARY_KEYS.contains(&key.as_str());
                let tag = key == "type" && item.is_string();
                match skip {
                    Skip::AllButMedia if media => {
                        if let Value::String(text) = item {
                            visit(text);
                        }
                    }
                    Skip::TagsAndMedia if tag || media => {}
                    Skip::Media if media => {}
                    _ => leaves(item, skip, visit),
                }
            }
        }
        _ => {}
    }
}

/// Cuts `text` to `max_chars` characters plus a marker saying how long it
/// was, never inside a character; `None` when it fits.
pub fn truncate_text(text: &str, max_chars: usize) -> Option<String> {
    let (cut, _) = text.char_indices().nth(max_chars)?;
    let total = max_chars + text[cut..].chars().count();
    Some(format!("{}{}", &text[..cut], marker(max_chars, total)))
}

fn marker(shown: usize, total: usize) -> String {
    format!("\n…[truncated: showing {shown} of {total} characters]")
}

/// Each part's replacement (`None`: kept) when `parts` together are over
/// `max_chars` characters; `None` when they fit.
fn cut_parts(parts: &[String], max_chars: usize) -> Option<Vec<Option<String>>> {
    let total: usize = parts.iter().map(|text| text.chars().count()).sum();
    if total <= max_chars {
        return None;
    }
    let mut budget = max_chars;
    let mut marked = false;
    let cuts = parts
        .iter()
        .map(|text| {
            if marked {
                return (!text.is_empty()).then(String::new);
            }
            match text.char_indices().nth(budget) {
                None => {
                    budget -= text.chars().count();
                    None
                }
                Some((at, _)) => {
                    marked = true;
                    Some(format!("{}{}", &text[..at], marker(max_chars, total)))
                }
            }
        })
        .collect();
    Some(cuts)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_budget_runs_across_the_parts_in_reading_order() {
        let bash = json!({"stdout": "abcdef", "stderr": "ghij", "interrupted": false});
        let output = ToolOutput::new(&bash, OutputForm::claude_code("Bash"));
        assert_eq!(output.char_count(), 10);
        assert_eq!(output.truncated(10), None, "fits exactly");
        let cut = output.truncated(8).expect("cut");
        assert_eq!(cut["stdout"], "abcdef");
        assert_eq!(
            cut["stderr"],
            "gh\n…[truncated: showing 8 of 10 characters]"
        );
        let cut = output.truncated(3).expect("cut");
        assert_eq!(
            cut["stdout"],
            "abc\n…[truncated: showing 3 of 10 characters]"
        );
        assert_eq!(cut["stderr"], "", "after the cut, nothing");
        assert_eq!(cut["interrupted"], false);
    }

    #[test]
    fn characters_are_never_split() {
        let read = json!({"type": "text", "file": {"filePath": "/a", "content": "日本語テキスト", "numLines": 1}});
        let output = ToolOutput::new(&read, OutputForm::claude_code("Read"));
        let cut = output.truncated(3).expect("cut");
        assert_eq!(
            cut["file"]["content"],
            "日本語\n…[truncated: showing 3 of 7 characters]"
        );
        assert_eq!(cut["file"]["filePath"], "/a");
        assert_eq!(cut["type"], "text");
    }

    #[test]
    fn a_value_result_is_cut_as_the_text_the_model_reads() {
        let text = json!("hello world");
        assert_eq!(
            ToolOutput::new(&text, OutputForm::Value).truncated(5),
            Some(json!("hello\n…[truncated: showing 5 of 11 characters]"))
        );
        let object = json!({"a": "bbbbbb"});
        assert_eq!(
            ToolOutput::new(&object, OutputForm::Value).truncated(4),
            Some(json!("{\"a\"\n…[truncated: showing 4 of 14 characters]"))
        );
    }

    #[test]
    fn an_mcp_results_structured_copy_is_cut_like_its_text() {
        let result = json!({
            "content": [{"type": "text", "text": "0123456789"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}],
            "structuredContent": {"content": "0123456789", "size": 10, "name": "abcdefghijkl"}
        });
        let output = ToolOutput::new(&result, OutputForm::McpResult);
        assert_eq!(output.text(), "0123456789");
        let cut = output.truncated(4).expect("cut");
        let expected = "0123\n…[truncated: showing 4 of 10 characters]";
        assert_eq!(cut["content"][0]["text"], expected);
        assert_eq!(cut["content"][1]["data"], "AAAA", "images are not text");
        assert_eq!(cut["structuredContent"]["content"], expected);
        assert_eq!(cut["structuredContent"]["size"], 10);
        assert_eq!(
            cut["structuredContent"]["name"],
            "abcd\n…[truncated: showing 4 of 12 characters]"
        );
    }

    #[test]
    fn replaced_keeps_the_shape_and_puts_the_notice_in_the_text() {
        let edit = json!({"filePath": "/k", "newString": "KEY", "originalFile": "KEY and more", "structuredPatch": [{"lines": ["+KEY"]}], "replaceAll": false});
        let withheld = ToolOutput::new(&edit, OutputForm::claude_code("Edit")).replaced("withheld");
        assert_eq!(
            withheld["filePath"], "withheld",
            "the text Claude Code shows"
        );
        assert!(same_shape(&edit, &withheld));
        // Grep's `mode` is an enum its client checks: kept.
        let grep =
            json!({"mode": "content", "numFiles": 1, "filenames": ["id_rsa"], "content": "KEY"});
        let withheld = ToolOutput::new(&grep, OutputForm::claude_code("Grep")).replaced("withheld");
        assert_eq!(
            withheld,
            json!({"mode": "content", "numFiles": 1, "filenames": [""], "content": "withheld"})
        );
        let nothing = json!({"mode": "files_with_matches", "numFiles": 0, "filenames": []});
        assert_eq!(
            ToolOutput::new(&nothing, OutputForm::claude_code("Grep")).replaced("withheld"),
            json!("withheld"),
            "no text to put the notice in"
        );

        let mcp = json!({"content": [{"type": "image", "data": "SECRET", "mimeType": "image/png"}], "structuredContent": {"k": "SECRET"}});
        assert_eq!(
            ToolOutput::new(&mcp, OutputForm::McpResult).replaced("withheld"),
            json!({"content": [{"type": "text", "text": "withheld"}]})
        );
    }

    #[test]
    fn a_structured_copy_too_long_as_json_is_dropped() {
        let numbers: Vec<u32> = (0..10_000).collect();
        let result = json!({"content": [{"type": "text", "text": "short"}],
                            "structuredContent": {"numbers": numbers, "a": "short", "b": "short"}});
        let cut = ToolOutput::new(&result, OutputForm::McpResult)
            .truncated(100)
            .expect("the copy is over the bound");
        assert_eq!(cut["content"][0]["text"], "short");
        assert!(cut.get("structuredContent").is_none());
    }

    #[test]
    fn binary_data_and_keys_are_never_text() {
        let result = json!({"content": [
            {"type": "image", "data": "QUJDRA==", "mimeType": "image/png"},
            {"type": "resource_link", "uri": "file:///k", "name": "the key", "description": "abc"},
            {"type": "text", "text": "abc"}]});
        let output = ToolOutput::new(&result, OutputForm::McpResult);
        assert_eq!(output.text(), "the key\nabc\nabc");
        let mapped = output.map_text(|text| text.replace('A', "x").replace("abc", "***"));
        assert_eq!(mapped["content"][0]["data"], "QUJDRA==");
        assert_eq!(mapped["content"][0]["mimeType"], "image/png");
        assert_eq!(mapped["content"][1]["description"], "***");
        assert_eq!(mapped["content"][2]["text"], "***");
    }

    #[test]
    fn only_described_media_is_left_alone() {
        // A `data` wrapper of an API's answer is text, not media.
        let result = json!({"content": [{"type": "text", "text": "ok"}],
                            "structuredContent": {"data": {"token": "sk-1"}, "type": "sk-2"}});
        let output = ToolOutput::new(&result, OutputForm::McpResult);
        assert!(output.all_text().contains("sk-1") && output.all_text().contains("sk-2"));
        let mapped = output.map_text(|text| text.replace("sk-", "[key]"));
        assert!(!mapped.to_string().contains("sk-"), "{mapped}");
    }

    #[test]
    fn withholding_leaves_no_media_and_no_structured_copy() {
        let pdf = json!({"type": "pdf", "file": {"filePath": "/k.pdf", "base64": "JVBERi0x", "originalSize": 9}});
        let withheld = ToolOutput::new(&pdf, OutputForm::claude_code("Read")).replaced("withheld");
        assert!(!withheld.to_string().contains("JVBERi0x"), "{withheld}");
        let bash = json!({"stdout": "a", "stderr": "", "interrupted": false, "isImage": false,
                          "structuredContent": [{"rows": 3, "secret": "s"}]});
        let withheld = ToolOutput::new(&bash, OutputForm::claude_code("Bash")).replaced("withheld");
        assert_eq!(withheld["stdout"], "withheld");
        assert!(withheld.get("structuredContent").is_none(), "{withheld}");
    }

    #[test]
    fn many_deep_leaves_cost_linear_time() {
        // Long keys on a deep path, many leaves at the bottom: no path is
        // stored per leaf.
        let mut value = json!((0..20_000).map(|n| n.to_string()).collect::<Vec<_>>());
        for depth in 0..100 {
            value = json!({ format!("{depth}{}", "k".repeat(10_000)): value });
        }
        let output = ToolOutput::new(&value, OutputForm::Leaves);
        assert!(output.truncated(10).is_some());
        assert_eq!(output.map_text(str::to_owned), value);
    }

    #[test]
    fn a_rewrite_of_another_shape_is_fitted_into_the_original() {
        let bash =
            json!({"stdout": "secret", "stderr": "", "interrupted": false, "isImage": false});
        let form = OutputForm::claude_code("Bash");
        for rewrite in [
            json!({"stdout": "clean"}),
            json!(null),
            json!(5),
            json!(["clean"]),
        ] {
            let fitted = form.fit(&bash, rewrite.clone());
            assert!(same_shape(&bash, &fitted), "{rewrite} → {fitted}");
            assert!(
                !fitted.to_string().contains("secret"),
                "{rewrite} → {fitted}"
            );
        }
        assert_eq!(
            form.fit(&bash, json!({"stdout": "clean"}))["stdout"],
            "clean"
        );
    }

    #[test]
    fn a_tool_not_known_has_every_string_leaf_as_text() {
        let form = OutputForm::claude_code("SomeNewTool");
        assert_eq!(form, OutputForm::Leaves);
        let response =
            json!({"type": "ok", "items": [{"title": "aaa"}, {"title": "bbb"}], "count": 2});
        let output = ToolOutput::new(&response, form);
        assert_eq!(output.text(), "aaa\nbbb");
        let cut = output.truncated(4).expect("cut");
        assert_eq!(cut["items"][0]["title"], "aaa");
        assert_eq!(
            cut["items"][1]["title"],
            "b\n…[truncated: showing 4 of 6 characters]"
        );
        assert_eq!(cut["type"], "ok");
    }

    #[test]
    fn a_string_rewrite_fits_the_previous_shape() {
        let bash =
            json!({"stdout": "secret", "stderr": "more", "interrupted": false, "isImage": false});
        let fitted = OutputForm::claude_code("Bash").fit(&bash, json!("[withheld]"));
        assert_eq!(
            fitted,
            json!({"stdout": "[withheld]", "stderr": "", "interrupted": false, "isImage": false})
        );
        let own = json!({"stdout": "x", "stderr": "", "interrupted": true, "isImage": false});
        let kept = OutputForm::claude_code("Bash").fit(&bash, own.clone());
        assert_eq!(kept, own, "a rewrite in the shape is the hook's own");
        assert_eq!(OutputForm::Value.fit(&bash, json!("t")), json!("t"));
    }

    #[test]
    fn redaction_reaches_every_string_but_type_tags() {
        let grep = json!({"mode": "content", "content": "key=abc", "filenames": ["key=abc.txt"], "numLines": 1});
        let output = ToolOutput::new(&grep, OutputForm::claude_code("Grep"));
        let redacted = output.map_text(|text| text.replace("abc", "***"));
        assert_eq!(redacted["content"], "key=***");
        assert_eq!(redacted["filenames"][0], "key=***.txt");
        assert_eq!(redacted["numLines"], 1);
    }
}
