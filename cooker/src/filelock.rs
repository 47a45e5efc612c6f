//! Advisory whole-file locks (`flock`). A lock belongs to an open file and
//! the kernel releases it when the process ends, however it ends (`kill
//! -9` included), so a crashed cook never leaves a stale lock behind.
//!
//! Locks are advisory: they order ludus-anim processes among themselves
//! (publishing, recovery, pruning), nothing else. Local file systems only;
//! on NFS `flock` depends on the server. On platforms without `flock`
//! (non-Unix) locking is a no-op.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

/// A held lock; dropping it releases the lock.
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

/// Open (creating if needed) the lock file `path`. A file system that
/// cannot create it may still hold it (read-only, yet locked before).
fn open(path: &Path) -> io::Result<File> {
    match OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
    {
        Ok(f) => Ok(f),
        Err(e) => File::open(path).map_err(|_| e),
    }
}

/// Take the exclusive lock on `path` if no one holds it; `None` if someone
/// does (another process, or another open handle of this one).
pub fn try_lock(path: &Path) -> io::Result<Option<FileLock>> {
    let file = open(path)?;
    if sys::try_exclusive(&file)? {
        Ok(Some(FileLock { _file: file }))
    } else {
        Ok(None)
    }
}

/// Take the exclusive lock on `path`, waiting up to `timeout` for whoever
/// holds it (a timeout is an error naming the file).
pub fn lock(path: &Path, timeout: Duration) -> io::Result<FileLock> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(2);
    loop {
        if let Some(l) = try_lock(path)? {
            return Ok(l);
        }
        if start.elapsed() >= timeout {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "{} is held by another ludus-anim process (waited {} s)",
                    path.display(),
                    timeout.as_secs()
                ),
            ));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

#[cfg(unix)]
mod sys {
    use rustix::fs::{flock, FlockOperation};
    use std::fs::File;
    use std::io;

    pub fn try_exclusive(f: &File) -> io::Result<bool> {
        match flock(f, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(not(unix))]
mod sys {
    use std::fs::File;
    use std::io;

    pub fn try_exclusive(_: &File) -> io::Result<bool> {
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_excludes_other_handles_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".lock");
        let held = try_lock(&p).unwrap().expect("free at first");
        assert!(try_lock(&p).unwrap().is_none(), "a second handle waits");
        let e = lock(&p, Duration::from_millis(30)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert!(e.to_string().contains(".lock"), "{e}");
        drop(held);
        assert!(try_lock(&p).unwrap().is_some());
    }
}
