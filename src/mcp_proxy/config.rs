//! The proxy's settings: the `mcp_proxy` section of an agent config file.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::error::McpProxyError;
use super::{approval_link, clients, remote};
use crate::config::{AgentConfig, ConfigDuration, ConfigFormat};

/// The key of the proxy's section in an agent config file.
pub const SECTION: &str = "mcp_proxy";

/// How long one upstream `tools/call` may take, unless configured (2 minutes).
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// How many times a dead upstream is started again, unless configured.
pub const DEFAULT_MAX_RESTARTS: u32 = 3;

/// The variables of the proxy's own environment an upstream inherits,
/// besides those `pass_env` names: enough to find and run a program
/// (`npx`, `uvx`, a binary on `PATH`) and nothing that holds a secret.
pub const ENV_ALLOWLIST: [&str; 9] = [
    "PATH",
    "HOME",
    "USER",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "SYSTEMROOT",
];

/// The proxy's settings.
///
/// In an agent config file they sit under `mcp_proxy`, beside the agent's
/// hooks:
///
/// ```yaml
/// agent: desktop
/// hooks:
///   class_hooks: [readonly_guard, audit_log]
/// mcp_proxy:
///   server: filesystem          # the connector: `connector == "filesystem"`
///   command: [npx, -y, "@modelcontextprotocol/server-filesystem", /srv/data]
///   pass_env: [NPM_CONFIG_CACHE]  # inherited besides the allowlist
///   env: { LOG_LEVEL: warn }      # set for the upstream
///   user: alice
///   org: acme
///   call_timeout: 2m
///   max_restarts: 3
/// ```
///
/// ```
/// use hooks::mcp_proxy::McpProxyConfig;
///
/// let config = McpProxyConfig::from_value(&serde_json::json!({
///     "server": "github", "command": ["github-mcp", "stdio"], "org": "acme"
/// })).unwrap();
/// assert_eq!(config.server, "github");
/// assert_eq!(config.command, ["github-mcp", "stdio"]);
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct McpProxyConfig {
    /// The upstream server's name: every call's connector
    /// (`metadata.connector`), so `connector == "github"` matches its tools.
    /// Defaults to `upstream`.
    pub server: String,
    /// The upstream's command and arguments (the CLI's `-- cmd…` replaces it).
    pub command: Vec<String>,
    /// Variables set for the upstream.
    pub env: BTreeMap<String, String>,
    /// Variables of the proxy's environment the upstream inherits, besides
    /// [`ENV_ALLOWLIST`].
    pub pass_env: Vec<String>,
    /// The user every call is made by.
    pub user: String,
    /// The org every call is made in.
    pub org: String,
    /// How long one upstream `tools/call` may take before it fails (closed).
    #[serde(deserialize_with = "ConfigDuration::text")]
    pub call_timeout: Duration,
    /// How many times an upstream that died is started again (on the next
    /// request after it died); 0 never restarts it.
    pub max_restarts: u32,
    /// Tools left out of `tools/list`; a call of one, in any casing, is
    /// blocked before any hook.
    pub hide_tools: Vec<String>,
    /// Browser origins (`https://app.example`, scheme, host and port as a
    /// browser sends them in `Origin`) whose requests the streamable HTTP
    /// endpoint answers, besides a loopback origin naming the very host
    /// and port the request is sent to. A request with any other `Origin`
    /// is refused (403): DNS-rebinding protection. Requests without
    /// `Origin` (not from a browser) are not affected.
    pub allowed_origins: Vec<String>,
    /// The upstream's streamable HTTP endpoint (`https://mcp.example/mcp`),
    /// for a server the proxy does not start; the CLI's `--upstream-url`
    /// replaces it. Only `http` and `https` URLs, without credentials in
    /// them, are accepted; it excludes [`command`](Self::command).
    pub url: String,
    /// The variable of the proxy's environment whose value is sent to the
    /// [`url`](Self::url) upstream as `Authorization: Bearer <value>`. The
    /// config names the variable, never the secret.
    pub bearer_token_env: String,
    /// Headers sent to the [`url`](Self::url) upstream with every request,
    /// their values as written (not for secrets: see
    /// [`header_env`](Self::header_env)).
    pub headers: BTreeMap<String, String>,
    /// Headers sent to the [`url`](Self::url) upstream, each with the value
    /// of the variable of the proxy's environment it names
    /// (`X-Api-Key: SEARCH_API_KEY`).
    pub header_env: BTreeMap<String, String>,
    /// The clients of the streamable HTTP endpoint (`--listen`), each with
    /// its own token and the user and org its calls are made by: the hooks'
    /// `user_id` and `org_id` come from the token a request carries, never
    /// from anything else in it.
    pub clients: Vec<McpClient>,
    /// The instructions the proxy's `initialize` answer carries (clients
    /// put them into the model's system prompt); empty for none. The
    /// upstream's own instructions, which no hook reads, are never passed
    /// on.
    pub instructions: String,
    /// Where a person decides an approval request, `{id}` standing for
    /// the request's id (`https://approvals.example/approvals/requests/{id}`,
    /// the web page's detail). While the approval gate holds a call, a
    /// client that takes URL elicitations is shown this link; the decision
    /// still comes only from the approval channel. Empty: no link.
    pub approval_url: String,
    /// Whether the upstream's tool annotations (`readOnlyHint`,
    /// `destructiveHint`, …) are to be believed: `metadata.annotations_trusted`
    /// in `when`. A server you do not run can call any tool read-only.
    pub trust_annotations: bool,
}

/// One client of the streamable HTTP endpoint: how its token is known and
/// who its calls are made by.
///
/// ```yaml
/// clients:
///   - token_sha256: f0904cebf07ccfa74caeae2a63ce4456a3c422116e8d3195f7a5da0f98a42d35
///     user: alice
///     org: acme
///   - token_env: BOB_MCP_TOKEN   # the token itself, in the proxy's environment
///     user: bob
///     org: acme
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct McpClient {
    /// The SHA-256 digest of the client's token, in hex
    /// (`printf %s "$TOKEN" | sha256sum`). Give a random token of at least
    /// 32 characters: a digest of a guessable one can be reversed.
    #[serde(default)]
    pub token_sha256: Option<String>,
    /// The variable of the proxy's environment that holds the client's token.
    #[serde(default)]
    pub token_env: Option<String>,
    /// The user the client's calls are made by.
    pub user: String,
    /// The org the client's calls are made in.
    #[serde(default)]
    pub org: String,
}

impl Default for McpProxyConfig {
    fn default() -> Self {
        McpProxyConfig {
            server: "upstream".to_owned(),
            command: Vec::new(),
            env: BTreeMap::new(),
            pass_env: Vec::new(),
            user: String::new(),
            org: String::new(),
            call_timeout: DEFAULT_CALL_TIMEOUT,
            max_restarts: DEFAULT_MAX_RESTARTS,
            hide_tools: Vec::new(),
            allowed_origins: Vec::new(),
            url: String::new(),
            bearer_token_env: String::new(),
            headers: BTreeMap::new(),
            header_env: BTreeMap::new(),
            clients: Vec::new(),
            instructions: String::new(),
            approval_url: String::new(),
            trust_annotations: false,
        }
    }
}

impl McpProxyConfig {
    /// Reads the section from its JSON value; the error names the key at fault.
    pub fn from_value(value: &Value) -> Result<Self, McpProxyError> {
        let config = McpProxyConfig::deserialize(value)
            .map_err(|error| McpProxyError::Config(format!("`{SECTION}`: {error}")))?;
        if config.server.trim().is_empty() || config.server.chars().any(char::is_control) {
            return Err(McpProxyError::Config(format!(
                "`{SECTION}.server` must be a name without control characters, such as \
                 `github`: it is every call's connector"
            )));
        }
        if !config.url.is_empty() && !config.command.is_empty() {
            return Err(McpProxyError::Config(format!(
                "`{SECTION}` gives both `command` and `url`: the proxy stands in front of one \
                 upstream, either a command it starts or a URL it connects to; remove one"
            )));
        }
        if !config.url.is_empty() {
            remote::check_url(&config.url)?;
        }
        remote::check_headers(&config)?;
        if !config.approval_url.is_empty() {
            approval_link::check(&config.approval_url)?;
        }
        clients::check(&config.clients)?;
        Ok(config)
    }

    /// Reads an agent config file (`.yaml`, `.yml`, `.json`, `.toml`): its
    /// `mcp_proxy` section, if any (defaults otherwise), and the agent's
    /// hooks from the rest.
    pub fn load(path: impl AsRef<Path>) -> Result<(AgentConfig, McpProxyConfig), McpProxyError> {
        let path = path.as_ref();
        let source = path.display().to_string();
        let mut value = ConfigFormat::read(path)
            .map_err(|error| McpProxyError::Config(format!("{source}: {error}")))?;
        let section = value
            .as_object_mut()
            .and_then(|top| top.remove(SECTION))
            .unwrap_or(Value::Object(Default::default()));
        let proxy = McpProxyConfig::from_value(&section)
            .map_err(|error| McpProxyError::Config(format!("{source}: {error}")))?;
        let base_dir = path.parent().map(|dir| {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())
        });
        let agent = AgentConfig::from_value(&value, &source, base_dir.as_deref())?;
        Ok((agent, proxy))
    }
}
