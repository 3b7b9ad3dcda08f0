//! [`ChatHttp`]: a chat platform's HTTP API as its channel calls it.

use axum::http::header::CONTENT_TYPE;
use reqwest::{RequestBuilder, StatusCode};
use serde_json::Value;

use super::limits::ChatLimits;
use super::rate_limit::RateLimitPolicy;
use crate::approval_gate::channel::ChannelError;

const JSON_UTF8: &str = "application/json; charset=utf-8";

/// One HTTP client with the channel's request timeout, sending JSON bodies
/// and retrying a rate-limited call as the platform's [`RateLimitPolicy`]
/// says, at most `max_rate_limit_retries` times. What an answer means is
/// the platform's to read.
pub(crate) struct ChatHttp {
    platform: &'static str,
    base: String,
    http: reqwest::Client,
    limits: ChatLimits,
    rate_limit: RateLimitPolicy,
}

/// A platform's answer that was not rate limited.
pub(crate) struct Answer {
    /// The HTTP status.
    pub(crate) status: StatusCode,
    /// The body as sent.
    pub(crate) bytes: Vec<u8>,
    /// The body, when it is a JSON object.
    pub(crate) object: Option<Value>,
}

impl ChatHttp {
    /// A client for `platform` (its name as people write it, for messages)
    /// at `base`; `kind` is the channel's, for the error.
    pub(crate) fn new(
        kind: &'static str,
        platform: &'static str,
        base: &str,
        limits: ChatLimits,
        rate_limit: RateLimitPolicy,
    ) -> Result<Self, ChannelError> {
        let http = reqwest::Client::builder()
            .timeout(limits.request_timeout)
            .build()
            .map_err(|error| {
                ChannelError::new(
                    kind,
                    format!(
                        "could not build the HTTP client ({error}); check the TLS setup of this host"
                    ),
                )
            })?;
        Ok(ChatHttp {
            platform,
            base: base.to_owned(),
            http,
            limits,
            rate_limit,
        })
    }

    /// Sends `body` as JSON on the request `request` builds, again while
    /// `rate_limited` says the answer is a rate limit. `Err` says what went
    /// wrong and what to do (a network failure, a limit that outlasted the
    /// retries or announced a longer wait than the channel's longest).
    pub(crate) async fn send_json(
        &self,
        request: impl Fn(&reqwest::Client) -> RequestBuilder,
        body: &Value,
        rate_limited: impl Fn(StatusCode, Option<&Value>) -> bool,
    ) -> Result<Answer, String> {
        let payload = serde_json::to_vec(body)
            .map_err(|error| format!("could not encode the request ({error})"))?;
        let mut retries = 0u32;
        loop {
            let response = request(&self.http)
                .header(CONTENT_TYPE, JSON_UTF8)
                .body(payload.clone())
                .send()
                .await
                .map_err(|error| self.transport(&error))?;
            let status = response.status();
            let headers = response.headers().clone();
            let bytes = response
                .bytes()
                .await
                .map_err(|error| self.transport(&error))?
                .to_vec();
            let object = serde_json::from_slice(&bytes).ok().filter(Value::is_object);
            if !rate_limited(status, object.as_ref()) {
                return Ok(Answer {
                    status,
                    bytes,
                    object,
                });
            }
            let platform = self.platform;
            if retries >= self.limits.max_rate_limit_retries {
                return Err(format!(
                    "still rate limited by {platform} (HTTP {}) after {retries} retries; slow \
                     down approval traffic or raise max_rate_limit_retries",
                    status.as_u16()
                ));
            }
            let wait = self
                .rate_limit
                .wait(&headers, retries)
                .map_err(|announced| {
                    format!(
                        "rate limited by {platform} (HTTP {}), which allows the next request in \
                     {announced} seconds, longer than the {} seconds this channel waits; slow \
                     down approval traffic and try again later",
                        status.as_u16(),
                        self.rate_limit.max_wait.as_secs()
                    )
                })?;
            tracing::debug!(?wait, retries, platform, "rate limited, waiting");
            tokio::time::sleep(wait).await;
            retries += 1;
        }
    }

    fn transport(&self, error: &reqwest::Error) -> String {
        let base = &self.base;
        if error.is_timeout() {
            format!(
                "{base} did not answer within {:?}; check network access or raise request_timeout",
                self.limits.request_timeout
            )
        } else {
            format!("could not reach {base} ({error}); check base_url and network access")
        }
    }
}
