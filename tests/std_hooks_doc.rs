//! `docs/std-hooks.md`, the reference of the standard hooks, against the
//! code: every ```yaml block in it builds as an agent config the way
//! `examples/agent.rs` and `hooks check` build one, and every registered
//! factory has a section with an example.

use std::path::{Path, PathBuf};

use hooks::Agent;
use hooks::config::{AgentConfig, ConfigFormat};
use hooks::factory::{Resources, factories};

const DOC: &str = "docs/std-hooks.md";

fn doc_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(DOC)
}

fn doc() -> String {
    std::fs::read_to_string(doc_path()).unwrap_or_else(|error| panic!("{DOC}: {error}"))
}

/// A fenced YAML block: the line its text starts on (1-based) and the text.
struct YamlBlock {
    line: usize,
    text: String,
}

/// Every ```yaml block of `markdown`; an unclosed block is an error naming
/// its line.
fn yaml_blocks(markdown: &str) -> Result<Vec<YamlBlock>, String> {
    let mut blocks = Vec::new();
    let mut open: Option<YamlBlock> = None;
    for (index, line) in markdown.lines().enumerate() {
        let fence = line.trim_start();
        match &mut open {
            None if fence.starts_with("```yaml") => {
                open = Some(YamlBlock {
                    line: index + 2,
                    text: String::new(),
                });
            }
            None => {}
            Some(_) if fence.starts_with("```") => blocks.extend(open.take()),
            Some(block) => {
                block.text.push_str(line);
                block.text.push('\n');
            }
        }
    }
    match open {
        Some(block) => Err(format!(
            "the ```yaml block starting at line {} is never closed",
            block.line - 1
        )),
        None => Ok(blocks),
    }
}

async fn resources() -> Resources {
    hooks::std_hooks::offline_resources(["frozen"])
        .await
        .expect("in-memory database")
}

/// Builds every YAML block of `markdown` (from the file `source`) as an
/// agent; one line per block that does not build, naming its line.
fn failures(markdown: &str, source: &str, resources: &Resources) -> Vec<String> {
    let blocks = match yaml_blocks(markdown) {
        Ok(blocks) => blocks,
        Err(error) => return vec![format!("{source}: {error}")],
    };
    let base_dir = doc_path().parent().map(Path::to_path_buf);
    blocks
        .iter()
        .filter_map(|block| {
            let at = format!("{source}:{}", block.line);
            AgentConfig::parse(&block.text, ConfigFormat::Yaml, &at, base_dir.as_deref())
                .and_then(|config| Agent::build(config, resources))
                .err()
                .map(|errors| format!("the example at {at} does not build:\n{errors}"))
        })
        .collect()
}

#[tokio::test]
async fn every_yaml_example_builds_as_an_agent() {
    let doc = doc();
    let count = yaml_blocks(&doc).expect("well-formed fences").len();
    assert!(count >= 6, "{DOC} has {count} YAML examples");
    let failures = failures(&doc, DOC, &resources().await);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[tokio::test]
async fn a_broken_example_is_reported_with_its_line() {
    let markdown = "# t\n\n```yaml\nagent: a\nhooks:\n  class_hooks: [readonly_gaurd]\n```\n\n\
                    ```yaml\nagent: b\nhooks:\n  class_hooks:\n    - name: result_truncate\n      \
                    config: { max_char: 10 }\n```\n";
    let failures = failures(markdown, "t.md", &resources().await);
    assert_eq!(failures.len(), 2, "{failures:#?}");
    assert!(failures[0].contains("t.md:4"), "{}", failures[0]);
    assert!(failures[0].contains("readonly_gaurd"), "{}", failures[0]);
    assert!(failures[1].contains("t.md:10"), "{}", failures[1]);
    assert!(failures[1].contains("max_char"), "{}", failures[1]);
    let unclosed = yaml_blocks("```yaml\nagent: a\n").err().expect("unclosed");
    assert!(unclosed.contains("line 1"), "{unclosed}");
}

/// The section of `name`: from its `## \`name\`` heading to the next `## `.
fn section<'a>(doc: &'a str, name: &str) -> Option<&'a str> {
    let heading = format!("\n## `{name}`\n");
    let start = doc.find(&heading)? + heading.len();
    let rest = &doc[start..];
    Some(&rest[..rest.find("\n## ").unwrap_or(rest.len())])
}

#[test]
fn every_registered_factory_has_a_section_with_an_example() {
    let doc = doc();
    let mut names: Vec<&str> = factories().map(|factory| factory.name).collect();
    names.sort_unstable();
    for std_name in hooks::std_hooks::STD_HOOK_NAMES {
        assert!(
            names.contains(&std_name),
            "{std_name} is not registered: {names:?}"
        );
    }
    let missing: Vec<String> = names
        .iter()
        .filter_map(|name| match section(&doc, name) {
            None => Some(format!("`{name}` has no \"## `{name}`\" section")),
            Some(text) if !text.contains("```yaml") => {
                Some(format!("the `{name}` section has no ```yaml example"))
            }
            Some(text) if !text.contains(&format!("name: {name}")) => Some(format!(
                "no example in the `{name}` section configures it (`- name: {name}`)"
            )),
            Some(_) => None,
        })
        .collect();
    assert!(missing.is_empty(), "{DOC}:\n{}", missing.join("\n"));
}
