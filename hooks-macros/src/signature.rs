//! Checks that the annotated item is `async fn name(ctx: &HookContext) -> HookResult`.

use syn::{FnArg, ItemFn, ReturnType, Type};

use crate::diagnostics::Diagnostics;

const SHAPE: &str = "a hook is `async fn name(ctx: &HookContext) -> HookResult` (or `-> Result<HookResult, E>` with `E: Display`)";

/// Reports every way the signature differs from a hook fn's.
pub(crate) fn check_signature(function: &ItemFn, attribute: &str, diagnostics: &mut Diagnostics) {
    let sig = &function.sig;
    if sig.asyncness.is_none() {
        diagnostics.error_spanned(
            sig.fn_token,
            format!("#[{attribute}] needs an `async fn`"),
            Some(SHAPE),
        );
    }
    if let Some(unsafety) = &sig.unsafety {
        diagnostics.error_spanned(unsafety, "hook functions cannot be `unsafe`", Some(SHAPE));
    }
    if let Some(abi) = &sig.abi {
        diagnostics.error_spanned(
            abi,
            "hook functions cannot have an `extern` ABI",
            Some(SHAPE),
        );
    }
    if let Some(constness) = &sig.constness {
        diagnostics.error_spanned(constness, "hook functions cannot be `const`", Some(SHAPE));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        diagnostics.error_spanned(
            &sig.generics,
            "hook functions cannot be generic",
            Some("the registry calls the hook with one concrete `&HookContext`; remove the type, lifetime and const parameters"),
        );
    }
    match sig.inputs.len() {
        1 => check_parameter(&sig.inputs[0], diagnostics),
        0 => diagnostics.error_spanned(
            &sig.ident,
            "a hook function takes the context as its one parameter",
            Some("add the parameter: `ctx: &HookContext`"),
        ),
        _ => diagnostics.error_spanned(
            &sig.inputs,
            "a hook function takes exactly one parameter, `&HookContext`",
            Some("read everything else (args, ids, metadata) from the context"),
        ),
    }
    if let ReturnType::Default = sig.output {
        diagnostics.error_spanned(
            &sig.ident,
            "a hook function must return `HookResult` or `Result<HookResult, E>`",
            Some("add `-> HookResult` and return `HookResult::allow()` or `HookResult::block(\"reason\")`"),
        );
    }
}

fn check_parameter(input: &FnArg, diagnostics: &mut Diagnostics) {
    let typed = match input {
        FnArg::Receiver(receiver) => {
            diagnostics.error_spanned(
                receiver,
                "a hook function cannot take `self`",
                Some("declare hooks as free functions: `async fn name(ctx: &HookContext) -> HookResult`"),
            );
            return;
        }
        FnArg::Typed(typed) => typed,
    };
    let ty = typed.ty.as_ref();
    let is_context = |ty: &Type| matches!(ty, Type::Path(path) if path.qself.is_none() && path.path.segments.last().is_some_and(|s| s.ident == "HookContext" && s.arguments.is_empty()));
    match ty {
        Type::Reference(reference) if reference.mutability.is_some() => diagnostics.error_spanned(
            ty,
            "the context parameter must be a shared reference, not `&mut`",
            Some("hooks rewrite arguments by returning `HookResult::allow().with_args(…)`; take `ctx: &HookContext`"),
        ),
        Type::Reference(reference) if reference.lifetime.is_some() => diagnostics.error_spanned(
            ty,
            "remove the lifetime from the context parameter",
            Some("write `ctx: &HookContext`"),
        ),
        Type::Reference(reference) if is_context(&reference.elem) => {}
        other if is_context(other) => diagnostics.error_spanned(
            ty,
            "the context parameter must be a reference: `&HookContext`",
            Some("write `ctx: &HookContext`"),
        ),
        _ => diagnostics.error_spanned(ty, "the parameter of a hook function must be `&HookContext`", Some("write `ctx: &HookContext`")),
    }
}
