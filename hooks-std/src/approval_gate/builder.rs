//! `GateBuilder`: the approval gate, its machinery and its callback
//! endpoint, built in one expression.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use serde_json::Value;

use super::approvals::{Approvals, ApprovalsConfig};
use super::approvers::{ApproverDirectory, StaticDirectory};
use super::channel::{Channel, ChannelSettings};
use super::hook::{ApprovalGate, ApprovalGateConfig};
use super::request::ApproverScope;
use super::store::ConfirmationStore;
use crate::config::{ConfigError, parse_config};
use crate::storage::Database;

/// Where secrets are looked up when the config builds the channel.
type Environment = Box<dyn Fn(&str) -> Option<String> + Send>;

/// Builds an [`ApprovalGate`] and the router of its channel's callbacks
/// from a database and a channel — the channel given in code
/// ([`ApprovalGate::builder`]) or built from the config's section
/// ([`ApprovalGate::builder_from_config`]), never both.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// use hooks::approval_gate::{ApprovalGate, ApproverScope, StaticDirectory};
/// use hooks::approval_gate::channel::feishu::{FeishuChannel, FeishuConfig};
/// use hooks::std_hooks::Database;
///
/// let database = Database::connect("sqlite://hooks.db").await?;
/// let channel = FeishuChannel::new(FeishuConfig::new("cli_app", "app-secret", "oc_chat", "verification-token", "encrypt-key"))?;
/// let (gate, callbacks) = ApprovalGate::builder(database, channel)
///     .directory(StaticDirectory::new().person("feishu", "ou_1", "wang.fang", "acme"))
///     .when(r#"tool_name == "oa__purchase_pay" && args.amount > 50000"#)
///     .approver_scope(ApproverScope::OrgMembers)
///     .timeout(Duration::from_secs(120))
///     .build()?;
/// // Mount `callbacks` where the platform posts button presses.
/// let app = axum::Router::<()>::new().nest("/feishu/callback", callbacks);
/// # let _ = (gate, app);
/// # Ok(()) }
/// ```
pub struct GateBuilder {
    database: Database,
    channel: ChannelSource,
    directory: Arc<dyn ApproverDirectory>,
    config: ApprovalGateConfig,
    approvals: ApprovalsConfig,
    environment: Option<Environment>,
}

enum ChannelSource {
    Code(Arc<dyn Channel>),
    Config(ChannelSettings),
}

impl ApprovalGate {
    /// A builder for a gate asking through `channel`, keeping its requests
    /// in `database`.
    pub fn builder(database: Database, channel: impl Channel + 'static) -> GateBuilder {
        GateBuilder {
            database,
            channel: ChannelSource::Code(Arc::new(channel)),
            directory: Arc::new(StaticDirectory::new()),
            config: ApprovalGateConfig::default(),
            approvals: ApprovalsConfig::default(),
            environment: None,
        }
    }

    /// A builder for a gate whose channel, like the rest of it, comes from
    /// `config` (the gate's config-file form): the section of the channel
    /// it selects (`feishu`, `slack` or `web`), with secrets read from the
    /// environment variables the section names. Fails if the config
    /// selects no channel or its section is wrong.
    pub fn builder_from_config(
        database: Database,
        config: &Value,
    ) -> Result<GateBuilder, ConfigError> {
        let config: ApprovalGateConfig = parse_config(Self::NAME, config)?;
        let settings = config.channel_settings()?.ok_or_else(|| {
            ConfigError::new(
                Self::NAME,
                "the config selects no channel: add `channel` with its section, or give the \
                 channel in code with `ApprovalGate::builder`",
            )
        })?;
        Ok(GateBuilder {
            database,
            channel: ChannelSource::Config(settings),
            directory: Arc::new(StaticDirectory::new()),
            config,
            approvals: ApprovalsConfig::default(),
            environment: None,
        })
    }
}

impl GateBuilder {
    /// Who is who on the channel (default: nobody, so nobody may decide).
    pub fn directory(mut self, directory: impl ApproverDirectory + 'static) -> Self {
        self.directory = Arc::new(directory);
        self
    }

    /// Gate the calls this `when` expression matches.
    pub fn when(mut self, when: impl Into<String>) -> Self {
        self.config.when = Some(when.into());
        self
    }

    /// Gate every call.
    pub fn require_confirmation_for_all(mut self, all: bool) -> Self {
        self.config.require_confirmation_for_all = all;
        self
    }

    /// Who may decide (default: the initiator).
    pub fn approver_scope(mut self, scope: ApproverScope) -> Self {
        self.config.approver_scope = scope;
        self
    }

    /// Users who may decide whatever the scope.
    pub fn approvers<I, S>(mut self, approvers: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.config.approvers = approvers.into_iter().map(Into::into).collect();
        self
    }

    /// How long a call waits for a decision (default 120 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.config.timeout = timeout;
        self
    }

    /// The gate's priority (default 10).
    pub fn priority(mut self, priority: i32) -> Self {
        self.config.priority = priority;
        self
    }

    /// The approval machinery's settings (sweeps, polling, card updates).
    pub fn approvals_config(mut self, config: ApprovalsConfig) -> Self {
        self.approvals = config;
        self
    }

    /// Where a config-built channel's secrets are looked up, in place of
    /// the process environment (tests, secret stores).
    pub fn environment(mut self, env: impl Fn(&str) -> Option<String> + Send + 'static) -> Self {
        self.environment = Some(Box::new(env));
        self
    }

    /// Starts the approval machinery and returns the gate and the router
    /// of the channel's callbacks (mount it where the platform posts button
    /// presses; the web channel's page is made with
    /// [`WebSettings::page`](super::channel::web::WebSettings::page)).
    /// Call inside a Tokio runtime.
    pub fn build(self) -> Result<(ApprovalGate, Router), ConfigError> {
        let config = self.config.clone();
        let (approvals, router) = self.start()?;
        let gate = ApprovalGate::with_config(approvals, config)?;
        Ok((gate, router))
    }

    /// Starts the approval machinery alone and returns it with the router
    /// of the channel's callbacks: for agents built from config files, whose
    /// gates are built by name and take the machinery from the `APPROVALS`
    /// resource ([`APPROVALS`](crate::APPROVALS)). The gate settings given
    /// here (`when`, `timeout`, …) are not used. Call inside a Tokio runtime.
    pub fn start(self) -> Result<(Approvals, Router), ConfigError> {
        let channel = match self.channel {
            ChannelSource::Code(channel) => channel,
            ChannelSource::Config(settings) => {
                let built = match &self.environment {
                    Some(env) => settings.build_with(env),
                    None => settings.build(),
                };
                built.map_err(|error| {
                    ConfigError::new(
                        ApprovalGate::NAME,
                        format!("the {} channel: {error}", settings.kind()),
                    )
                })?
            }
        };
        let approvals = Approvals::start(
            ConfirmationStore::new(self.database),
            channel,
            self.directory,
            self.approvals,
        );
        let router = approvals.router();
        Ok((approvals, router))
    }
}
