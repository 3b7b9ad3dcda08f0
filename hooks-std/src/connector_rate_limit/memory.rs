//! An in-process limiter state: sharded maps of theoretical arrival times
//! that forget a key once its bucket is full again.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher, RandomState};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::gcra::{Admission, Quota, admit};
use crate::text::fold_identifier;

const SHARDS: usize = 16;

/// A shard is not swept before it holds this many keys, unless it has been
/// idle for a whole period.
const MIN_SWEEP_KEYS: usize = 1024;

/// Per-(connector, user) GCRA state for one process. Shards keep concurrent
/// calls for different users off one lock; lookups do not allocate once a
/// key exists.
///
/// A key whose theoretical arrival time has passed has a full bucket again —
/// exactly the state of a key never seen — so it is dropped. A shard is swept
/// when its key count has doubled since its last sweep, or when the longest
/// period seen has passed since then; each sweep is linear in the shard, and
/// the doubling rule makes that constant per call on average. Memory is
/// therefore bounded by the keys active within one period (at most twice
/// that between sweeps), not by every key ever seen.
#[derive(Debug)]
pub struct MemoryLimiter {
    shards: Vec<Mutex<Shard>>,
    hasher: RandomState,
    /// The longest quota period seen, in nanoseconds: after that long without
    /// a call, every key of a shard is evictable.
    longest_period_ns: AtomicU64,
}

#[derive(Debug, Default)]
struct Shard {
    buckets: HashMap<String, HashMap<String, Duration>>,
    keys: usize,
    keys_after_sweep: usize,
    last_sweep: Duration,
}

impl Default for MemoryLimiter {
    fn default() -> Self {
        MemoryLimiter {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            hasher: RandomState::new(),
            longest_period_ns: AtomicU64::new(0),
        }
    }
}

impl MemoryLimiter {
    /// An empty limiter.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decides one call of `user` on `connector` at `now` (an offset from a
    /// fixed origin). Only allowed calls change the state. Both names are
    /// compared [folded](fold_identifier), as the database backend compares
    /// them.
    pub fn check(&self, connector: &str, user: &str, quota: &Quota, now: Duration) -> Admission {
        self.decide(connector, user, quota, now, true)
    }

    /// What [`check`](Self::check) would decide, without counting the call:
    /// the state is left as it is (for dry runs).
    pub fn peek(&self, connector: &str, user: &str, quota: &Quota, now: Duration) -> Admission {
        self.decide(connector, user, quota, now, false)
    }

    fn decide(
        &self,
        connector: &str,
        user: &str,
        quota: &Quota,
        now: Duration,
        count: bool,
    ) -> Admission {
        let connector = fold_identifier(connector);
        let user = fold_identifier(user);
        let mut hasher = self.hasher.build_hasher();
        connector.hash(&mut hasher);
        user.hash(&mut hasher);
        let shard = (hasher.finish() as usize) % SHARDS;
        let mut shard = self.shards[shard]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if count {
            let period_ns = u64::try_from(quota.period.as_nanos()).unwrap_or(u64::MAX);
            let longest = self
                .longest_period_ns
                .fetch_max(period_ns, Ordering::Relaxed)
                .max(period_ns);
            shard.sweep_if_due(now, Duration::from_nanos(longest));
        }
        let tat = shard
            .buckets
            .get(connector.as_ref())
            .and_then(|users| users.get(user.as_ref()))
            .copied();
        let admission = admit(quota, tat, now);
        if count && let Admission::Allow { new_tat } = admission {
            shard.store(&connector, &user, new_tat);
        }
        admission
    }

    /// How many (connector, user) keys are held: those whose bucket was not
    /// yet full again at their shard's last sweep.
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|shard| {
                shard
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .keys
            })
            .sum()
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Shard {
    fn store(&mut self, connector: &str, user: &str, tat: Duration) {
        if let Some(slot) = self
            .buckets
            .get_mut(connector)
            .and_then(|users| users.get_mut(user))
        {
            *slot = tat;
            return;
        }
        self.buckets
            .entry(connector.to_owned())
            .or_default()
            .insert(user.to_owned(), tat);
        self.keys += 1;
    }

    /// Sweeps when the shard has doubled since its last sweep, or when a whole
    /// `longest_period` has passed since then (so an idle shard empties on
    /// its next call).
    fn sweep_if_due(&mut self, now: Duration, longest_period: Duration) {
        if self.keys == 0 {
            self.last_sweep = now;
            return;
        }
        let grown = self.keys >= MIN_SWEEP_KEYS.max(2 * self.keys_after_sweep);
        let idle = now.saturating_sub(self.last_sweep) >= longest_period;
        if grown || idle {
            self.sweep(now);
        }
    }

    /// Drops every key whose bucket is full again (`tat <= now`).
    fn sweep(&mut self, now: Duration) {
        let mut kept = 0;
        self.buckets.retain(|_, users| {
            users.retain(|_, tat| *tat > now);
            kept += users.len();
            !users.is_empty()
        });
        self.keys = kept;
        self.keys_after_sweep = kept;
        self.last_sweep = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_bucket_is_forgotten_and_behaves_as_new() {
        let limiter = MemoryLimiter::new();
        let quota = Quota {
            calls: 2,
            period: Duration::from_secs(2),
        };
        let t0 = Duration::from_secs(10);
        assert!(matches!(
            limiter.check("oa", "u", &quota, t0),
            Admission::Allow { .. }
        ));
        assert!(matches!(
            limiter.check("oa", "u", &quota, t0),
            Admission::Allow { .. }
        ));
        assert!(matches!(
            limiter.check("oa", "u", &quota, t0),
            Admission::Deny { .. }
        ));
        assert_eq!(limiter.len(), 1);
        // A whole period later the shard is swept on its next call; the key's
        // bucket is full, so forgetting it changes no decision.
        let later = t0 + Duration::from_secs(2);
        assert!(matches!(
            limiter.check("oa", "u", &quota, later),
            Admission::Allow { .. }
        ));
        assert!(matches!(
            limiter.check("oa", "u", &quota, later),
            Admission::Allow { .. }
        ));
        assert!(matches!(
            limiter.check("oa", "u", &quota, later),
            Admission::Deny { .. }
        ));
    }

    #[test]
    fn spellings_share_a_bucket() {
        let limiter = MemoryLimiter::new();
        let quota = Quota {
            calls: 1,
            period: Duration::from_secs(60),
        };
        let now = Duration::from_secs(1);
        assert!(matches!(
            limiter.check("OA", "Alice", &quota, now),
            Admission::Allow { .. }
        ));
        assert!(matches!(
            limiter.check("ｏａ", "ALICE", &quota, now),
            Admission::Deny { .. }
        ));
        assert_eq!(limiter.len(), 1);
    }
}
