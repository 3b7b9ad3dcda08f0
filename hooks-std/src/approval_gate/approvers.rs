//! Who is pressing the button: platform identities mapped to users, and the
//! approver-scope check every channel goes through.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;

use super::request::{ApproverScope, ConfirmationRequest};

/// A boxed future returned by [`ApproverDirectory`] methods.
pub type DirectoryFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, String>> + Send + 'a>>;

/// A person who may be asked to approve, as the directory knows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approver {
    /// The user id used by agents (`HookContext::user_id`).
    pub user_id: String,
    /// The user's org.
    pub org_id: String,
}

/// Maps platform identities (a Feishu open_id, a Slack user id) to users, and
/// agents to their owners. Pluggable: back it with your user database.
pub trait ApproverDirectory: Send + Sync {
    /// The user behind `platform_id` on channel `channel_kind`, or `None` if unknown.
    fn resolve<'a>(
        &'a self,
        channel_kind: &'a str,
        platform_id: &'a str,
    ) -> DirectoryFuture<'a, Option<Approver>>;

    /// The owner of `agent_id`, if it has one.
    fn agent_owner<'a>(&'a self, agent_id: &'a str) -> DirectoryFuture<'a, Option<String>>;
}

/// An in-memory directory, for tests, examples and small deployments.
#[derive(Debug, Clone, Default)]
pub struct StaticDirectory {
    people: HashMap<(String, String), Approver>,
    owners: HashMap<String, String>,
}

impl StaticDirectory {
    /// An empty directory.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the user `user_id` of `org_id`, known on `channel_kind` as `platform_id`.
    pub fn person(
        mut self,
        channel_kind: &str,
        platform_id: &str,
        user_id: &str,
        org_id: &str,
    ) -> Self {
        self.people.insert(
            (channel_kind.to_owned(), platform_id.to_owned()),
            Approver {
                user_id: user_id.to_owned(),
                org_id: org_id.to_owned(),
            },
        );
        self
    }

    /// Records `user_id` as the owner of `agent_id`.
    pub fn agent_owner(mut self, agent_id: &str, user_id: &str) -> Self {
        self.owners.insert(agent_id.to_owned(), user_id.to_owned());
        self
    }
}

impl ApproverDirectory for StaticDirectory {
    fn resolve<'a>(
        &'a self,
        channel_kind: &'a str,
        platform_id: &'a str,
    ) -> DirectoryFuture<'a, Option<Approver>> {
        let found = self
            .people
            .get(&(channel_kind.to_owned(), platform_id.to_owned()))
            .cloned();
        Box::pin(async move { Ok(found) })
    }

    fn agent_owner<'a>(&'a self, agent_id: &'a str) -> DirectoryFuture<'a, Option<String>> {
        let found = self.owners.get(agent_id).cloned();
        Box::pin(async move { Ok(found) })
    }
}

/// Whether `approver` may decide `request`: on its allowlist, or within its scope.
pub async fn may_decide(
    directory: &dyn ApproverDirectory,
    request: &ConfirmationRequest,
    approver: &Approver,
) -> Result<bool, String> {
    if request.approver_allowlist.contains(&approver.user_id) {
        return Ok(true);
    }
    Ok(match request.approver_scope {
        ApproverScope::Initiator => {
            !request.initiator_user_id.is_empty() && approver.user_id == request.initiator_user_id
        }
        ApproverScope::AgentOwner => {
            directory.agent_owner(&request.agent_id).await?.as_deref()
                == Some(approver.user_id.as_str())
        }
        ApproverScope::OrgMembers => {
            !request.org_id.is_empty() && approver.org_id == request.org_id
        }
        ApproverScope::Allowlist => false,
    })
}
