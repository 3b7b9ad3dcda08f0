//! Making committed SQLite writes durable after the commit, not inside it.
//!
//! With `synchronous = FULL` in WAL mode, SQLite `fsync`s the WAL inside every
//! `COMMIT`, and the next transaction cannot begin until that returns: the
//! writer alternates between using the CPU and waiting for the disk. A
//! group-commit batch that opts in ([`Batch::visible_before_durable`]) is
//! instead committed on a connection of its own with `synchronous = NORMAL`
//! (the WAL frames reach the operating system, unsynced), and a second task
//! syncs the WAL file with `fdatasync` and only then tells the batch's callers
//! their writes are done. While one sync is in flight the writer commits the
//! next batch, and one sync covers every batch committed before it started.
//!
//! Durability is the same as `FULL`: nothing is acknowledged before the WAL
//! frames holding it are on disk. The WAL is the only place a committed
//! transaction can be that is not already durable: SQLite with `NORMAL`
//! syncs the WAL before a checkpoint copies frames into the database file and
//! syncs the database file after, and deletes the WAL only after such a
//! checkpoint. What differs is visibility: other connections can read a
//! batch's rows before the sync returns, and a power loss in that window
//! takes them away again. So only batches whose readers never act outside
//! the database on a read alone are pipelined. Audit rows are only read.
//! The approval gate's steps with effects (running the tool, sending or
//! redrawing a card, confirming a decision to its approver) each wait for a
//! write of their own, and an acknowledged write means everything committed
//! before it is durable, since one sync of the WAL covers every frame
//! written before it began.
//!
//! A failed sync stops the writer for good: the rows it covered are
//! committed and readable but not known to be on disk, their callers are
//! told so, and every later write is refused. Later commits would sit
//! behind the hole in the WAL, and the kernel may have forgotten the error
//! by the next sync, so nothing after it could honestly be called durable.
//! For the approval gate such an error means "committed, durability
//! unknown": the process cannot act on it (its next write, the approval
//! stamp, is refused), but another process on the same file could.
//!
//! [`Batch::visible_before_durable`]: super::Batch::visible_before_durable

use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Syncs one SQLite database's WAL file (and, when the file is new, its
/// directory) to disk.
///
/// The WAL is synced through a file kept open from before the first
/// unsynced commit: Linux reports a failed background write of a file's
/// pages once to each file open at the time, so a file opened afresh for
/// each sync could miss an error that another (SQLite's own checkpoint, say)
/// had already been told of, and call lost frames durable.
pub(crate) struct WalSync {
    database: PathBuf,
    wal: PathBuf,
    directory: PathBuf,
    /// The WAL file, open, with its (device, inode): a WAL removed and made
    /// again is opened again, and its directory entry synced once.
    open: Mutex<(File, (u64, u64))>,
    /// Tests only: runs before each sync; an error fails the sync.
    #[cfg(test)]
    before_sync: Option<Box<dyn Fn() -> io::Result<()> + Send + Sync>>,
}

impl std::fmt::Debug for WalSync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WalSync").field("wal", &self.wal).finish()
    }
}

impl WalSync {
    /// The syncer for the database file at `database`, whose WAL must exist
    /// (SQLite makes it with the first connection in WAL mode): a missing
    /// WAL here means the path is not where SQLite writes, and pipelining
    /// must not start.
    pub(crate) fn open(database: &Path) -> io::Result<Self> {
        let mut wal = database.as_os_str().to_owned();
        wal.push("-wal");
        let wal = PathBuf::from(wal);
        let directory = match database.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
            _ => PathBuf::from("."),
        };
        let file = File::open(&wal)?;
        let identity = identity(&file)?;
        File::open(&directory)?.sync_all()?;
        Ok(WalSync {
            database: database.to_owned(),
            wal,
            directory,
            open: Mutex::new((file, identity)),
            #[cfg(test)]
            before_sync: None,
        })
    }

    /// Makes every transaction committed before this call durable. Blocks on
    /// the disk: run it on a blocking thread.
    pub(crate) fn sync(&self) -> io::Result<()> {
        #[cfg(test)]
        if let Some(before_sync) = &self.before_sync {
            before_sync()?;
        }
        let mut open = self
            .open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match std::fs::metadata(&self.wal) {
            Ok(metadata) => {
                if (metadata.dev(), metadata.ino()) != open.1 {
                    // A new WAL: SQLite removed the old one after checkpointing
                    // it into the database file (synced) and made this one.
                    let current = File::open(&self.wal)?;
                    let current_identity = identity(&current)?;
                    File::open(&self.directory)?.sync_all()?;
                    *open = (current, current_identity);
                }
                open.0.sync_data()
            }
            // No WAL: the last connection checkpointed it into the database
            // file and removed it. Sync what was open (a write error of its
            // pages is still reported through it) and the database file.
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                open.0.sync_data()?;
                File::open(&self.database)?.sync_all()
            }
            Err(error) => Err(error),
        }
    }

    /// The WAL file's path, for error messages.
    pub(crate) fn wal(&self) -> &Path {
        &self.wal
    }

    /// Tests only: a syncer of `database` that runs `before_sync` before
    /// each sync (to fail it, or hold it).
    #[cfg(test)]
    pub(crate) fn with_before_sync(
        database: &Path,
        before_sync: impl Fn() -> io::Result<()> + Send + Sync + 'static,
    ) -> io::Result<Self> {
        let mut sync = Self::open(database)?;
        sync.before_sync = Some(Box::new(before_sync));
        Ok(sync)
    }
}

fn identity(file: &File) -> io::Result<(u64, u64)> {
    let metadata = file.metadata()?;
    Ok((metadata.dev(), metadata.ino()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_wal_beside_the_database_and_needs_it_to_exist() {
        let dir = tempfile::tempdir().expect("dir");
        let database = dir.path().join("audit.db");
        std::fs::write(&database, b"").expect("database file");
        // No WAL yet: not a file SQLite writes in WAL mode.
        assert!(WalSync::open(&database).is_err());
        std::fs::write(dir.path().join("audit.db-wal"), b"").expect("wal");
        let sync = WalSync::open(&database).expect("open");
        assert_eq!(sync.wal(), dir.path().join("audit.db-wal"));
        assert_eq!(sync.directory, dir.path());
        sync.sync().expect("sync");
    }

    #[test]
    fn a_missing_directory_is_an_error_not_a_success() {
        assert!(WalSync::open(Path::new("/nonexistent-hooks-dir/audit.db")).is_err());
    }
}
