//! The simulated approval side shared by the examples that run the gate:
//! "our" web server taking Feishu's callbacks, and an operator who reads each
//! card in the fake Feishu group and presses a button.

use std::time::Duration;

use axum::Router;
use hooks::approval_gate::{ApprovalDecision, Approvals};
use hooks_testkit::feishu::{CardClick, FakeFeishu};

/// The approvers' Feishu group.
pub(crate) const CHAT: &str = "oc_finance_approvals";
/// The operator's Feishu open id.
pub(crate) const OPERATOR: &str = "ou_7d8a6e6df7621556ce0d21922b676706";

/// Mounts the approval callback router in "our" web server on loopback.
pub(crate) async fn serve_callbacks(callbacks: Router) -> std::io::Result<String> {
    let app = Router::new().nest("/feishu/callback", callbacks);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/feishu/callback", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(url)
}

/// The simulated operator: reads each new card in the Feishu group and
/// presses a button — approve up to 100,000, reject above.
pub(crate) async fn operator(feishu: FakeFeishu, approvals: Approvals, callback_url: String) {
    let mut seen = 0;
    loop {
        let cards = feishu.sent_cards();
        for card in &cards[seen..] {
            let Some(id) = card.request_id() else {
                continue;
            };
            let Ok(Some(request)) = approvals.store().get(id).await else {
                continue;
            };
            let amount = request.args["amount"].as_f64().unwrap_or(f64::MAX);
            let decision = if amount <= 100_000.0 {
                ApprovalDecision::Approve
            } else {
                ApprovalDecision::Reject
            };
            tokio::time::sleep(Duration::from_millis(400)).await;
            println!(
                "   [Feishu] wang.fang reads the card for {} and presses {decision:?}",
                request.tool_name
            );
            let click = CardClick::new(id, decision, OPERATOR, CHAT);
            match feishu.click(&callback_url, &click).await {
                Ok((status, reply)) => println!(
                    "   [Feishu] callback answered {status}: \"{}\"",
                    reply["toast"]["content"].as_str().unwrap_or_default()
                ),
                Err(error) => println!("   [Feishu] could not press the button: {error}"),
            }
        }
        seen = cards.len();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
