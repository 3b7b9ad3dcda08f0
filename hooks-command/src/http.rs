//! HTTP hooks: the hook input POSTed to a URL, the answer read as a
//! command's stdout (Claude Code's `http` handler type).
//!
//! A 2xx answer decides exactly as a command's stdout after exit 0 (JSON
//! output, or plain text); any other status, a connection that fails, an
//! answer over the output cap or one that does not arrive within the
//! timeout is a failure of the hook, so it blocks unless the hook is
//! fail-open.
//!
//! Posting needs the `http` feature (the facade's `http-hooks`); without it
//! a config that gives a hook a `url` is refused when it is loaded.

use std::fmt;
use std::time::Duration;

use super::process::Finished;
#[cfg(feature = "http")]
use super::process::{BYTE_LIMIT, Captured, Exit};

/// Where an HTTP hook posts its input: the URL and the request headers,
/// with `$NAME` / `${NAME}` in header values expanded from the environment
/// when the variable is listed in `allowed_env_vars`.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpEndpoint {
    url: url::Url,
    headers: Vec<(String, String)>,
}

/// Headers show their names only: values often hold tokens.
impl fmt::Debug for HttpEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("HttpEndpoint")
            .field("url", &self.to_string())
            .field("headers", &names)
            .finish()
    }
}

impl HttpEndpoint {
    /// Checks the URL (http or https) and the headers, expanding the
    /// environment variables `allowed_env_vars` lists. A header that names a
    /// variable not in the list, or one that is not set, is an error: a
    /// request without its token would be refused anyway, and a secret is
    /// never read from a variable nobody named.
    pub fn new<I>(url: &str, headers: I, allowed_env_vars: &[String]) -> Result<Self, String>
    where
        I: IntoIterator<Item = (String, String)>,
    {
        #[cfg(not(feature = "http"))]
        {
            // Nothing could post it: refused here, so no hook is built
            // that would fail on every call (or pass, if fail-open).
            let _ = (url, headers, allowed_env_vars);
            Err(NO_HTTP.to_owned())
        }
        #[cfg(feature = "http")]
        Self::checked(url, headers, allowed_env_vars)
    }

    #[cfg(feature = "http")]
    fn checked<I>(url: &str, headers: I, allowed_env_vars: &[String]) -> Result<Self, String>
    where
        I: IntoIterator<Item = (String, String)>,
    {
        let parsed = url::Url::parse(url).map_err(|error| format!("`url` {url:?}: {error}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!("`url` {url:?}: use an http:// or https:// URL"));
        }
        let mut checked = Vec::new();
        for (name, value) in headers {
            let value = expand(&value, allowed_env_vars)
                .map_err(|problem| format!("header `{name}`: {problem}"))?;
            http::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("header `{name}` is not a valid header name"))?;
            http::HeaderValue::from_str(&value)
                .map_err(|_| format!("header `{name}`: the value is not a valid header value"))?;
            checked.push((name, value));
        }
        Ok(HttpEndpoint {
            url: parsed,
            headers: checked,
        })
    }

    /// The host the hook posts to (for names and tables).
    pub fn host(&self) -> &str {
        self.url.host_str().unwrap_or_default()
    }

    /// The URL as configured (credentials included: not for display).
    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    /// Without the `http` feature nothing is posted: the hook fails (and
    /// so blocks unless fail-open). Configs with a `url` are refused at
    /// load time in such a build, so this is never reached from one.
    #[cfg(not(feature = "http"))]
    pub(crate) async fn call(
        &self,
        _input: Vec<u8>,
        _timeout: Duration,
    ) -> Result<Finished, String> {
        Err(NO_HTTP.to_owned())
    }

    /// Posts `input` and reads the answer as a command's outcome: a 2xx
    /// answer is exit 0 with the body as stdout; anything else is `Err`.
    #[cfg(feature = "http")]
    pub(crate) async fn call(&self, input: Vec<u8>, timeout: Duration) -> Result<Finished, String> {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|error| format!("cannot make an HTTP client: {error}"))?;
        let mut request = client
            .post(self.url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(input);
        for (name, value) in &self.headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let mut response = request
            .send()
            .await
            .map_err(|error| describe(error, timeout))?;
        let status = response.status();
        let json = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split(';').next())
            .is_some_and(|kind| kind.trim().eq_ignore_ascii_case("application/json"));
        let mut body = Vec::new();
        let mut dropped = false;
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| describe(error, timeout))?
        {
            let room = BYTE_LIMIT.saturating_sub(body.len());
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                dropped = true;
                break;
            }
            body.extend_from_slice(&chunk);
        }
        // The body of an error page stays out of the message: the message
        // is the block reason the model reads.
        if !status.is_success() {
            return Err(format!("answered HTTP {status}"));
        }
        // A hook answers with a JSON object. An empty or non-JSON 2xx answer
        // is a wrong URL (a health check, a proxy's page), not an "allow".
        let object = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        if !json || !object {
            return Err(format!(
                "answered HTTP {status} without a JSON object (`Content-Type: \
                 application/json`); a hook endpoint answers with the hook output, `{{}}` for \
                 no decision"
            ));
        }
        Ok(Finished {
            exit: Exit::Code(0),
            stdout: Captured::from_bytes(&body, dropped),
            stderr: Captured::default(),
            io_error: None,
        })
    }
}

/// `POST scheme://host[:port]/path`: credentials in the URL and its query
/// stay out, since this text reaches tables, traces and block reasons.
impl fmt::Display for HttpEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = self.url.scheme();
        let host = self.url.host_str().unwrap_or_default();
        let path = self.url.path();
        match self.url.port() {
            Some(port) => write!(f, "POST {scheme}://{host}:{port}{path}"),
            None => write!(f, "POST {scheme}://{host}{path}"),
        }
    }
}

/// Why a build without the `http` feature cannot run an HTTP hook.
#[cfg(not(feature = "http"))]
pub(crate) const NO_HTTP: &str = "HTTP hooks (`url`) need the `http-hooks` feature of the \
     `hooks` crate (`http` of `hooks-runtime`); build with it, or run a `command` instead";

/// A request error as a hook failure, without the URL (it may hold
/// credentials).
#[cfg(feature = "http")]
fn describe(error: reqwest::Error, timeout: Duration) -> String {
    let error = error.without_url();
    if error.is_timeout() {
        format!("did not answer within {timeout:?}")
    } else if error.is_connect() {
        format!("could not be reached: {error}")
    } else {
        format!("failed: {error}")
    }
}

/// `$NAME` and `${NAME}` in `value` replaced by the environment variable,
/// for names `allowed` lists.
#[cfg(feature = "http")]
fn expand(value: &str, allowed: &[String]) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, consumed) = if let Some(braced) = after.strip_prefix('{') {
            let end = braced.find('}').ok_or("`${` without its `}`")?;
            (&braced[..end], end + 2)
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], end)
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
            continue;
        }
        if !allowed.iter().any(|a| a == name) {
            return Err(format!(
                "it names ${name}, which `allowed_env_vars` (`allowedEnvVars`) does not list; \
                 list it to send its value"
            ));
        }
        let value = std::env::var(name)
            .map_err(|_| format!("the environment variable {name} is not set"))?;
        out.push_str(&value);
        rest = &after[consumed..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(all(test, feature = "http"))]
mod tests {
    use super::*;

    #[test]
    fn only_listed_variables_expand() {
        // PATH is set in every test environment.
        let path = std::env::var("PATH").expect("PATH");
        let allowed = vec!["PATH".to_owned()];
        assert_eq!(
            expand("a $PATH b", &allowed).unwrap(),
            format!("a {path} b")
        );
        assert_eq!(expand("${PATH}x", &allowed).unwrap(), format!("{path}x"));
        assert_eq!(expand("cost: 5$ each", &allowed).unwrap(), "cost: 5$ each");
        assert!(
            expand("Bearer $HOME", &allowed)
                .unwrap_err()
                .contains("does not list")
        );
        assert!(expand("${PATH", &allowed).is_err());
        let unset = vec!["HOOKS_SURELY_UNSET_VARIABLE".to_owned()];
        assert!(
            expand("$HOOKS_SURELY_UNSET_VARIABLE", &unset)
                .unwrap_err()
                .contains("not set")
        );
    }

    #[test]
    fn endpoints_refuse_what_they_cannot_send() {
        assert!(HttpEndpoint::new("ftp://x/hook", [], &[]).is_err());
        assert!(HttpEndpoint::new("not a url", [], &[]).is_err());
        assert!(
            HttpEndpoint::new(
                "http://127.0.0.1/hook",
                [("bad name".to_owned(), "v".to_owned())],
                &[]
            )
            .is_err()
        );
        assert!(
            HttpEndpoint::new(
                "http://127.0.0.1/hook",
                [("X".to_owned(), "a\nb".to_owned())],
                &[]
            )
            .is_err()
        );
        let endpoint = HttpEndpoint::new(
            "http://127.0.0.1/hook",
            [("X-Token".to_owned(), "s3cret".to_owned())],
            &[],
        )
        .unwrap();
        assert!(
            !format!("{endpoint:?}").contains("s3cret"),
            "header values stay out of Debug"
        );
    }

    #[test]
    fn credentials_in_the_url_are_never_shown() {
        let endpoint = HttpEndpoint::new(
            "https://user:pw@policy.example:8443/hook?token=t0k",
            [],
            &[],
        )
        .unwrap();
        assert_eq!(
            endpoint.to_string(),
            "POST https://policy.example:8443/hook"
        );
        assert!(!format!("{endpoint:?}").contains("t0k"));
        assert_eq!(endpoint.host(), "policy.example");
    }
}
