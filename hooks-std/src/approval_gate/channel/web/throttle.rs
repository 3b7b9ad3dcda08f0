//! Limits on sign-in attempts and open streams.
//!
//! Sign-in: at most [`LOGIN_CONCURRENCY`] token checks (Argon2, slow on
//! purpose) run at once; a login beyond that is refused at once with 429,
//! never queued — except that [`RETURNING_CONCURRENCY`] more are kept for
//! operators signing in from an address they signed in from before, so a
//! flood of logins from strangers cannot keep them out. A peer address (an
//! IPv6 address counts as its /64, which one host usually has whole) with
//! [`MAX_FAILURES`] failed logins within
//! [`FAILURE_WINDOW`] is refused with 429 for [`FAILURE_BACKOFF`]. So is an
//! operator id with as many failures (from anywhere) — but only from
//! addresses that never signed in as that operator: a stranger's failures
//! cannot lock an operator out of the addresses they signed in from
//! before (remembered for [`KNOWN_FOR`], the last [`MAX_KNOWN_PER_OPERATOR`]).
//!
//! Streams: at most a configured number open per operator and in all.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Token checks running at once.
pub(crate) const LOGIN_CONCURRENCY: usize = 2;

/// Token checks kept besides for an operator signing in from an address
/// they signed in from before.
pub(crate) const RETURNING_CONCURRENCY: usize = 1;

/// Failed logins of one operator id or address that start a backoff.
pub(crate) const MAX_FAILURES: u32 = 5;

/// The window failed logins are counted in.
pub(crate) const FAILURE_WINDOW: Duration = Duration::from_secs(60);

/// How long an operator id or address is refused after too many failures.
pub(crate) const FAILURE_BACKOFF: Duration = Duration::from_secs(60);

/// How long an address an operator signed in from is remembered as theirs.
pub(crate) const KNOWN_FOR: Duration = Duration::from_secs(30 * 24 * 3600);

/// Most addresses remembered per operator; the oldest is forgotten first.
pub(crate) const MAX_KNOWN_PER_OPERATOR: usize = 16;

/// Most operator ids and addresses whose failures are remembered; beyond
/// it the oldest entries are forgotten.
const MAX_TRACKED: usize = 10_000;

#[derive(Debug, Clone, Copy)]
struct Failures {
    since: Instant,
    count: u32,
    blocked_until: Option<Instant>,
}

/// The sign-in limits of one page.
pub(crate) struct LoginThrottle {
    checks: Arc<Semaphore>,
    returning: Arc<Semaphore>,
    failures: Mutex<HashMap<String, Failures>>,
    /// Per operator id: the addresses that signed in as it, and when last.
    known: Mutex<HashMap<String, Vec<(IpAddr, Instant)>>>,
}

impl LoginThrottle {
    pub(crate) fn new() -> Self {
        LoginThrottle {
            checks: Arc::new(Semaphore::new(LOGIN_CONCURRENCY)),
            returning: Arc::new(Semaphore::new(RETURNING_CONCURRENCY)),
            failures: Mutex::default(),
            known: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Failures>> {
        self.failures
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The keys a login is counted under: its operator id and its peer
    /// address (IPv4-mapped IPv6 as IPv4; other IPv6 addresses by their
    /// /64, since one host can use any address of it — except an address
    /// that signed in as this operator before, `known`, which counts alone,
    /// so neighbours in its /64 cannot lock the operator out of it).
    fn keys(operator: &str, peer: Option<SocketAddr>, known: bool) -> [String; 2] {
        let peer = match peer.map(|peer| peer.ip().to_canonical()) {
            None => "unknown".to_owned(),
            Some(IpAddr::V4(address)) => address.to_string(),
            Some(IpAddr::V6(address)) if known => address.to_string(),
            Some(IpAddr::V6(address)) => {
                let [a, b, c, d, ..] = address.segments();
                format!("{a:x}:{b:x}:{c:x}:{d:x}::/64")
            }
        };
        [format!("operator:{operator}"), format!("peer:{peer}")]
    }

    fn known(&self) -> MutexGuard<'_, HashMap<String, Vec<(IpAddr, Instant)>>> {
        self.known
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether `peer` signed in as `operator` within [`KNOWN_FOR`].
    fn is_known(&self, operator: &str, peer: Option<SocketAddr>) -> bool {
        let Some(peer) = peer.map(|peer| peer.ip().to_canonical()) else {
            return false;
        };
        self.known().get(operator).is_some_and(|addresses| {
            addresses
                .iter()
                .any(|(address, at)| *address == peer && at.elapsed() < KNOWN_FOR)
        })
    }

    /// A permit to check a login, or `None` (answer 429) if the address is
    /// backing off, the operator is backing off and the address never
    /// signed in as them, or too many checks are running (the checks kept
    /// for returning operators included, when the address signed in as
    /// this operator before).
    pub(crate) fn admit(
        &self,
        operator: &str,
        peer: Option<SocketAddr>,
    ) -> Option<OwnedSemaphorePermit> {
        let now = Instant::now();
        let known = self.is_known(operator, peer);
        let [operator_key, peer_key] = Self::keys(operator, peer, known);
        let blocked = |key: &String| {
            self.lock()
                .get(key)
                .and_then(|entry| entry.blocked_until)
                .is_some_and(|until| until > now)
        };
        if blocked(&peer_key) || (blocked(&operator_key) && !known) {
            return None;
        }
        Arc::clone(&self.checks)
            .try_acquire_owned()
            .ok()
            .or_else(|| {
                known
                    .then(|| Arc::clone(&self.returning).try_acquire_owned().ok())
                    .flatten()
            })
    }

    /// Records that `peer` signed in as `operator`: from there, the
    /// operator's own lockout no longer applies.
    pub(crate) fn succeeded(&self, operator: &str, peer: Option<SocketAddr>) {
        let Some(peer) = peer.map(|peer| peer.ip().to_canonical()) else {
            return;
        };
        let now = Instant::now();
        let mut known = self.known();
        let addresses = known.entry(operator.to_owned()).or_default();
        addresses.retain(|(address, at)| *address != peer && at.elapsed() < KNOWN_FOR);
        if addresses.len() >= MAX_KNOWN_PER_OPERATOR {
            addresses.remove(0);
        }
        addresses.push((peer, now));
    }

    /// Records a failed login of `operator` from `peer`.
    pub(crate) fn failed(&self, operator: &str, peer: Option<SocketAddr>) {
        let now = Instant::now();
        let known = self.is_known(operator, peer);
        let mut failures = self.lock();
        if failures.len() >= MAX_TRACKED {
            failures.retain(|_, entry| {
                entry.blocked_until.is_some_and(|until| until > now)
                    || now.duration_since(entry.since) < FAILURE_WINDOW
            });
        }
        while failures.len() >= MAX_TRACKED {
            let Some(oldest) = failures
                .iter()
                .min_by_key(|(_, entry)| entry.since)
                .map(|(key, _)| key.clone())
            else {
                break;
            };
            failures.remove(&oldest);
        }
        for key in Self::keys(operator, peer, known) {
            let entry = failures.entry(key).or_insert(Failures {
                since: now,
                count: 0,
                blocked_until: None,
            });
            if now.duration_since(entry.since) >= FAILURE_WINDOW {
                *entry = Failures {
                    since: now,
                    count: 0,
                    blocked_until: None,
                };
            }
            entry.count += 1;
            if entry.count >= MAX_FAILURES {
                entry.blocked_until = Some(now + FAILURE_BACKOFF);
                entry.since = now + FAILURE_BACKOFF;
                entry.count = 0;
            }
        }
    }
}

/// The open streams of one page.
pub(crate) struct StreamSlots {
    per_operator: usize,
    total: usize,
    open: Arc<Mutex<(usize, HashMap<String, usize>)>>,
}

/// An open stream's slot; freed when dropped.
pub(crate) struct StreamSlot {
    operator: String,
    open: Arc<Mutex<(usize, HashMap<String, usize>)>>,
}

impl StreamSlots {
    pub(crate) fn new(per_operator: usize, total: usize) -> Self {
        StreamSlots {
            per_operator,
            total,
            open: Arc::default(),
        }
    }

    /// A slot for a stream of `operator`, or `None` (answer 429) if they
    /// or the page have as many open as allowed.
    pub(crate) fn take(&self, operator: &str) -> Option<StreamSlot> {
        let mut open = self
            .open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let (total, per) = &mut *open;
        let mine = per.get(operator).copied().unwrap_or(0);
        if *total >= self.total || mine >= self.per_operator {
            return None;
        }
        *total += 1;
        per.insert(operator.to_owned(), mine + 1);
        Some(StreamSlot {
            operator: operator.to_owned(),
            open: Arc::clone(&self.open),
        })
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = self
            .open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let (total, per) = &mut *open;
        *total = total.saturating_sub(1);
        if let Some(mine) = per.get_mut(&self.operator) {
            *mine = mine.saturating_sub(1);
            if *mine == 0 {
                per.remove(&self.operator);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(address: &str) -> Option<SocketAddr> {
        Some(SocketAddr::new(address.parse().expect("address"), 443))
    }

    #[test]
    fn a_flood_from_strangers_cannot_keep_a_returning_operator_out() {
        let throttle = LoginThrottle::new();
        throttle.succeeded("alice", at("192.0.2.7"));
        // Strangers hold every ordinary check.
        let held: Vec<_> = (0..LOGIN_CONCURRENCY)
            .map(|n| {
                throttle
                    .admit("mallory", at(&format!("198.51.100.{n}")))
                    .expect("a check")
            })
            .collect();
        assert!(throttle.admit("mallory", at("198.51.100.99")).is_none());
        assert!(
            throttle.admit("bob", at("203.0.113.5")).is_none(),
            "an address new to its operator waits like anyone"
        );
        assert!(
            throttle.admit("alice", at("198.51.100.1")).is_none(),
            "another operator's address is not Alice's"
        );
        let alice = throttle.admit("alice", at("192.0.2.7"));
        assert!(alice.is_some(), "Alice, from where she signed in before");
        assert!(throttle.admit("alice", at("192.0.2.7")).is_none());
        drop((held, alice));
        assert!(throttle.admit("bob", at("203.0.113.5")).is_some());
    }

    #[test]
    fn an_ipv6_host_is_counted_by_its_64_prefix() {
        let throttle = LoginThrottle::new();
        for n in 0..MAX_FAILURES {
            throttle.failed(&format!("guess-{n}"), at(&format!("2001:db8:1:2::{n:x}")));
        }
        assert!(
            throttle
                .admit("guess-x", at("2001:db8:1:2:ffff::1"))
                .is_none(),
            "another address of the same /64 is the same host"
        );
        assert!(throttle.admit("guess-x", at("2001:db8:1:3::1")).is_some());
        // An operator's own address in that /64 is still theirs.
        throttle.succeeded("alice", at("2001:db8:1:2::a11c"));
        assert!(throttle.admit("alice", at("2001:db8:1:2::a11c")).is_some());
        assert!(throttle.admit("alice", at("2001:db8:1:2::b0b")).is_none());
        // IPv4, also when it comes mapped into IPv6, is its own address.
        for n in 0..MAX_FAILURES {
            throttle.failed(&format!("v4-{n}"), at("::ffff:192.0.2.9"));
        }
        assert!(throttle.admit("v4-x", at("192.0.2.9")).is_none());
        assert!(throttle.admit("v4-x", at("192.0.2.10")).is_some());
    }
}
