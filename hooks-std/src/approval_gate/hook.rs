//! `ApprovalGate`: the pre hook that pauses a gated call until a person decides.

use std::time::Duration;

use hooks_runtime::{
    DryRun, Hook, HookContext, HookError, HookFuture, HookOutcome, HookPoint, HookResult,
    PreToolUseHook, TimeoutNote, config::ConfigDuration, factory::AskHandler, when::When,
};
use serde::Deserialize;
use serde_json::Value;

use super::approvals::Approvals;
use super::card_claim::CardClaim;
use super::crash_points::{self, crash_point};
use super::digest::args_digest;
use super::request::{ApproverScope, ConfirmationMode, ConfirmationRequest, ConfirmationStatus};
use super::store::{MAX_APPROVALS, NewConfirmation, Quorum};
use crate::approval_gate::channel::ChannelSettings;
use crate::config::{ConfigError, parse_config};
// A section for a channel whose feature is off is read, only to say which
// feature to turn on.
#[cfg(not(feature = "feishu"))]
use crate::approval_gate::channel::NotInThisBuild as FeishuSettings;
#[cfg(not(feature = "slack"))]
use crate::approval_gate::channel::NotInThisBuild as SlackSettings;
#[cfg(not(feature = "web"))]
use crate::approval_gate::channel::NotInThisBuild as WebSettings;
#[cfg(feature = "feishu")]
use crate::approval_gate::channel::feishu::FeishuSettings;
#[cfg(feature = "slack")]
use crate::approval_gate::channel::slack::SlackSettings;
#[cfg(feature = "web")]
use crate::approval_gate::channel::web::WebSettings;

/// Config of [`ApprovalGate`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApprovalGateConfig {
    /// Priority (default 10: before most guards, so nothing runs unapproved).
    pub priority: i32,
    /// How long a call waits for a decision (default `"120s"`).
    #[serde(deserialize_with = "ConfigDuration::text")]
    pub timeout: Duration,
    /// Gate every tool call of the agent (the agent's `require_confirmation_for_all`).
    pub require_confirmation_for_all: bool,
    /// Also gate calls matching this `when` expression.
    pub when: Option<String>,
    /// Who may decide (default: the initiator).
    pub approver_scope: ApproverScope,
    /// Users who may decide whatever the scope.
    pub approvers: Vec<String>,
    /// How many distinct people in scope must approve (default 1, at most
    /// 10); any one rejection rejects, and the call runs once, after the
    /// last approval.
    pub approvals: u32,
    /// The user on whose behalf the call was made may reject it but not
    /// approve it (default `false`): four eyes.
    pub exclude_requester: bool,
    /// The channel approvals go through, by name: `feishu`, `slack` or `web`.
    /// Unset with a `feishu` section means Feishu; unset with no section,
    /// whatever channel the approval machinery was started with.
    pub channel: Option<ChannelName>,
    /// The Feishu channel's settings (secrets named by environment variables).
    pub feishu: Option<FeishuSettings>,
    /// The Slack channel's settings (secrets named by environment variables).
    pub slack: Option<SlackSettings>,
    /// The web channel's settings (its page's sign-in and paths).
    pub web: Option<WebSettings>,
}

/// A channel's name in [`ApprovalGateConfig::channel`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChannelName {
    /// Feishu / Lark.
    Feishu,
    /// Slack.
    Slack,
    /// The built-in approvals page.
    Web,
}

impl ChannelName {
    fn as_str(self) -> &'static str {
        match self {
            ChannelName::Feishu => "feishu",
            ChannelName::Slack => "slack",
            ChannelName::Web => "web",
        }
    }
}

impl ApprovalGateConfig {
    /// The channel this config selects, with its settings, or `None` if it
    /// names none (the gate then uses whatever channel its [`Approvals`]
    /// were started with). Fails if the named channel has no settings
    /// section, or a section is given for a channel that is not selected.
    ///
    /// [`ApprovalGate::builder_from_config`] builds the gate and its channel
    /// from these settings in one step.
    #[cfg_attr(
        not(any(feature = "feishu", feature = "slack", feature = "web")),
        allow(unreachable_code, unused_variables)
    )]
    pub fn channel_settings(&self) -> Result<Option<ChannelSettings>, ConfigError> {
        let error = |message: String| ConfigError::new(ApprovalGate::NAME, message);
        let sections = [
            ("feishu", self.feishu.is_some()),
            ("slack", self.slack.is_some()),
            ("web", self.web.is_some()),
        ];
        let wanted = match self.channel {
            Some(name) => name.as_str(),
            None => match sections
                .iter()
                .find(|(name, given)| *given && *name != "feishu")
            {
                Some((name, _)) => {
                    return Err(error(format!(
                        "a `{name}` section is configured but `channel` is not set: add \
                         `channel: {name}` (Feishu is the default)"
                    )));
                }
                None if self.feishu.is_some() => "feishu",
                None => return Ok(None),
            },
        };
        if let Some((other, _)) = sections
            .iter()
            .find(|(name, given)| *given && *name != wanted)
        {
            let has_wanted = sections
                .iter()
                .any(|(name, given)| *given && *name == wanted);
            if has_wanted {
                return Err(error(format!(
                    "`channel: {wanted}` is selected, but a `{other}` section is configured \
                     too; remove the `{other}` section"
                )));
            }
        }
        let in_this_build = [
            ("feishu", cfg!(feature = "feishu")),
            ("slack", cfg!(feature = "slack")),
            ("web", cfg!(feature = "web")),
        ];
        if !in_this_build.contains(&(wanted, true)) {
            return Err(error(format!(
                "the `{wanted}` channel is not in this build; enable the `{wanted}` feature (of \
                 the `hooks` crate, or of hooks-std)"
            )));
        }
        let selected = match (wanted, &self.feishu, &self.slack, &self.web) {
            #[cfg(feature = "feishu")]
            ("feishu", Some(feishu), _, _) => ChannelSettings::Feishu(feishu.clone()),
            #[cfg(feature = "slack")]
            ("slack", _, Some(slack), _) => ChannelSettings::Slack(slack.clone()),
            #[cfg(feature = "web")]
            ("web", _, _, Some(web)) => ChannelSettings::Web(web.clone()),
            _ => {
                let what = if wanted == "web" {
                    "how operators sign in: `operators` or `trusted_header`"
                } else {
                    "ids, and the environment variables holding its secrets"
                };
                return Err(error(format!(
                    "`channel: {wanted}` needs a `{wanted}` section with its settings ({what})"
                )));
            }
        };
        Ok(Some(selected))
    }
}

impl Default for ApprovalGateConfig {
    fn default() -> Self {
        ApprovalGateConfig {
            priority: 10,
            timeout: Duration::from_secs(120),
            require_confirmation_for_all: false,
            when: None,
            approver_scope: ApproverScope::Initiator,
            approvers: Vec::new(),
            approvals: 1,
            exclude_requester: false,
            channel: None,
            feishu: None,
            slack: None,
            web: None,
        }
    }
}

/// Why a gate without an approval channel blocks a call that needs approval.
pub const NO_APPROVAL_CHANNEL: &str = "this call needs approval, and no approval channel is \
     configured: add an `approval_gate` entry with a `feishu`, `slack` or `web` section to the \
     agent's config, and give the agent an `Approvals` talking through that channel under the \
     `APPROVALS` resource key (or stop gating this call)";

/// Extra time the hook's own timeout allows beyond the wait, for creating
/// the request and delivering the card.
const DELIVERY_ALLOWANCE: Duration = Duration::from_secs(30);

/// How long delivering a card — sending it and storing its reference —
/// may take before the run gives up (the request stays claimed: the card
/// may have reached the chat). Well under [`CARD_CLAIM_LEASE`]: a run stops
/// waiting on its delivery before anyone may take its claim over.
const CARD_DELIVERY_DEADLINE: Duration = Duration::from_secs(25);

/// How long a run's claim on sending the card holds; after it, a re-run of
/// the same tool call may send the card again with the same idempotency key
/// (its first run died mid-send), on a channel whose platform deduplicates.
const CARD_CLAIM_LEASE: Duration = Duration::from_secs(60);

/// A card is re-sent only while the request is this much younger than the
/// platform's deduplication window, so the platform's window (counted from
/// the first send, which came after the request was created) still covers it
/// whatever the send's latency and the clocks' skew.
const RESEND_MARGIN: Duration = Duration::from_secs(300);

/// A failpoint firing in the gate: the run stops there, as if killed.
#[cfg(feature = "failpoints")]
fn stopped(point: &str) -> HookError {
    HookError::new(format!("failpoint {point}: the run stopped here"))
}

/// The human-approval gate.
///
/// It triggers on `metadata.requires_confirmation`, on every call when
/// `require_confirmation_for_all` is set, or when its `when` expression
/// matches. It creates a confirmation request — or resumes the one for the
/// same conversation and tool call id, without sending a second card — sends
/// the card, and waits until a decision wakes it or the deadline passes.
/// Approved → the call runs; rejected → blocked with who and why; deadline →
/// the request expires and the call is blocked. Any failure (database down,
/// card not delivered) blocks. An approval covers exactly the tool name and
/// arguments it was asked for: a re-run with other arguments is blocked.
///
/// A gate built without an [`Approvals`] ([`ApprovalGate::without_approvals`],
/// or an agent given none) is still attached: calls it does not trigger on
/// run as usual, and a call that needs approval is blocked, since nobody
/// could be asked (fail closed).
pub struct ApprovalGate {
    /// `None`: no approval channel is configured.
    approvals: Option<Approvals>,
    config: ApprovalGateConfig,
    when: Option<When>,
}

impl ApprovalGate {
    /// The name config files use.
    pub const NAME: &'static str = "approval_gate";

    /// A gate with default config (priority 10, 120 s, initiator approves).
    pub fn new(approvals: Approvals) -> Self {
        ApprovalGate {
            approvals: Some(approvals),
            config: ApprovalGateConfig::default(),
            when: None,
        }
    }

    /// A gate with this config and no approval channel: a call it triggers
    /// on (or that a command hook asks about) is blocked with a message
    /// saying what to configure. Fails if the config selects a channel
    /// (`channel`, `feishu` or `slack`): approvals were meant, so the missing
    /// [`Approvals`] is an error in the set-up, reported when it is built.
    pub fn without_approvals(config: ApprovalGateConfig) -> Result<Self, ConfigError> {
        if let Some(settings) = config.channel_settings()? {
            return Err(ConfigError::new(
                Self::NAME,
                format!(
                    "the config selects the {} channel \"{}\", but no approval machinery was \
                     given; build the gate with `ApprovalGate::builder_from_config`, or start \
                     an `Approvals` on that channel and add it to the resources under \
                     `APPROVALS`",
                    settings.kind(),
                    settings.channel_id()
                ),
            ));
        }
        Self::checked(None, config)
    }

    /// A gate with this config, asking through `approvals`. The channel is
    /// the one `approvals` talk through: a `channel`/`feishu`/`slack`/`web`
    /// section in `config` is for building a channel
    /// ([`ApprovalGate::builder_from_config`]) and is not read here, so the
    /// channel is set in one place.
    pub fn with_config(
        approvals: Approvals,
        config: ApprovalGateConfig,
    ) -> Result<Self, ConfigError> {
        Self::checked(Some(approvals), config)
    }

    /// Checks `config` and builds the gate.
    fn checked(
        approvals: Option<Approvals>,
        config: ApprovalGateConfig,
    ) -> Result<Self, ConfigError> {
        if config.timeout.is_zero() {
            return Err(ConfigError::new(Self::NAME, "`timeout` must not be zero"));
        }
        if !(1..=MAX_APPROVALS).contains(&config.approvals) {
            return Err(ConfigError::new(
                Self::NAME,
                format!(
                    "`approvals` is {}: it must be from 1 to {MAX_APPROVALS} (how many distinct \
                     people must approve)",
                    config.approvals
                ),
            ));
        }
        // A scope of named people must hold enough of them.
        let named = match config.approver_scope {
            ApproverScope::Initiator => {
                Some(config.approvers.len() + usize::from(!config.exclude_requester))
            }
            ApproverScope::Allowlist => Some(config.approvers.len()),
            ApproverScope::AgentOwner | ApproverScope::OrgMembers => None,
        };
        if let Some(named) = named
            && named < config.approvals as usize
        {
            return Err(ConfigError::new(
                Self::NAME,
                format!(
                    "`approvals` is {}, but `approver_scope: {}`{} leaves at most {named} \
                     person{} who may approve, so no request could ever be approved: list more \
                     `approvers`, or widen the scope",
                    config.approvals,
                    config.approver_scope.as_str(),
                    if config.exclude_requester {
                        " with `exclude_requester`"
                    } else {
                        ""
                    },
                    if named == 1 { "" } else { "s" }
                ),
            ));
        }
        // A malformed section is an error wherever the config is used.
        config.channel_settings()?;
        let when = config
            .when
            .as_deref()
            .map(|source| When::parse(source, HookPoint::PreToolUse))
            .transpose()
            .map_err(|errors| ConfigError::new(Self::NAME, format!("`when`: {errors}")))?;
        Ok(ApprovalGate {
            approvals,
            config,
            when,
        })
    }

    /// Builds the gate from its config-file form (`null` for defaults).
    pub fn from_config(approvals: Approvals, config: &Value) -> Result<Self, ConfigError> {
        Self::with_config(approvals, parse_config(Self::NAME, config)?)
    }

    /// Why `ctx` needs confirmation, or `None`.
    pub fn trigger(&self, ctx: &HookContext) -> Option<ConfirmationMode> {
        if requires_confirmation(ctx.metadata.get("requires_confirmation")) {
            Some(ConfirmationMode::Metadata)
        } else if self.config.require_confirmation_for_all {
            Some(ConfirmationMode::RequireAll)
        } else if self.when.as_ref().is_some_and(|when| when.matches(ctx)) {
            Some(ConfirmationMode::When)
        } else {
            None
        }
    }

    /// Whether this gate can ask anyone (it was given an [`Approvals`]).
    pub fn has_approvals(&self) -> bool {
        self.approvals.is_some()
    }

    /// The approval machinery this gate asks through, if any: its store,
    /// its channel, and more gates on the same channel.
    pub fn approvals(&self) -> Option<&Approvals> {
        self.approvals.as_ref()
    }

    async fn gate(
        &self,
        ctx: &HookContext,
        mode: ConfirmationMode,
    ) -> Result<HookResult, HookError> {
        let Some(approvals) = &self.approvals else {
            return Ok(HookResult::block(NO_APPROVAL_CHANNEL));
        };
        let store = approvals.store();
        let channel = approvals.channel();
        let digest = args_digest(&ctx.tool_name, &ctx.tool_args);
        let new = NewConfirmation {
            idempotency_key: idempotency_key(ctx, mode),
            tool_name: ctx.tool_name.clone(),
            args: ctx.tool_args.clone(),
            args_digest: digest.clone(),
            agent_id: ctx.agent_id.clone(),
            initiator_user_id: ctx.user_id.clone(),
            org_id: ctx.org_id.clone(),
            approver_scope: self.config.approver_scope,
            approver_allowlist: self.config.approvers.clone(),
            channel_kind: channel.kind().to_owned(),
            channel_id: channel.channel_id().to_owned(),
            mode,
            timeout: self.config.timeout,
            quorum: Quorum {
                approvals: self.config.approvals,
                exclude_requester: self.config.exclude_requester,
            },
        };
        let (request, _created) = store
            .create(&new)
            .await
            .map_err(|error| HookError::new(format!("could not record the request: {error}")))?;
        crash_point!(crash_points::AFTER_CREATE, |_| Err(stopped(
            crash_points::AFTER_CREATE
        )));
        if request.args_digest != digest {
            return Ok(HookResult::block(format!(
                "the arguments differ from those in confirmation request {} for this tool call; \
                 they were not submitted for approval",
                request.id
            )));
        }
        if request.tool_name != ctx.tool_name
            || request.agent_id != ctx.agent_id
            || request.initiator_user_id != ctx.user_id
            || request.org_id != ctx.org_id
        {
            return Ok(HookResult::block(format!(
                "confirmation request {} for this tool call id was made for another tool, agent, \
                 user or org; it does not cover this call",
                request.id
            )));
        }
        // Subscribe before looking at the state, so no decision slips between.
        let mut subscription = approvals.subscribe(&request.id);
        // Concurrent runs of one tool call share its request; only the run
        // that claims the card sends it, the others (and a restarted run that
        // finds a live claim) wait for the same decision. The claim is
        // written before the platform is called, so a card may exist only
        // for a claimed request.
        // The request and the database clock as delivery left them, when
        // this run delivered the card: the wait starts from them.
        let mut delivered = None;
        if request.status == ConfirmationStatus::Pending && request.message_ref.is_none() {
            let claimed = match channel.send_dedup_window() {
                Some(window) => {
                    store
                        .claim_card(
                            &request.id,
                            CARD_CLAIM_LEASE,
                            Some(window.saturating_sub(RESEND_MARGIN)),
                        )
                        .await
                }
                // No deduplication on the platform: a claim is never taken
                // over, so at most one card is ever sent.
                None => store.claim_card(&request.id, Duration::MAX, None).await,
            };
            let claim = claimed
                .map_err(|error| HookError::new(format!("could not claim the card: {error}")))?;
            if let Some(claim) = claim {
                crash_point!(crash_points::AFTER_CLAIM, |_| Err(stopped(
                    crash_points::AFTER_CLAIM
                )));
                delivered = Some(self.deliver(approvals, &request, claim).await?);
            }
        }
        crash_point!(crash_points::WAITING, |_| Err(stopped(
            crash_points::WAITING
        )));
        // The deadline is the one stored with the request, on the database's
        // clock: read the clock after delivery (with the request's state:
        // by the statement storing the card's reference, or in the first
        // pass below), so however long delivery took the wait ends at that
        // deadline (a few milliseconds late at most, never early), and the
        // request is expired by this gate.
        let mut clock: Option<(i64, tokio::time::Instant)> = None;
        let mut woken = false;
        loop {
            // Woken, most likely by an approval: stamp it and go, in one
            // statement; anything else is read below as before.
            if woken
                && let Some(approved) = store
                    .stamp_used(&request.id)
                    .await
                    .map_err(HookError::new)?
            {
                crash_point!(crash_points::AFTER_CONSUME, |_| Err(stopped(
                    crash_points::AFTER_CONSUME
                )));
                return Ok(self.verdict(&approved));
            }
            woken = true;
            let disappeared =
                || HookError::new(format!("confirmation request {} disappeared", request.id));
            let (current, (clock_ms, started)) = match (delivered.take(), clock) {
                (Some((current, now)), _) => {
                    (current, *clock.insert((now, tokio::time::Instant::now())))
                }
                (None, Some(clock)) => {
                    let current = store.get(&request.id).await.map_err(HookError::new)?;
                    (current.ok_or_else(disappeared)?, clock)
                }
                (None, None) => {
                    // The clock first: the wait then ends late by the time
                    // the read took, never early.
                    let now = store.clock_ms().await.map_err(HookError::new)?;
                    let started = tokio::time::Instant::now();
                    let current = store.get(&request.id).await.map_err(HookError::new)?;
                    (
                        current.ok_or_else(disappeared)?,
                        *clock.insert((now, started)),
                    )
                }
            };
            if current.status.is_terminal() {
                return self.finish(approvals, &current).await;
            }
            let now = clock_ms + millis(started.elapsed());
            let remaining = Duration::from_millis(
                u64::try_from(current.expires_at_ms.saturating_sub(now)).unwrap_or(0),
            );
            tokio::select! {
                () = subscription.woken() => {}
                () = tokio::time::sleep(remaining) => {
                    if let Some(expired) = approvals.expire(&current.id).await.map_err(HookError::new)? {
                        return self.finish(approvals, &expired).await;
                    }
                }
            }
        }
    }

    /// Sends the card and stores its reference under `claim`, both within
    /// [`CARD_DELIVERY_DEADLINE`]. If the platform refuses the card, cancels
    /// the request when no card is recorded for it (nobody could decide it;
    /// runs waiting on it wake) and fails, which blocks the call. If the send
    /// or the storing does not finish in time, or the reference cannot be
    /// stored, fails without cancelling: the card may be live in the chat,
    /// so the request stays claimed and decidable until its deadline (a
    /// re-run waits for the decision; on a deduplicating platform it re-sends
    /// with the same key after the lease, which stores the reference). If the
    /// claim was lost meanwhile, fails without cancelling: the run that took
    /// it over is delivering the card. Returns the request as it stands
    /// once the reference is stored, with the database clock then.
    ///
    /// Sending and storing run as a task of their own: a run dropped
    /// meanwhile (its client cancelled the call) still stores the card it
    /// sent, and a card whose request is already final then is redrawn, so
    /// no card is left with live buttons and no reference to redraw it by.
    /// A panic in the channel fails the run (blocks).
    async fn deliver(
        &self,
        approvals: &Approvals,
        request: &ConfirmationRequest,
        claim: CardClaim,
    ) -> Result<(ConfirmationRequest, i64), HookError> {
        let channel = approvals.channel();
        let deadline = tokio::time::Instant::now() + CARD_DELIVERY_DEADLINE;
        let late = || {
            HookError::new(format!(
                "approval card not delivered within {} (sending it through the {} channel and \
                 storing its reference); check that the platform and the database are reachable",
                ConfigDuration::from(CARD_DELIVERY_DEADLINE),
                channel.kind()
            ))
        };
        let delivery = tokio::spawn(send_and_record(approvals.clone(), request.clone(), claim));
        match tokio::time::timeout_at(deadline, delivery).await {
            Ok(Ok(delivered)) => delivered,
            Ok(Err(failed)) => Err(HookError::new(format!(
                "delivering the approval card failed: {failed}"
            ))),
            Err(_) => Err(late()),
        }
    }

    /// The verdict on a final request. An approval lets its call run once:
    /// it is stamped as used, and an approval already used blocks.
    async fn finish(
        &self,
        approvals: &Approvals,
        request: &ConfirmationRequest,
    ) -> Result<HookResult, HookError> {
        if request.status == ConfirmationStatus::Approved {
            let stamped = approvals
                .store()
                .stamp_used(&request.id)
                .await
                .map_err(HookError::new)?;
            if stamped.is_none() {
                return Ok(HookResult::block(format!(
                    "the approval of confirmation request {} was already used by another run \
                     of this tool call; an approval runs its call once",
                    request.id
                )));
            }
            crash_point!(crash_points::AFTER_CONSUME, |_| Err(stopped(
                crash_points::AFTER_CONSUME
            )));
        }
        Ok(self.verdict(request))
    }

    fn verdict(&self, request: &ConfirmationRequest) -> HookResult {
        let who = request.decided_by.as_deref().unwrap_or("unknown");
        // A quorum's state goes into the trace and the audit row.
        let quorum = request
            .quorum_text()
            .map(|quorum| format!("; {quorum}"))
            .unwrap_or_default();
        match request.status {
            ConfirmationStatus::Approved => {
                let approvers = if request.approved_by.len() > 1 {
                    request.approved_by.join(", ")
                } else {
                    who.to_owned()
                };
                HookResult::allow()
                    .with_side_effect(format!(
                        "approved by {approvers} (confirmation request {}{quorum})",
                        request.id
                    ))
                    .sealing_args()
            }
            ConfirmationStatus::Rejected => HookResult::block(format!(
                "rejected by {who}: {}{}",
                request.reason.as_deref().unwrap_or("no reason given"),
                request
                    .quorum_text()
                    .filter(|_| !request.approved_by.is_empty())
                    .map(|quorum| format!(" (after {quorum})"))
                    .unwrap_or_default()
            )),
            ConfirmationStatus::Expired => HookResult::block(format!(
                "timed out after {} waiting for confirmation",
                ConfigDuration::from(self.config.timeout)
            )),
            ConfirmationStatus::Cancelled => HookResult::block(format!(
                "confirmation request {} was cancelled: {}",
                request.id,
                request.reason.as_deref().unwrap_or("no reason given")
            )),
            ConfirmationStatus::Pending => HookResult::block("still waiting for confirmation"),
        }
    }
}

impl Hook for ApprovalGate {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn priority(&self) -> i32 {
        self.config.priority
    }

    fn should_trigger(&self, ctx: &HookContext) -> bool {
        self.trigger(ctx).is_some()
    }

    fn execute<'a>(&'a self, ctx: &'a HookContext) -> HookOutcome<'a> {
        HookOutcome::pending(
            self.gate(ctx, self.trigger(ctx).unwrap_or(ConfirmationMode::Metadata)),
        )
    }

    fn timeout(&self) -> Duration {
        self.config.timeout + DELIVERY_ALLOWANCE
    }

    /// The configured wait for a person, and the delivery allowance on top.
    fn timeout_note(&self) -> Option<TimeoutNote> {
        Some(TimeoutNote {
            configured: self.config.timeout,
            why: format!(
                "+{} to create the request and deliver the card",
                ConfigDuration::from(DELIVERY_ALLOWANCE)
            ),
        })
    }

    fn when_source(&self) -> Option<&str> {
        self.config.when.as_deref()
    }

    fn description(&self) -> Option<&str> {
        Some("pauses the call until a person approves it")
    }

    fn dry_run(&self) -> DryRun {
        // Without a channel nobody is asked: the gate blocks at once, and a
        // dry run can say so.
        if self.approvals.is_some() {
            DryRun::Ask
        } else {
            DryRun::Evaluate
        }
    }
}

impl PreToolUseHook for ApprovalGate {}

/// Command hooks that answer "ask" route the call here: the same durable,
/// verified approval flow, recorded with mode `ask`.
impl AskHandler for ApprovalGate {
    fn ask<'a>(&'a self, ctx: &'a HookContext, reason: &'a str) -> HookFuture<'a> {
        tracing::info!(tool = %ctx.tool_name, %reason, "a hook asked for approval");
        Box::pin(self.gate(ctx, ConfirmationMode::Ask))
    }

    fn max_wait(&self) -> Duration {
        self.config.timeout + DELIVERY_ALLOWANCE
    }
}

/// Whether a `requires_confirmation` metadata value asks for confirmation.
/// Anything but absent, `null`, `false`, `0`, `""` or `"false"` does: a flag
/// the engine spelled differently must not let a call through ungated.
fn requires_confirmation(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::String(text)) => {
            let text = text.trim();
            !(text.is_empty() || text.eq_ignore_ascii_case("false") || text == "0")
        }
        Some(_) => true,
    }
}

/// The key that makes a re-run of the same tool call resume its request.
/// Without both ids a call cannot be recognised again, so it gets a fresh key.
/// An "ask" from a command hook gets its own request, apart from one the
/// gate's own trigger may have opened for the same call.
fn idempotency_key(ctx: &HookContext, mode: ConfirmationMode) -> String {
    match call_keys(&ctx.conversation_id, &ctx.tool_call_id) {
        Some([gate, ask]) => {
            if mode == ConfirmationMode::Ask {
                ask
            } else {
                gate
            }
        }
        None => format!("unkeyed:{}", uuid::Uuid::new_v4()),
    }
}

/// The keys of one tool call's requests: the gate's own, and an "ask"'s.
/// `None` when either id is missing (such a call's requests are unkeyed).
pub(crate) fn call_keys(conversation_id: &str, tool_call_id: &str) -> Option<[String; 2]> {
    if conversation_id.is_empty() || tool_call_id.is_empty() {
        return None;
    }
    let gate = format!(
        "{}:{}:{}",
        conversation_id.len(),
        conversation_id,
        tool_call_id
    );
    let ask = format!("{gate}:ask");
    Some([gate, ask])
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX / 4)
}

/// Sends the card of `request` and stores its reference under `claim`
/// (see [`ApprovalGate::deliver`]); a request already final when the
/// reference is stored gets its card redrawn.
async fn send_and_record(
    approvals: Approvals,
    request: ConfirmationRequest,
    claim: CardClaim,
) -> Result<(ConfirmationRequest, i64), HookError> {
    let message_ref = match approvals.channel().send_card(&request).await {
        Ok(message_ref) => message_ref,
        Err(error) => {
            let failure = format!("approval card not delivered: {error}");
            if let Err(cancel_error) = approvals.cancel(&request.id, &failure).await {
                tracing::warn!(%cancel_error, "could not cancel an undeliverable request");
            }
            return Err(HookError::new(failure));
        }
    };
    crash_point!(crash_points::AFTER_SEND, |_| Err(stopped(
        crash_points::AFTER_SEND
    )));
    match approvals
        .store()
        .record_card(&request.id, claim, &message_ref)
        .await
    {
        Ok(Some(stored)) => {
            if stored.0.status.is_terminal() {
                approvals.push_card_update(&stored.0.id);
            }
            Ok(stored)
        }
        Ok(None) => Err(HookError::new(format!(
            "the approval card of confirmation request {} was sent, but another run of \
             this tool call took its delivery over; this run is blocked",
            request.id
        ))),
        Err(error) => Err(HookError::new(format!(
            "the approval card was sent but its reference was not stored: {error}"
        ))),
    }
}
