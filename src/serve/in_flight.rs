//! Calls that passed their pre hooks and wait for their post event, keyed
//! by the client's `tool_use_id`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::PendingToolCall;

/// A call's key: its session and the client's `tool_use_id`, so a post
/// event from another session cannot finish (or spoil) this one.
pub(super) type CallKey = (String, String);

/// The calls in flight. A call that waits longer than the TTL is dropped,
/// which records it once as abandoned (its outcome unknown).
pub(super) struct InFlight {
    calls: Mutex<HashMap<CallKey, (PendingToolCall, Instant)>>,
    ttl: Duration,
    capacity: usize,
    per_session: usize,
}

/// Why a call could not be held.
pub(super) enum Refused {
    /// Another call with this id is in flight.
    Duplicate,
    /// As many calls as allowed are in flight.
    Full,
    /// As many calls of this session as allowed are in flight.
    SessionFull,
}

impl InFlight {
    /// At most `capacity` calls in all, `per_session` of one session.
    pub(super) fn new(ttl: Duration, capacity: usize, per_session: usize) -> Self {
        InFlight {
            calls: Mutex::new(HashMap::new()),
            ttl,
            capacity,
            per_session,
        }
    }

    /// Holds `call` until its post event. A refused call is dropped (and so
    /// recorded as abandoned) outside the lock.
    pub(super) fn hold(&self, id: CallKey, call: PendingToolCall) -> Result<(), Refused> {
        let expired = self.take_expired();
        let mut calls = self.lock();
        let (result, refused_call) = if calls.contains_key(&id) {
            (Err(Refused::Duplicate), Some(call))
        } else if calls.len() >= self.capacity {
            (Err(Refused::Full), Some(call))
        } else if calls.keys().filter(|(session, _)| *session == id.0).count() >= self.per_session {
            (Err(Refused::SessionFull), Some(call))
        } else {
            calls.insert(id, (call, Instant::now()));
            (Ok(()), None)
        };
        drop(calls);
        drop(refused_call);
        drop(expired);
        result
    }

    /// Whether a call with this id waits.
    pub(super) fn contains(&self, id: &CallKey) -> bool {
        self.lock().contains_key(id)
    }

    /// The call waiting for this post event, if any.
    pub(super) fn take(&self, id: &CallKey) -> Option<PendingToolCall> {
        let expired = self.take_expired();
        let call = self.lock().remove(id).map(|(call, _)| call);
        drop(expired);
        call
    }

    /// Drops every call past its TTL (recording each as abandoned).
    pub(super) fn sweep(&self) {
        drop(self.take_expired());
    }

    /// The calls past their TTL, removed from the map; dropped by the
    /// caller after the lock is released (dropping one runs its observers).
    fn take_expired(&self) -> Vec<PendingToolCall> {
        let mut calls = self.lock();
        let now = Instant::now();
        let expired: Vec<CallKey> = calls
            .iter()
            .filter(|(_, (_, since))| now.duration_since(*since) > self.ttl)
            .map(|(id, _)| id.clone())
            .collect();
        expired
            .iter()
            .filter_map(|id| calls.remove(id).map(|(call, _)| call))
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<CallKey, (PendingToolCall, Instant)>> {
        // A panic while the map was held cannot leave it half-changed (each
        // change is one insert or remove), so a poisoned lock is still good.
        self.calls
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
