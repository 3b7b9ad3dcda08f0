//! Generates the hook type, its trait impls and its registration.

use std::time::Duration;

use hooks_when::HookPoint;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ItemFn, ReturnType};

use crate::args::parse_args;
use crate::awaits::never_waits;
use crate::diagnostics::Diagnostics;
use crate::signature::check_signature;

/// Expands one hook attribute. On any error the original item is emitted
/// unchanged beside the errors, so the rest of the crate (and the IDE) still
/// sees the function.
pub(crate) fn expand(point: HookPoint, attr: TokenStream, item: TokenStream) -> TokenStream {
    let function: ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(_) => {
            let error = syn::Error::new(
                Span::call_site(),
                format!(
                    "#[{}] goes on an `async fn name(ctx: &HookContext) -> HookResult`",
                    point.as_str()
                ),
            );
            let error = error.to_compile_error();
            return quote!(#item #error);
        }
    };
    let mut diagnostics = Diagnostics::default();
    let args = parse_args(attr, &mut diagnostics);
    check_signature(&function, point.as_str(), &mut diagnostics);
    let when = args
        .when
        .as_ref()
        .and_then(|when| when.compile(point, &mut diagnostics));
    let at_once = never_waits(&function.block);
    if let (true, Some(_), Some(span)) = (at_once, args.timeout, args.timeout_span) {
        diagnostics.error(
            span,
            "`timeout` has no effect here: this hook's body never awaits, so it decides at \
             once and is never timed",
            Some(
                "remove `timeout`; it applies to a hook whose body waits (uses `.await`), \
                 whose future is cancelled at the deadline",
            ),
        );
    }
    if let Err(error) = diagnostics.into_result() {
        let error = error.to_compile_error();
        return quote!(#function #error);
    }

    // `crate = path` names where the API is (a crate that re-exports it, or
    // `hooks_runtime` itself); what the expansion uses lives in `__private`.
    let krate = match &args.krate {
        Some(path) => quote!(#path::__private),
        None => quote!(::hooks::__private),
    };
    let fn_name = &function.sig.ident;
    let name = args.name.unwrap_or_else(|| fn_name.to_string());
    let priority = args.priority.unwrap_or(50);
    let timeout_ms = u64::try_from(args.timeout.unwrap_or(Duration::from_secs(30)).as_millis())
        .unwrap_or(u64::MAX);
    let policy = if args.fail_open {
        quote!(#krate::ErrorPolicy::FailOpen)
    } else {
        quote!(#krate::ErrorPolicy::FailClosed)
    };
    let ctx = Ident::new("ctx", Span::call_site());
    let (should_trigger, when_source) = match &when {
        Some((source, expr)) => {
            let predicate = hooks_when::codegen::predicate(expr, &ctx, &quote!(#krate::when));
            (predicate, quote!(#krate::Option::Some(#source)))
        }
        None => (quote!(true), quote!(#krate::Option::None)),
    };
    let description = match &args.description {
        Some(text) => quote!(#krate::Option::Some(#text)),
        None => quote!(#krate::Option::None),
    };
    let (marker, point_variant, wrap) = match point {
        HookPoint::PreToolUse => (quote!(PreToolUseHook), quote!(PreToolUse), quote!(Pre)),
        HookPoint::PostToolUse => (quote!(PostToolUseHook), quote!(PostToolUse), quote!(Post)),
        HookPoint::SessionStart => (
            quote!(SessionStartHook),
            quote!(SessionStart),
            quote!(SessionStart),
        ),
    };
    // Spanned at the user's return type, so a wrong type is reported there
    // with `IntoHookOutcome`'s note.
    let output_span = match &function.sig.output {
        ReturnType::Type(_, ty) => ty.span(),
        ReturnType::Default => function.sig.ident.span(),
    };
    let outcome = Ident::new("outcome", output_span);
    let convert = quote_spanned!(output_span=> #krate::into_outcome(#outcome));
    // A body that cannot wait becomes a plain fn the hook calls at once
    // (`HookOutcome::Ready`): no future, no poll. The user's `async fn` stays
    // callable and calls the same plain fn. An `.await` the check could not
    // see (a macro that expands to one) is then a compile error, never a
    // hook that waits where it was meant to decide at once.
    let (function, execute) = if at_once {
        let at_once = format_ident!("__{}_at_once", fn_name);
        let mut plain = function.clone();
        plain.sig.asyncness = None;
        plain.sig.ident = at_once.clone();
        plain.vis = syn::Visibility::Inherited;
        plain.attrs.retain(|attr| {
            ["allow", "warn", "deny", "expect", "forbid", "cfg"]
                .iter()
                .any(|lint| attr.path().is_ident(lint))
        });
        let mut outer = function.clone();
        if let Some(syn::FnArg::Typed(param)) = outer.sig.inputs.first_mut() {
            *param.pat = syn::parse_quote!(#ctx);
        }
        *outer.block = syn::parse_quote!({ #at_once(#ctx) });
        let function = quote! {
            #outer
            #[doc(hidden)]
            #[inline]
            #plain
        };
        let execute = quote! {
            #[inline]
            fn execute<'a>(&'a self, #ctx: &'a #krate::HookContext) -> #krate::HookOutcome<'a> {
                let #outcome = #at_once(#ctx);
                #krate::HookOutcome::Ready(#convert)
            }
        };
        (function, execute)
    } else {
        let execute = quote! {
            fn execute<'a>(&'a self, #ctx: &'a #krate::HookContext) -> #krate::HookOutcome<'a> {
                #krate::HookOutcome::Pending(#krate::Box::pin(HookImpl::decide(#ctx)))
            }
        };
        (quote!(#function), execute)
    };

    quote! {
        #function

        const _: () = {
            #[doc(hidden)]
            struct HookImpl;

            #[allow(dead_code)]
            impl HookImpl {
                async fn decide(
                    #ctx: &#krate::HookContext,
                ) -> #krate::Result<#krate::HookResult, #krate::HookError> {
                    let #outcome = #fn_name(#ctx).await;
                    #convert
                }
            }

            impl #krate::Hook for HookImpl {
                fn name(&self) -> &str {
                    #name
                }
                fn priority(&self) -> i32 {
                    #priority
                }
                #[inline]
                fn should_trigger(&self, #ctx: &#krate::HookContext) -> bool {
                    let _ = &#ctx;
                    #should_trigger
                }
                #execute
                fn timeout(&self) -> #krate::Duration {
                    #krate::Duration::from_millis(#timeout_ms)
                }
                fn on_error(&self) -> #krate::ErrorPolicy {
                    #policy
                }
                fn when_source(&self) -> #krate::Option<&str> {
                    #when_source
                }
                fn description(&self) -> #krate::Option<&str> {
                    #description
                }
            }

            impl #krate::#marker for HookImpl {}

            #krate::inventory::submit! {
                #krate::HookRegistration::new(
                    #name,
                    #krate::HookPoint::#point_variant,
                    || #krate::RegisteredHook::#wrap(#krate::Arc::new(HookImpl)),
                )
                .at(::core::file!(), ::core::line!())
            }
        };
    }
}
