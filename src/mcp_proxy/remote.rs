//! An upstream reached over streamable HTTP (`--upstream-url`,
//! `mcp_proxy.url`): its URL checked, its headers (secrets read from the
//! proxy's environment, never from the config), its transport.

use std::collections::HashMap;
use std::sync::Arc;

use axum::http::{HeaderName, HeaderValue};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::client_side_sse::FixedInterval;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use super::config::{McpProxyConfig, SECTION};
use super::error::McpProxyError;

/// Headers the MCP transport sets itself, or that have a key of their own.
const RESERVED: [&str; 6] = [
    "accept",
    "content-type",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
    "authorization",
];

/// How many times a broken event stream from the upstream is resumed
/// (a second apart) before what waits on it fails.
const STREAM_RETRIES: usize = 3;

/// Whether `url` is one the proxy can connect to: `http` or `https`, with a
/// host, without a user name or password.
pub(super) fn check_url(url: &str) -> Result<(), McpProxyError> {
    let parsed = reqwest::Url::parse(url).map_err(|error| {
        McpProxyError::Config(format!(
            "the upstream URL is not a URL ({error}); give the server's streamable HTTP \
             endpoint with its scheme, such as `http://127.0.0.1:3001/mcp`"
        ))
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(McpProxyError::Config(format!(
            "the upstream URL `{}` is not an http or https URL: the proxy speaks streamable \
             HTTP to a server it does not start (for a local command, give it after `--` \
             or as `{SECTION}.command`)",
            shown(url)
        )));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(McpProxyError::Config(format!(
            "the upstream URL `{}` names no host",
            shown(url)
        )));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(McpProxyError::Config(format!(
            "the upstream URL `{}` carries a user name or password: name the variable that holds \
             the token in `{SECTION}.bearer_token_env` (or `{SECTION}.header_env`) instead",
            shown(url)
        )));
    }
    Ok(())
}

/// `url` as messages and logs show it: scheme, host and port, with `/…`
/// for a path or query. Hosted servers often carry the key in either
/// (`https://host/mcp/<key>/sse`), and these messages reach the model and
/// the audit log.
pub(super) fn shown(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(parsed) => {
            let host = parsed.host_str().unwrap_or_default();
            let port = parsed
                .port()
                .map(|port| format!(":{port}"))
                .unwrap_or_default();
            let rest = if parsed.path().len() > 1 || parsed.query().is_some() {
                "/…"
            } else {
                ""
            };
            format!("{}://{host}{port}{rest}", parsed.scheme())
        }
        Err(_) => "(not a URL)".to_owned(),
    }
}

/// `text` with `url` (as given, and as the HTTP client writes it) replaced
/// by [`shown`]`(url)`, and its path and query, wherever they appear alone,
/// by `…`: an error of the HTTP client names the whole URL.
pub(super) fn scrubbed(url: &str, text: String) -> String {
    let shown = shown(url);
    let mut text = text.replace(url, &shown);
    if let Ok(parsed) = reqwest::Url::parse(url) {
        text = text.replace(parsed.as_str(), &shown);
        if let Some(query) = parsed.query().filter(|query| !query.is_empty()) {
            text = text.replace(query, "…");
        }
        if parsed.path().len() > 1 {
            text = text.replace(parsed.path(), "/…");
        }
    }
    text
}

/// Whether the configured header names are headers the proxy may send.
pub(super) fn check_headers(config: &McpProxyConfig) -> Result<(), McpProxyError> {
    let named = config
        .headers
        .keys()
        .map(|name| (name, "headers"))
        .chain(config.header_env.keys().map(|name| (name, "header_env")));
    for (name, key) in named {
        let parsed = HeaderName::try_from(name.as_str()).map_err(|_| {
            McpProxyError::Config(format!(
                "`{SECTION}.{key}`: `{name}` is not an HTTP header name"
            ))
        })?;
        if RESERVED.contains(&parsed.as_str()) {
            return Err(McpProxyError::Config(format!(
                "`{SECTION}.{key}`: the proxy does not send `{name}` as configured: the MCP \
                 transport sets it{}",
                if parsed.as_str() == "authorization" {
                    " from the variable `bearer_token_env` names"
                } else {
                    ""
                }
            )));
        }
    }
    for (name, value) in &config.headers {
        if HeaderValue::try_from(value.as_str()).is_err() {
            return Err(McpProxyError::Config(format!(
                "`{SECTION}.headers`: the value of `{name}` is not a valid header value"
            )));
        }
    }
    Ok(())
}

/// What the proxy sends the upstream besides MCP: the bearer token and
/// the headers, their secrets read from the environment (`lookup`).
pub(super) struct Credentials {
    bearer: Option<String>,
    headers: HashMap<HeaderName, HeaderValue>,
}

impl Credentials {
    /// Reads the variables the config names. A variable named but unset
    /// (or empty) is an error that names it, never its value.
    pub(super) fn read(
        config: &McpProxyConfig,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Credentials, McpProxyError> {
        let variable =
            |key: &str, name: &str| {
                lookup(name).filter(|value| !value.is_empty()).ok_or_else(|| {
                McpProxyError::Config(format!(
                    "`{SECTION}.{key}` names the variable `{name}`, which is not set in the \
                     proxy's environment: set it to the secret the upstream expects"
                ))
            })
            };
        let bearer = match config.bearer_token_env.as_str() {
            "" => None,
            name => Some(variable("bearer_token_env", name)?),
        };
        let mut headers = HashMap::new();
        for (name, value) in &config.headers {
            let (Ok(name), Ok(value)) = (
                HeaderName::try_from(name.as_str()),
                HeaderValue::try_from(value.as_str()),
            ) else {
                return Err(McpProxyError::Config(format!(
                    "`{SECTION}.headers`: `{name}` cannot be sent"
                )));
            };
            headers.insert(name, value);
        }
        for (header, env) in &config.header_env {
            let value = variable("header_env", env)?;
            let (Ok(name), Ok(mut value)) = (
                HeaderName::try_from(header.as_str()),
                HeaderValue::try_from(value),
            ) else {
                return Err(McpProxyError::Config(format!(
                    "`{SECTION}.header_env`: the value of `{env}` cannot be sent as `{header}` \
                     (not a valid header value)"
                )));
            };
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        if let Some(bearer) = &bearer
            && HeaderValue::try_from(format!("Bearer {bearer}")).is_err()
        {
            return Err(McpProxyError::Config(format!(
                "`{SECTION}.bearer_token_env`: the value of `{}` is not a valid bearer token",
                config.bearer_token_env
            )));
        }
        Ok(Credentials { bearer, headers })
    }
}

/// The transport to the upstream at `url`, with `credentials`.
pub(super) fn transport(
    url: &str,
    credentials: &Credentials,
) -> StreamableHttpClientTransport<impl rmcp::transport::streamable_http_client::StreamableHttpClient>
{
    install_crypto();
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned())
        .custom_headers(credentials.headers.clone());
    // rmcp resumes a broken event stream forever by default: a call in
    // flight when the server died would wait for `call_timeout`. A few
    // tries a second apart cover a stream the server closes on purpose;
    // after them the call fails.
    let mut retry = FixedInterval::default();
    retry.max_times = Some(STREAM_RETRIES);
    config.retry_config = Arc::new(retry);
    if let Some(bearer) = &credentials.bearer {
        config = config.auth_header(bearer.clone());
    }
    StreamableHttpClientTransport::from_config(config)
}

/// rmcp's HTTP client uses rustls without a crypto provider of its own:
/// ring's is installed for the process unless one already is.
fn install_crypto() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may have installed one meanwhile: either will do.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_http_urls_without_credentials_are_accepted() {
        for good in [
            "http://127.0.0.1:3001/mcp",
            "https://mcp.example/v1/mcp?tenant=a",
        ] {
            check_url(good).expect(good);
        }
        for (bad, why) in [
            ("file:///etc/passwd", "not an http or https URL"),
            ("ws://127.0.0.1/mcp", "not an http or https URL"),
            ("127.0.0.1:3001/mcp", "is not a URL"),
            ("not a url", "is not a URL"),
            (
                "https://alice:hunter2@mcp.example/mcp",
                "user name or password",
            ),
        ] {
            let error = check_url(bad).expect_err(bad).to_string();
            assert!(error.contains(why), "{bad}: {error}");
            assert!(!error.contains("hunter2"), "{error}");
        }
    }

    #[test]
    fn a_url_is_shown_without_its_path_query_or_credentials() {
        assert_eq!(
            shown("https://mcp.example:8443/mcp?key=s3cret"),
            "https://mcp.example:8443/…"
        );
        assert_eq!(
            shown("https://actions.example/mcp/sk-s3cret/sse"),
            "https://actions.example/…"
        );
        assert_eq!(shown("http://127.0.0.1:3001/"), "http://127.0.0.1:3001");
    }

    #[test]
    fn an_error_that_names_the_url_names_it_as_shown() {
        let url = "http://127.0.0.1:3001/mcp?key=s3cret";
        let error = format!("error sending request for url ({url}): connection refused");
        let text = scrubbed(url, error);
        assert!(!text.contains("s3cret"), "{text}");
        assert!(text.contains("http://127.0.0.1:3001/…"), "{text}");
        // As the HTTP client writes a URL without a path.
        let text = scrubbed(
            "http://mcp.example?key=s3cret",
            "for url (http://mcp.example/?key=s3cret)".to_owned(),
        );
        assert!(!text.contains("s3cret"), "{text}");
        // A key in the path, named alone or in another spelling of the URL.
        let url = "https://actions.example/mcp/sk-s3cret/sse";
        for said in [
            format!("for url ({url})"),
            "404 for /mcp/sk-s3cret/sse".to_owned(),
            "for url (https://ACTIONS.example:443/mcp/sk-s3cret/sse)".to_owned(),
        ] {
            let text = scrubbed(url, said);
            assert!(!text.contains("sk-s3cret"), "{text}");
        }
    }

    #[test]
    fn secrets_come_from_the_environment_and_errors_never_show_them() {
        let config = McpProxyConfig::from_value(&json!({
            "url": "https://mcp.example/mcp",
            "bearer_token_env": "UPSTREAM_TOKEN",
            "headers": {"X-Tenant": "acme"},
            "header_env": {"X-Api-Key": "UPSTREAM_KEY"},
        }))
        .expect("config");
        let env = |name: &str| match name {
            "UPSTREAM_TOKEN" => Some("tok-123".to_owned()),
            "UPSTREAM_KEY" => Some("key-456".to_owned()),
            _ => None,
        };
        let credentials = Credentials::read(&config, env).expect("credentials");
        assert_eq!(credentials.bearer.as_deref(), Some("tok-123"));
        assert_eq!(credentials.headers.len(), 2);
        let key = &credentials.headers[&HeaderName::from_static("x-api-key")];
        assert!(key.is_sensitive());

        let error = Credentials::read(&config, |_| None)
            .err()
            .expect("unset")
            .to_string();
        assert!(error.contains("UPSTREAM_TOKEN"), "{error}");

        for (header, key) in [
            ("Authorization", "headers"),
            ("mcp-session-id", "header_env"),
            ("bad header", "headers"),
        ] {
            let error = McpProxyConfig::from_value(&json!({
                "url": "https://mcp.example/mcp",
                key: {header: "x"},
            }))
            .expect_err(header)
            .to_string();
            assert!(error.contains(header), "{error}");
        }
    }

    #[test]
    fn a_command_and_a_url_together_are_refused() {
        let error = McpProxyConfig::from_value(&json!({
            "url": "https://mcp.example/mcp",
            "command": ["server"],
        }))
        .expect_err("both");
        assert!(
            error.to_string().contains("both `command` and `url`"),
            "{error}"
        );
    }
}
