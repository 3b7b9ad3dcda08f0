//! The tool name a call must have before any hook sees it.
//!
//! The model chooses the tool name as freely as the arguments. Hooks match on
//! it (`tool_name starts_with "sql_"`), command hooks hand it to scripts, the
//! audit log stores it and approval cards show it, so a name with control or
//! invisible characters is refused outright rather than left for each of them
//! to get right.

use crate::printable::is_hidden;

/// Why a tool name is refused, or `None` when it may be used.
pub(crate) fn problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("the tool call has no tool name".to_owned());
    }
    // Most names are printable ASCII: one pass over the bytes settles them.
    if name.bytes().all(|byte| matches!(byte, b' '..=b'~')) {
        return None;
    }
    let bad = name.chars().find(|&c| is_hidden(c))?;
    Some(format!(
        "the tool name contains the control or invisible character U+{:04X}; \
         tool names are refused with such characters, so no hook or person is \
         shown a name other than the one that runs",
        u32::from(bad)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_names_pass() {
        for name in [
            "sql_exec",
            "oa__purchase_pay",
            "查询价格表",
            "http.fetch-v2",
            "Bash",
        ] {
            assert_eq!(problem(name), None, "{name:?}");
        }
    }

    #[test]
    fn control_and_invisible_characters_are_refused() {
        for name in [
            "",
            "sql\0exec",
            "sql_exec\n",
            "pay\u{202E}yap",
            "pay\u{200B}",
            "\u{FEFF}pay",
            "pa\u{00AD}y",
            "pay\u{E0041}",
            "pay\u{7F}",
            "pay\u{9B}",
        ] {
            assert!(problem(name).is_some(), "{name:?} must be refused");
        }
        assert!(problem("a\u{202E}b").unwrap().contains("U+202E"));
    }
}
