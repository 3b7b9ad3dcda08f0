//! Command hooks in config files: declared here, built by the crate that
//! runs programs.
//!
//! The runtime reads a config's command-hook entries (this project's
//! `hooks.commands`, a Claude Code settings file's handlers) but spawns no
//! process: the `hooks-command` crate registers a [`CommandHookBuilder`]
//! that turns each declaration into a hook. The `hooks` facade always links
//! it; a program built on `hooks-runtime` alone gets a config error for each
//! command hook instead of a hook that never runs.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use crate::factory::AskHandler;
use crate::registry::RegisteredHook;

/// One command hook of a config file, as a [`CommandHookBuilder`] receives it.
#[non_exhaustive]
pub struct CommandDeclaration<'a> {
    /// The entry in the command-hook fields (`event`, `command`, `when`,
    /// `timeout`, …), with `name` filled in (`command[i]`) when the file
    /// gave none.
    pub spec: Value,
    /// The directory relative program paths and the working directory
    /// resolve against: the config file's, or the project's for a Claude
    /// Code settings file in `<project>/.claude/`. `None` when the config
    /// was not read from a file.
    pub base_dir: Option<&'a Path>,
    /// Where the hook's "ask" answers go: the handler a built hook of the
    /// same agent offered (the approval gate is one), if any.
    pub ask: Option<Arc<dyn AskHandler>>,
}

/// What builds config files' command hooks, registered with `inventory`
/// (`hooks-command` registers the one in use). The error is the config
/// error's message: what is wrong with the entry and how to fix it.
pub struct CommandHookBuilder {
    /// Builds the hook of one declaration.
    pub build: fn(CommandDeclaration<'_>) -> Result<RegisteredHook, String>,
}

inventory::collect!(CommandHookBuilder);

/// The registered builder, if a crate that builds command hooks is linked.
pub(super) fn builder() -> Option<&'static CommandHookBuilder> {
    inventory::iter::<CommandHookBuilder>.into_iter().next()
}

/// The error for a command hook when no builder is linked.
pub(super) const NO_BUILDER: &str = "command hooks are run by the `hooks-command` crate, which \
     this program does not link; depend on `hooks` (it links it) or add `hooks-command` and \
     reference it (`use hooks_command as _;`)";
