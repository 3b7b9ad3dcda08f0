//! The generic cell rate algorithm, as pure arithmetic over one key's state.

use std::time::Duration;

use hooks_runtime::config::ConfigDuration;
use serde::Deserialize;

/// `calls` calls per `period`, with bursts of up to `calls`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quota {
    /// Calls allowed per period.
    pub calls: u32,
    /// The period, written `"60s"`, `"1m"`, …
    #[serde(deserialize_with = "ConfigDuration::text")]
    pub period: Duration,
}

impl Default for Quota {
    /// 10 calls per 60 s, as the seed system.
    fn default() -> Self {
        Quota {
            calls: 10,
            period: Duration::from_secs(60),
        }
    }
}

impl Quota {
    /// The spacing between calls at the sustained rate.
    pub fn emission_interval(&self) -> Duration {
        self.period / self.calls.max(1)
    }
}

/// The decision for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Allowed; the new theoretical arrival time (offset from the clock origin) to store.
    Allow {
        /// Store this as the key's new state.
        new_tat: Duration,
    },
    /// Denied; retry after this long. The state is unchanged, so a denied call consumes nothing.
    Deny {
        /// How long until a call would be allowed.
        retry_after: Duration,
    },
}

/// GCRA: with the key's theoretical arrival time `tat` (or `None` when new)
/// and the current time `now` (both offsets from one origin), decides the call.
pub fn admit(quota: &Quota, tat: Option<Duration>, now: Duration) -> Admission {
    let interval = quota.emission_interval();
    let tolerance = quota.period.saturating_sub(interval);
    let tat = tat.map_or(now, |tat| tat.max(now));
    let allow_at = tat.saturating_sub(tolerance);
    if now < allow_at {
        Admission::Deny {
            retry_after: allow_at - now,
        }
    } else {
        Admission::Allow {
            new_tat: tat + interval,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allows_a_burst_then_the_sustained_rate() {
        let quota = Quota {
            calls: 3,
            period: Duration::from_secs(3),
        };
        let mut tat = None;
        let now = Duration::from_secs(100);
        for _ in 0..3 {
            match admit(&quota, tat, now) {
                Admission::Allow { new_tat } => tat = Some(new_tat),
                denied => panic!("burst call denied: {denied:?}"),
            }
        }
        assert_eq!(
            admit(&quota, tat, now),
            Admission::Deny {
                retry_after: Duration::from_secs(1)
            }
        );
        assert!(matches!(
            admit(&quota, tat, now + Duration::from_secs(1)),
            Admission::Allow { .. }
        ));
    }
}
