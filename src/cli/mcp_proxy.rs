//! `hooks mcp-proxy`: the agent's hooks in front of an MCP server (a
//! command it starts, or a streamable HTTP endpoint), served to an MCP
//! client on stdin and stdout or over streamable HTTP.

use std::io::{self, Write};

use super::AddResources;
use super::options::McpProxyArgs;
use super::serve::{rate_limits_in_memory, server_resources};
use crate::mcp_proxy::{McpProxy, McpProxyConfig};

/// The environment variable the bearer token of `--listen` is read from.
const TOKEN_VARIABLE: &str = "HOOKS_MCP_PROXY_TOKEN";

/// Starts the upstream and serves the client on stdin/stdout until it
/// disconnects. Stdout is the MCP channel: everything said goes to `err`.
pub(super) async fn run(
    options: McpProxyArgs,
    add: Vec<AddResources>,
    err: &mut dyn Write,
) -> io::Result<u8> {
    let (agent, mut settings) = match McpProxyConfig::load(options.config.path()) {
        Ok(loaded) => loaded,
        Err(error) => {
            writeln!(err, "hooks mcp-proxy: {error}")?;
            return Ok(1);
        }
    };
    // The command line's upstream replaces the config's, of either kind.
    if !options.command.is_empty() {
        settings.command = options.command;
        settings.url.clear();
    }
    if let Some(url) = options.upstream_url {
        settings.url = url;
        settings.command.clear();
    }
    if let Some(name) = options.name {
        settings.server = name;
    }
    if let Some(user) = options.user {
        settings.user = user;
    }
    if let Some(org) = options.org {
        settings.org = org;
    }
    if !options.read_only_orgs.is_empty() && settings.org.is_empty() {
        writeln!(
            err,
            "hooks mcp-proxy: --read-only-org needs an org (--org or `mcp_proxy.org`): a call \
             with no org is never in read-only mode"
        )?;
        return Ok(2);
    }
    if let Some(warning) = rate_limits_in_memory(&agent, options.database.as_deref()) {
        writeln!(err, "hooks mcp-proxy: warning: {warning}")?;
    }
    let resources =
        match server_resources(options.database.as_deref(), options.read_only_orgs, add).await {
            Ok(resources) => resources,
            Err(problem) => {
                writeln!(err, "hooks mcp-proxy: {problem}")?;
                return Ok(1);
            }
        };
    let proxy = match McpProxy::start(agent, settings, &resources).await {
        Ok(proxy) => proxy,
        Err(error) => {
            writeln!(err, "hooks mcp-proxy: {error}")?;
            writeln!(err, "hooks mcp-proxy: not serving")?;
            return Ok(1);
        }
    };
    if options.listen.is_none() && !proxy.settings().clients.is_empty() {
        writeln!(
            err,
            "hooks mcp-proxy: warning: `mcp_proxy.clients` applies to --listen only; on stdio \
             every call is made by --user/--org (or `mcp_proxy.user`/`org`)"
        )?;
    }
    let server = proxy.settings().server.clone();
    for warning in super::connectors::never_matching(proxy.agent().registry(), Some(&server)) {
        writeln!(err, "hooks mcp-proxy: warning: {warning}")?;
    }
    for (tool, problem) in proxy.unusable_schemas() {
        writeln!(
            err,
            "hooks mcp-proxy: warning: calls of `{tool}` are blocked: its inputSchema cannot be \
             checked ({problem})"
        )?;
    }
    let served = match options.listen {
        Some(address) => {
            let listener = match tokio::net::TcpListener::bind(&address).await {
                Ok(listener) => listener,
                Err(error) => {
                    writeln!(err, "hooks mcp-proxy: cannot listen on {address}: {error}")?;
                    return Ok(1);
                }
            };
            let token = std::env::var(TOKEN_VARIABLE).ok().filter(|t| !t.is_empty());
            writeln!(
                err,
                "hooks mcp-proxy: agent `{}` in front of `{}` ({}), serving MCP at http://{}{} \
                 ({})",
                proxy.agent().id(),
                proxy.settings().server,
                proxy.upstream_name(),
                listener.local_addr()?,
                crate::mcp_proxy::MCP_PATH,
                if token.is_some() || !proxy.settings().clients.is_empty() {
                    "bearer token required"
                } else {
                    "no token: loopback only"
                }
            )?;
            err.flush()?;
            proxy.serve_http(listener, token).await
        }
        None => {
            writeln!(
                err,
                "hooks mcp-proxy: agent `{}` in front of `{}` ({}), serving MCP on stdio",
                proxy.agent().id(),
                proxy.settings().server,
                proxy.upstream_name()
            )?;
            err.flush()?;
            proxy.serve_stdio().await
        }
    };
    match served {
        Ok(()) => Ok(0),
        Err(error) => {
            writeln!(err, "hooks mcp-proxy: {error}")?;
            Ok(1)
        }
    }
}
