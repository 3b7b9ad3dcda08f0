//! An in-process limiter state: sharded maps of theoretical arrival times.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher, RandomState};
use std::sync::Mutex;
use std::time::Duration;

use super::gcra::{Admission, Quota, admit};

const SHARDS: usize = 16;

/// Per-(connector, user) GCRA state for one process. Shards keep concurrent
/// calls for different users off one lock; lookups do not allocate once a
/// key exists.
#[derive(Debug)]
pub struct MemoryLimiter {
    shards: Vec<Mutex<HashMap<String, HashMap<String, Duration>>>>,
    hasher: RandomState,
}

impl Default for MemoryLimiter {
    fn default() -> Self {
        MemoryLimiter {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            hasher: RandomState::new(),
        }
    }
}

impl MemoryLimiter {
    /// An empty limiter.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decides one call of `user` on `connector` at `now` (an offset from a
    /// fixed origin). Only allowed calls change the state.
    pub fn check(&self, connector: &str, user: &str, quota: &Quota, now: Duration) -> Admission {
        let mut hasher = self.hasher.build_hasher();
        connector.hash(&mut hasher);
        user.hash(&mut hasher);
        let shard = (hasher.finish() as usize) % SHARDS;
        let mut map = self.shards[shard]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let tat = map
            .get(connector)
            .and_then(|users| users.get(user))
            .copied();
        let admission = admit(quota, tat, now);
        if let Admission::Allow { new_tat } = admission {
            match map.get_mut(connector).and_then(|users| users.get_mut(user)) {
                Some(slot) => *slot = new_tat,
                None => {
                    map.entry(connector.to_owned())
                        .or_default()
                        .insert(user.to_owned(), new_tat);
                }
            }
        }
        admission
    }
}
