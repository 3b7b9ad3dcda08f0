//! Whether a hook fn's body can wait.
//!
//! A body without `.await` cannot wait, so the attribute moves it into a
//! plain fn that `Hook::execute` calls at once (`HookOutcome::Ready`), on
//! the stack, without a boxed future. The
//! check is conservative: any `.await` anywhere in the body (closures and
//! async blocks included) counts, and so does any macro not known to expand
//! without one (`tokio::select!` awaits without showing it). Macros are known
//! by name only: a local macro that reuses one of these names and awaits
//! puts an `.await` in a plain fn, which does not compile.

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::visit::{self, Visit};
use syn::{Block, Macro};

/// Macros that never expand to an `.await`: the standard library's, and
/// the logging and JSON macros hooks commonly use.
const NEVER_AWAIT: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "column",
    "concat",
    "dbg",
    "debug",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "env",
    "eprint",
    "eprintln",
    "error",
    "file",
    "format",
    "format_args",
    "info",
    "json",
    "line",
    "matches",
    "module_path",
    "option_env",
    "panic",
    "print",
    "println",
    "stringify",
    "todo",
    "trace",
    "unimplemented",
    "unreachable",
    "vec",
    "warn",
    "write",
    "writeln",
];

/// True when `body` cannot wait: no `.await` and no macro that might hide one.
pub(crate) fn never_waits(body: &Block) -> bool {
    // `await` is a keyword: as a token it only ever means a wait. Scanning
    // the tokens also covers what syn keeps unparsed.
    if mentions_await(body.to_token_stream()) {
        return false;
    }
    let mut finder = WaitFinder { may_wait: false };
    finder.visit_block(body);
    !finder.may_wait
}

struct WaitFinder {
    may_wait: bool,
}

impl<'ast> Visit<'ast> for WaitFinder {
    fn visit_macro(&mut self, mac: &'ast Macro) {
        let known = mac
            .path
            .segments
            .last()
            .is_some_and(|segment| NEVER_AWAIT.iter().any(|name| segment.ident == name));
        if !known {
            self.may_wait = true;
        }
        visit::visit_macro(self, mac);
    }
}

/// Whether the `await` keyword appears anywhere in `tokens`.
fn mentions_await(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|tree| match tree {
        TokenTree::Ident(ident) => ident == "await",
        TokenTree::Group(group) => mentions_await(group.stream()),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(source: &str) -> Block {
        syn::parse_str(source).expect("a block")
    }

    #[test]
    fn bodies_without_await_never_wait() {
        for source in [
            "{ HookResult::allow() }",
            r#"{ if ctx.org_id == "x" { return HookResult::block(format!("no {}", 1)); } HookResult::allow() }"#,
            r#"{ tracing::info!(tool = %ctx.tool_name, "seen"); Ok(HookResult::allow().with_args(json!({"a": 1}))) }"#,
            "{ let f = |x: i32| x + 1; assert!(f(1) == 2); HookResult::allow() }",
        ] {
            assert!(never_waits(&body(source)), "{source}");
        }
    }

    #[test]
    fn awaits_anywhere_or_unknown_macros_may_wait() {
        for source in [
            "{ check(ctx).await; HookResult::allow() }",
            "{ let later = async { check().await }; HookResult::allow() }",
            "{ println!(\"{}\", check().await); HookResult::allow() }",
            "{ tokio::select! { _ = a => {}, _ = b => {} } HookResult::allow() }",
            "{ let (a, b) = tokio::join!(x, y); HookResult::allow() }",
            "{ my_macro!(ctx); HookResult::allow() }",
        ] {
            assert!(!never_waits(&body(source)), "{source}");
        }
    }
}
