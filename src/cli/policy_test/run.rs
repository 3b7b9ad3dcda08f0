//! Running a table: each case dry-run through the registry and compared
//! with its expectation.

use serde::Serialize;
use serde_json::Value;

use super::cases::{CaseVerdict, PolicyCase, PolicyCases, ScriptedApproval};
use crate::trace::{ExplainOutcome, ExplainStep, ExplainVerdict};
use crate::{HookContext, HookRegistry, Observation};

/// What a case's call actually got.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseOutcome {
    /// The verdict.
    pub verdict: CaseVerdict,
    /// The hook that blocked, withheld, asked, or was not run.
    pub by: Option<String>,
    /// Why it blocked or withheld.
    pub reason: Option<String>,
    /// The arguments the tool gets, when it runs.
    pub args: Option<Value>,
    /// What the model reads back, when that is known (not while a call
    /// waits for a person or a command's verdict, nor without a scripted
    /// tool result).
    pub observation: Option<Observation>,
    /// What each pre hook did.
    pub pre: Vec<ExplainStep>,
    /// What each post hook did to the scripted result.
    pub post: Vec<ExplainStep>,
}

/// A case and how it went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseReport {
    /// The case's name.
    pub name: String,
    /// What its call got.
    pub actual: CaseOutcome,
    /// Every way that differs from the expectation: empty when it passed.
    pub problems: Vec<String>,
}

impl CaseReport {
    /// Whether the call got what the case expects.
    pub fn passed(&self) -> bool {
        self.problems.is_empty()
    }
}

/// A table's results, in case order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PolicyReport {
    /// One result per case.
    pub results: Vec<CaseReport>,
}

impl PolicyReport {
    /// How many cases passed.
    pub fn passed(&self) -> usize {
        self.results.iter().filter(|r| r.passed()).count()
    }

    /// How many cases failed.
    pub fn failed(&self) -> usize {
        self.results.len() - self.passed()
    }
}

impl PolicyCases {
    /// Runs every case through `registry` for the agent `agent_id`, as dry
    /// runs: no tool runs, no approval is asked, no quota is spent, command
    /// hooks run only with [`run_commands`](PolicyCases::run_commands) (or
    /// `run_commands` here). Build the registry with the org modes in
    /// [`read_only_orgs`](PolicyCases::read_only_orgs).
    pub async fn run(
        &self,
        registry: &HookRegistry,
        agent_id: &str,
        run_commands: bool,
    ) -> PolicyReport {
        let run_commands = run_commands || self.run_commands;
        let mut results = Vec::with_capacity(self.cases.len());
        for (index, case) in self.cases.iter().enumerate() {
            let actual = outcome(registry, agent_id, case, index, run_commands).await;
            let mut problems = compare(case, &actual, registry);
            if actual.verdict == CaseVerdict::Unknown && case.expect.verdict != CaseVerdict::Unknown
            {
                problems.push(
                    "a command hook decides this call and was not run: pass --run-commands \
                     or set `run_commands: true` in the cases file"
                        .to_owned(),
                );
            }
            results.push(CaseReport {
                name: case.name.clone(),
                actual,
                problems,
            });
        }
        PolicyReport { results }
    }
}

/// The case's call as the hooks would treat it.
async fn outcome(
    registry: &HookRegistry,
    agent_id: &str,
    case: &PolicyCase,
    index: usize,
    run_commands: bool,
) -> CaseOutcome {
    let context = |args: Value| {
        let mut ctx = HookContext::tool_call(case.tool.clone(), args)
            .with_agent(agent_id)
            .with_user(case.user.clone())
            .with_org(case.org.clone())
            .with_conversation(case.conversation.clone())
            .with_tool_call_id(format!("case-{}", index + 1))
            .with_surface(case.surface);
        for (key, value) in &case.metadata {
            ctx = ctx.with_metadata(key.clone(), value.clone());
        }
        ctx
    };
    let explanation = registry
        .explain(context(case.args.clone()), run_commands)
        .await;
    let mut actual = CaseOutcome {
        verdict: CaseVerdict::Allowed,
        by: None,
        reason: None,
        args: None,
        observation: None,
        pre: explanation.steps,
        post: Vec::new(),
    };
    let asker = actual
        .pre
        .iter()
        .find(|step| step.verdict == ExplainVerdict::WouldAsk)
        .map(|step| step.name.clone());
    match explanation.outcome {
        ExplainOutcome::Blocked => {
            let hook = explanation.blocked_by.unwrap_or_default();
            let reason = explanation.reason.unwrap_or_default();
            actual.verdict = CaseVerdict::Blocked;
            actual.observation = Some(Observation::Blocked {
                hook: hook.clone(),
                reason: reason.clone(),
            });
            actual.by = Some(hook);
            actual.reason = Some(reason);
            return actual;
        }
        ExplainOutcome::WouldRun => {
            actual.verdict = CaseVerdict::Unknown;
            actual.by = first_with(&actual.pre, &ExplainVerdict::WouldRun);
            return actual;
        }
        ExplainOutcome::WouldAsk => match case.approval {
            None => {
                actual.verdict = CaseVerdict::Asks;
                actual.by = asker;
                return actual;
            }
            Some(ScriptedApproval::Reject) => {
                let hook = asker.unwrap_or_default();
                let reason = "rejected by the approver (scripted in the case)".to_owned();
                actual.verdict = CaseVerdict::Blocked;
                actual.observation = Some(Observation::Blocked {
                    hook: hook.clone(),
                    reason: reason.clone(),
                });
                actual.by = Some(hook);
                actual.reason = Some(reason);
                return actual;
            }
            Some(ScriptedApproval::Approve) => {}
        },
        ExplainOutcome::GoAhead => {}
    }
    // The tool would run, with the arguments as the last rewrite left them.
    let args = actual
        .pre
        .iter()
        .rev()
        .find_map(|step| match &step.verdict {
            ExplainVerdict::Rewrite { args } => Some(args.clone()),
            _ => None,
        })
        .unwrap_or_else(|| case.args.clone());
    actual.args = Some(args.clone());
    let Some(tool_outcome) = case.outcome.clone() else {
        return actual;
    };
    let result = registry
        .explain_result(context(args), tool_outcome, run_commands)
        .await;
    actual.post = result.steps;
    if result.unknown {
        actual.verdict = CaseVerdict::Unknown;
        actual.by = first_with(&actual.post, &ExplainVerdict::WouldRun);
        return actual;
    }
    if let Observation::Withheld { hook, reason } = &result.observation {
        actual.verdict = CaseVerdict::Withheld;
        actual.reason = Some(reason.clone());
        actual.by = Some(hook.clone());
    }
    actual.observation = Some(result.observation);
    actual
}

/// The first hook whose step is `verdict`.
fn first_with(steps: &[ExplainStep], verdict: &ExplainVerdict) -> Option<String> {
    steps
        .iter()
        .find(|step| step.verdict == *verdict)
        .map(|step| step.name.clone())
}

/// Every way `actual` differs from what `case` expects.
fn compare(case: &PolicyCase, actual: &CaseOutcome, registry: &HookRegistry) -> Vec<String> {
    let expect = &case.expect;
    let mut problems = Vec::new();
    let got = || actual.verdict.describe(actual.by.as_deref());
    let wanted = expect.verdict.describe(expect.by.as_deref());
    let same_hook = expect.by.is_none() || expect.by == actual.by;
    if expect.verdict != actual.verdict || !same_hook {
        problems.push(format!("expected {wanted}, got {}", got()));
    }
    if let Some(hook) = &expect.by
        && !has_hook(registry, hook)
    {
        let names = hook_names(registry);
        let hint = crate::text::did_you_mean(hook, names.iter().map(String::as_str))
            .map(|near| format!(" (did you mean `{near}`?)"))
            .unwrap_or_default();
        problems.push(format!("the agent has no hook named `{hook}`{hint}"));
    }
    if let Some(wanted) = &expect.reason_contains {
        match &actual.reason {
            Some(reason) if reason.contains(wanted.as_str()) => {}
            Some(reason) => {
                problems.push(format!("the reason {reason:?} does not contain {wanted:?}"))
            }
            None => problems.push(format!(
                "expected a reason containing {wanted:?}, but nothing blocked or withheld the call"
            )),
        }
    }
    if let Some(wanted) = &expect.args {
        match &actual.args {
            Some(args) if args == wanted => {}
            Some(args) => problems.push(format!("the tool would get {args}, expected {wanted}")),
            None => problems.push(format!(
                "expected the tool to get {wanted}, but it would not run ({})",
                got()
            )),
        }
    }
    if let Some(wanted) = &expect.output {
        match actual.observation.as_ref().and_then(Observation::output) {
            Some(output) if output == wanted => {}
            Some(output) => {
                problems.push(format!("the model would see {output}, expected {wanted}"))
            }
            None => problems.push(format!(
                "expected the model to see the result {wanted}, but it would see {}",
                seen(actual)
            )),
        }
    }
    if let Some(wanted) = &expect.observation_contains {
        match &actual.observation {
            Some(observation) if observation.to_string().contains(wanted.as_str()) => {}
            Some(observation) => problems.push(format!(
                "the model would read {:?}, which does not contain {wanted:?}",
                observation.to_string()
            )),
            None => problems.push(format!(
                "expected the model to read text containing {wanted:?}, but it would read \
                 nothing yet ({})",
                got()
            )),
        }
    }
    let asked = actual
        .pre
        .iter()
        .any(|step| step.verdict == ExplainVerdict::WouldAsk);
    if let Some(approval) = case.approval
        && !asked
        && actual.verdict != CaseVerdict::Unknown
    {
        problems.push(format!(
            "the case scripts `approval: {}`, but no hook asks for approval",
            match approval {
                ScriptedApproval::Approve => "approve",
                ScriptedApproval::Reject => "reject",
            }
        ));
    }
    problems
}

/// What the model would see, for a message.
fn seen(actual: &CaseOutcome) -> String {
    match &actual.observation {
        Some(observation) => format!("{:?}", observation.to_string()),
        None => format!("nothing yet ({})", actual.verdict.as_str()),
    }
}

fn hook_names(registry: &HookRegistry) -> Vec<String> {
    let pre = registry.pre_tool_use().iter().map(|h| h.name().to_owned());
    let post = registry.post_tool_use().iter().map(|h| h.name().to_owned());
    pre.chain(post).collect()
}

/// Whether `name` can stop a call of this agent: one of its hooks, or the
/// runtime itself (which refuses a malformed tool name before any hook).
fn has_hook(registry: &HookRegistry, name: &str) -> bool {
    name == "runtime" || hook_names(registry).iter().any(|hook| hook == name)
}
