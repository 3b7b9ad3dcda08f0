//! `hooks serve` and `hooks hook-client`.

use std::io::{self, Read, Write};
use std::sync::Arc;

use super::AddResources;
use super::options::{HookClientArgs, ServeArgs};
use crate::Agent;
use crate::config::AgentConfig;
use crate::factory::Resources;
use crate::serve::{ServeConfig, client};
use crate::std_hooks::{DATABASE, Database, ORG_MODES, OrgModeSource, StaticOrgModes};

/// The environment variable the bearer token is read from.
const TOKEN_VARIABLE: &str = "HOOKS_SERVE_TOKEN";

/// Serves `config`'s agent until the listener fails.
pub(super) async fn serve(
    options: ServeArgs,
    add: Vec<AddResources>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<u8> {
    let (config, read_only_orgs) = (options.config.path(), options.read_only_orgs);
    if !read_only_orgs.is_empty() && options.org.is_empty() {
        writeln!(
            err,
            "hooks serve: --read-only-org needs --org: every call is made in the org --org \
             names, and a call with no org is never in read-only mode"
        )?;
        return Ok(2);
    }
    let resources = match server_resources(options.database.as_deref(), read_only_orgs, add).await {
        Ok(resources) => resources,
        Err(problem) => {
            writeln!(err, "hooks serve: {problem}")?;
            return Ok(1);
        }
    };
    let agent = match AgentConfig::load(&config).and_then(|config| {
        if let Some(warning) = rate_limits_in_memory(&config, options.database.as_deref()) {
            // Best effort: a closed stderr does not stop the server.
            let _ = writeln!(err, "hooks serve: warning: {warning}");
        }
        Agent::build(config, &resources)
    }) {
        Ok(agent) => agent,
        Err(errors) => {
            writeln!(err, "{errors}")?;
            writeln!(err, "hooks serve: {} error(s); not serving", errors.0.len())?;
            return Ok(1);
        }
    };
    let token = std::env::var(TOKEN_VARIABLE).ok().filter(|t| !t.is_empty());
    let mut settings = match token {
        Some(token) => ServeConfig::with_token(token),
        None => ServeConfig::unauthenticated(),
    }
    .org(options.org)
    .user(options.user);
    settings.user_header = options.user_header;
    settings.user_header_from = options.user_header_from;
    settings.answer_allow = options.answer_allow;
    let listener = match tokio::net::TcpListener::bind(&options.listen).await {
        Ok(listener) => listener,
        Err(error) => {
            writeln!(
                err,
                "hooks serve: cannot listen on {}: {error}",
                options.listen
            )?;
            return Ok(1);
        }
    };
    let address = listener.local_addr()?;
    writeln!(
        out,
        "hooks serve: agent `{}` at http://{address}/hook ({})",
        agent.id(),
        if settings.token.is_some() {
            "bearer token required"
        } else {
            "no token: loopback only"
        }
    )?;
    out.flush()?;
    match crate::serve::serve(listener, agent, settings).await {
        Ok(()) => Ok(0),
        Err(error) => {
            writeln!(err, "hooks serve: {error}")?;
            Ok(1)
        }
    }
}

/// The warning for a server given `--database` whose `connector_rate_limit`
/// keeps its counts in memory (its default `backend`): the audit log goes
/// to the database, the quotas do not, and each replica on that database
/// allows the whole quota.
pub(super) fn rate_limits_in_memory(agent: &AgentConfig, database: Option<&str>) -> Option<String> {
    database?;
    let in_memory = agent.class_hooks.iter().any(|entry| {
        entry.name == "connector_rate_limit"
            && entry
                .config
                .get("backend")
                .and_then(serde_json::Value::as_str)
                != Some("database")
    });
    in_memory.then(|| {
        "`connector_rate_limit` counts calls in this process's memory although --database is \
         given: each process on that database allows the whole quota. Give the hook \
         `backend: database` to share the counts"
            .to_owned()
    })
}

/// What a server command's hooks use: the database at `database` (in
/// memory when `None`), the read-only orgs, then the caller's own
/// resources. No approval machinery: a call that needs approval is blocked
/// with "no approval channel is configured". Approvals come from a binary of
/// your own (`hooks::serve`, `hooks::mcp_proxy`, or `Cli::with_resources`).
pub(super) async fn server_resources(
    database: Option<&str>,
    read_only_orgs: Vec<String>,
    add: Vec<AddResources>,
) -> Result<Resources, String> {
    let url = database.unwrap_or("sqlite::memory:");
    let database = Database::connect(url)
        .await
        .map_err(|error| format!("cannot open the database {url}: {error}"))?;
    let modes: Arc<dyn OrgModeSource> = Arc::new(StaticOrgModes::with_read_only(read_only_orgs));
    let mut resources = Resources::new()
        .with(DATABASE, database)
        .with(ORG_MODES, modes);
    for add in add {
        add(&mut resources);
    }
    Ok(resources)
}

/// Forwards stdin to the hook server and prints its answer.
pub(super) async fn hook_client(
    options: HookClientArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<u8> {
    let mut input = Vec::new();
    let limit = crate::serve::DEFAULT_MAX_BODY as u64;
    let read = io::stdin().take(limit + 1).read_to_end(&mut input);
    let problem = match read {
        Err(error) => Some(format!(
            "hooks hook-client: cannot read the hook input: {error}; the call is blocked"
        )),
        Ok(_) if input.len() as u64 > limit => Some(format!(
            "hooks hook-client: the hook input is over {limit} bytes; the call is blocked"
        )),
        Ok(_) => None,
    };
    let answer = match problem {
        // A post event's result is replaced even so (its event and tool
        // read from the start of the input): exit 2 would leave it.
        Some(reason) => client::refused_to(options.client.into(), &input, reason),
        None => {
            let token = std::env::var(TOKEN_VARIABLE).ok().filter(|t| !t.is_empty());
            let timeout = std::time::Duration::from_secs(options.timeout);
            client::forward_to(
                options.client.into(),
                &options.url,
                token.as_deref(),
                input,
                timeout,
            )
            .await
        }
    };
    out.write_all(answer.stdout.as_bytes())?;
    if !answer.stderr.is_empty() {
        writeln!(err, "{}", answer.stderr)?;
    }
    Ok(answer.code)
}
