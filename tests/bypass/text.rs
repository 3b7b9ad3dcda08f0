//! Text that must mean what it says:
//! hostile spellings of connectors and users, hidden characters on approval
//! cards, and secrets spelled to slip past redaction — each with the verdict
//! it must get — plus property tests that generate more variants of each.

use hooks_runtime::HookContext;
use hooks_std::Redactor;
use hooks_std::approval_gate::channel::feishu::approval_card;
use hooks_std::approval_gate::{ApproverScope, ConfirmationRequest};
use hooks_std::connector_rate_limit::{connector_key, user_key};
use hooks_std::text::{escape_hidden, escape_hidden_in_json, is_hidden};
use hooks_testkit::gate::pending_request;
use proptest::prelude::*;
use serde_json::{Value, json};

// ---------------------------------------------------------------- rate-limit keys

/// (tool name, metadata.connector, the bucket it must count against).
const CONNECTOR_CASES: &[(&str, Option<&str>, &str)] = &[
    ("oa__pay", None, "oa"),
    ("OA__pay", None, "oa"),
    ("ｏａ__pay", None, "oa"),
    ("ＯＡ＿＿ｐａｙ", None, "oa"),
    ("__oa__pay", None, "oa"),
    ("_oa__pay", None, "oa"),
    ("oa___pay", None, "oa"),
    ("oa_\u{200B}_pay", None, "oa"),
    ("o\u{200D}a__pay", None, "oa"),
    ("\u{202E}oa__pay", None, "oa"),
    ("oa\u{E0041}__pay", None, "oa"),
    (" oa__pay", None, "oa"),
    ("oa", None, "oa"),
    ("OA", None, "oa"),
    ("oa__", None, "oa"),
    ("anything", Some("OA"), "oa"),
    ("anything", Some("ｏａ"), "oa"),
    ("anything", Some(" oa\u{FEFF}"), "oa"),
    ("oa__pay", Some(""), "oa"),
    ("oa__pay", Some("\u{200B}"), "oa"),
    ("sql_exec", None, "sql_exec"),
    ("SQL_EXEC", None, "sql_exec"),
    ("", None, ""),
    ("____", None, ""),
    ("\u{200B}", None, ""),
];

#[test]
fn every_connector_spelling_counts_against_its_bucket() {
    for (tool, metadata, bucket) in CONNECTOR_CASES {
        let mut ctx = HookContext::tool_call(*tool, json!({}));
        if let Some(connector) = metadata {
            ctx = ctx.with_metadata("connector", *connector);
        }
        assert_eq!(
            connector_key(&ctx),
            *bucket,
            "tool {tool:?}, metadata.connector {metadata:?}"
        );
    }
}

#[test]
fn every_user_spelling_counts_against_one_bucket() {
    for user in [
        "alice",
        "Alice",
        "ALICE",
        "ａｌｉｃｅ",
        " alice",
        "al\u{200B}ice",
        "\u{2066}alice\u{2069}",
    ] {
        let ctx = HookContext::tool_call("oa__pay", json!({})).with_user(user);
        assert_eq!(user_key(&ctx), "alice", "{user:?}");
    }
}

// ---------------------------------------------------------------- approval cards

/// Characters that must never reach a person raw, and how they are shown.
const HIDDEN: &[(char, &str)] = &[
    ('\u{202E}', "\\u202E"),
    ('\u{202D}', "\\u202D"),
    ('\u{202C}', "\\u202C"),
    ('\u{202A}', "\\u202A"),
    ('\u{2066}', "\\u2066"),
    ('\u{2067}', "\\u2067"),
    ('\u{2068}', "\\u2068"),
    ('\u{2069}', "\\u2069"),
    ('\u{200E}', "\\u200E"),
    ('\u{200F}', "\\u200F"),
    ('\u{061C}', "\\u061C"),
    ('\u{200B}', "\\u200B"),
    ('\u{200C}', "\\u200C"),
    ('\u{200D}', "\\u200D"),
    ('\u{2060}', "\\u2060"),
    ('\u{FEFF}', "\\uFEFF"),
    ('\u{00AD}', "\\u00AD"),
    ('\u{180E}', "\\u180E"),
    ('\u{115F}', "\\u115F"),
    ('\u{1160}', "\\u1160"),
    ('\u{3164}', "\\u3164"),
    ('\u{FFA0}', "\\uFFA0"),
    ('\u{FE00}', "\\uFE00"),
    ('\u{E0001}', "\\u{E0001}"),
    ('\u{E0061}', "\\u{E0061}"),
    ('\u{E007F}', "\\u{E007F}"),
    ('\u{0085}', "\\u0085"),
    ('\u{2028}', "\\u2028"),
    ('\u{2029}', "\\u2029"),
    ('\u{00A0}', "\\u00A0"),
    ('\u{2007}', "\\u2007"),
    ('\u{3000}', "\\u3000"),
    ('\u{F8FF}', "\\uF8FF"),
];

fn request(tool: &str, args: Value) -> ConfirmationRequest {
    let mut request = pending_request("req-1", tool, args, "ou_alice", ("feishu", "oc_1"));
    request.approver_scope = ApproverScope::Initiator;
    request
}

#[test]
fn every_hidden_character_is_escaped_and_flagged_on_the_card() {
    for (c, shown) in HIDDEN {
        let payee = format!("Alice{c}Bob");
        for (what, card) in [
            (
                "args",
                approval_card(&request("oa__pay", json!({"payee": payee}))),
            ),
            (
                "key",
                approval_card(&request("oa__pay", json!({payee.clone(): 1}))),
            ),
            (
                "tool",
                approval_card(&request(&format!("oa__pay{c}"), json!({}))),
            ),
        ] {
            let text = card.to_string();
            assert!(
                !text.contains(*c),
                "raw U+{:04X} in the {what}",
                u32::from(*c)
            );
            // Arguments are JSON text, where a character beyond the BMP is
            // escaped as a surrogate pair; the card is JSON itself, so every
            // backslash is doubled once more.
            let shown = if what == "tool" || u32::from(*c) <= 0xFFFF {
                (*shown).to_owned()
            } else {
                c.encode_utf16(&mut [0; 2])
                    .iter()
                    .map(|unit| format!("\\u{unit:04X}"))
                    .collect()
            };
            let escaped = shown.replace('\\', "\\\\");
            assert!(text.contains(&escaped), "{what}: {shown} missing in {text}");
            assert!(
                text.contains("contains hidden characters"),
                "{what} with U+{:04X} is not flagged",
                u32::from(*c)
            );
        }
    }
}

#[test]
fn visible_text_is_neither_escaped_nor_flagged() {
    for payee in [
        "Alice",
        "Zoë",
        "张三",
        "محمد",
        "עברית",
        "🙂👍🏽",
        "a b",
        "Ωmega",
    ] {
        let card = approval_card(&request("oa__pay", json!({ "payee": payee })));
        let text = card.to_string();
        assert!(text.contains(payee), "{payee}");
        assert!(!text.contains("hidden characters"), "{payee} flagged");
    }
}

/// Look-alike spellings a model could put in a payee or account so an
/// approver reads something else: every one is flagged on the approvals
/// page, and none of the genuine spellings is.
#[test]
fn look_alike_spellings_are_flagged_and_genuine_ones_are_not() {
    use hooks::std_hooks::text::has_look_alikes;
    let flagged = [
        "\u{410}cme",              // Cyrillic А + Latin
        "p\u{430}ypal",            // Cyrillic а inside
        "\u{440}\u{430}\u{443}",   // Cyrillic рау, reads pay
        "\u{410}\u{441}\u{435}",   // Cyrillic Асе, reads Ace
        "g\u{3bf}\u{3bf}gle",      // Greek ο ο inside
        "\u{3a4}\u{39f}\u{39a}EN", // Greek ΤΟΚ + Latin EN
        "micro\u{455}oft",         // Cyrillic ѕ
        "\u{501}ell",              // Cyrillic ԁ
        "acme-\u{43e}ffice",       // a hyphen does not hide a mixed word
    ];
    for text in flagged {
        assert!(has_look_alikes(text), "{text:?} is not flagged");
    }
    for text in [
        "Acme",
        "PayPal",
        "Zoë",
        "Ñúñez",
        "张三",
        "東京タワー",
        "Москва",
        "PO-7001",
    ] {
        assert!(!has_look_alikes(text), "{text:?} is flagged");
    }
}

// ---------------------------------------------------------------- redaction

/// Keys whose value must never be stored.
const SECRET_KEYS: &[&str] = &[
    "password",
    "Password",
    "PASSWORD",
    "passwd",
    "pwd",
    "PWD",
    "pWd",
    "db_password",
    "dbPassword",
    "user-password",
    "passphrase",
    "private_key",
    "privateKey",
    "PRIVATE-KEY",
    "credentials",
    "credential",
    "auth",
    "basic_auth",
    "x-auth",
    "authorization",
    "Proxy-Authorization",
    "p\u{430}ssword",
    "pass\u{200B}word",
    "ＰＡＳＳＷＯＲＤ",
    "ｐａｓｓｗｏｒｄ",
    "passw0rd",
    "session",
    "sessionId",
    "session_token",
    "bearer",
    "refresh_token",
    "refreshToken",
    "client_secret",
    "clientSecret",
    "secret",
    "SECRET_KEY",
    "api_key",
    "apiKey",
    "APIKey",
    "API-KEY",
    "x-api-key",
    "apikey",
    "access_token",
    "accessToken",
    "id_token",
    "token",
    "cookie",
    "Set-Cookie",
    "jwt",
    "otp",
    "t\u{3bf}ken",
    "ΤΟΚΕΝ",
    "ΡΑSSWΟRD",
    "pass",
    "pw",
    "pin",
    "totp",
    "mfa_code",
    "ssh_key",
    "privkey",
    "pkey",
    "pa$$word",
    "p@ssword",
    "Passwort",
    "пароль",
    "contraseña",
    "mot_de_passe",
    "密码",
];

/// Keys whose value is kept.
const PLAIN_KEYS: &[&str] = &[
    "author",
    "authors",
    "oauth_provider",
    "passport",
    "keyboard",
    "key",
    "monkey",
    "query",
    "amount",
    "payee",
    "description",
    "name",
    "id",
    "pinned",
    "passage",
    "compass",
    "spinner",
];

#[test]
fn secret_keys_in_any_spelling_are_redacted() {
    let redactor = Redactor::default();
    for key in SECRET_KEYS {
        let redacted = redactor.redact(&json!({ *key: "s3cr3t-value" }));
        assert_eq!(redacted[*key], "[redacted]", "{key:?} kept its value");
    }
    for key in PLAIN_KEYS {
        let args = json!({ *key: "kept" });
        assert_eq!(redactor.redact(&args), args, "{key:?} was redacted");
    }
}

#[test]
fn numbers_that_describe_a_secret_are_kept_but_not_strings() {
    let redactor = Redactor::default();
    let kept =
        json!({"session_count": 3, "max_tokens": 100, "password_required": true, "token_ttl": 60});
    assert_eq!(redactor.redact(&kept), kept);
    let secret = json!({"session_count": "abc123", "max_tokens": "sk-xyz", "pin_length": 4});
    let redacted = redactor.redact(&secret);
    assert_eq!(redacted["session_count"], "[redacted]");
    assert_eq!(redacted["max_tokens"], "[redacted]");
}

/// (text, the secret part that must vanish).
const SECRET_TEXTS: &[(&str, &str)] = &[
    ("Authorization: Bearer abc.def-123", "abc.def-123"),
    (
        "authorization: bearer abcdefghijklmnopqrstuv",
        "abcdefghijklmnopqrstuv",
    ),
    ("BEARER 0123456789", "0123456789"),
    ("Authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"),
    ("https://x.io/cb?access_token=tok_123&state=1", "tok_123"),
    ("https://x.io/cb#access_token=tok_123", "tok_123"),
    ("https://x.io/api?key=AIzaXYZ123", "AIzaXYZ123"),
    ("https://x.io/s3?X-Amz-Signature=abcdef0123", "abcdef0123"),
    (
        "https://x.io/s3?X-Amz-Credential=AKID%2F2024",
        "AKID%2F2024",
    ),
    ("token=abc123", "abc123"),
    ("refresh_token: 'r-123 456'", "r-123 456"),
    ("client_secret=\"cs=with=equals\"", "cs=with=equals"),
    ("PASSWORD=hunter2:extra", "hunter2:extra"),
    ("p\u{430}ssword=hunter2", "hunter2"),
    ("mysql://root:hunter2@localhost/db", "hunter2"),
    ("redis://:hunter2@cache:6379", "hunter2"),
    (
        "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----",
        "MHcCAQEE",
    ),
    ("-----BEGIN PRIVATE KEY-----\nMIIEvQIB", "MIIEvQIB"),
    (
        "sk-abcdefghijklmnopqrstuvwxyz012345",
        "sk-abcdefghijklmnopqrstuvwxyz012345",
    ),
    (
        "sk_live_0123456789abcdefABCD",
        "sk_live_0123456789abcdefABCD",
    ),
    (
        "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
        "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
    ),
    (
        "github_pat_11AAAAAAA0123456789abcdef",
        "github_pat_11AAAAAAA0123456789abcdef",
    ),
    (
        "xoxb-123456789012-abcdefghij",
        "xoxb-123456789012-abcdefghij",
    ),
    ("glpat-abcdefghij0123456789", "glpat-abcdefghij0123456789"),
    ("id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    (
        "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
        "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
    ),
    (
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abc_DEF",
        "eyJhbGciOiJIUzI1NiJ9",
    ),
    ("{\"api_key\": \"k-123\"}", "k-123"),
    ("\"{\\\"password\\\":\\\"hunter2\\\"}\"", "hunter2"),
    ("pass\u{200B}word=hunter2", "hunter2"),
    ("password\u{FF1A}hunter2", "hunter2"),
    ("password\u{FF1D}hunter2", "hunter2"),
    ("password\u{A0}=\u{A0}hunter2", "hunter2"),
    (
        "PASSWORD_FOR_THE_REPLICATION_USER_OF_THE_PRIMARY_CLUSTER_IN_REGION_X=hunter2",
        "hunter2",
    ),
    (
        "Authorization: Bearer\nabcdef0123456789xyz",
        "abcdef0123456789xyz",
    ),
    ("https://admin:hun@ter2@host/db", "ter2"),
    (
        "Authorization: Digest username=\"a\", realm=\"r\", response=\"6629fae49393a05397450978507c4ef1\"",
        "6629fae49393a05397450978507c4ef1",
    ),
    ("admin:hunter2@db.internal", "hunter2"),
    ("root:hunter2@tcp(db:3306)/app", "hunter2"),
    ("//admin:hunter2@host/share", "hunter2"),
    ("mysql -u root -phunter2 app", "hunter2"),
    ("mysqldump --password hunter2 app", "hunter2"),
    ("psql --password=hunter2", "hunter2"),
    ("curl -u admin:hunter2 https://x.io", "hunter2"),
    ("curl --user admin:hunter2 https://x.io", "hunter2"),
    ("ALTER USER bob WITH PASSWORD 'hunter2'", "hunter2"),
    ("CREATE USER bob IDENTIFIED BY 'hunter2'", "hunter2"),
];

/// Text that must be stored as it is.
const PLAIN_TEXTS: &[&str] = &[
    "Basic authentication is disabled",
    "the bearer of this note",
    "Error: timeout after 30s at 10:30",
    "https://example.com/search?q=rust&page=2",
    "author=ann; session_count=3; max_tokens=100",
    "task-0123456789abcdefghijklmnop",
    "askdfj-0123456789abcdefghijklm",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
    "SELECT * FROM users WHERE id = 7",
    "mkdir -p build && sort -u names.txt",
    "mailto:ann@example.com",
    "the spinner is pinned to the compass passage",
    "git push -u origin main",
];

#[test]
fn credentials_in_text_are_masked_and_plain_text_kept() {
    let redactor = Redactor::default();
    for (text, secret) in SECRET_TEXTS {
        let stored = redactor.redact_text(text);
        assert!(
            !stored.contains(secret),
            "{secret:?} survived in {stored:?}"
        );
        assert!(stored.contains("[redacted]"), "{stored:?}");
        let in_args = redactor.redact(&json!({"note": text}));
        assert!(!in_args.to_string().contains(secret), "{text:?} as a value");
    }
    for text in PLAIN_TEXTS {
        assert_eq!(redactor.redact_text(text), *text);
    }
}

// ---------------------------------------------------------------- properties

/// A spelling of `word` a person would read as the same word.
fn respell(word: &str, choices: &[u8]) -> String {
    let mut out = String::new();
    for (c, choice) in word.chars().zip(choices.iter().cycle()) {
        match choice % 6 {
            0 => out.push(c.to_ascii_uppercase()),
            1 => out.extend(char::from_u32(u32::from(c) - 0x21 + 0xFF01)),
            2 => {
                out.push(c);
                out.push('\u{200B}');
            }
            3 => out.push(homoglyph(c)),
            _ => out.push(c),
        }
    }
    out
}

/// A Cyrillic or Greek look-alike of a Latin letter, where one exists.
fn homoglyph(c: char) -> char {
    match c {
        'a' => 'а',
        'c' => 'с',
        'e' => 'е',
        'o' => 'о',
        'p' => 'р',
        'x' => 'х',
        'y' => 'у',
        'i' => 'і',
        's' => 'ѕ',
        'k' => 'κ',
        't' => 'τ',
        other => other,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn connector_spellings_share_a_bucket(
        connector in "[a-z][a-z0-9]{0,8}",
        choices in proptest::collection::vec(0u8..6, 1..9),
        underscores in 0usize..3,
    ) {
        let choices: Vec<u8> = choices.into_iter().map(|c| if c == 3 { 4 } else { c }).collect();
        let spelled = format!("{}{}__pay", "_".repeat(underscores), respell(&connector, &choices));
        let ctx = HookContext::tool_call(spelled.clone(), json!({}));
        prop_assert_eq!(connector_key(&ctx), connector.as_str(), "{:?}", spelled);
    }

    #[test]
    fn secret_names_in_any_spelling_are_redacted(
        name in prop::sample::select(vec!["password", "secret", "token", "passwd", "credential", "cookie", "session", "bearer"]),
        choices in proptest::collection::vec(0u8..6, 1..9),
        prefix in prop::sample::select(vec!["", "db_", "x-", "user ", "my"]),
    ) {
        let key = format!("{prefix}{}", respell(name, &choices));
        let redacted = Redactor::default().redact(&json!({key.clone(): "value-1"}));
        prop_assert_eq!(&redacted[&key], "[redacted]", "{:?}", key);
    }

    #[test]
    fn nothing_hidden_survives_escaping(text in any::<String>()) {
        let shown = escape_hidden(&text);
        prop_assert!(!shown.text.chars().any(is_hidden));
        prop_assert_eq!(shown.had_hidden, text.chars().any(is_hidden));
        let json_text = serde_json::to_string_pretty(&json!({ "v": text })).unwrap();
        let escaped = escape_hidden_in_json(&json_text);
        prop_assert!(!escaped.text.chars().any(|c| is_hidden(c) && c != '\n'));
        let back: Value = serde_json::from_str(&escaped.text).unwrap();
        prop_assert_eq!(&back["v"], &Value::String(text));
    }

    #[test]
    fn a_bearer_token_never_survives(
        before in "[ -~]{0,20}",
        token in "[A-Za-z]{4,20}[0-9][A-Za-z0-9._-]{3,20}",
        after in "( [ -~]{0,20})?",
    ) {
        let text = format!("{before} Bearer {token}{after}");
        let stored = Redactor::default().redact_text(&text);
        prop_assert!(!stored.contains(&token), "{:?} -> {:?}", text, stored);
    }
}
