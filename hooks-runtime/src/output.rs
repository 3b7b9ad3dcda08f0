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
            "Bash" => &["/stdout", "/stderr"],
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
    /// shape: a string replacing a result of another shape becomes that
    /// shape with the string as its text (see [`ToolOutput::replaced`]);
    /// any other rewrite is kept as the hook wrote it.
    pub fn fit(self, previous: &Value, rewrite: Value) -> Value {
        match (self, &rewrite, previous) {
            (OutputForm::Value, _, _) | (_, _, Value::String(_)) => rewrite,
            (_, Value::String(text), _) => ToolOutput::new(previous, self).replaced(text),
            _ => rewrite,
        }
    }
}

/// A tool's result with the form its text is in: reads the text the model
/// will read, and writes changes to it back into the same shape.
#[derive(Debug, Clone, Copy)]
pub struct ToolOutput<'a> {
    value: &'a Value,
    form: OutputForm,
}

/// One step of a path into a JSON value.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// A string leaf: where it is, and its text.
#[derive(Debug)]
struct Leaf<'a> {
    path: Vec<Step>,
    text: &'a str,
}

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

    /// The text the model reads: its parts, in reading order, joined with
    /// newlines.
    pub fn text(&self) -> String {
        match (self.form, self.value) {
            (OutputForm::Value, Value::String(text)) => text.clone(),
            (OutputForm::Value, other) => other.to_string(),
            _ => {
                let parts: Vec<&str> = self.primary().iter().map(|leaf| leaf.text).collect();
                parts.join("\n")
            }
        }
    }

    /// How many characters the model reads (the parts' characters, without
    /// the newlines [`text`](Self::text) joins them with).
    pub fn char_count(&self) -> usize {
        match (self.form, self.value) {
            (OutputForm::Value, Value::String(text)) => text.chars().count(),
            (OutputForm::Value, other) => other.to_string().chars().count(),
            _ => self
                .primary()
                .iter()
                .map(|leaf| leaf.text.chars().count())
                .sum(),
        }
    }

    /// The result with `change` applied to every text the model may read —
    /// the text, every copy of it, and every other string leaf but `type`
    /// tags — in the same shape. For redaction: nothing is left unmapped.
    pub fn map_text(&self, mut change: impl FnMut(&str) -> String) -> Value {
        let mut value = self.value.clone();
        for leaf in all_leaves(self.value) {
            set(&mut value, &leaf.path, change(leaf.text));
        }
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
    /// budget. A [`Value`](OutputForm::Value) result that is not a string
    /// is cut as the JSON text the model reads, and becomes that string.
    pub fn truncated(&self, max_chars: usize) -> Option<Value> {
        if let (OutputForm::Value, value) = (self.form, self.value) {
            let text = match value {
                Value::String(text) => std::borrow::Cow::Borrowed(text.as_str()),
                other => std::borrow::Cow::Owned(other.to_string()),
            };
            return truncate_text(&text, max_chars).map(Value::String);
        }
        let primary = self.primary();
        let cuts = cut_parts(&primary, max_chars)?;
        let mut value = self.value.clone();
        for (leaf, cut) in primary.iter().zip(&cuts) {
            if let Some(cut) = cut {
                set(&mut value, &leaf.path, cut.clone());
            }
        }
        if self.form == OutputForm::McpResult {
            let copies = copy_leaves(self.value);
            let mut others = Vec::new();
            for leaf in copies {
                let same = primary
                    .iter()
                    .zip(&cuts)
                    .find(|(part, _)| part.text == leaf.text);
                match same {
                    Some((_, Some(cut))) => set(&mut value, &leaf.path, cut.clone()),
                    Some((_, None)) => {}
                    None => others.push(leaf),
                }
            }
            if let Some(cuts) = cut_parts(&others, max_chars) {
                for (leaf, cut) in others.iter().zip(cuts) {
                    if let Some(cut) = cut {
                        set(&mut value, &leaf.path, cut);
                    }
                }
            }
        }
        Some(value)
    }

    /// The result with `notice` as its whole text, in the same shape: the
    /// first part becomes the notice, every other string leaf (but `type`
    /// tags) becomes empty. An MCP result becomes one text block (no
    /// structured copy, no images); a [`Value`](OutputForm::Value) result
    /// becomes the notice.
    pub fn replaced(&self, notice: &str) -> Value {
        match self.form {
            _ if self.value.is_string() => Value::String(notice.to_owned()),
            OutputForm::Value => Value::String(notice.to_owned()),
            OutputForm::McpResult => {
                let block = serde_json::json!([{"type": "text", "text": notice}]);
                match self.value {
                    Value::Array(_) => block,
                    _ => serde_json::json!({"content": block}),
                }
            }
            OutputForm::Fields(_) | OutputForm::Leaves => {
                let mut value = self.value.clone();
                let first = self.primary().into_iter().next().map(|leaf| leaf.path);
                for leaf in all_leaves(self.value) {
                    set(&mut value, &leaf.path, String::new());
                }
                match first {
                    Some(path) => set(&mut value, &path, notice.to_owned()),
                    None => return Value::String(notice.to_owned()),
                }
                value
            }
        }
    }

    /// The parts of the text, in reading order. A string result is its
    /// own text in every form.
    fn primary(&self) -> Vec<Leaf<'a>> {
        if let Value::String(text) = self.value {
            return vec![Leaf {
                path: Vec::new(),
                text,
            }];
        }
        match self.form {
            OutputForm::Value => Vec::new(),
            OutputForm::McpResult => mcp_texts(self.value),
            OutputForm::Fields(pointers) => {
                let mut leaves = Vec::new();
                let mut found = false;
                for pointer in pointers {
                    let path = parse_pointer(pointer);
                    if let Some(at) = get(self.value, &path) {
                        found = true;
                        collect_all(at, &mut path.clone(), &mut leaves);
                    }
                }
                if found {
                    leaves
                } else {
                    all_leaves(self.value)
                }
            }
            OutputForm::Leaves => all_leaves(self.value),
        }
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
fn cut_parts(parts: &[Leaf<'_>], max_chars: usize) -> Option<Vec<Option<String>>> {
    let total: usize = parts.iter().map(|leaf| leaf.text.chars().count()).sum();
    if total <= max_chars {
        return None;
    }
    let mut budget = max_chars;
    let mut marked = false;
    let cuts = parts
        .iter()
        .map(|leaf| {
            if marked {
                return (!leaf.text.is_empty()).then(String::new);
            }
            match leaf.text.char_indices().nth(budget) {
                None => {
                    budget -= leaf.text.chars().count();
                    None
                }
                Some((at, _)) => {
                    marked = true;
                    Some(format!("{}{}", &leaf.text[..at], marker(max_chars, total)))
                }
            }
        })
        .collect();
    Some(cuts)
}

/// The text of an MCP result's content blocks: text blocks' `text` and
/// embedded resources' `resource.text`.
fn mcp_texts(value: &Value) -> Vec<Leaf<'_>> {
    let (blocks, prefix) = match value {
        Value::Array(blocks) => (blocks, Vec::new()),
        Value::Object(result) => match result.get("content") {
            Some(Value::Array(blocks)) => (blocks, vec![Step::Key("content".to_owned())]),
            _ => return Vec::new(),
        },
        _ => return Vec::new(),
    };
    let mut leaves = Vec::new();
    for (index, block) in blocks.iter().enumerate() {
        let mut path = prefix.clone();
        path.push(Step::Index(index));
        let text = match block.get("type").and_then(Value::as_str) {
            Some("text") => block.get("text").map(|text| (text, vec!["text"])),
            Some("resource") => block
                .pointer("/resource/text")
                .map(|text| (text, vec!["resource", "text"])),
            _ => None,
        };
        if let Some((Value::String(text), keys)) = text {
            path.extend(keys.into_iter().map(|key| Step::Key(key.to_owned())));
            leaves.push(Leaf { path, text });
        }
    }
    leaves
}

/// The string leaves of an MCP result's `structuredContent`.
fn copy_leaves(value: &Value) -> Vec<Leaf<'_>> {
    let mut leaves = Vec::new();
    if let Some(structured) = value.get("structuredContent") {
        let mut path = vec![Step::Key("structuredContent".to_owned())];
        collect_all(structured, &mut path, &mut leaves);
    }
    leaves
}

/// Every string leaf but `type` tags, in document order.
fn all_leaves(value: &Value) -> Vec<Leaf<'_>> {
    let mut leaves = Vec::new();
    collect_all(value, &mut Vec::new(), &mut leaves);
    leaves
}

/// The string leaves under `value` but `type` tags, in document order.
fn collect_all<'a>(value: &'a Value, path: &mut Vec<Step>, leaves: &mut Vec<Leaf<'a>>) {
    match value {
        Value::String(text) => leaves.push(Leaf {
            path: path.clone(),
            text,
        }),
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                path.push(Step::Index(index));
                collect_all(item, path, leaves);
                path.pop();
            }
        }
        Value::Object(fields) => {
            for (key, item) in fields {
                if key == "type" && item.is_string() {
                    continue;
                }
                path.push(Step::Key(key.clone()));
                collect_all(item, path, leaves);
                path.pop();
            }
        }
        _ => {}
    }
}

/// `/a/0/b` as steps (`~1` is `/`, `~0` is `~`); a number steps into an
/// array or names an object's key.
fn parse_pointer(pointer: &str) -> Vec<Step> {
    pointer
        .split('/')
        .skip(1)
        .map(|token| Step::Key(token.replace("~1", "/").replace("~0", "~")))
        .collect()
}

fn get<'a>(value: &'a Value, path: &[Step]) -> Option<&'a Value> {
    path.iter().try_fold(value, |at, step| match (at, step) {
        (Value::Object(fields), Step::Key(key)) => fields.get(key),
        (Value::Array(items), Step::Index(index)) => items.get(*index),
        (Value::Array(items), Step::Key(key)) => items.get(key.parse::<usize>().ok()?),
        _ => None,
    })
}

fn set(value: &mut Value, path: &[Step], text: String) {
    let mut at = value;
    for step in path {
        at = match (at, step) {
            (Value::Object(fields), Step::Key(key)) => match fields.get_mut(key) {
                Some(next) => next,
                None => return,
            },
            (Value::Array(items), Step::Index(index)) => match items.get_mut(*index) {
                Some(next) => next,
                None => return,
            },
            _ => return,
        };
    }
    *at = Value::String(text);
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
    fn replaced_keeps_the_shape_and_leaves_nothing_of_the_original() {
        let edit = json!({"filePath": "/k", "newString": "KEY", "originalFile": "KEY and more", "structuredPatch": [{"lines": ["+KEY"]}], "replaceAll": false});
        let withheld = ToolOutput::new(&edit, OutputForm::claude_code("Edit")).replaced("withheld");
        assert_eq!(withheld["filePath"], "withheld");
        assert_eq!(withheld["newString"], "");
        assert_eq!(withheld["originalFile"], "");
        assert_eq!(withheld["structuredPatch"][0]["lines"][0], "");
        assert_eq!(withheld["replaceAll"], false);
        assert!(!withheld.to_string().contains("KEY"));

        let mcp = json!({"content": [{"type": "image", "data": "SECRET", "mimeType": "image/png"}], "structuredContent": {"k": "SECRET"}});
        assert_eq!(
            ToolOutput::new(&mcp, OutputForm::McpResult).replaced("withheld"),
            json!({"content": [{"type": "text", "text": "withheld"}]})
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
        let kept = OutputForm::claude_code("Bash").fit(&bash, json!({"stdout": "x"}));
        assert_eq!(
            kept,
            json!({"stdout": "x"}),
            "an object is the hook's own shape"
        );
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
