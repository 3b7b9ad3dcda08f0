//! Agent flags: configs that would turn `require_confirmation_for_all` off
//! by how they spell or place it. Each either sets the flag or is refused;
//! none builds an agent that asks for less than the config says.

use hooks::Agent;
use hooks::config::AgentConfig;
use serde_json::{Value, json};

/// How one config must come out.
enum Verdict {
    /// It parses, with every call needing approval.
    Gated,
    /// It is refused with an error containing this text.
    Refused(&'static str),
}

fn check(config: &Value, verdict: Verdict) {
    let parsed = AgentConfig::from_value(config, "attack.json", None);
    match (verdict, parsed) {
        (Verdict::Gated, Ok(config)) => {
            assert!(config.flag("require_confirmation_for_all"), "{config:?}");
        }
        (Verdict::Refused(says), Err(errors)) => {
            assert!(errors.to_string().contains(says), "{config}: {errors}");
        }
        (Verdict::Gated, Err(errors)) => panic!("{config} was refused: {errors}"),
        (Verdict::Refused(says), Ok(parsed)) => {
            panic!("{config} was accepted ({parsed:?}); expected an error with {says:?}")
        }
    }
}

#[test]
fn every_spelling_of_the_flag_is_either_the_flag_or_refused() {
    use Verdict::{Gated, Refused};
    let misspelled = "the agent flag is spelled `require_confirmation_for_all`";
    let not_bool = "must be true or false";
    let cases = [
        // This project's shape.
        (
            json!({"agent": "a", "require_confirmation_for_all": true}),
            Gated,
        ),
        (
            json!({"agent": "a", "Require_Confirmation_For_All": true}),
            Refused(misspelled),
        ),
        (
            json!({"agent": "a", "REQUIRE_CONFIRMATION_FOR_ALL": false}),
            Refused(misspelled),
        ),
        (
            json!({"agent": "a", " require_confirmation_for_all": true}),
            Refused(misspelled),
        ),
        (
            json!({"agent": "a", "require_confirmation_for_all": "true"}),
            Refused(not_bool),
        ),
        (
            json!({"agent": "a", "require_confirmation_for_all": 1}),
            Refused(not_bool),
        ),
        (
            json!({"agent": "a", "require_confirmation_for_all": null}),
            Refused(not_bool),
        ),
        (
            json!({"agent": "a", "require_confirmation_for_everything": true}),
            Refused("no hook in this program declares"),
        ),
        // The seed's shape: unknown model keys are otherwise ignored.
        (
            json!({"agent": "a", "model_config_json": {"require_confirmation_for_all": true}}),
            Gated,
        ),
        (
            json!({"agent": "a", "model_config_json": "{\"require_confirmation_for_all\": true}"}),
            Gated,
        ),
        (
            json!({"agent": "a", "model_config_json": {"Require_Confirmation_For_All": true}}),
            Refused(misspelled),
        ),
        (
            json!({"agent": "a", "model_config_json": {"require_confirmation_for_all ": false}}),
            Refused(misspelled),
        ),
        (
            json!({"agent": "a", "model_config_json": {"require_confirmation_for_all": "yes"}}),
            Refused(not_bool),
        ),
        (
            json!({"agent": "a", "model_config_json": {"REQUIRE_APPROVAL": true}}),
            Refused("no hook in this program declares"),
        ),
        // Either place is enough: a `false` in one does not undo the other.
        (
            json!({"agent": "a", "require_confirmation_for_all": true, "model_config_json": {"require_confirmation_for_all": false}}),
            Gated,
        ),
        (
            json!({"agent": "a", "require_confirmation_for_all": false, "model_config_json": {"require_confirmation_for_all": true}}),
            Gated,
        ),
        // A Claude Code settings file.
        (
            json!({"require_confirmation_for_all": true, "hooks": {"PreToolUse": []}}),
            Gated,
        ),
        (
            json!({"Require_Confirmation_For_All": true, "hooks": {"PreToolUse": []}}),
            Refused(misspelled),
        ),
    ];
    for (config, verdict) in cases {
        check(&config, verdict);
    }
}

#[tokio::test]
async fn a_delegate_cannot_drop_its_callers_flag() {
    let resources = hooks::std_hooks::offline_resources([] as [&str; 0])
        .await
        .expect("resources");
    let parent = AgentConfig::from_value(
        &json!({"agent": "treasurer", "require_confirmation_for_all": true}),
        "parent.json",
        None,
    )
    .expect("parent");
    let parent = Agent::build(parent, &resources).expect("parent agent");
    for child in [
        json!({"agent": "payer", "require_confirmation_for_all": false}),
        json!({"agent": "payer", "model_config_json": {"require_confirmation_for_all": false}}),
        json!({"agent": "payer"}),
    ] {
        let child = AgentConfig::from_value(&child, "child.json", None).expect("child");
        let child = parent.delegate(child).expect("delegate");
        assert!(
            child.config().flag("require_confirmation_for_all"),
            "{:?}",
            child.config()
        );
    }
}
