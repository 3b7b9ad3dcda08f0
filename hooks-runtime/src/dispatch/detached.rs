//! Observers that run on tasks of their own, and how to wait for them.
//!
//! A call's observers (the audit log) run on a spawned task so that a caller
//! who stops waiting cannot cut a write short, and a call dropped before it
//! finished is handed to them on a detached task. A program that shuts its
//! runtime down right after such a call waits for those tasks first with
//! [`HookRegistry::flush_observers`]; a task dropped unrun (the runtime shut
//! down anyway) says so in the log, naming the tool.
//!
//! Tasks are counted by generation: a flush waits for the tasks started
//! before it, never for those that steady traffic keeps starting after it.
//! A tool call made from inside one of a registry's observers is not observed
//! again by that registry (an observer that calls tools would otherwise feed
//! itself without end), and a flush from inside one returns at once (it would
//! wait for itself).

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Notify;

use crate::registry::HookRegistry;

tokio::task_local! {
    /// The registry (by the address of its hooks) whose observers the
    /// current task is running.
    static OBSERVING: usize;
}

/// The observer tasks of one registry, by generation.
#[derive(Debug, Default)]
pub(crate) struct ObserverTasks {
    /// The generation new tasks join; a flush starts a new one.
    current: Mutex<Arc<Generation>>,
    /// Woken whenever a task ends.
    ended: Notify,
}

/// Tasks started between two flushes: each holds a clone, so the count of
/// clones tells how many are still running.
#[derive(Debug, Default)]
struct Generation;

/// Held by one observer task: counts it as running until it is dropped, and
/// logs if it is dropped before the observers finished.
pub(crate) struct ObserverTask {
    registry: HookRegistry,
    tool: String,
    finished: bool,
    generation: Option<Arc<Generation>>,
}

impl ObserverTask {
    /// Counts a task that is about to be spawned for a call of `tool`.
    pub(crate) fn start(registry: &HookRegistry, tool: &str) -> ObserverTask {
        let generation = registry
            .hooks
            .tasks
            .current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        ObserverTask {
            registry: registry.clone(),
            tool: tool.to_owned(),
            finished: false,
            generation: Some(generation),
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
        // Let go of the generation first, then wake flushes to count again.
        drop(self.generation.take());
        self.registry.hooks.tasks.ended.notify_waiters();
    }
}

impl HookRegistry {
    /// Waits until every observer task of this registry that had started
    /// when it was called has finished — including those of calls whose
    /// callers dropped them before they finished. Tasks started afterwards
    /// are not waited for, so steady traffic cannot hold it up. Await it
    /// before shutting a runtime down, so that every attempted call's audit
    /// row is written. Called from inside one of this registry's observers it
    /// returns at once.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let registry = hooks::HookRegistry::builder().build().unwrap();
    /// registry.flush_observers().await; // nothing running: returns at once
    /// # });
    /// ```
    pub async fn flush_observers(&self) {
        if self.observing_now() {
            tracing::warn!(
                "flush_observers called from inside an observer: it cannot wait for itself"
            );
            return;
        }
        let tasks = &self.hooks.tasks;
        let flushed =
            std::mem::take(&mut *tasks.current.lock().unwrap_or_else(PoisonError::into_inner));
        loop {
            let ended = tasks.ended.notified();
            tokio::pin!(ended);
            // Registered before the count is read, so a task that ends in
            // between still wakes this waiter.
            ended.as_mut().enable();
            if Arc::strong_count(&flushed) == 1 {
                return;
            }
            ended.await;
        }
    }

    /// True while the current task runs this registry's observers.
    pub(crate) fn observing_now(&self) -> bool {
        OBSERVING
            .try_with(|registry| *registry == self.identity())
            .unwrap_or(false)
    }

    /// Runs `observe` marked as this registry's observers.
    pub(crate) async fn as_observer<F: Future>(&self, observe: F) -> F::Output {
        OBSERVING.scope(self.identity(), observe).await
    }

    fn identity(&self) -> usize {
        Arc::as_ptr(&self.hooks) as usize
    }
}
