//! Turning an agent's config into a registry: every error, or a registry.

use std::sync::Arc;

use serde_json::{Value, json};

use super::agent::{AgentConfig, ConfigShape};
use super::error::{AgentConfigError, AgentConfigErrors};
use super::program::check_program;
use crate::ask::AskHandler;
use crate::command::{CommandHook, CommandSpec};
use crate::factory::{BuiltItem, Resources, factories, find_factory};
use crate::registry::{HookRegistry, HookRegistryBuilder, registered_hooks};

/// The name of the approval gate's factory: attached to every agent.
pub const APPROVAL_GATE: &str = "approval_gate";

impl AgentConfig {
    /// Builds this agent's registry: its class hooks (attribute hooks by
    /// name, factories by name with their config), its command hooks, and —
    /// always — the approval gate, governed by this agent's own
    /// `require_confirmation_for_all`. `resources` carries what factories
    /// need (a database, the approval machinery…).
    ///
    /// Every problem is reported, each naming the file and the entry; nothing
    /// is built unless there are none.
    pub fn build_registry(&self, resources: &Resources) -> Result<HookRegistry, AgentConfigErrors> {
        let mut errors = Vec::new();
        let mut builder = HookRegistry::builder();
        let ask = self.add_gate(resources, &mut builder, &mut errors);
        for entry in self.class_hooks.iter().filter(|e| e.name != APPROVAL_GATE) {
            let error = |message: String| {
                AgentConfigError::new(&self.source, Some(entry.entry.clone()), message)
            };
            if let Some(registration) = registered_hooks().find(|r| r.name() == entry.name) {
                if entry.config.is_null() {
                    builder = builder.hook(registration.instantiate());
                } else {
                    errors.push(error(format!(
                        "hook \"{}\" is declared with an attribute and takes no config; remove `config`",
                        entry.name
                    )));
                }
                continue;
            }
            if factories().filter(|f| f.name == entry.name).count() > 1 {
                errors.push(error(format!(
                    "two hook factories are registered as \"{}\"; rename one so the config is unambiguous",
                    entry.name
                )));
                continue;
            }
            let Some(factory) = find_factory(&entry.name) else {
                let known = known_names();
                let hint = crate::did_you_mean(&entry.name, known.iter().map(String::as_str))
                    .map(|s| format!(" (did you mean \"{s}\"?)"))
                    .unwrap_or_default();
                errors.push(error(format!(
                    "unknown hook \"{}\"{hint}; known hooks: {}",
                    entry.name,
                    known.join(", ")
                )));
                continue;
            };
            match (factory.build)(&entry.config, resources) {
                Ok(built) => builder = add(builder, built.item),
                Err(message) => errors.push(error(message)),
            }
        }
        for (index, entry) in self.commands.iter().enumerate() {
            let error = |message: String| {
                AgentConfigError::new(&self.source, Some(entry.entry.clone()), message)
            };
            let mut spec = entry.spec.clone();
            if let Some(map) = spec.as_object_mut() {
                map.entry("name")
                    .or_insert_with(|| json!(format!("command[{index}]")));
            }
            let spec: CommandSpec = match serde_json::from_value(spec) {
                Ok(spec) => spec,
                Err(problem) => {
                    errors.push(error(format!("invalid command hook: {problem}")));
                    continue;
                }
            };
            let spec = self.resolve_paths(spec);
            if let Err(problem) = check_program(&spec) {
                errors.push(error(problem));
                continue;
            }
            match CommandHook::new(spec, ask.clone()) {
                Ok(hook) => builder = builder.hook(hook.into_registered()),
                Err(problem) => errors.push(error(problem.to_string())),
            }
        }
        match builder.build() {
            Ok(registry) if errors.is_empty() => Ok(registry),
            Ok(_) => Err(AgentConfigErrors(errors)),
            Err(problem) => {
                errors.push(AgentConfigError::new(
                    &self.source,
                    None,
                    problem.to_string(),
                ));
                Err(AgentConfigErrors(errors))
            }
        }
    }

    /// The approval gate, always: its entry's config if `class_hooks` names
    /// it, with this agent's `require_confirmation_for_all` on top.
    fn add_gate(
        &self,
        resources: &Resources,
        builder: &mut HookRegistryBuilder,
        errors: &mut Vec<AgentConfigError>,
    ) -> Option<Arc<dyn AskHandler>> {
        let mut gates = self.class_hooks.iter().filter(|e| e.name == APPROVAL_GATE);
        let named = gates.next();
        for extra in gates {
            errors.push(AgentConfigError::new(
                &self.source,
                Some(extra.entry.clone()),
                "the approval gate is listed twice; merge the entries (one gate per agent)",
            ));
        }
        let entry = named.map_or_else(
            || format!("{APPROVAL_GATE} (attached to every agent)"),
            |e| e.entry.clone(),
        );
        let mut config = named.map_or(Value::Null, |e| e.config.clone());
        if config.is_null() {
            config = json!({});
        }
        let Some(map) = config.as_object_mut() else {
            errors.push(AgentConfigError::new(
                &self.source,
                Some(entry),
                "`config` must be a mapping",
            ));
            return None;
        };
        let flag = match map.get("require_confirmation_for_all") {
            None => false,
            Some(Value::Bool(flag)) => *flag,
            Some(_) => {
                errors.push(AgentConfigError::new(
                    &self.source,
                    Some(entry),
                    "`require_confirmation_for_all` must be true or false",
                ));
                return None;
            }
        };
        map.insert(
            "require_confirmation_for_all".into(),
            json!(flag || self.require_confirmation_for_all),
        );
        if factories().filter(|f| f.name == APPROVAL_GATE).count() > 1 {
            errors.push(AgentConfigError::new(
                &self.source,
                Some(entry),
                "two hook factories are registered as \"approval_gate\"; only one gate may exist",
            ));
            return None;
        }
        let Some(factory) = find_factory(APPROVAL_GATE) else {
            errors.push(AgentConfigError::new(
                &self.source,
                Some(entry),
                "every agent gets the approval gate, but none is linked into this program; \
                 enable the `std-hooks` feature of `hooks`",
            ));
            return None;
        };
        match (factory.build)(&config, resources) {
            Ok(built) => {
                *builder = add(std::mem::take(builder), built.item);
                built.ask_handler
            }
            Err(message) => {
                errors.push(AgentConfigError::new(&self.source, Some(entry), message));
                None
            }
        }
    }

    /// Relative program paths (`./hooks/check.sh`) and working directories
    /// resolve against the config file's directory.
    fn resolve_paths(&self, mut spec: CommandSpec) -> CommandSpec {
        let Some(mut base) = self.base_dir.as_deref() else {
            return spec;
        };
        // A Claude Code settings file lives in `<project>/.claude/`; its
        // commands run from the project, as Claude Code runs them.
        if self.shape == ConfigShape::ClaudeSettings
            && base.file_name().is_some_and(|name| name == ".claude")
            && let Some(project) = base.parent()
        {
            base = project;
        }
        spec.resolve_relative_to(base);
        if spec.cwd.is_none() {
            spec.cwd = Some(base.to_path_buf());
        }
        spec
    }
}

fn add(builder: HookRegistryBuilder, item: BuiltItem) -> HookRegistryBuilder {
    match item {
        BuiltItem::Hook(hook) => builder.hook(hook),
        BuiltItem::Observer(observer) => builder.observer(observer),
    }
}

/// Every name `class_hooks` may use, sorted.
fn known_names() -> Vec<String> {
    let mut names: Vec<String> = registered_hooks()
        .map(|r| r.name().to_owned())
        .chain(factories().map(|f| f.name.to_owned()))
        .collect();
    names.sort();
    names.dedup();
    names
}
