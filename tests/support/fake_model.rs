//! A scripted fake model API (a Python program under tests/) for driving a
//! real client offline.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncBufReadExt;

/// Starts `program` (relative to the crate) on `script`, logging every
/// request to `log`: the running fake (killed when dropped) and the port it
/// bound on 127.0.0.1.
pub(crate) async fn start(
    program: &str,
    script: &Path,
    log: &Path,
) -> (tokio::process::Child, u16) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut api = tokio::process::Command::new("python3")
        .arg(root.join(program))
        .arg(script)
        .arg(log)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the fake API starts");
    let mut first = String::new();
    let mut lines = tokio::io::BufReader::new(api.stdout.take().expect("stdout"));
    tokio::time::timeout(Duration::from_secs(30), lines.read_line(&mut first))
        .await
        .expect("the fake API starts within 30 s")
        .expect("the fake API says its port");
    let port = first.trim().parse().expect("a port");
    (api, port)
}
