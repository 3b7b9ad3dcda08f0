//! [`RateLimitPolicy`]: how long a chat channel waits before retrying a
//! rate-limited call.

use std::time::Duration;

use axum::http::HeaderMap;

/// How a platform announces when its rate limit resets.
// A build with one chat platform uses that platform's variants only.
#[cfg_attr(not(all(feature = "feishu", feature = "slack")), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Announced {
    /// Whole seconds only, as HTTP's `Retry-After` delta-seconds (Slack):
    /// anything else (a date, a fraction, a sign) counts as unannounced.
    WholeSeconds,
    /// Seconds, a fraction allowed (Feishu's `x-ogw-ratelimit-reset`).
    Seconds,
}

/// What to do when the platform asks for a longer wait than the channel's
/// longest.
#[cfg_attr(not(all(feature = "feishu", feature = "slack")), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LongerWait {
    /// Wait the longest and retry (a retry may be refused again).
    Cap,
    /// Fail the call at once: a sooner retry would certainly be refused.
    Fail,
}

/// A platform's rate-limit rules, as its channel follows them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RateLimitPolicy {
    /// The header announcing the wait.
    pub(crate) header: &'static str,
    /// How that header writes it.
    pub(crate) announced: Announced,
    /// The first wait when nothing is announced; it doubles on each retry.
    pub(crate) initial_backoff: Duration,
    /// The longest wait.
    pub(crate) max_wait: Duration,
    /// What a longer announced wait does.
    pub(crate) longer: LongerWait,
}

impl RateLimitPolicy {
    /// The wait before retry number `retries` (0-based): the announced
    /// wait, or the back-off when none is announced. `Err` holds the
    /// announced seconds (rounded up) when they exceed the longest wait and
    /// the policy fails such calls.
    pub(crate) fn wait(&self, headers: &HeaderMap, retries: u32) -> Result<Duration, u64> {
        match self.announced_secs(headers) {
            Some(secs) if secs > self.max_wait.as_secs_f64() => match self.longer {
                LongerWait::Cap => Ok(self.max_wait),
                // Finite and non-negative by the header parse.
                LongerWait::Fail => Err(secs.ceil() as u64),
            },
            Some(secs) => Ok(Duration::from_secs_f64(secs)),
            None => Ok(self.backoff(retries)),
        }
    }

    /// `initial_backoff`, doubled per retry, at most `max_wait`.
    fn backoff(&self, retries: u32) -> Duration {
        self.initial_backoff
            .saturating_mul(2u32.saturating_pow(retries))
            .min(self.max_wait)
    }

    fn announced_secs(&self, headers: &HeaderMap) -> Option<f64> {
        let text = headers.get(self.header)?.to_str().ok()?.trim();
        match self.announced {
            Announced::WholeSeconds => text.parse::<u64>().ok().map(|secs| secs as f64),
            Announced::Seconds => text
                .parse::<f64>()
                .ok()
                .filter(|secs| secs.is_finite() && *secs >= 0.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    const SLACK: RateLimitPolicy = RateLimitPolicy {
        header: "retry-after",
        announced: Announced::WholeSeconds,
        initial_backoff: Duration::from_secs(1),
        max_wait: Duration::from_secs(30),
        longer: LongerWait::Fail,
    };

    const FEISHU: RateLimitPolicy = RateLimitPolicy {
        header: "x-ogw-ratelimit-reset",
        announced: Announced::Seconds,
        initial_backoff: Duration::from_millis(500),
        max_wait: Duration::from_secs(30),
        longer: LongerWait::Cap,
    };

    fn wait(
        policy: &RateLimitPolicy,
        announced: Option<&'static str>,
        retries: u32,
    ) -> Result<Duration, u64> {
        let mut headers = HeaderMap::new();
        if let Some(value) = announced {
            headers.insert(policy.header, HeaderValue::from_static(value));
        }
        policy.wait(&headers, retries)
    }

    #[test]
    fn unannounced_waits_double_up_to_the_longest() {
        let secs = |n| Ok(Duration::from_secs(n));
        for (policy, retries, expected) in [
            (SLACK, 0, secs(1)),
            (SLACK, 2, secs(4)),
            (SLACK, 40, secs(30)),
            (FEISHU, 0, Ok(Duration::from_millis(500))),
            (FEISHU, 2, secs(2)),
            (FEISHU, 40, secs(30)),
        ] {
            assert_eq!(
                wait(&policy, None, retries),
                expected,
                "{policy:?} {retries}"
            );
        }
    }

    #[test]
    fn announced_waits_are_kept_capped_or_refused() {
        let secs = |n| Ok(Duration::from_secs(n));
        for (policy, announced, expected) in [
            (SLACK, "2", secs(2)),
            (SLACK, "30", secs(30)),
            (SLACK, "3600", Err(3600)),
            (FEISHU, "2", secs(2)),
            (FEISHU, "0.25", Ok(Duration::from_millis(250))),
            (FEISHU, "3600", secs(30)),
        ] {
            assert_eq!(
                wait(&policy, Some(announced), 0),
                expected,
                "{policy:?} {announced}"
            );
        }
    }

    #[test]
    fn an_unreadable_announcement_falls_back_to_the_backoff() {
        for odd in [
            "-1",
            "1.5",
            "Wed, 21 Oct 2026 07:28:00 GMT",
            "",
            "99999999999999999999999",
        ] {
            assert_eq!(
                wait(&SLACK, Some(odd), 0),
                Ok(Duration::from_secs(1)),
                "{odd}"
            );
        }
        for odd in ["-1", "NaN", "inf", "soon"] {
            assert_eq!(
                wait(&FEISHU, Some(odd), 1),
                Ok(Duration::from_secs(1)),
                "{odd}"
            );
        }
    }
}
