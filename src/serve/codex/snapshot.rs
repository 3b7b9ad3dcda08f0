//! Codex's shell snapshot and login shell: code Codex runs before a shell
//! command, outside `hooks run-buffered`.
//!
//! With its `shell_snapshot` feature on (the default in Codex 0.171.0),
//! Codex captures the user's shell at session start into
//! `$CODEX_HOME/shell_snapshots/<session id>.<nonce>.sh` and sources that
//! file in the shell that then runs each command. A command can append to
//! the file, and what it appends runs before every later command with
//! Codex's own output pipe: output no post event sees, commands no pre
//! event saw. A login shell (`allow_login_shell`, on by default) sources
//! the user's profile the same way. `hooks init codex` turns both off; a
//! session that still has a snapshot gets no shell command run.

use std::path::{Path, PathBuf};

/// Where Codex keeps its user settings: `$CODEX_HOME`, else `~/.codex`.
pub(crate) fn codex_home() -> Option<PathBuf> {
    let set = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    set("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| set("HOME").map(|home| PathBuf::from(home).join(".codex")))
}

/// The folder Codex writes its shell snapshots to, under `home`.
const SNAPSHOTS: &str = "shell_snapshots";

/// A shell snapshot Codex keeps for `session` under `home`, if there is
/// one. A session id that cannot be part of a file name (empty, or with a
/// path separator) matches any snapshot, and a folder that is there but
/// cannot be listed (a command can take away its read permission and
/// leave the files readable by name) counts as one: whether this session
/// has one cannot be told.
pub(super) fn of_session(home: &Path, session: Option<&str>) -> Option<PathBuf> {
    let session = session.filter(|id| !id.is_empty() && !id.contains(['/', '\\', '\0']));
    let folder = home.join(SNAPSHOTS);
    let entries = match std::fs::read_dir(&folder) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return None,
        Err(_) => return Some(folder),
    };
    entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
                return session.is_none();
            };
            match session {
                // `<id>.<nonce>.sh`, and `<id>.tmp-<nonce>` while it is
                // being written.
                Some(id) => name
                    .strip_prefix(id)
                    .is_some_and(|rest| rest.starts_with('.')),
                None => true,
            }
        })
        .min()
}

/// Why a shell command is refused while `snapshot` exists.
pub(super) fn refusal(snapshot: &Path) -> String {
    format!(
        "Codex's shell snapshot is on for this session ({}): Codex sources that file, which \
         the model's own commands can change, before every shell command and outside the \
         hooks. Turn it off with `[features] shell_snapshot = false` in Codex's config.toml \
         (`hooks init codex` writes it) and start a new session; the call is blocked.",
        snapshot.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_is_found_for_its_own_session_only() {
        let home = tempfile::tempdir().expect("dir");
        let id = "019af3c2-7d1e-7a00-8000-00000000abcd";
        assert_eq!(of_session(home.path(), Some(id)), None, "no folder");
        let folder = home.path().join(SNAPSHOTS);
        std::fs::create_dir_all(&folder).expect("folder");
        std::fs::write(folder.join("other-session.1.sh"), "").expect("other");
        assert_eq!(of_session(home.path(), Some(id)), None);
        std::fs::write(folder.join(format!("{id}x.1.sh")), "").expect("prefix");
        assert_eq!(of_session(home.path(), Some(id)), None, "a longer id");

        let mine = folder.join(format!("{id}.1733590000000000000.sh"));
        std::fs::write(&mine, "# Snapshot file\n").expect("mine");
        assert_eq!(of_session(home.path(), Some(id)), Some(mine.clone()));
        let text = refusal(&mine);
        assert!(text.contains("shell_snapshot = false"), "{text}");

        // A session that cannot be told apart: any snapshot counts.
        for unknown in [None, Some(""), Some("../x"), Some("a/b")] {
            assert!(of_session(home.path(), unknown).is_some(), "{unknown:?}");
        }
        // A folder that cannot be listed (a file in place of it here; for
        // root, who reads any folder, a mode does not do).
        let unlistable = tempfile::tempdir().expect("dir");
        std::fs::write(unlistable.path().join(SNAPSHOTS), "").expect("file");
        assert!(of_session(unlistable.path(), Some(id)).is_some());

        let empty = tempfile::tempdir().expect("dir");
        std::fs::create_dir_all(empty.path().join(SNAPSHOTS)).expect("folder");
        assert_eq!(of_session(empty.path(), None), None);
    }
}
