//! Hooks that register themselves at link time through `inventory`.

use std::sync::Arc;

use crate::context::HookPoint;
use crate::hook::{Hook, PostToolUseHook, PreToolUseHook, SessionStartHook};

/// A hook instance tagged with its point, as a registry stores it.
#[derive(Clone)]
pub enum RegisteredHook {
    /// A pre-tool-use hook.
    Pre(Arc<dyn PreToolUseHook>),
    /// A post-tool-use hook.
    Post(Arc<dyn PostToolUseHook>),
    /// A session-start hook.
    SessionStart(Arc<dyn SessionStartHook>),
}

impl RegisteredHook {
    /// Wraps a pre-tool-use hook.
    pub fn pre(hook: impl PreToolUseHook + 'static) -> Self {
        RegisteredHook::Pre(Arc::new(hook))
    }

    /// Wraps a post-tool-use hook.
    pub fn post(hook: impl PostToolUseHook + 'static) -> Self {
        RegisteredHook::Post(Arc::new(hook))
    }

    /// Wraps a session-start hook.
    pub fn session_start(hook: impl SessionStartHook + 'static) -> Self {
        RegisteredHook::SessionStart(Arc::new(hook))
    }

    /// The point the hook runs at.
    pub fn point(&self) -> HookPoint {
        match self {
            RegisteredHook::Pre(_) => HookPoint::PreToolUse,
            RegisteredHook::Post(_) => HookPoint::PostToolUse,
            RegisteredHook::SessionStart(_) => HookPoint::SessionStart,
        }
    }

    /// The hook, whatever its point.
    pub fn hook(&self) -> &dyn Hook {
        match self {
            RegisteredHook::Pre(hook) => hook.as_ref(),
            RegisteredHook::Post(hook) => hook.as_ref(),
            RegisteredHook::SessionStart(hook) => hook.as_ref(),
        }
    }
}

impl std::fmt::Debug for RegisteredHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredHook")
            .field("point", &self.point())
            .field("name", &self.hook().name())
            .finish()
    }
}

/// Where a hook was declared, for registry errors.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Declaration {
    /// In Rust source: an attribute, or the call that added the hook to a
    /// builder.
    Source {
        /// The source file, as `file!()` gives it.
        file: &'static str,
        /// The line.
        line: u32,
    },
    /// An entry of an agent config file.
    ConfigEntry {
        /// The config file.
        file: String,
        /// The entry (`hooks.class_hooks[0] (name)`).
        entry: String,
    },
}

impl Declaration {
    /// The place `location` points at (from `#[track_caller]`).
    pub fn caller(location: &'static std::panic::Location<'static>) -> Self {
        Declaration::Source {
            file: location.file(),
            line: location.line(),
        }
    }
}

impl std::fmt::Display for Declaration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Declaration::Source { file, line } => write!(f, "{file}:{line}"),
            Declaration::ConfigEntry { file, entry } => write!(f, "{file}, {entry}"),
        }
    }
}

/// A link-time registration, submitted by the hook attributes.
///
/// Users do not build these; `#[pre_tool_use]` and friends submit one per hook.
pub struct HookRegistration {
    name: &'static str,
    point: HookPoint,
    make: fn() -> RegisteredHook,
    /// The attribute's file and line, if known.
    at: Option<(&'static str, u32)>,
}

impl HookRegistration {
    /// A registration for the hook `make` builds.
    pub const fn new(name: &'static str, point: HookPoint, make: fn() -> RegisteredHook) -> Self {
        HookRegistration {
            name,
            point,
            make,
            at: None,
        }
    }

    /// The same registration, declared at `file:line` (the attributes pass
    /// `file!()` and `line!()`), so registry errors can say where.
    pub const fn at(mut self, file: &'static str, line: u32) -> Self {
        self.at = Some((file, line));
        self
    }

    /// Where the hook was declared, if the registration says.
    pub fn declaration(&self) -> Option<Declaration> {
        self.at
            .map(|(file, line)| Declaration::Source { file, line })
    }

    /// The hook's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The hook's point.
    pub fn point(&self) -> HookPoint {
        self.point
    }

    /// Builds the hook.
    pub fn instantiate(&self) -> RegisteredHook {
        (self.make)()
    }
}

inventory::collect!(HookRegistration);

/// Every hook registered by the attributes anywhere in the program.
pub fn registered_hooks() -> impl Iterator<Item = &'static HookRegistration> {
    inventory::iter::<HookRegistration>.into_iter()
}
