//! The URI of a `resources/read` in one spelling per resource, for `when`:
//! `metadata.uri`.
//!
//! A guard written on the URI a client sends (`args.uri starts_with
//! "file:///srv/data/"`) is a guard on its spelling: `file:///srv/../etc`,
//! `FILE:///etc`, `file://localhost/etc`, `file:///%65tc` and `file:////etc`
//! all name `/etc` to a file server. The normalised URI names each
//! resource one way, so an allow-list written on it holds:
//!
//! - the scheme and the host are lower-cased;
//! - a `file` URI's host `localhost` is dropped (`file:///…`), and
//!   `file:/etc` is written `file:///etc`;
//! - runs of slashes in the path are folded into one, and `.` and `..`
//!   segments are removed (RFC 3986, 5.2.4; `..` never climbs above `/`);
//! - each path segment and the host are percent-decoded, once;
//! - the query and fragment are kept as sent.
//!
//! What servers read differently has no normalised form, so that no
//! reading of it can slip past an allow-list: a URI without a scheme; a
//! `%` not followed by two hex digits; a control character, decoded or
//! not; a backslash; a segment that decodes to a slash, a backslash, a `%`
//! (a second round of decoding would change it), a `?` or `#` (written out
//! they would start a query or a fragment), or to `.` or `..` (is it
//! a name or a step up?); a host that decodes to a slash; and a `file` URI
//! with a query or fragment (a server that takes the rest of the URI as a
//! path reads `?/../..` as steps up) or a relative path (`file:etc/passwd`). `metadata.uri` is then absent, and an
//! allow-list refuses it.

/// `raw` normalised, or `None` when it has no normalised form.
pub(super) fn normalized(raw: &str) -> Option<String> {
    if raw.chars().any(char::is_control) || raw.contains('\\') {
        return None;
    }
    let (scheme, rest) = raw.split_once(':')?;
    let mut letters = scheme.chars();
    if !letters.next()?.is_ascii_alphabetic()
        || !letters.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return None;
    }
    let scheme = scheme.to_ascii_lowercase();
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    let (hierarchy, tail) = rest.split_at(end);
    if scheme == "file" && !tail.is_empty() {
        return None;
    }
    let (authority, path) = match hierarchy.strip_prefix("//") {
        Some(after) => {
            let end = after.find('/').unwrap_or(after.len());
            let (authority, path) = after.split_at(end);
            (Some(authority), path)
        }
        None => (None, hierarchy),
    };
    let authority = match authority {
        Some(authority) => {
            let authority = decoded(authority)?;
            let host = match authority.rsplit_once('@') {
                Some((user, host)) => format!("{user}@{}", host.to_lowercase()),
                None => authority.to_lowercase(),
            };
            let local = scheme == "file" && matches!(host.as_str(), "localhost" | "localhost.");
            Some(if local { String::new() } else { host })
        }
        // `file:etc/passwd`: relative to what? Some servers read it from
        // their working directory, others as `/etc/passwd`; written
        // `file://etc/passwd` it would name a host.
        None if scheme == "file" && !path.is_empty() && !path.starts_with('/') => return None,
        None if scheme == "file" => Some(String::new()),
        None => None,
    };
    let path = normal_path(path)?;
    let mut normal = scheme;
    normal.push(':');
    if let Some(authority) = authority {
        normal.push_str("//");
        normal.push_str(&authority);
    }
    normal.push_str(&path);
    normal.push_str(tail);
    Some(normal)
}

/// `text` percent-decoded once, or `None` when an escape is malformed, the
/// bytes are not UTF-8, or the result holds a `/`, `\`, `%`, `?`, `#` or
/// control character (each read one way by one server and another way by
/// the next; written out, `?` and `#` would start a query or fragment).
fn decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let high = char::from(*bytes.get(at + 1)?).to_digit(16)?;
            let low = char::from(*bytes.get(at + 2)?).to_digit(16)?;
            out.push(u8::try_from(high * 16 + low).ok()?);
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    let text = String::from_utf8(out).ok()?;
    let ambiguous = text.contains(['/', '\\', '%', '?', '#']) || text.chars().any(char::is_control);
    (!ambiguous).then_some(text)
}

/// `path` with each segment decoded once, runs of slashes folded and its
/// `.` and `..` segments removed; a path that ended in a directory (`/`,
/// `/.`, `/..`) still ends in `/`. `None` when a segment decodes to
/// something ambiguous, `.` or `..` included.
fn normal_path(path: &str) -> Option<String> {
    if path.is_empty() {
        return Some(String::new());
    }
    let absolute = path.starts_with('/');
    let mut kept: Vec<String> = Vec::new();
    let mut directory = false;
    for segment in path.split('/') {
        directory = true;
        match segment {
            "" | "." => {}
            ".." => {
                kept.pop();
            }
            raw => {
                let name = decoded(raw)?;
                if name == "." || name == ".." {
                    return None;
                }
                kept.push(name);
                directory = false;
            }
        }
    }
    let mut normal = String::with_capacity(path.len());
    if absolute {
        normal.push('/');
    }
    normal.push_str(&kept.join("/"));
    if directory && !kept.is_empty() {
        normal.push('/');
    }
    Some(normal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_etc_passwd_is_one_uri() {
        for spelling in [
            "file:///etc/passwd",
            "file:///srv/../etc/passwd",
            "FILE:///etc/passwd",
            "file://localhost/etc/passwd",
            "file://LocalHost/etc/passwd",
            "file:///%65tc/passwd",
            "file:///%65%74%63/%70asswd",
            "file:////etc/passwd",
            "file:/etc/passwd",
            "file:///./etc/./passwd",
            "file:///../../../etc/passwd",
        ] {
            assert_eq!(
                normalized(spelling).as_deref(),
                Some("file:///etc/passwd"),
                "{spelling}"
            );
        }
    }

    #[test]
    fn what_a_uri_names_is_kept() {
        for (raw, normal) in [
            (
                "demo://resource/static/document/a.md",
                "demo://resource/static/document/a.md",
            ),
            (
                "HTTPS://Example.COM/A/b?Q=1#F",
                "https://example.com/A/b?Q=1#F",
            ),
            ("https://localhost/x", "https://localhost/x"),
            ("file:///srv/data/", "file:///srv/data/"),
            ("file:///srv/data/sub/..", "file:///srv/data/"),
            ("file:///srv/data/a%20b.txt", "file:///srv/data/a b.txt"),
            (
                "https://h.example/a/b?../../etc",
                "https://h.example/a/b?../../etc",
            ),
            ("mailto:someone@example.com", "mailto:someone@example.com"),
            (
                "https://user@Host.example:8443",
                "https://user@host.example:8443",
            ),
        ] {
            assert_eq!(normalized(raw).as_deref(), Some(normal), "{raw}");
        }
    }

    #[test]
    fn a_normal_form_is_its_own_normal_form() {
        for raw in [
            "file:/etc/passwd",
            "file://LocalHost/a/../b/",
            "HTTPS://Example.COM/a/./b?x=1#y",
            "mailto:Someone@Example.com",
            "db:orders/1",
            "file:",
            "x://h",
        ] {
            let normal = normalized(raw).expect("a normal form");
            assert_eq!(
                normalized(&normal).as_deref(),
                Some(normal.as_str()),
                "{raw:?}"
            );
        }
    }

    #[test]
    fn a_uri_that_cannot_be_read_one_way_has_no_normal_form() {
        for raw in [
            "",
            "/etc/passwd",
            "etc/passwd",
            "1file:///etc/passwd",
            "file:///etc/%zzpasswd",
            "file:///etc/passwd%",
            "file:///etc/%ff",
            "file:///etc/passwd%00.txt",
            "file:///etc/pass\nwd",
            "file://localhost%2Fetc/passwd",
            // Read one way here and another by some server.
            "file:///%2565tc/passwd",
            "file:///srv/data/%2e%2e/%2E%2E/etc/passwd",
            "file:///srv/data%2F..%2F..%2Fetc/passwd",
            "file:///srv/data/..\\..\\etc/passwd",
            "file:///srv/data/a%2Fb%2Fc/../../../etc/passwd",
            "file:///srv/data/a%5Cb%5Cc/../../../etc/passwd",
            "file:///srv/data/a%252Fb%252Fc/../../../etc/passwd",
            "file:///srv/data/a\\b\\c/../../../etc/passwd",
            "file:///tmp/%252e%252e/srv/data/x",
            "file:///srv/data/?/../../../etc/passwd",
            "file:///srv/data/x#/../../etc/passwd",
            // Relative to what? (Found by fuzzing: it was written
            // `file://etc/passwd`, a URI on host `etc`.)
            "file:etc/passwd",
            "FILE:srv/data/report.csv",
            // Decoded, `?` and `#` would start a query or a fragment (found
            // by fuzzing: `file:///srv/?hadow` has no normal form).
            "file:///srv/%3fhadow",
            "https://h/a%23b",
        ] {
            assert_eq!(normalized(raw), None, "{raw:?}");
        }
    }
}
