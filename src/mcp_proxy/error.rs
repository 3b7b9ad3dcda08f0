//! Why the proxy did not start.

use crate::config::AgentConfigErrors;

/// Why [`McpProxy`](super::McpProxy) did not start, or stopped serving.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpProxyError {
    /// The agent config (or its `mcp_proxy` section) is wrong.
    #[error("{0}")]
    Config(String),
    /// The agent's hooks could not be built from the config.
    #[error("the agent's hooks could not be built:\n{0}")]
    Agent(#[from] AgentConfigErrors),
    /// No upstream command or URL was given.
    #[error(
        "no upstream MCP server to put the proxy in front of: give its command after `--` \
         (`hooks mcp-proxy --config agent.yaml -- npx -y @modelcontextprotocol/server-everything`) \
         or as `mcp_proxy.command` in the config, or its streamable HTTP endpoint with \
         `--upstream-url URL` or `mcp_proxy.url`"
    )]
    NoUpstream,
    /// The upstream command could not be started.
    #[error(
        "cannot start the upstream MCP server `{command}`: {source}; check that the command \
         exists and is on PATH (the upstream gets a scrubbed environment: name extra variables \
         under `mcp_proxy.pass_env` or `mcp_proxy.env`)"
    )]
    Spawn {
        /// The command as configured.
        command: String,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The upstream started but did not complete the MCP handshake.
    #[error(
        "the upstream MCP server `{command}` did not complete the MCP handshake: {message}; \
         check that the command starts an MCP server speaking stdio"
    )]
    Initialize {
        /// The command as configured.
        command: String,
        /// What went wrong.
        message: String,
    },
    /// The upstream at a URL did not complete the MCP handshake (it is not
    /// running, not reachable, refused the proxy's credentials, or is not an
    /// MCP server).
    #[error(
        "the upstream MCP server at {url} did not complete the MCP handshake: {message}; check \
         that it is running and reachable, that the URL is its streamable HTTP endpoint (often \
         ending in /mcp), and that the token it expects is in the variable \
         `mcp_proxy.bearer_token_env` names"
    )]
    Connect {
        /// The URL, without its query.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// The upstream's tool list could not be read.
    #[error("the upstream MCP server did not list its tools: {0}; the proxy does not start")]
    ListTools(String),
    /// The MCP client on the other side did not complete the handshake.
    #[error("the MCP client did not complete the handshake: {0}")]
    Client(String),
    /// No token, on an address other hosts can reach.
    #[error(
        "refusing to serve MCP over HTTP without a token on {0}, which is not a loopback \
         address: set a token (HOOKS_MCP_PROXY_TOKEN for the CLI) or listen on 127.0.0.1"
    )]
    TokenRequired(std::net::SocketAddr),
    /// A token that is empty (or only spaces) would let anyone in.
    #[error(
        "refusing to serve MCP over HTTP with an empty bearer token: give a token of at least \
         one visible character (HOOKS_MCP_PROXY_TOKEN for the CLI), or none on a loopback address"
    )]
    EmptyToken,
    /// Serving stopped abnormally.
    #[error("the proxy stopped: {0}")]
    Stopped(String),
}
