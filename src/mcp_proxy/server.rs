//! The proxy's server side: what the MCP client talks to.

use std::sync::Arc;

#[allow(deprecated)]
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, ErrorData,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, InitializeRequestParams,
    InitializeResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ServerConfig, SetLevelRequestParams,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, ServiceError};
use rmcp::{RoleClient, RoleServer, ServerHandler};

use serde_json::json;

use super::answer::Answer;
use super::{Shared, call, tools};

/// One client's session with the proxy.
#[derive(Clone)]
pub(super) struct ProxyServer {
    pub(super) shared: Arc<Shared>,
    /// The session's conversation id.
    pub(super) session: Arc<str>,
}

impl ProxyServer {
    /// The upstream's peer, or the protocol error a client gets when there
    /// is none (for requests other than `tools/call`, which answers with an
    /// error result instead).
    async fn upstream(&self) -> Result<Peer<RoleClient>, ErrorData> {
        self.shared.upstream.peer().await.map_err(|reason| {
            // The reason may quote the upstream (a failed tools/list while
            // it started again): it goes to the log, not to the client.
            let server = &self.shared.settings.server;
            tracing::warn!(server = %server, %reason, "the upstream MCP server is not available");
            ErrorData::internal_error(
                format!(
                    "the upstream MCP server `{server}` is not available right now; why is in \
                     the proxy's log"
                ),
                None,
            )
        })
    }

    /// An upstream failure of `method` (a request no hook reads: a list, or
    /// the log level) as the client's protocol error: the upstream's error
    /// code with a fixed text of the proxy's. The upstream's message and
    /// `data` are free text no hook has seen, so they go to the proxy's log
    /// only. A transport failure marks the upstream lost.
    fn passed_on(&self, method: &str, error: ServiceError) -> ErrorData {
        let server = &self.shared.settings.server;
        match error {
            ServiceError::McpError(error) => {
                tracing::warn!(
                    server = %server,
                    method,
                    code = error.code.0,
                    message = %error.message,
                    "the upstream MCP server refused a request (its message is not passed on)"
                );
                ErrorData::new(
                    error.code,
                    format!(
                        "the upstream MCP server `{server}` refused `{method}` (error {}); \
                         its message is in the proxy's log",
                        error.code.0
                    ),
                    None,
                )
            }
            other => {
                let failure = self.shared.upstream.failure(&other);
                tracing::warn!(server = %server, method, %failure, "the upstream MCP server failed a request");
                ErrorData::internal_error(
                    format!(
                        "the upstream MCP server `{server}` failed `{method}`; why is in the \
                         proxy's log"
                    ),
                    None,
                )
            }
        }
    }
}

impl ServerHandler for ProxyServer {
    fn get_info(&self) -> ServerConfig {
        self.shared.info.clone()
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        self.shared.downstream.add(context.peer.clone());
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = self
            .upstream()
            .await?
            .list_tools(request)
            .await
            .map_err(|error| self.passed_on("tools/list", error))?
            .answered();
        let hidden = &self.shared.settings.hide_tools;
        tools.tools.retain(|tool| {
            !tools::hidden(hidden, &tool.name) && !tools::PSEUDO_TOOLS.contains(&tool.name.as_ref())
        });
        Ok(tools)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(
            match call::call_tool(&self.shared, &self.session, request, context).await {
                CallToolResponse::Complete(result) => result.answered().into(),
                other => other,
            },
        )
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let upstream = self.upstream().await?;
        upstream
            .list_resources(request)
            .await
            .map_err(|error| self.passed_on("resources/list", error))
            .map(Answer::answered)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let upstream = self.upstream().await?;
        upstream
            .list_resource_templates(request)
            .await
            .map_err(|error| self.passed_on("resources/templates/list", error))
            .map(Answer::answered)
    }

    /// The hooks' pseudo-tool `resources/read`, with `{uri}`.
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        call::call_pseudo_tool(
            &self.shared,
            &self.session,
            "resources/read",
            request,
            &context,
            async |peer: Peer<RoleClient>, request| peer.read_resource(request).await,
            |args, text| {
                let uri = args.get("uri")?.clone();
                Some(json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": text}]}))
            },
        )
        .await
        .map(|result: ReadResourceResult| result.answered().into())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let upstream = self.upstream().await?;
        upstream
            .list_prompts(request)
            .await
            .map_err(|error| self.passed_on("prompts/list", error))
            .map(Answer::answered)
    }

    /// The hooks' pseudo-tool `prompts/get`, with `{name, arguments}`.
    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        call::call_pseudo_tool(
            &self.shared,
            &self.session,
            "prompts/get",
            request,
            &context,
            async |peer: Peer<RoleClient>, request| peer.get_prompt(request).await,
            |_, text| {
                Some(json!({"messages": [{"role": "user", "content": {"type": "text", "text": text}}]}))
            },
        )
        .await
        .map(|result: GetPromptResult| result.answered().into())
    }

    /// The hooks' pseudo-tool `completion/complete`, with `{ref, argument,
    /// context}`.
    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        call::call_pseudo_tool(
            &self.shared,
            &self.session,
            "completion/complete",
            request,
            &context,
            async |peer: Peer<RoleClient>, request| peer.complete(request).await,
            |_, _| None,
        )
        .await
        .map(Answer::answered)
    }

    // Logging is deprecated in the newest protocol revision; clients and
    // servers of earlier ones still use it.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let upstream = self.upstream().await?;
        upstream
            .set_level(request)
            .await
            .map_err(|error| self.passed_on("logging/setLevel", error))
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        if let Ok(upstream) = self.shared.upstream.peer().await {
            let _ = upstream.notify_roots_list_changed().await;
        }
    }
}
