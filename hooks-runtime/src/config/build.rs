//! Turning an agent's config into a registry: every error, or a registry.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::agent::{AgentConfig, ConfigShape};
use super::command_hooks::{self, CommandDeclaration};
use super::dead_guards::{self, DeclaredSchema};
use super::error::{AgentConfigError, AgentConfigErrors};
use super::warning::ConfigWarning;
use crate::ask::AskHandler;
use crate::factory::{
    AgentSettings, Attach, Built, BuiltItem, FactoryInput, HookFactory, Resources, agent_flag,
    factories,
};
use crate::registry::{Declaration, HookRegistry, HookRegistryBuilder, registered_hooks};

/// A registry under construction, and every problem found so far.
struct Assembly<'c> {
    config: &'c AgentConfig,
    builder: HookRegistryBuilder,
    /// Where command hooks' "ask" answers go, if a built hook takes them.
    ask: Option<Arc<dyn AskHandler>>,
    errors: Vec<AgentConfigError>,
    /// The config entry each hook came from, by hook name.
    entries: HashMap<String, String>,
    /// Tools' argument schemas that built hooks declared.
    schemas: Vec<DeclaredSchema>,
    /// The warnings factories gave with what they built.
    warnings: Vec<ConfigWarning>,
}

impl AgentConfig {
    /// Builds this agent's registry: the hooks every agent gets (factories
    /// registered `every_agent`, such as the approval gate: with their entry's
    /// config when `class_hooks` names them), its class hooks (attribute hooks
    /// by name, factories by name with their config) and its command hooks.
    /// Factories see the agent's settings (its [agent flags](crate::factory::AgentFlag))
    /// typed; `resources` carries what they need (a database, the approval
    /// machinery…).
    ///
    /// Every problem is reported, each naming the file and the entry; nothing
    /// is built unless there are none. An `args.…` path that a hook's `when`
    /// reads for a tool whose declared argument schema says it cannot exist
    /// is one (see
    /// [`build_registry_with_warnings`](Self::build_registry_with_warnings)).
    pub fn build_registry(&self, resources: &Resources) -> Result<HookRegistry, AgentConfigErrors> {
        self.build_registry_with_warnings(resources)
            .map(|(registry, _)| registry)
    }

    /// [`build_registry`](Self::build_registry), with what the build could
    /// not check: each `args.…` path of a hook's `when` that no declared
    /// schema decides — the `when` is not restricted to named tools, no
    /// hook declares a schema for the tool
    /// ([`Built::with_args_schema`]), or the schema allows properties it
    /// does not list or uses keywords the check does not follow (`$ref`,
    /// `anyOf`, …). `hooks check` prints these.
    ///
    /// The check reads `tool_name == "x"` and `tool_name in [...]` joined by
    /// `&&` and `||`; a `when` restricted any other way (`!`, globs,
    /// `connector`) counts as not restricted. A path a schema rules out —
    /// not listed under `properties` where `additionalProperties` is
    /// `false`, or a key of a value whose `type` is not `object` — is an
    /// error with a did-you-mean.
    pub fn build_registry_with_warnings(
        &self,
        resources: &Resources,
    ) -> Result<(HookRegistry, Vec<ConfigWarning>), AgentConfigErrors> {
        let settings = AgentSettings {
            flags: self.flags.clone(),
            ..AgentSettings::default()
        };
        let mut assembly = Assembly {
            config: self,
            builder: HookRegistry::builder(),
            ask: None,
            errors: Vec::new(),
            entries: HashMap::new(),
            schemas: Vec::new(),
            warnings: Vec::new(),
        };
        let every_agent: Vec<&HookFactory> = factories()
            .filter(|factory| factory.attach == Attach::EveryAgent)
            .collect();
        for flag in &self.flags {
            if let Some(problem) = unread_flag(flag, &every_agent, resources) {
                assembly.error(Some(flag.clone()), problem);
            }
        }
        for factory in &every_agent {
            let mut entries = self.class_hooks.iter().filter(|e| e.name == factory.name);
            let named = entries.next();
            for extra in entries {
                assembly.error(
                    Some(extra.entry.clone()),
                    format!(
                        "\"{}\" is listed twice; every agent gets it once, so merge the entries",
                        factory.name
                    ),
                );
            }
            let entry = named.map_or_else(
                || format!("{} (attached to every agent)", factory.name),
                |e| e.entry.clone(),
            );
            let config = named.map_or(&Value::Null, |e| &e.config);
            assembly.build(factory, config, entry, &settings, resources);
        }
        for entry in &self.class_hooks {
            if every_agent.iter().any(|factory| factory.name == entry.name) {
                continue;
            }
            let mut registrations = registered_hooks().filter(|r| r.name() == entry.name);
            if let Some(registration) = registrations.next() {
                if entry.config.is_null() {
                    // Every attribute of that name is added, so two are
                    // reported as a duplicate with where each is declared.
                    for registration in std::iter::once(registration).chain(registrations) {
                        assembly
                            .entries
                            .insert(entry.name.clone(), entry.entry.clone());
                        assembly.builder = std::mem::take(&mut assembly.builder)
                            .hook_declared(registration.instantiate(), registration.declaration());
                    }
                } else {
                    assembly.error(
                        Some(entry.entry.clone()),
                        format!(
                            "hook \"{}\" is declared with an attribute and takes no config; remove `config`",
                            entry.name
                        ),
                    );
                }
                continue;
            }
            let Some(factory) = factories().find(|f| f.name == entry.name) else {
                let known = known_names();
                let hint = crate::text::did_you_mean(&entry.name, known.iter().map(String::as_str))
                    .map(|s| format!(" (did you mean \"{s}\"?)"))
                    .unwrap_or_default();
                assembly.error(
                    Some(entry.entry.clone()),
                    format!(
                        "unknown hook \"{}\"{hint}; known hooks: {}",
                        entry.name,
                        known.join(", ")
                    ),
                );
                continue;
            };
            assembly.build(
                factory,
                &entry.config,
                entry.entry.clone(),
                &settings,
                resources,
            );
        }
        for (index, entry) in self.commands.iter().enumerate() {
            let mut spec = entry.spec.clone();
            if let Some(map) = spec.as_object_mut() {
                map.entry("name")
                    .or_insert_with(|| json!(format!("command[{index}]")));
            }
            let Some(builder) = command_hooks::builder() else {
                assembly.error(
                    Some(entry.entry.clone()),
                    command_hooks::NO_BUILDER.to_owned(),
                );
                continue;
            };
            let declaration = CommandDeclaration {
                spec,
                base_dir: self.command_base_dir(),
                ask: assembly.ask.clone(),
            };
            match (builder.build)(declaration) {
                Ok(hook) => {
                    let at = assembly.declared(&entry.entry);
                    assembly
                        .entries
                        .insert(hook.hook().name().to_owned(), entry.entry.clone());
                    assembly.builder =
                        std::mem::take(&mut assembly.builder).hook_declared(hook, Some(at));
                }
                Err(problem) => assembly.error(Some(entry.entry.clone()), problem),
            }
        }
        let Assembly {
            builder,
            mut errors,
            entries,
            schemas,
            warnings: built_warnings,
            ..
        } = assembly;
        match builder.build() {
            Ok(registry) => {
                let findings = dead_guards::check(&registry, &schemas);
                let entry_of = |hook: String| {
                    Some(
                        entries
                            .get(&hook)
                            .cloned()
                            .unwrap_or_else(|| format!("hook \"{hook}\"")),
                    )
                };
                for (hook, message) in findings.errors {
                    errors.push(AgentConfigError::new(&self.source, entry_of(hook), message));
                }
                if !errors.is_empty() {
                    return Err(AgentConfigErrors(errors));
                }
                let warnings = built_warnings
                    .into_iter()
                    .chain(
                        findings
                            .warnings
                            .into_iter()
                            .map(|(hook, message)| ConfigWarning {
                                file: self.source.clone(),
                                entry: entry_of(hook),
                                message,
                            }),
                    )
                    .collect();
                Ok((registry, warnings))
            }
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

    /// The directory a command hook's relative program paths
    /// (`./hooks/check.sh`) and working directory resolve against: the
    /// config file's. A Claude Code settings file lives in
    /// `<project>/.claude/`; its commands run from the project, as Claude
    /// Code runs them.
    pub fn command_base_dir(&self) -> Option<&std::path::Path> {
        let base = self.base_dir.as_deref()?;
        if self.shape == ConfigShape::ClaudeSettings
            && base.file_name().is_some_and(|name| name == ".claude")
            && let Some(project) = base.parent()
        {
            return Some(project);
        }
        Some(base)
    }
}

/// Why a set agent flag would have no hook to act on it, if so: the
/// factory that reads it must be linked and attached to every agent.
fn unread_flag(name: &str, every_agent: &[&HookFactory], resources: &Resources) -> Option<String> {
    let flag = agent_flag(name)?;
    if every_agent
        .iter()
        .any(|factory| factory.name == flag.read_by)
    {
        return None;
    }
    let Some(factory) = factories().find(|factory| factory.name == flag.read_by) else {
        return Some(format!(
            "is set, but `{}`, the hook that reads it ({}), is not linked into this program",
            flag.read_by, flag.description
        ));
    };
    // A hook left out of the build says which feature brings it.
    let input = FactoryInput::new(factory.name, &Value::Null, resources);
    Some(match factory.build(&input) {
        Err(problem) => format!(
            "is set, but `{}`, the hook that reads it, cannot be built: {problem}",
            flag.read_by
        ),
        Ok(_) => format!(
            "is set, but `{}`, the hook that reads it, is not attached to every agent",
            flag.read_by
        ),
    })
}

impl Assembly<'_> {
    /// A config entry of this agent's file, as a declaration.
    fn declared(&self, entry: &str) -> Declaration {
        Declaration::ConfigEntry {
            file: self.config.source.clone(),
            entry: entry.to_owned(),
        }
    }

    fn error(&mut self, entry: Option<String>, message: impl Into<String>) {
        self.errors
            .push(AgentConfigError::new(&self.config.source, entry, message));
    }

    /// Builds one factory's hook (or observer) into the registry.
    fn build(
        &mut self,
        factory: &HookFactory,
        config: &Value,
        entry: String,
        settings: &AgentSettings,
        resources: &Resources,
    ) {
        let same_name: Vec<&HookFactory> = factories().filter(|f| f.name == factory.name).collect();
        if same_name.len() > 1 {
            let places: Vec<String> = same_name
                .iter()
                .map(|f| match f.declaration() {
                    Some(at) => at.to_string(),
                    None => "an unknown place".to_owned(),
                })
                .collect();
            self.error(
                Some(entry),
                format!(
                    "{} hook factories are registered as \"{}\" (declared at {}); rename one so \
                     the config is unambiguous",
                    same_name.len(),
                    factory.name,
                    places.join(" and ")
                ),
            );
            return;
        }
        let input = FactoryInput::new(factory.name, config, resources).for_agent(settings);
        let Built {
            item,
            ask_handler,
            args_schemas,
            warnings,
        } = match factory.build(&input) {
            Ok(built) => built,
            Err(message) => return self.error(Some(entry), message),
        };
        if let Some(handler) = ask_handler {
            if self.ask.is_some() {
                return self.error(
                    Some(entry),
                    format!(
                        "hook \"{}\" takes command hooks' \"ask\" answers, but another hook \
                         already does; keep one",
                        factory.name
                    ),
                );
            }
            self.ask = Some(handler);
        }
        self.warnings
            .extend(warnings.into_iter().map(|message| ConfigWarning {
                file: self.config.source.clone(),
                entry: Some(entry.clone()),
                message,
            }));
        self.schemas.extend(
            args_schemas
                .into_iter()
                .map(|(tool, schema)| DeclaredSchema {
                    tool,
                    schema,
                    declared_by: factory.name.to_owned(),
                }),
        );
        let at = self.declared(&entry);
        if let BuiltItem::Hook(hook) = &item {
            self.entries
                .insert(hook.hook().name().to_owned(), entry.clone());
        }
        let builder = std::mem::take(&mut self.builder);
        self.builder = match item {
            BuiltItem::Hook(hook) => builder.hook_declared(hook, Some(at)),
            BuiltItem::Observer(observer) => builder.observer(observer),
        };
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
