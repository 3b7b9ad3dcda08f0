//! Registry errors say where each hook involved was declared: the attribute's
//! file and line, the builder call that added an instance, or the config
//! file entry.

use hooks::prelude::*;
use hooks::{
    HookOutcome,
    config::{AgentConfig, ConfigFormat},
    factory::Resources,
    registry::{Declaration, RegistryError},
};

const FILE: &str = "tests/registry_locations.rs";

mod a {
    use hooks::prelude::*;

    pub(crate) const LINE: u32 = line!() + 1;
    #[pre_tool_use(name = "guard")]
    pub(crate) async fn guard(_: &HookContext) -> HookResult {
        HookResult::allow()
    }
}

mod b {
    use hooks::prelude::*;

    pub(crate) const LINE: u32 = line!() + 1;
    #[pre_tool_use(name = "guard", priority = 1)]
    pub(crate) async fn guard(_: &HookContext) -> HookResult {
        HookResult::block("no")
    }
}

/// A hook instance named `name`.
struct Named(&'static str);

impl Hook for Named {
    fn name(&self) -> &str {
        self.0
    }
    fn execute<'a>(&'a self, _: &'a HookContext) -> HookOutcome<'a> {
        HookResult::allow().into()
    }
}
impl PreToolUseHook for Named {}
impl PostToolUseHook for Named {}

/// Two attributes in two modules with one name: the error names the file and
/// line of each, whether every hook or that name is asked for.
#[test]
fn two_attributes_with_one_name_are_reported_with_both_lines() {
    let mut lines = [a::LINE, b::LINE];
    lines.sort_unstable();
    for builder in [
        HookRegistry::builder().registered(),
        HookRegistry::builder().registered_named(["guard"]),
    ] {
        let error = builder.build().expect_err("a duplicate");
        let text = error.to_string();
        let first = format!("{FILE}:{}", lines[0]);
        let second = format!("{FILE}:{}", lines[1]);
        assert!(
            text.contains(&format!(
                "duplicate hook name \"guard\": declared at {first} (pre_tool_use) and {second} \
                 (pre_tool_use)"
            )) || text.contains(&format!(
                "duplicate hook name \"guard\": declared at {second} (pre_tool_use) and {first} \
                 (pre_tool_use)"
            )),
            "{text}"
        );
        assert!(!text.contains("same declaration"), "{text}");
    }
}

/// Instances added to a builder are declared where they were added.
#[test]
fn instances_are_declared_where_the_builder_added_them() {
    let first = line!() + 1;
    let builder = HookRegistry::builder().pre(Named("cap"));
    let second = line!() + 1;
    let builder = builder.post(Named("cap"));
    let error = builder.build().expect_err("a duplicate");
    assert_eq!(
        error,
        RegistryError::DuplicateName {
            name: "cap".into(),
            first: HookPoint::PreToolUse,
            first_at: Some(Declaration::Source {
                file: FILE,
                line: first
            }),
            second: HookPoint::PostToolUse,
            second_at: Some(Declaration::Source {
                file: FILE,
                line: second
            }),
        }
    );
    assert_eq!(
        error.to_string(),
        format!(
            "duplicate hook name \"cap\": declared at {FILE}:{first} (pre_tool_use) and \
             {FILE}:{second} (post_tool_use); hook names must be unique within a registry, so \
             rename one (or add it once)"
        )
    );

    let line = line!() + 1;
    let Err(empty) = HookRegistry::builder().pre(Named("")).build() else {
        panic!("an empty name is an error");
    };
    let text = empty.to_string();
    assert_eq!(
        text,
        format!(
            "a pre_tool_use hook declared at {FILE}:{line} has an empty name; give every hook a \
             name"
        )
    );
}

/// Two command hooks of one name in a config file: the error names both
/// entries of the file.
#[test]
fn config_entries_with_one_name_are_reported_with_both_entries() {
    let yaml = "agent: twice\nhooks:\n  commands:\n    \
                - { name: check, event: PreToolUse, command: [\"true\"] }\n    \
                - { name: check, event: PreToolUse, command: [\"true\"] }\n";
    let config = AgentConfig::parse(yaml, ConfigFormat::Yaml, "twice.yaml", None).expect("parses");
    let Err(errors) = config.build_registry(&Resources::new()) else {
        panic!("a duplicate is an error");
    };
    let text = errors.to_string();
    assert!(
        text.contains("duplicate hook name \"check\": declared at twice.yaml, hooks.commands[0]"),
        "{text}"
    );
    assert!(text.contains("and twice.yaml, hooks.commands[1]"), "{text}");
}
