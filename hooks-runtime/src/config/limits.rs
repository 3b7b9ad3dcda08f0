//! Limits checked before a config is parsed, so that a broken or hostile file
//! cannot make loading an agent (or `hooks check`) slow.
//!
//! The YAML parser's work grows with the square of the nesting depth of flow
//! collections (`{a: {a: {a: …` — about 40 s for 500 KB), and its own
//! recursion limit only applies after it has read the whole file. So YAML
//! text is scanned first: flow collections nested deeper than
//! [`FLOW_NESTING_LIMIT`], or more than [`FLOW_OPENERS_LIMIT`] of them in one
//! file, are refused. The scan counts every `{` and `[`, even inside quotes
//! and comments: it may refuse a (very unusual) file the parser would have
//! read quickly, never the reverse — the total count bounds the depth even
//! when quoted closing brackets hide it from the depth count. JSON and TOML
//! parsers stop at their own depth limits while reading.

/// The largest config file accepted, in bytes (1 MiB): hook configs are a
/// few kilobytes.
pub(crate) const CONFIG_SIZE_LIMIT: usize = 1 << 20;

/// The deepest nesting of YAML flow collections (`{…}`, `[…]`) accepted.
pub(crate) const FLOW_NESTING_LIMIT: usize = 64;

/// The most flow-collection openers (`{`, `[`) one YAML file may have.
pub(crate) const FLOW_OPENERS_LIMIT: usize = 5_000;

/// Refuses a config of `len` bytes over [`CONFIG_SIZE_LIMIT`].
pub(crate) fn check_size(len: u64) -> Result<(), String> {
    if len > CONFIG_SIZE_LIMIT as u64 {
        return Err(format!(
            "the config is {len} bytes, over the {CONFIG_SIZE_LIMIT}-byte (1 MiB) limit, and was \
             not parsed; a hook config is a few kilobytes — check that this is the right file"
        ));
    }
    Ok(())
}

/// Refuses YAML text whose flow collections are nested deeper than
/// [`FLOW_NESTING_LIMIT`], or number more than [`FLOW_OPENERS_LIMIT`].
pub(crate) fn check_yaml_nesting(text: &str) -> Result<(), String> {
    let mut depth = 0usize;
    let mut openers = 0usize;
    let mut line = 1usize;
    for byte in text.bytes() {
        match byte {
            b'{' | b'[' => {
                depth += 1;
                openers += 1;
                if depth > FLOW_NESTING_LIMIT {
                    return Err(format!(
                        "`{{…}}`/`[…]` collections are nested more than {FLOW_NESTING_LIMIT} levels \
                         deep (at line {line}), and the file was not parsed; write the config flatter \
                         (brackets inside quotes and comments count too)"
                    ));
                }
                if openers > FLOW_OPENERS_LIMIT {
                    return Err(format!(
                        "the file has more than {FLOW_OPENERS_LIMIT} `{{` and `[` (at line {line}), \
                         and was not parsed; a hook config needs far fewer — write long lists in \
                         block style (`- item` lines)"
                    ));
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'\n' => line += 1,
            _ => {}
        }
    }
    Ok(())
}

/// Reads `path` as UTF-8 text, refusing it unread when it is over the size
/// limit (and reading at most one byte past the limit, for a file that grows
/// or is not a regular file).
pub(crate) fn read_capped(path: &std::path::Path) -> Result<String, String> {
    use std::io::Read as _;
    let cannot = |error: std::io::Error| format!("cannot read the file: {error}");
    let file = std::fs::File::open(path).map_err(cannot)?;
    if let Ok(meta) = file.metadata() {
        check_size(meta.len())?;
    }
    let mut bytes = Vec::new();
    file.take(CONFIG_SIZE_LIMIT as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    check_size(bytes.len() as u64)?;
    String::from_utf8(bytes).map_err(|error| {
        format!("cannot read the file: it is not valid UTF-8 ({error}); save it as UTF-8")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_configs_pass() {
        let yaml = "hooks:\n  class_hooks: [a, {name: b, config: {x: [1, 2]}}]\n";
        assert_eq!(check_yaml_nesting(yaml), Ok(()));
        assert_eq!(check_size(CONFIG_SIZE_LIMIT as u64), Ok(()));
    }

    #[test]
    fn deep_or_numerous_flow_collections_are_refused() {
        let deep = format!("a: {}", "{a: ".repeat(FLOW_NESTING_LIMIT + 1));
        assert!(
            check_yaml_nesting(&deep)
                .unwrap_err()
                .contains("nested more than 64")
        );
        // Quoted closing brackets do not hide depth from the total count.
        let hidden = format!("a: {}", "{b: \"}\", a: ".repeat(FLOW_OPENERS_LIMIT + 1));
        let error = check_yaml_nesting(&hidden).unwrap_err();
        assert!(error.contains("more than 5000"), "{error}");
        let error = check_size(CONFIG_SIZE_LIMIT as u64 + 1).unwrap_err();
        assert!(error.contains("1 MiB"), "{error}");
    }
}
