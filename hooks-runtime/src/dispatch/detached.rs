//! Observers that run on tasks of their own, and how to wait for them.
//!
//! A call's observers (the audit log) run on a spawned task so that a caller
//! who stops waiting cannot cut a write short, and a call dropped before it
//! finished is handed to them on a detached task. A program that shuts its
//! runtime down right after such a call waits for those tasks first with
//! [`HookRegistry::flush_observers`]; a task dropped unrun (the runtime shut
//! down anyway) says so in the log, naming the tool.

use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;

use crate::registry::HookRegistry;

/// How many observer tasks of one registry are still running.
#[derive(Debug, Default)]
pub(crate) struct ObserverTasks {
    running: AtomicUsize,
    settled: Notify,
}

/// Held by one observer task: counts it as running until it is dropped, and
/// logs if it is dropped before the observers finished.
pub(crate) struct ObserverTask {
    registry: HookRegistry,
    tool: String,
    finished: bool,
}

impl ObserverTask {
    /// Counts a task that is about to be spawned for a call of `tool`.
    pub(crate) fn start(registry: &HookRegistry, tool: &str) -> ObserverTask {
        registry.hooks.tasks.running.fetch_add(1, Ordering::AcqRel);
        ObserverTask {
            registry: registry.clone(),
            tool: tool.to_owned(),
            finished: false,
        }
    }

    /// The registry the task observes for.
    pub(crate) fn registry(&self) -> &HookRegistry {
        &self.registry
    }

    /// Every observer ran.
    pub(crate) fn finish(mut self) {
        self.finished = true;
    }
}

impl Drop for ObserverTask {
    fn drop(&mut self) {
        if !self.finished {
            tracing::error!(
                tool = %self.tool,
                "a tool call's observers (the audit log) did not run to the end: \
                 their task was dropped, most likely because the runtime shut down; \
                 await `HookRegistry::flush_observers` before shutting down"
            );
        }
        let tasks = &self.registry.hooks.tasks;
        if tasks.running.fetch_sub(1, Ordering::AcqRel) == 1 {
            tasks.settled.notify_waiters();
        }
    }
}

impl HookRegistry {
    /// Waits until every observer task of this registry has finished —
    /// including those of calls whose callers dropped them before they
    /// finished. Await it before shutting a runtime down, so that every
    /// attempted call's audit row is written.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let registry = hooks_runtime::HookRegistry::builder().build().unwrap();
    /// registry.flush_observers().await; // nothing running: returns at once
    /// # });
    /// ```
    pub async fn flush_observers(&self) {
        let tasks = &self.hooks.tasks;
        loop {
            let settled = tasks.settled.notified();
            tokio::pin!(settled);
            // Registered before the count is read, so a task that finishes
            // in between still wakes this waiter.
            settled.as_mut().enable();
            if tasks.running.load(Ordering::Acquire) == 0 {
                return;
            }
            settled.await;
        }
    }
}
