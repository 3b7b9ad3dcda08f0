//! What a tool call allocates: hooks whose body never awaits run without a
//! boxed future, and hooks that do not match cost nothing.
//!
//! Counts the allocations made on the test's own thread, so tests running in
//! parallel do not disturb each other.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::convert::Infallible;

use hooks::prelude::*;
use serde_json::{Value, json};

struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|count| count.set(count.get() + 1));
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|count| count.set(count.get() + 1));
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

#[pre_tool_use(when = tool_name starts_with "alloc_")]
async fn decides_at_once(ctx: &HookContext) -> HookResult {
    if ctx.org_id == "frozen" {
        return HookResult::block(format!("org {} is frozen", ctx.org_id));
    }
    HookResult::allow()
}

#[pre_tool_use(when = tool_name == "alloc_probe")]
async fn also_at_once(_ctx: &HookContext) -> Result<HookResult, std::fmt::Error> {
    Ok(HookResult::allow())
}

#[pre_tool_use(when = tool_name == "never_called")]
async fn never_matches(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

#[pre_tool_use(when = tool_name == "alloc_probe")]
async fn waits(_ctx: &HookContext) -> HookResult {
    tokio::task::yield_now().await;
    HookResult::allow()
}

async fn tool(_args: &Value) -> Result<Value, Infallible> {
    Ok(Value::Null)
}

fn registry(names: &[&str]) -> HookRegistry {
    HookRegistry::builder()
        .registered_named(names)
        .build()
        .expect("registry builds")
}

/// Allocations made by one call after a first one has warmed up (context
/// built beforehand, report dropped after).
async fn allocations_of_a_warm_call(registry: &HookRegistry) -> u64 {
    allocations_of_one_call(registry).await;
    allocations_of_one_call(registry).await
}

/// Allocations made by one call (context built beforehand, report dropped after).
async fn allocations_of_one_call(registry: &HookRegistry) -> u64 {
    let ctx = HookContext::tool_call("alloc_probe", json!(null));
    let before = allocations();
    let report = registry.run_tool_call(ctx, tool).await;
    let during = allocations() - before;
    assert_eq!(report.observation, Observation::Output(Value::Null));
    during
}

#[tokio::test(flavor = "current_thread")]
async fn hooks_that_never_await_run_without_allocating() {
    let registry = registry(&["decides_at_once", "also_at_once", "never_matches"]);
    // Only the trace's list of the hooks that ran.
    assert_eq!(allocations_of_a_warm_call(&registry).await, 1);
}

#[tokio::test(flavor = "current_thread")]
async fn a_hook_that_awaits_costs_its_boxed_future() {
    let registry = registry(&["decides_at_once", "waits"]);
    // The trace's list, the waiting hook's boxed future, and its timeout,
    // armed when the hook first waits.
    assert_eq!(allocations_of_a_warm_call(&registry).await, 3);
}

#[tokio::test(flavor = "current_thread")]
async fn an_at_once_hook_still_blocks_with_its_reason() {
    let report = registry(&["decides_at_once"])
        .run_tool_call(
            HookContext::tool_call("alloc_probe", json!(null)).with_org("frozen"),
            tool,
        )
        .await;
    assert_eq!(
        report.observation,
        Observation::Blocked {
            hook: "decides_at_once".to_owned(),
            reason: "org frozen is frozen".to_owned()
        }
    );
}
