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
//! [`Batch::visible_before_durable`]: super::Batch::visible_before_durable

use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Syncs one SQLite database's WAL file (and, when the file is new, its
/// directory) to disk.
#[derive(Debug)]
pub(crate) struct WalSync {
    database: PathBuf,
    wal: PathBuf,
    directory: PathBuf,
    /// The WAL file last synced (device, inode): a new one needs its
    /// directory entry synced once too.
    synced: Mutex<Option<(u64, u64)>>,
}

impl WalSync {
    /// The syncer for the database file at `database`.
    pub(crate) fn new(database: &Path) -> Self {
        let mut wal = database.as_os_str().to_owned();
        wal.push("-wal");
        let directory = match database.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
            _ => PathBuf::from("."),
        };
        WalSync {
            database: database.to_owned(),
            wal: PathBuf::from(wal),
            directory,
            synced: Mutex::new(None),
        }
    }

    /// Makes every transaction committed before this call durable. Blocks on
    /// the disk: run it on a blocking thread.
    pub(crate) fn sync(&self) -> io::Result<()> {
        match File::open(&self.wal) {
            Ok(wal) => {
                wal.sync_data()?;
                let metadata = wal.metadata()?;
                let identity = (metadata.dev(), metadata.ino());
                let mut synced = self
                    .synced
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                if *synced != Some(identity) {
                    File::open(&self.directory)?.sync_all()?;
                    *synced = Some(identity);
                }
                Ok(())
            }
            // No WAL: the last connection checkpointed it into the database
            // file and removed it. Sync the database file, which holds
            // every committed transaction now.
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                File::open(&self.database)?.sync_all()
            }
            Err(error) => Err(error),
        }
    }

    /// The WAL file's path, for error messages.
    pub(crate) fn wal(&self) -> &Path {
        &self.wal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_wal_beside_the_database() {
        let sync = WalSync::new(Path::new("/var/lib/hooks/audit.db"));
        assert_eq!(sync.wal(), Path::new("/var/lib/hooks/audit.db-wal"));
        assert_eq!(sync.directory, Path::new("/var/lib/hooks"));
        let relative = WalSync::new(Path::new("audit.db"));
        assert_eq!(relative.directory, Path::new("."));
    }

    #[test]
    fn a_missing_directory_is_an_error_not_a_success() {
        let sync = WalSync::new(Path::new("/nonexistent-hooks-dir/audit.db"));
        assert!(sync.sync().is_err());
    }
}
