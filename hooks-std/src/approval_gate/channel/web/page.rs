//! The server-rendered approvals page: list, detail, decide forms, login.

use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::Uri;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, LOCATION, SET_COOKIE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::WebApprovals;
use super::api;
use super::auth::plain_credential;
use super::decide::DecideReply;
use super::session::{
    LOGIN_COOKIE, SESSION_COOKIE, cookie, random_bytes, set_cookie, tokens_match,
};
use super::signed::{Caller, Operator, Refusal};
use super::templates::{APP_JS, STYLE_CSS};
use crate::approval_gate::ApprovalDecision;
use crate::approval_gate::channel::render::Shown;

/// The longest form body read.
const MAX_FORM_BODY: usize = 16 * 1024;

/// How long the login form may be left open.
const LOGIN_FORM_TTL: Duration = Duration::from_secs(600);

/// Headers every page carries: no inline script, no framing, no caching.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

impl WebApprovals {
    /// The approvals page and its endpoints, to mount at
    /// [`WebConfig::base_path`](super::WebConfig::base_path), e.g.
    /// `Router::new().nest("/approvals", web.router())`. Serve it with the
    /// peer address recorded
    /// (`into_make_service_with_connect_info::<SocketAddr>()`) when
    /// operators come through a trusted header: without it every request
    /// is refused.
    ///
    /// Pages: `GET /` (pending and recent), `GET /requests/{id}`, `POST
    /// /requests/{id}/decide` (form), `GET|POST /login`, `POST /logout`.
    /// Inline endpoints (JSON and SSE, shapes in `docs/approvals-web.md`):
    /// `GET /api/requests[?agent=…&user=…]`, `GET /api/requests/{id}`,
    /// `GET /api/stream[?agent=…&user=…]`, `POST /api/requests/{id}/decide`.
    pub fn router(&self) -> Router {
        Router::new()
            .route("/", get(index))
            .route("/login", get(login_form).post(login))
            .route("/logout", post(logout))
            .route("/requests/{id}", get(detail))
            .route("/requests/{id}/decide", post(decide_form))
            .route("/fragments/recent", get(recent_fragment))
            .route("/fragments/requests/{id}", get(row_fragment))
            .route("/assets/app.js", get(script))
            .route("/assets/style.css", get(style))
            .route("/api/requests", get(api::list))
            .route("/api/requests/{id}", get(api::one))
            .route("/api/requests/{id}/decide", post(api::decide))
            .route("/api/stream", get(api::stream))
            .layer(axum::middleware::map_response(nosniff))
            .layer(DefaultBodyLimit::max(
                MAX_FORM_BODY.max(api::MAX_DECIDE_BODY),
            ))
            .with_state(self.clone())
    }

    fn base(&self) -> &str {
        &self.inner.config.base_path
    }

    fn home(&self) -> String {
        if self.base().is_empty() {
            "/".to_owned()
        } else {
            self.base().to_owned()
        }
    }

    fn cookie_path(&self) -> String {
        self.home()
    }

    /// What every template reads.
    async fn context(&self, operator: Option<&Operator>) -> Map<String, Value> {
        let now_ms = match self.inner.approvals.store().clock_ms().await {
            Ok(now) => now,
            Err(_) => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |since| i64::try_from(since.as_millis()).unwrap_or(0)),
        };
        let mut context = Map::new();
        context.insert("base".into(), json!(self.base()));
        context.insert("home".into(), json!(self.home()));
        context.insert("now_ms".into(), json!(now_ms));
        context.insert("has_login".into(), json!(self.inner.auth.has_login()));
        context.insert(
            "operator".into(),
            json!(operator.map(|operator| &operator.signed.operator)),
        );
        context.insert(
            "csrf".into(),
            json!(operator.map_or("", |operator| operator.signed.csrf.as_str())),
        );
        context.insert(
            "known".into(),
            json!(operator.is_some_and(|operator| operator.approver.is_some())),
        );
        // Who decisions are recorded as: the directory's user for this
        // operator (shown beside the operator id, so the mapping is seen).
        let mut shown = Shown::default();
        context.insert(
            "decides_as".into(),
            json!(
                operator
                    .and_then(|operator| operator.approver.as_ref())
                    .map(|approver| json!({
                        "user": shown.plain(&approver.user_id),
                        "org": shown.plain(&approver.org_id),
                    }))
            ),
        );
        context
    }

    fn render(&self, status: StatusCode, name: &str, context: Map<String, Value>) -> Response {
        match self.inner.templates.render(name, Value::Object(context)) {
            Ok(page) => html(status, page),
            Err(message) => html(StatusCode::INTERNAL_SERVER_ERROR, message),
        }
    }

    async fn message(&self, status: StatusCode, title: &str, message: &str) -> Response {
        let mut context = self.context(None).await;
        context.insert("title".into(), json!(title));
        context.insert("message".into(), json!(message));
        self.render(status, "message.html", context)
    }

    /// The operator of a page request, or where they go instead (the login
    /// form, or a page saying why they are refused).
    async fn page_operator(&self, caller: &Caller) -> Result<Operator, Response> {
        match self.operator(caller).await {
            Ok(operator) => Ok(operator),
            Err(Refusal::NotSignedIn) if self.inner.auth.has_login() => {
                Err(redirect(&format!("{}/login", self.base()), Vec::new()))
            }
            Err(refusal) => Err(self
                .message(refusal.status(), "Not signed in", &refusal.message())
                .await),
        }
    }

    async fn bad_csrf(&self) -> Response {
        self.message(
            StatusCode::FORBIDDEN,
            "Refused",
            "The form's security token is missing or wrong; reload the page and try again.",
        )
        .await
    }

    async fn unavailable(&self, error: &crate::storage::StorageError) -> Response {
        tracing::error!(%error, "approvals page: could not read requests");
        self.message(
            StatusCode::SERVICE_UNAVAILABLE,
            "Unavailable",
            "The requests could not be read (the database is unavailable). Try again shortly.",
        )
        .await
    }
}

async fn index(State(web): State<WebApprovals>, caller: Caller, uri: Uri) -> Response {
    let operator = match web.page_operator(&caller).await {
        Ok(operator) => operator,
        Err(elsewhere) => return elsewhere,
    };
    let notice = uri
        .query()
        .and_then(|query| serde_urlencoded::from_str::<Notice>(query).ok())
        .and_then(|notice| notice_text(&notice.done));
    let (pending, recent) = match (
        web.pending_for(&operator, None).await,
        web.recent_for(&operator).await,
    ) {
        (Ok(pending), Ok(recent)) => (pending, recent),
        (Err(error), _) | (_, Err(error)) => return web.unavailable(&error).await,
    };
    let mut context = web.context(Some(&operator)).await;
    let pending = web.summaries(&pending);
    let recent = web.summaries(&recent);
    context.insert("pending".into(), json!(pending));
    context.insert("recent".into(), json!(recent));
    context.insert("notice".into(), json!(notice));
    web.render(StatusCode::OK, "index.html", context)
}

#[derive(Deserialize)]
struct Notice {
    done: String,
}

/// The fixed text of a `?done=` notice (never text from the URL itself).
fn notice_text(code: &str) -> Option<&'static str> {
    Some(match code {
        "approved" => "Approved.",
        "rejected" => "Rejected.",
        "expired" => "That request expired before your decision; nothing was approved.",
        "already_final" => "That request was already decided; nothing changed.",
        "refused" => "You may not decide that request; nothing changed.",
        "saving" => "Your decision was being saved; check the recent decisions.",
        "unavailable" => "Your decision could not be recorded; nothing changed. Try again.",
        _ => return None,
    })
}

async fn detail(
    State(web): State<WebApprovals>,
    Path(id): Path<String>,
    caller: Caller,
) -> Response {
    let operator = match web.page_operator(&caller).await {
        Ok(operator) => operator,
        Err(elsewhere) => return elsewhere,
    };
    let found = match web.inner.approvals.store().get(&id).await {
        Ok(found) => found,
        Err(error) => return web.unavailable(&error).await,
    };
    let mut visible = None;
    if let Some(found) = found
        && web.visible(&operator, &found).await
    {
        visible = Some(found);
    }
    let Some(found) = visible else {
        return web
            .message(
                StatusCode::NOT_FOUND,
                "Not found",
                "There is no such request for you to see.",
            )
            .await;
    };
    let mut context = web.context(Some(&operator)).await;
    context.insert("r".into(), json!(web.detail(&found)));
    web.render(StatusCode::OK, "detail.html", context)
}

#[derive(Deserialize)]
struct DecideForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    decision: String,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    args_digest: Option<String>,
}

async fn decide_form(
    State(web): State<WebApprovals>,
    Path(id): Path<String>,
    caller: Caller,
    body: Bytes,
) -> Response {
    let operator = match web.page_operator(&caller).await {
        Ok(operator) => operator,
        Err(elsewhere) => return elsewhere,
    };
    let Some(form) = read_form::<DecideForm>(&body) else {
        return web
            .message(
                StatusCode::BAD_REQUEST,
                "Bad request",
                "The form could not be read.",
            )
            .await;
    };
    if !WebApprovals::csrf_ok(&operator, Some(&form.csrf)) {
        return web.bad_csrf().await;
    }
    let Some(decision) = ApprovalDecision::parse(&form.decision) else {
        return web
            .message(
                StatusCode::BAD_REQUEST,
                "Bad request",
                "Choose Approve or Reject.",
            )
            .await;
    };
    let reply: DecideReply = web
        .decide(
            &operator,
            &id,
            decision,
            form.reason.as_deref(),
            form.args_digest
                .as_deref()
                .filter(|digest| !digest.is_empty()),
        )
        .await;
    let code = match (reply.outcome, decision) {
        ("decided", ApprovalDecision::Approve) => "approved",
        ("decided", ApprovalDecision::Reject) => "rejected",
        (other, _) => other,
    };
    redirect(&format!("{}?done={code}", web.home()), Vec::new())
}

#[derive(Deserialize)]
struct LoginForm {
    #[serde(default)]
    operator: String,
    #[serde(default)]
    token: String,
    #[serde(default)]
    csrf: String,
}

async fn login_form(State(web): State<WebApprovals>) -> Response {
    login_page(&web, StatusCode::OK, None).await
}

/// The login form, with a fresh double-submit token in a cookie and a field.
async fn login_page(web: &WebApprovals, status: StatusCode, error: Option<&str>) -> Response {
    if !web.inner.auth.has_login() {
        return web
            .message(
                StatusCode::NOT_FOUND,
                "No sign-in here",
                "Operators are signed in by the auth proxy in front of this page.",
            )
            .await;
    }
    let login_csrf = hex::encode(random_bytes());
    let mut context = web.context(None).await;
    context.insert("login_csrf".into(), json!(login_csrf));
    context.insert("error".into(), json!(error));
    let mut response = web.render(status, "login.html", context);
    let cookie = set_cookie(
        LOGIN_COOKIE,
        &login_csrf,
        &web.cookie_path(),
        LOGIN_FORM_TTL,
        web.inner.config.secure_cookies,
    );
    append_cookie(&mut response, &cookie);
    response
}

async fn login(State(web): State<WebApprovals>, caller: Caller, body: Bytes) -> Response {
    let expected = cookie(&caller.headers, LOGIN_COOKIE).map(str::to_owned);
    let Some(form) = read_form::<LoginForm>(&body) else {
        return login_page(
            &web,
            StatusCode::BAD_REQUEST,
            Some("The form could not be read."),
        )
        .await;
    };
    if !expected.is_some_and(|expected| tokens_match(&form.csrf, &expected)) {
        return login_page(
            &web,
            StatusCode::FORBIDDEN,
            Some("The sign-in form expired or did not come from this page; try again."),
        )
        .await;
    }
    // An id no operator can have (too long, hidden characters) is refused
    // before the throttle keeps it: its failure table holds plain ids only.
    if !plain_credential(&form.operator) {
        return login_page(
            &web,
            StatusCode::UNAUTHORIZED,
            Some("Wrong operator or token."),
        )
        .await;
    }
    // Argon2 is slow on purpose: few checks at once, none for an operator
    // or address that keeps failing.
    let Some(permit) = web.inner.logins.admit(&form.operator, caller.peer) else {
        tracing::warn!("approvals page: a sign-in was throttled");
        return login_page(
            &web,
            StatusCode::TOO_MANY_REQUESTS,
            Some("Too many sign-in attempts; wait a minute and try again."),
        )
        .await;
    };
    // The check runs to its end holding the permit even if the client
    // goes away, so no more than the limit ever run at once.
    let auth = std::sync::Arc::clone(&web.inner.auth);
    let (name, token) = (form.operator.clone(), form.token.clone());
    let verified = tokio::spawn(async move {
        let verified = auth.login(&name, &token).await;
        drop(permit);
        verified
    })
    .await
    .unwrap_or(None);
    let Some(operator) = verified else {
        web.inner.logins.failed(&form.operator, caller.peer);
        tracing::warn!("approvals page: a sign-in with a wrong operator or token was refused");
        return login_page(
            &web,
            StatusCode::UNAUTHORIZED,
            Some("Wrong operator or token."),
        )
        .await;
    };
    web.inner.logins.succeeded(&operator, caller.peer);
    let session = web.inner.sessions.start(&operator);
    let secure = web.inner.config.secure_cookies;
    let path = web.cookie_path();
    redirect(
        &web.home(),
        vec![
            set_cookie(
                SESSION_COOKIE,
                &session,
                &path,
                web.inner.sessions.ttl(),
                secure,
            ),
            set_cookie(LOGIN_COOKIE, "", &path, Duration::ZERO, secure),
        ],
    )
}

#[derive(Deserialize)]
struct CsrfForm {
    #[serde(default)]
    csrf: String,
}

async fn logout(State(web): State<WebApprovals>, caller: Caller, body: Bytes) -> Response {
    let operator = match web.page_operator(&caller).await {
        Ok(operator) => operator,
        Err(elsewhere) => return elsewhere,
    };
    let form = read_form::<CsrfForm>(&body);
    if !form.is_some_and(|form| WebApprovals::csrf_ok(&operator, Some(&form.csrf))) {
        return web.bad_csrf().await;
    }
    web.inner.sessions.end(&caller.headers);
    let path = web.cookie_path();
    redirect(
        &format!("{}/login", web.base()),
        vec![set_cookie(
            SESSION_COOKIE,
            "",
            &path,
            Duration::ZERO,
            web.inner.config.secure_cookies,
        )],
    )
}

async fn recent_fragment(State(web): State<WebApprovals>, caller: Caller) -> Response {
    let Ok(operator) = web.operator(&caller).await else {
        return StatusCode::UNAUTHORIZED.into_response();
    };
    let recent = match web.recent_for(&operator).await {
        Ok(recent) => recent,
        Err(error) => return web.unavailable(&error).await,
    };
    let recent = web.summaries(&recent);
    let mut context = web.context(Some(&operator)).await;
    context.insert("recent".into(), json!(recent));
    web.render(StatusCode::OK, "recent.html", context)
}

async fn row_fragment(
    State(web): State<WebApprovals>,
    Path(id): Path<String>,
    caller: Caller,
) -> Response {
    let Ok(operator) = web.operator(&caller).await else {
        return StatusCode::UNAUTHORIZED.into_response();
    };
    let found = match web.inner.approvals.store().get(&id).await {
        Ok(found) => found,
        Err(error) => return web.unavailable(&error).await,
    };
    let Some(found) = found.filter(|found| !found.status.is_terminal()) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    if !web.visible(&operator, &found).await {
        return StatusCode::NOT_FOUND.into_response();
    }
    let mut context = web.context(Some(&operator)).await;
    context.insert("r".into(), json!(web.summary(&found)));
    web.render(StatusCode::OK, "row.html", context)
}

async fn script() -> Response {
    asset("text/javascript; charset=utf-8", APP_JS)
}

async fn style() -> Response {
    asset("text/css; charset=utf-8", STYLE_CSS)
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// Marks every response `X-Content-Type-Options: nosniff`: browsers take
/// each body as the type it is sent with (JSON is never run as script).
async fn nosniff(mut response: Response) -> Response {
    response.headers_mut().insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// Reads an URL-encoded form body (the router limits it to [`MAX_FORM_BODY`] bytes).
fn read_form<T: serde::de::DeserializeOwned>(body: &[u8]) -> Option<T> {
    serde_urlencoded::from_bytes(body).ok()
}

fn html(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        "content-security-policy",
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    headers.insert("x-frame-options", HeaderValue::from_static("DENY"));
    response
}

fn redirect(to: &str, cookies: Vec<String>) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(location) = HeaderValue::from_str(to) {
        response.headers_mut().insert(LOCATION, location);
    }
    for cookie in cookies {
        append_cookie(&mut response, &cookie);
    }
    response
}

fn append_cookie(response: &mut Response, cookie: &str) {
    if let Ok(value) = HeaderValue::from_str(cookie) {
        response.headers_mut().append(SET_COOKIE, value);
    }
}
