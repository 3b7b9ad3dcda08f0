//! The `hooks` command-line tool: output and exit codes.

use std::process::{Command, Output};

use serde_json::Value;

fn hooks(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hooks"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the hooks binary runs")
}

/// Asserts that `output` contains each of `parts`, showing it whole otherwise.
fn assert_contains(output: &str, parts: &[&str]) {
    for part in parts {
        assert!(output.contains(part), "{part:?} missing from\n{output}");
    }
}

/// `hooks check` of a config file `name` holding `contents`.
fn check_file(name: &str, contents: impl AsRef<[u8]>) -> Output {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join(name);
    std::fs::write(&path, contents).expect("write");
    hooks(&["check", path.to_str().expect("utf8")])
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const AGENT: &str = "examples/agent.yaml";

#[test]
fn check_prints_the_run_order_of_a_valid_config() {
    let out = hooks(&["check", AGENT]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_contains(&stdout, &["valid; agent `finance-bot`"]);
    for name in [
        "approval_gate",
        "readonly_guard",
        "connector_rate_limit",
        "result_truncate",
    ] {
        assert!(stdout.contains(name), "{name} missing from\n{stdout}");
    }
    let gate = stdout.find("approval_gate").expect("gate");
    let limit = stdout.find("connector_rate_limit").expect("limit");
    assert!(
        gate < limit,
        "run order: the gate (priority 10) before the limit (20)"
    );
}

#[test]
fn check_reports_every_error_and_exits_1() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("broken.yaml");
    std::fs::write(
        &path,
        "agent: x\nhooks:\n  class_hooks: [readonly_gaurd, nope_hook]\n",
    )
    .expect("write");
    let out = hooks(&["check", path.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert_contains(
        &stderr,
        &[
            "broken.yaml: hooks.class_hooks[0] (readonly_gaurd): unknown hook",
            "did you mean \"readonly_guard\"",
            "hooks.class_hooks[1] (nope_hook)",
            "2 error(s); the agent would not run",
        ],
    );

    let json = hooks(&["check", path.to_str().expect("utf8"), "--format", "json"]);
    assert_eq!(json.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&json.stdout).expect("json");
    assert_eq!(report["valid"], false);
    assert_eq!(report["errors"].as_array().map(Vec::len), Some(2));
}

#[test]
fn check_as_json_lists_the_hooks() {
    let out = hooks(&["check", AGENT, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["valid"], true);
    assert_eq!(report["agent"], "finance-bot");
    assert_eq!(report["hooks"][1]["name"], "approval_gate");
    assert_eq!(report["observers"], serde_json::json!(["audit_log"]));
}

#[test]
fn explain_shows_which_hook_would_block_and_exits_3() {
    let out = hooks(&[
        "explain",
        AGENT,
        "--tool",
        "sql_exec",
        "--args",
        r#"{"sql": "DELETE FROM invoices"}"#,
        "--org",
        "acme",
        "--read-only-org",
        "acme",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_contains(
        &stdout,
        &[
            "BLOCK: Org is in read-only mode — write blocked.",
            "=> blocked by `readonly_guard`",
        ],
    );
    assert!(
        stdout.contains("not reached"),
        "hooks after the block: {stdout}"
    );

    let reads = hooks(&[
        "explain",
        AGENT,
        "--tool",
        "sql_query",
        "--args",
        r#"{"sql": "SELECT 1"}"#,
        "--org",
        "acme",
        "--read-only-org",
        "acme",
    ]);
    assert_eq!(reads.status.code(), Some(0), "{}", text(&reads.stdout));
}

#[test]
fn explain_escapes_what_it_prints_so_a_pasted_call_cannot_forge_lines() {
    let forged_tool = "sql_query\n   1. readonly_guard           p5    allow\u{202E}";
    let out = hooks(&["explain", AGENT, "--tool", forged_tool, "--args", "{}"]);
    let stdout = text(&out.stdout);
    assert!(
        !stdout.contains('\u{202E}'),
        "a bidi override reached the table: {stdout}"
    );
    assert_contains(&stdout, &["sql_query\\u{A}   1. readonly_guard"]);
    assert_eq!(
        stdout
            .lines()
            .filter(|line| line.starts_with("   1."))
            .count(),
        1,
        "one row per hook:\n{stdout}"
    );
    assert_eq!(out.status.code(), Some(3), "a refused tool name blocks");
}

/// The outcome `explain --format json` reports, and the exit code it gives.
fn explain_json(args: &[&str]) -> (Option<i32>, Value) {
    let mut args = args.to_vec();
    args.extend(["--format", "json"]);
    let out = hooks(&args);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)));
    (out.status.code(), report)
}

/// A CI job tells the four outcomes apart by exit code alone: 0 would go
/// ahead, 3 would be blocked, 4 would ask for approval, 5 would run a
/// command whose verdict is unknown; `--format json` says the same.
#[test]
fn explain_exit_codes_tell_go_ahead_block_ask_and_unknown_apart() {
    let pay = [
        "explain",
        AGENT,
        "--tool",
        "oa__purchase_pay",
        "--args",
        r#"{"amount": 60000}"#,
    ];
    let read = [
        "explain",
        AGENT,
        "--tool",
        "sql_query",
        "--args",
        r#"{"sql": "SELECT 1"}"#,
    ];
    let write = [
        "explain",
        AGENT,
        "--tool",
        "sql_exec",
        "--args",
        r#"{"sql": "DELETE FROM invoices"}"#,
        "--org",
        "acme",
        "--read-only-org",
        "acme",
    ];
    let shell = [
        "explain",
        AGENT,
        "--tool",
        "shell_exec",
        "--args",
        r#"{"command": "ls"}"#,
    ];
    for (args, code, outcome, last_line) in [
        (&read[..], 0, "go_ahead", "=> would go ahead"),
        (&write[..], 3, "blocked", "=> blocked by `readonly_guard`"),
        (
            &pay[..],
            4,
            "would_ask",
            "=> would ask for approval; goes ahead only if approved",
        ),
        (
            &shell[..],
            5,
            "would_run",
            "=> depends on a command hook's verdict (--run-commands to run it)",
        ),
    ] {
        let out = hooks(args);
        let stdout = text(&out.stdout);
        assert_eq!(out.status.code(), Some(code), "{args:?}\n{stdout}");
        assert_eq!(stdout.lines().last(), Some(last_line), "{stdout}");
        let (json_code, report) = explain_json(args);
        assert_eq!(json_code, Some(code), "{report}");
        assert_eq!(report["outcome"], outcome, "{report}");
        assert_eq!(report["exit_code"], code, "{report}");
    }

    // Run, the command's verdict is known: `ls` goes ahead.
    let mut ran = shell.to_vec();
    ran.push("--run-commands");
    let out = hooks(&ran);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

#[test]
fn explain_reports_the_gate_and_commands_without_running_them() {
    let pay = hooks(&[
        "explain",
        AGENT,
        "--tool",
        "oa__purchase_pay",
        "--args",
        r#"{"amount": 60000}"#,
    ]);
    assert_eq!(pay.status.code(), Some(4));
    assert_contains(
        &text(&pay.stdout),
        &["approval_gate", "would ask for approval"],
    );

    let shell = [
        "explain",
        AGENT,
        "--tool",
        "shell_exec",
        "--args",
        r#"{"command": "rm -rf /"}"#,
    ];
    let dry = hooks(&shell);
    assert_eq!(dry.status.code(), Some(5));
    assert_contains(&text(&dry.stdout), &["would run its command"]);

    let mut run = shell.to_vec();
    run.push("--run-commands");
    let ran = hooks(&run);
    assert_eq!(ran.status.code(), Some(3), "{}", text(&ran.stdout));
    assert_contains(&text(&ran.stdout), &["destructive shell command refused"]);

    let (code, report) = explain_json(&[
        "explain",
        AGENT,
        "--tool",
        "oa__purchase_pay",
        "--args",
        r#"{"amount": 60000}"#,
    ]);
    assert_eq!(code, Some(4));
    assert_eq!(report["steps"][1]["name"], "approval_gate");
    assert_eq!(report["steps"][1]["verdict"], "would_ask");
    assert_eq!(report["blocked_by"], Value::Null);
}

#[test]
fn bad_usage_exits_2() {
    for args in [
        &[][..],
        &["frobnicate", AGENT][..],
        &["explain", AGENT][..],
        &["explain", AGENT, "--tool", "x", "--args", "not json"][..],
        &["check", AGENT, "--format", "xml"][..],
    ] {
        let out = hooks(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(text(&out.stderr).contains("--help"), "{args:?}");
    }
    let help = hooks(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    for sub in [
        "check",
        "explain",
        "test",
        "serve",
        "hook-client",
        "mcp-proxy",
    ] {
        assert!(text(&help.stdout).contains(sub), "`{sub}` is listed");
        let out = hooks(&[sub, "--help"]);
        assert_eq!(out.status.code(), Some(0), "{sub} --help");
        assert!(
            text(&out.stdout).contains(&format!("Usage: hooks {sub}")),
            "{sub} --help: {}",
            text(&out.stdout)
        );
    }
}

#[test]
fn explain_names_what_is_wrong_with_an_argument() {
    let out = hooks(&["explain", AGENT, "--tool", "x", "--args", "[1]"]);
    assert_eq!(out.status.code(), Some(2));
    assert_contains(&text(&out.stderr), &["--args", "must be a JSON object"]);
    let out = hooks(&["explain", AGENT]);
    assert_eq!(out.status.code(), Some(2));
    assert_contains(&text(&out.stderr), &["--tool"]);
    let out = hooks(&["check", AGENT, "--config", AGENT]);
    assert_eq!(out.status.code(), Some(2), "one config, given once");
}

#[test]
fn completions_are_printed_for_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let out = hooks(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        assert_contains(&text(&out.stdout), &["mcp-proxy", "read-only-org"]);
    }
}

/// A command whose program (or the script an interpreter or a shell line
/// runs) does not exist fails `check`, each named with its config path.
#[test]
fn check_fails_on_a_program_or_script_that_cannot_be_found() {
    for (commands, named) in [
        (
            "[\"no-such-hook-program-4711\"]}\n    - {event: PreToolUse, command: \"./hooks/gone.sh --strict\", shell: true}",
            "hooks.commands[0]: the command `no-such-hook-program-4711` is not on PATH",
        ),
        (
            "[\"bash\", \"missing.sh\"]}\n    - {event: PreToolUse, command: \"sh ./hooks/gone.sh\", shell: true}",
            "hooks.commands[0]: the script `missing.sh`",
        ),
    ] {
        let config = format!(
            "agent: x\nhooks:\n  commands:\n    - {{event: PreToolUse, command: {commands}\n"
        );
        let out = check_file("agent.yaml", config);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
        assert_contains(
            &text(&out.stderr),
            &[
                &format!("agent.yaml: {named}"),
                "agent.yaml: hooks.commands[1]: the script `./hooks/gone.sh`",
                "does not exist",
                "2 error(s); the agent would not run",
            ],
        );
    }
}

#[test]
fn check_refuses_a_config_over_1_mib() {
    let out = check_file("agent.yaml", format!("agent: x\n{}", "#\n".repeat(600_000)));
    assert_eq!(out.status.code(), Some(1));
    assert_contains(&text(&out.stderr), &["1 MiB", "not parsed"]);
}

/// The timeout column shows what the config says; where the runtime waits
/// longer (a command that may ask for approval waits for the gate's person
/// too; the gate adds its delivery allowance), the bound column and a note
/// under the table say how much longer and why. JSON carries the same.
#[test]
fn check_shows_configured_timeouts_and_explains_longer_bounds() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("agent.yaml");
    std::fs::write(
        &path,
        "agent: x\nhooks:\n  class_hooks:\n    - name: approval_gate\n      config: { timeout: 2m }\n    - readonly_guard\n  commands:\n    - {name: guard5, event: PreToolUse, command: [\"true\"], timeout: 5s}\n",
    )
    .expect("write");
    let out = hooks(&["check", path.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let cells = |name: &str| -> Vec<String> {
        let row = stdout
            .lines()
            .find(|line| line.split_whitespace().nth(2) == Some(name))
            .unwrap_or_else(|| panic!("no row for {name} in\n{stdout}"));
        row.split_whitespace().map(str::to_owned).collect()
    };
    // # point name priority when timeout bound on_error, `when` being "(always)".
    let guard = cells("guard5");
    assert_eq!(guard[5], "5s", "{stdout}");
    let (bound, mark) = guard[6].split_once('[').expect("a note mark");
    // 5s, +4s to kill, +2m and +30s for the gate: 159s.
    assert_eq!(bound, "159s", "{stdout}");
    let note = stdout
        .lines()
        .find(|line| line.starts_with(&format!("[{mark} guard5:")))
        .unwrap_or_else(|| panic!("no note [{mark} in\n{stdout}"));
    assert_contains(
        note,
        &[
            "159s = 5s configured",
            "+4s to kill and reap the command",
            "+150s while a person decides if the command asks for approval",
        ],
    );
    let gate = cells("approval_gate");
    assert_eq!(&gate[5..7], ["2m", "150s[1]"], "{stdout}");
    assert_contains(
        &stdout,
        &[
            "[1] approval_gate: 150s = 2m configured, +30s to create the request and deliver the card",
        ],
    );
    // A hook whose bound is its configured timeout: no bound, no note.
    let readonly = cells("readonly_guard");
    assert_eq!(readonly[readonly.len() - 2], "30s", "{stdout}");
    assert!(!stdout.contains("readonly_guard:"), "{stdout}");

    let json = hooks(&["check", path.to_str().expect("utf8"), "--format", "json"]);
    assert_eq!(json.status.code(), Some(0));
    let report: Value = serde_json::from_slice(&json.stdout).expect("json");
    let hook = |name: &str| -> Value {
        report["hooks"]
            .as_array()
            .and_then(|hooks| hooks.iter().find(|h| h["name"] == name))
            .cloned()
            .unwrap_or_else(|| panic!("no {name} in {report}"))
    };
    let guard = hook("guard5");
    assert_eq!(guard["timeout_ms"], 5_000);
    assert_eq!(guard["bound_ms"], 159_000);
    assert!(
        guard["bound_note"]
            .as_str()
            .is_some_and(|n| n.contains("while a person decides")),
        "{guard}"
    );
    let readonly = hook("readonly_guard");
    assert_eq!(readonly["timeout_ms"], readonly["bound_ms"]);
    assert_eq!(readonly["bound_note"], Value::Null);
}

const CASES: &str = "examples/agent.cases.yaml";

/// Writes `cases` to a file in a fresh directory.
fn cases_file(cases: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("cases.yaml");
    std::fs::write(&path, cases).expect("write");
    let path = path.to_str().expect("utf8").to_owned();
    (dir, path)
}

#[test]
fn test_passes_the_flagship_policy_table() {
    let out = hooks(&["test", AGENT, CASES]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert_contains(
        &stdout,
        &[
            "blocked by `readonly_guard`",
            "asks (`approval_gate`)",
            "blocked by `shell_guard`",
            "12 case(s): 12 passed, 0 failed",
        ],
    );
}

#[test]
fn test_reports_every_way_a_case_fails_and_exits_6() {
    let (_dir, cases) = cases_file(
        r#"
read_only_orgs: [acme]
cases:
  - name: a write thought to be allowed
    tool: sql_exec
    args: { sql: "DELETE FROM invoices" }
    org: acme
    expect: { verdict: allowed, args: { sql: "DELETE FROM invoices" } }
  - name: the gate named wrong
    tool: oa__purchase_pay
    args: { amount: 60000 }
    expect: { verdict: asks, by: aproval_gate }
  - name: an approval nobody asks for
    tool: sql_query
    args: { sql: "SELECT 1" }
    approval: approve
    expect: allowed
  - name: a shell command without --run-commands
    tool: shell_exec
    args: { command: "ls" }
    expect: allowed
  - name: passes
    tool: sql_query
    args: { sql: "SELECT 1" }
    expect: allowed
"#,
    );
    let out = hooks(&["test", AGENT, &cases]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(6), "{stdout}");
    assert_contains(
        &stdout,
        &[
            "FAIL   1. a write thought to be allowed",
            "expected allowed, got blocked by `readonly_guard`",
            "expected the tool to get {\"sql\":\"DELETE FROM invoices\"}, but it would not run",
            "expected asks (`aproval_gate`), got asks (`approval_gate`)",
            "the agent has no hook named `aproval_gate` (did you mean `approval_gate`?)",
            "the case scripts `approval: approve`, but no hook asks for approval",
            "got unknown (`shell_guard` not run)",
            "pass --run-commands",
            "ok     5. passes",
            "5 case(s): 1 passed, 4 failed",
        ],
    );

    // --run-commands decides the shell case; --format json says the same.
    let out = hooks(&["test", AGENT, &cases, "--run-commands", "--format", "json"]);
    assert_eq!(out.status.code(), Some(6));
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["failed"], 3);
    assert_eq!(report["cases"][3]["passed"], true);
    assert_eq!(report["cases"][0]["actual"]["by"], "readonly_guard");
    assert_eq!(
        report["cases"][0]["problems"][0],
        "expected allowed, got blocked by `readonly_guard`"
    );
}

#[test]
fn test_refuses_a_broken_table_with_every_problem_and_runs_nothing() {
    let (_dir, cases) = cases_file(
        r#"
run_comands: true
cases: []
"#,
    );
    let out = hooks(&["test", AGENT, &cases]);
    assert_eq!(out.status.code(), Some(1));
    assert_contains(
        &text(&out.stderr),
        &["unknown key `run_comands` (did you mean `run_commands`?)"],
    );

    let (_dir, cases) = cases_file(
        r#"
cases:
  - name: a
    tool: sql_query
    expcet: allowed
  - name: a
    tool: sql_query
    surface: dagstep
    expect: alowed
  - name: c
    tool: read
    result: 1
    tool_error: boom
    expect: { verdict: withheld, reason_contain: x }
  - name: d
    tool: read
    expect: { verdict: withheld }
  - name: e
    tool: read
    surface: evaluation
    expect: allowed
"#,
    );
    let out = hooks(&["test", AGENT, &cases]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert_contains(
        &stderr,
        &[
            "case 1 (`a`): the case: unknown key `expcet` (did you mean `expect`?)",
            "case 2 (`a`): another case has this name",
            "unknown variant `alowed`",
            "unknown surface `dagstep` (did you mean `dag_step`?)",
            "expect: unknown key `reason_contain` (did you mean `reason_contains`?)",
            "case 4 (`d`): the expectation is about the tool's result",
            "surface `evaluation` bypasses every hook",
            "no case ran",
        ],
    );
    assert!(!text(&out.stdout).contains("passed"), "no case ran");
}

#[test]
fn test_escapes_what_it_prints_so_a_case_cannot_forge_a_passing_line() {
    let (_dir, cases) = cases_file(
        "cases:\n  - name: \"x\\n  ok     2. everything is fine\\u202E\"\n    tool: sql_exec\n    \
         args: { sql: \"DELETE FROM invoices\" }\n    org: acme\n    expect: allowed\n",
    );
    let out = hooks(&["test", AGENT, &cases, "--read-only-org", "acme"]);
    assert_eq!(out.status.code(), Some(6));
    let stdout = text(&out.stdout);
    assert!(!stdout.contains('\u{202E}'), "{stdout}");
    assert!(
        !stdout.lines().any(|line| line.starts_with("  ok")),
        "a forged passing line:\n{stdout}"
    );
    assert_contains(&stdout, &["x\\u{A}  ok     2. everything is fine\\u{202E}"]);
}

#[test]
fn test_and_explain_options_do_not_mix() {
    let out = hooks(&["test", AGENT, CASES, "--tool", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert_contains(
        &text(&out.stderr),
        &["unexpected argument '--tool'", "Usage: hooks test"],
    );
    let out = hooks(&["test", AGENT]);
    assert_eq!(out.status.code(), Some(2));
    assert_contains(&text(&out.stderr), &["<CASES>"]);
}

#[test]
fn check_prints_the_args_paths_it_cannot_check() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("unchecked.yaml");
    std::fs::write(
        &path,
        "agent: x\nhooks:\n  class_hooks:\n    - name: approval_gate\n      config:\n        \
         when: 'args.amount > 5'\n",
    )
    .expect("write");
    let out = hooks(&["check", path.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_contains(
        &text(&out.stdout),
        &[
            "warning: `args.amount` is not checked",
            "not restricted to named tools",
        ],
    );
    let out = hooks(&["check", "--format", "json", path.to_str().expect("utf8")]);
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        report["warnings"].as_array().map(Vec::len),
        Some(1),
        "{report}"
    );
}

/// A read-only guard with no `dialect` reads SQL under every dialect and
/// blocks ordinary reads one of them cannot parse: `hooks check` says so,
/// and says nothing once the dialect is named.
#[test]
fn check_warns_about_a_read_only_guard_reading_every_dialect() {
    let dir = tempfile::tempdir().expect("dir");
    let every = dir.path().join("every.yaml");
    std::fs::write(
        &every,
        "agent: x\nhooks:\n  class_hooks: [readonly_guard]\n",
    )
    .expect("write");
    let out = hooks(&["check", every.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_contains(
        &text(&out.stdout),
        &[
            "hooks.class_hooks[0] (readonly_guard): warning: `dialect` is not set",
            "dialect: postgresql",
        ],
    );
    let one = dir.path().join("one.yaml");
    std::fs::write(
        &one,
        "agent: x\nhooks:\n  class_hooks:\n    - name: readonly_guard\n      config:\n        \
         dialect: postgresql\n",
    )
    .expect("write");
    let out = hooks(&["check", "--format", "json", one.to_str().expect("utf8")]);
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["warnings"], serde_json::json!([]), "{report}");
}

#[test]
fn check_warns_about_a_connector_no_call_has() {
    let out = check_file(
        "mcp.yaml",
        "agent: x\nhooks:\n  class_hooks:\n    - name: approval_gate\n      config:\n        \
         when: 'connector == \"mcp\"'\n  commands:\n    - event: PreToolUse\n      \
         when: 'connector == \"github\"'\n      command: [\"true\"]\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_contains(
        &stdout,
        &["warning: hook `approval_gate` tests `connector == \"mcp\"`, which no call has"],
    );
    assert!(!stdout.contains("`command[0]` tests"), "{stdout}");
}

#[test]
fn check_reads_a_proxy_config_and_warns_about_other_servers() {
    let out = check_file(
        "proxy.yaml",
        "agent: x\nmcp_proxy:\n  server: files\nhooks:\n  commands:\n    - event: PreToolUse\n      \
         when: 'connector == \"github\"'\n      command: [\"true\"]\n    - event: PreToolUse\n      \
         when: 'connector == \"files\"'\n      command: [\"true\"]\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_contains(
        &stdout,
        &[
            "warning: hook `command[0]` tests `connector == \"github\"`, but every call through this proxy has connector `files`",
        ],
    );
    assert!(!stdout.contains("`command[1]` tests"), "{stdout}");
}

/// `hooks check` starts each persistent hook process once and probes it: a
/// Python function that imports passes, one whose module is missing fails
/// the check with Python's own words.
#[test]
fn check_probes_persistent_hook_processes() {
    if !hooks_testkit::programs::needed("python3", "the probe is tested with a Python function") {
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    std::fs::copy(
        "examples/hooks/payments_policy.py",
        dir.path().join("payments_policy.py"),
    )
    .expect("copy the policy");
    let config = |target: &str| {
        let path = dir.path().join("agent.yaml");
        let yaml = format!(
            "agent: payments\nhooks:\n  commands:\n    - event: PreToolUse\n      python: \"{target}\"\n"
        );
        std::fs::write(&path, yaml).expect("write");
        path.to_str().expect("utf8").to_owned()
    };
    let good = hooks(&["check", &config("payments_policy:check")]);
    assert_eq!(good.status.code(), Some(0), "{}", text(&good.stderr));
    assert_contains(
        &text(&good.stdout),
        &["commands[0]", "the hook process answered a probe in"],
    );
    let missing = hooks(&["check", &config("payments_policy:no_such_function")]);
    assert_eq!(missing.status.code(), Some(1), "{}", text(&missing.stdout));
    assert_contains(
        &text(&missing.stderr),
        &[
            "exited with code 1",
            "has no attribute 'no_such_function'",
            "did not answer a probe",
        ],
    );
}
