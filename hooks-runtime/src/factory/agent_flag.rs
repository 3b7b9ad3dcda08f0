//! Agent flags: top-level booleans of an agent's config that a hook reads.
//!
//! The runtime reads them without knowing what they mean. A crate that
//! ships a hook declares each flag its hook reads with
//! [`agent_flag!`](crate::agent_flag); the config then accepts the key (a
//! boolean, at the top of the file, or in a seed config's
//! `model_config_json`) and hands every flag that is set to every factory
//! through [`AgentSettings`](super::AgentSettings).
//!
//! A flag only ever adds guarding, so:
//! - a delegated agent gets its callers' flags as well as its own
//!   ([`Agent::delegate`](crate::Agent::delegate));
//! - flags are named `require_…`, and a `require_…` key set to `true` that
//!   no linked crate declares is a config error, never ignored: a config
//!   that asks for more guarding does not run with less;
//! - a set flag whose hook cannot be built for every agent is a config
//!   error.

/// One agent flag: its key, the hook that reads it, and what it means.
#[derive(Debug)]
pub struct AgentFlag {
    /// The config key (`require_…`).
    pub name: &'static str,
    /// The name of the factory whose hook reads it; it must attach to
    /// every agent, so that a flag set always has a hook to act on it.
    pub read_by: &'static str,
    /// One line for `hooks check` and error messages.
    pub description: &'static str,
}

inventory::collect!(AgentFlag);

/// Every declared agent flag, sorted by name.
pub fn agent_flags() -> Vec<&'static AgentFlag> {
    let mut flags: Vec<&'static AgentFlag> = inventory::iter::<AgentFlag>.into_iter().collect();
    flags.sort_by_key(|flag| flag.name);
    flags.dedup_by_key(|flag| flag.name);
    flags
}

/// The declared flag of this name, if any.
pub(crate) fn agent_flag(name: &str) -> Option<&'static AgentFlag> {
    inventory::iter::<AgentFlag>
        .into_iter()
        .find(|flag| flag.name == name)
}

/// The prefix of every agent flag's name: an undeclared key with it is
/// refused when set.
pub(crate) const FLAG_PREFIX: &str = "require_";
