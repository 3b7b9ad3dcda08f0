//! An agent's hook declarations, read from any of the accepted shapes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::entries::{
    ClaudeGroup, ClaudeHandler, NamedEntry, NativeHooks, OnFailure, SeedHooks, SeedModelConfig,
};
use super::error::{AgentConfigError, AgentConfigErrors};
use super::format::ConfigFormat;
use super::limits;
use super::permission_rule;
use crate::factory::{FLAG_PREFIX, agent_flag, agent_flags};

/// Which shape a config file had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigShape {
    /// This project's shape: `agent`, `require_confirmation_for_all`,
    /// `hooks: {class_hooks, commands}`.
    Native,
    /// The seed system's shape: `model_config_json.hooks.class_hooks: [names]`.
    Seed,
    /// A Claude Code settings file's `hooks` block
    /// (`{"PreToolUse": [{"matcher": …, "hooks": [{"type": "command", …}]}]}`).
    ClaudeSettings,
}

/// A hook named in `class_hooks`, with its config (`null` when none).
#[derive(Debug, Clone, PartialEq)]
pub struct ClassHookEntry {
    /// The hook's (or factory's) name.
    pub name: String,
    /// Its config.
    pub config: Value,
    /// Where it is in the file, for error messages.
    pub entry: String,
}

/// A command hook declaration, as written (turned into a
/// `CommandSpec` when the registry is built).
#[derive(Debug, Clone, PartialEq)]
pub struct CommandEntry {
    /// The declaration, normalised to this project's command-hook fields.
    pub spec: Value,
    /// Where it is in the file, for error messages.
    pub entry: String,
}

/// An agent's hook declarations.
///
/// ```
/// use hooks::config::{AgentConfig, ConfigFormat, ConfigShape};
///
/// let yaml = r#"
/// agent: finance-bot
/// require_confirmation_for_all: false
/// hooks:
///   class_hooks:
///     - readonly_guard
///     - name: connector_rate_limit
///       config: { default: { calls: 5, period: 1m } }
///   commands:
///     - event: PreToolUse
///       when: 'tool_name starts_with "shell_"'
///       command: ["./hooks/check-shell.sh"]
///       timeout: 10s
/// "#;
/// let config = AgentConfig::parse(yaml, ConfigFormat::Yaml, "agent.yaml", None).unwrap();
/// assert_eq!(config.shape, ConfigShape::Native);
/// assert_eq!(config.class_hooks[1].name, "connector_rate_limit");
/// assert_eq!(config.commands.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    /// The agent's id.
    pub agent: String,
    /// The [agent flags](crate::factory::AgentFlag) set for this agent
    /// (top-level booleans a linked hook declares, such as the approval
    /// gate's `require_confirmation_for_all`); a delegated agent's include
    /// its callers'.
    pub flags: BTreeSet<String>,
    /// Hooks by name, with config.
    pub class_hooks: Vec<ClassHookEntry>,
    /// Command hooks.
    pub commands: Vec<CommandEntry>,
    /// The file it came from (or `<inline>`), for error messages.
    pub source: String,
    /// The file's directory: relative command paths resolve against it.
    pub base_dir: Option<PathBuf>,
    /// Which shape the file had.
    pub shape: ConfigShape,
}

const NATIVE_KEYS: [&str; 2] = ["agent", "hooks"];
const CLAUDE_EVENTS: [&str; 4] = [
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "SessionStart",
];

impl AgentConfig {
    /// Whether the agent flag `name` is set.
    pub fn flag(&self, name: &str) -> bool {
        self.flags.contains(name)
    }

    /// Reads and parses `path`; the format comes from its extension
    /// (`.yaml`, `.yml`, `.json`, `.toml`). A file over 1 MiB is refused
    /// before it is read whole.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, AgentConfigErrors> {
        let path = path.as_ref();
        let source = path.display().to_string();
        let format = ConfigFormat::from_path(path).ok_or_else(|| {
            AgentConfigError::new(
                &source,
                None,
                "unknown config format: name the file .yaml, .yml, .json or .toml",
            )
        })?;
        let text = limits::read_capped(path)
            .map_err(|message| AgentConfigError::new(&source, None, message))?;
        // Absolute, so a command's path and its working directory cannot
        // resolve against each other.
        let base_dir = path.parent().map(|dir| {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())
        });
        Self::parse(&text, format, &source, base_dir.as_deref())
    }

    /// Parses config text in `format`; `source` names it in errors. Text over
    /// 1 MiB, and YAML with flow collections nested too deep to parse
    /// quickly, is refused unparsed.
    pub fn parse(
        text: &str,
        format: ConfigFormat,
        source: &str,
        base_dir: Option<&Path>,
    ) -> Result<Self, AgentConfigErrors> {
        let refuse =
            |message| AgentConfigErrors::from(AgentConfigError::new(source, None, message));
        limits::check_size(text.len() as u64).map_err(refuse)?;
        if format == ConfigFormat::Yaml {
            limits::check_yaml_nesting(text).map_err(refuse)?;
        }
        let value = format.parse(text).map_err(|error| {
            AgentConfigError::new(source, None, format!("syntax error: {error}"))
        })?;
        Self::from_value(&value, source, base_dir)
    }

    /// Reads an already-parsed config value in any accepted shape.
    pub fn from_value(
        value: &Value,
        source: &str,
        base_dir: Option<&Path>,
    ) -> Result<Self, AgentConfigErrors> {
        let fail = |entry: Option<&str>, message: String| {
            AgentConfigErrors::from(AgentConfigError::new(
                source,
                entry.map(str::to_owned),
                message,
            ))
        };
        let Some(top) = value.as_object() else {
            return Err(fail(
                None,
                "the config must be a mapping at the top level".into(),
            ));
        };
        let default_agent = Path::new(source)
            .file_stem()
            .and_then(|stem| stem.to_str())
            .unwrap_or("agent")
            .to_owned();
        let mut config = AgentConfig {
            agent: default_agent,
            flags: BTreeSet::new(),
            class_hooks: Vec::new(),
            commands: Vec::new(),
            source: source.to_owned(),
            base_dir: base_dir.map(Path::to_path_buf),
            shape: ConfigShape::Native,
        };
        let mut errors = Vec::new();
        if top.contains_key("model_config_json") {
            config.shape = ConfigShape::Seed;
            config.read_seed(top, &mut errors);
        } else if top
            .get("hooks")
            .and_then(Value::as_object)
            .is_some_and(|hooks| hooks.keys().any(|key| key.starts_with(char::is_uppercase)))
        {
            config.shape = ConfigShape::ClaudeSettings;
            config.read_claude(top, &mut errors);
        } else {
            config.read_native(top, &mut errors);
        }
        if errors.is_empty() {
            Ok(config)
        } else {
            Err(AgentConfigErrors(errors))
        }
    }

    fn error(&self, entry: Option<String>, message: impl Into<String>) -> AgentConfigError {
        AgentConfigError::new(&self.source, entry, message)
    }

    fn read_native(&mut self, top: &Map<String, Value>, errors: &mut Vec<AgentConfigError>) {
        let mut accepted: Vec<&str> = NATIVE_KEYS.to_vec();
        accepted.extend(agent_flags().iter().map(|flag| flag.name));
        for (key, value) in top {
            // What looks like a flag and is not one is reported by `read_flags`.
            let flag_like = flag_problem(key, value).is_some();
            if !accepted.contains(&key.as_str()) && !flag_like {
                let hint = crate::text::did_you_mean(key, accepted.iter().copied())
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                errors.push(self.error(
                    Some(key.clone()),
                    format!(
                        "unknown key{hint}; the accepted keys are {}",
                        accepted.join(", ")
                    ),
                ));
            }
        }
        self.read_agent_fields(top, errors);
        let Some(hooks) = top.get("hooks") else {
            return;
        };
        let Some(hooks) = hooks.as_object() else {
            errors.push(self.error(
                Some("hooks".into()),
                "must be a mapping with `class_hooks` and `commands`",
            ));
            return;
        };
        // Each unknown key is reported, and the known ones are still read.
        let mut known = Map::new();
        for (key, value) in hooks {
            if key == "class_hooks" || key == "commands" {
                known.insert(key.clone(), value.clone());
            } else {
                errors.push(self.error(
                    Some(format!("hooks.{key}")),
                    "unknown key; `hooks` takes `class_hooks` and `commands`",
                ));
            }
        }
        let hooks = match NativeHooks::deserialize(Value::Object(known)) {
            Ok(hooks) => hooks,
            Err(problem) => {
                errors.push(self.error(Some("hooks".into()), problem.to_string()));
                return;
            }
        };
        if let Some(list) = &hooks.class_hooks {
            self.read_class_hooks(list, "hooks.class_hooks", errors);
        }
        for (i, item) in hooks.commands.into_iter().flatten().enumerate() {
            self.commands.push(CommandEntry {
                spec: item,
                entry: format!("hooks.commands[{i}]"),
            });
        }
    }

    fn read_agent_fields(&mut self, top: &Map<String, Value>, errors: &mut Vec<AgentConfigError>) {
        match top
            .get("agent")
            .or_else(|| top.get("name"))
            .or_else(|| top.get("id"))
        {
            None => {}
            Some(Value::String(agent)) if !agent.trim().is_empty() => {
                agent.clone_into(&mut self.agent)
            }
            Some(_) => errors.push(self.error(Some("agent".into()), "must be a non-empty string")),
        }
        self.read_flags(top, "", errors);
    }

    /// The agent flags in `map` (the file's top level, or the seed's
    /// `model_config_json`, named by `at`): each declared one a boolean,
    /// set when `true`; either place setting a flag is enough. Anything that
    /// looks like a flag but is not one is an error (see [`flag_problem`]),
    /// so a config asking for more guarding never runs with less.
    fn read_flags(
        &mut self,
        map: &Map<String, Value>,
        at: &str,
        errors: &mut Vec<AgentConfigError>,
    ) {
        for (key, value) in map {
            if let Some(flag) = agent_flag(key)
                && value == &Value::Bool(true)
            {
                self.flags.insert(flag.name.to_owned());
            }
            if let Some(problem) = flag_problem(key, value) {
                errors.push(self.error(Some(format!("{at}{key}")), problem));
            }
        }
    }

    fn read_class_hooks(&mut self, list: &Value, at: &str, errors: &mut Vec<AgentConfigError>) {
        let Some(items) = list.as_array() else {
            errors.push(self.error(
                Some(at.into()),
                "must be a list of hook names or {name, config} entries",
            ));
            return;
        };
        for (i, item) in items.iter().enumerate() {
            match item {
                Value::String(name) if !name.trim().is_empty() => {
                    self.class_hooks.push(ClassHookEntry {
                        name: name.clone(),
                        config: Value::Null,
                        entry: format!("{at}[{i}] ({name})"),
                    })
                }
                Value::Object(map) => {
                    let label = map.get("name").and_then(Value::as_str).unwrap_or_default();
                    let label = if label.trim().is_empty() { "?" } else { label };
                    let entry = format!("{at}[{i}] ({label})");
                    match NamedEntry::deserialize(item) {
                        Ok(named) if !named.name.trim().is_empty() => {
                            self.class_hooks.push(ClassHookEntry {
                                name: named.name,
                                config: named.config,
                                entry,
                            });
                        }
                        Ok(_) => errors.push(self.error(Some(entry), "needs a `name`")),
                        Err(_) if label == "?" => {
                            errors.push(self.error(Some(entry), "needs a `name`"));
                        }
                        Err(problem) => errors.push(self.error(
                            Some(entry),
                            format!("{problem}; an entry takes `name` and `config`"),
                        )),
                    }
                }
                _ => errors.push(self.error(
                    Some(format!("{at}[{i}]")),
                    "must be a hook name or a {name, config} entry",
                )),
            }
        }
    }

    fn read_seed(&mut self, top: &Map<String, Value>, errors: &mut Vec<AgentConfigError>) {
        self.read_agent_fields(top, errors);
        if top.contains_key("hooks") {
            errors.push(self.error(
                Some("hooks".into()),
                "a seed-shaped config declares hooks in `model_config_json.hooks`; move them there",
            ));
        }
        let raw = &top["model_config_json"];
        // Stored as a JSON string in the seed's database; accept both.
        let parsed;
        let model = match raw {
            Value::String(text) => match serde_json::from_str::<Value>(text) {
                Ok(value) => {
                    parsed = value;
                    &parsed
                }
                Err(error) => {
                    errors.push(self.error(
                        Some("model_config_json".into()),
                        format!("is a string but not JSON: {error}"),
                    ));
                    return;
                }
            },
            other => other,
        };
        if !model.is_object() {
            errors.push(self.error(Some("model_config_json".into()), "must be a mapping"));
            return;
        }
        if let Some(map) = model.as_object() {
            self.read_flags(map, "model_config_json.", errors);
        }
        let model = match SeedModelConfig::deserialize(model) {
            Ok(model) => model,
            Err(problem) => {
                errors.push(self.error(Some("model_config_json".into()), problem.to_string()));
                return;
            }
        };
        if let Some(SeedHooks {
            class_hooks: Some(list),
        }) = &model.hooks
        {
            self.read_class_hooks(list, "model_config_json.hooks.class_hooks", errors);
        }
    }

    fn read_claude(&mut self, top: &Map<String, Value>, errors: &mut Vec<AgentConfigError>) {
        // A settings file holds much more (permissions, env, model…); only
        // `hooks` concerns us, and within it every entry must be understood.
        if let Some(Value::String(agent)) = top.get("agent") {
            agent.clone_into(&mut self.agent);
        }
        self.read_flags(top, "", errors);
        let hooks = top["hooks"].as_object().cloned().unwrap_or_default();
        for (event, groups) in &hooks {
            let at = format!("hooks.{event}");
            if !CLAUDE_EVENTS.contains(&event.as_str()) {
                errors.push(self.error(
                    Some(at),
                    format!(
                        "the {event} event is not supported (supported: {}); remove it or move it to another settings file",
                        CLAUDE_EVENTS.join(", ")
                    ),
                ));
                continue;
            }
            let Some(groups) = groups.as_array() else {
                errors.push(self.error(Some(at), "must be a list of {matcher, hooks} groups"));
                continue;
            };
            for (g, group) in groups.iter().enumerate() {
                let at = format!("hooks.{event}[{g}]");
                let group = match ClaudeGroup::deserialize(group) {
                    Ok(group) => group,
                    Err(problem) => {
                        errors.push(
                            self.error(Some(at), format!("a {{matcher, hooks}} group: {problem}")),
                        );
                        continue;
                    }
                };
                for (h, handler) in group.hooks.iter().enumerate() {
                    let at = format!("hooks.{event}[{g}].hooks[{h}]");
                    match claude_command(event, group.matcher.as_deref(), handler) {
                        Ok(spec) => self.commands.push(CommandEntry { spec, entry: at }),
                        Err(message) => errors.push(self.error(Some(at), message)),
                    }
                }
            }
        }
    }
}

/// One Claude Code handler as a command-hook declaration: a `command`
/// (`{"type": "command", "command": "…", "timeout": 60}`, run through a
/// shell as Claude Code runs it) or an `http` handler (`url`, `headers`,
/// `allowedEnvVars`). Its `if` (a permission rule) becomes the hook's
/// `when`; its `onFailure` its `on_error`.
fn claude_command(event: &str, matcher: Option<&str>, handler: &Value) -> Result<Value, String> {
    let handler = ClaudeHandler::deserialize(handler).map_err(|problem| {
        format!(
            "{problem}; a handler is {{type: \"command\", command, timeout, if, onFailure, \
             statusMessage}} or {{type: \"http\", url, headers, allowedEnvVars, timeout, if, \
             onFailure, statusMessage}}"
        )
    })?;
    let (mut spec, timeout, condition, on_failure) = match handler {
        ClaudeHandler::Command {
            command,
            timeout,
            condition,
            on_failure,
            ..
        } => {
            if command.trim().is_empty() {
                return Err("needs a non-empty `command` string".into());
            }
            let spec = json!({"event": event, "command": command, "shell": true});
            (spec, timeout, condition, on_failure)
        }
        ClaudeHandler::Http {
            url,
            headers,
            allowed_env_vars,
            timeout,
            condition,
            on_failure,
            ..
        } => {
            let spec = json!({"event": event, "url": url, "headers": headers,
                              "allowed_env_vars": allowed_env_vars});
            (spec, timeout, condition, on_failure)
        }
    };
    if let Some(matcher) = matcher {
        spec["matcher"] = json!(matcher);
    }
    if let Some(timeout) = timeout {
        spec["timeout"] = timeout;
    }
    if let Some(rule) = condition {
        spec["when"] = json!(permission_rule::rule_to_when(&rule)?);
    }
    if let Some(on_failure) = on_failure {
        spec["on_error"] = json!(match on_failure {
            OnFailure::Block => "fail_closed",
            OnFailure::Allow => "fail_open",
        });
    }
    Ok(spec)
}

/// What is wrong with `key: value` as an agent flag, if anything: a
/// declared flag must be a boolean; a key that is a declared flag but for
/// case or surrounding spaces is a misspelling, whatever its value (it would
/// otherwise go unread); and a `require_…` key (in any case) set to `true`
/// that no linked crate declares asks for a guard nothing provides.
fn flag_problem(key: &str, value: &Value) -> Option<String> {
    if agent_flag(key).is_some() {
        return (!value.is_boolean()).then(|| "must be true or false".to_owned());
    }
    let folded = key.trim().to_ascii_lowercase();
    if let Some(flag) = agent_flag(&folded) {
        return Some(format!(
            "is not a key; the agent flag is spelled `{}` (lowercase, no spaces)",
            flag.name
        ));
    }
    if folded.starts_with(FLAG_PREFIX) && value == &Value::Bool(true) {
        let declared: Vec<&str> = agent_flags().iter().map(|flag| flag.name).collect();
        return Some(format!(
            "asks for a guard that no hook in this program declares (declared flags: {}); link \
             the crate whose hook reads it, or remove the key",
            if declared.is_empty() {
                "none".to_owned()
            } else {
                declared.join(", ")
            }
        ));
    }
    None
}
