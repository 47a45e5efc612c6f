//! The store: a directory of checksummed entry files named by key.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::entry::{Header, HEADER_LEN, LAYOUT_VERSION};
use crate::error::{CacheError, CorruptReason};
use crate::key::Key;

/// Temp files older than this are assumed to belong to crashed writers and
/// are removed by [`Store::gc`]. Generous, because clocks of machines
/// sharing a network file system disagree and a live writer must never
/// lose its temp file.
pub const DEFAULT_STALE_TEMP_AGE: Duration = Duration::from_secs(60 * 60);

/// A hit only rewrites the entry's mtime if it is older than this. Recency
/// for LRU does not need sub-minute precision, and skipping the metadata
/// write keeps hot entries from costing a round trip per read on a network
/// file system.
pub const DEFAULT_TOUCH_GRANULARITY: Duration = Duration::from_secs(60);

const VERSION_FILE: &str = "VERSION";
const OBJECTS_DIR: &str = "objects";
/// Every temp file name starts with this. Entry names are exactly 64 hex
/// digits, so a temp file can never be taken for an entry.
const TEMP_PREFIX: &str = ".tmp-";

/// The first line of the store's `VERSION` file.
fn version_line() -> String {
    format!("ludus-anim-cache store layout {LAYOUT_VERSION}")
}

/// Tunables; [`StoreOptions::default`] is what [`Store::open`] uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreOptions {
    /// Age (by mtime) after which [`Store::gc`] removes a temp file.
    pub stale_temp_age: Duration,
    /// See [`DEFAULT_TOUCH_GRANULARITY`]. Zero touches on every hit.
    pub touch_granularity: Duration,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            stale_temp_age: DEFAULT_STALE_TEMP_AGE,
            touch_granularity: DEFAULT_TOUCH_GRANULARITY,
        }
    }
}

/// Entry count, size and recency of a store, from one directory scan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Number of entry files.
    pub entries: u64,
    /// Sum of entry file sizes (headers included); what [`Store::gc`]
    /// limits.
    pub total_bytes: u64,
    /// Least recent use (entry mtime) over all entries.
    pub oldest_use: Option<SystemTime>,
    /// Most recent use (entry mtime) over all entries.
    pub newest_use: Option<SystemTime>,
    /// Temp files present: writes in progress, or left by crashed writers.
    pub temp_files: u64,
    /// Sum of temp file sizes; not counted in `total_bytes`.
    pub temp_bytes: u64,
}

/// One entry removed by [`Store::gc`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvictedEntry {
    pub key: Key,
    /// File size, header included.
    pub bytes: u64,
    /// The entry's mtime when gc scanned it.
    pub last_use: SystemTime,
}

/// What [`Store::gc`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Evicted entries, least recently used first.
    pub evicted: Vec<EvictedEntry>,
    /// Sum of `evicted[..].bytes`.
    pub evicted_bytes: u64,
    /// Stale temp files removed (crashed writers).
    pub stale_temps_removed: Vec<PathBuf>,
    /// Sum of the removed temp files' sizes.
    pub stale_temp_bytes: u64,
    /// Entries left after gc (as far as this scan knows; other processes
    /// may have added some meanwhile).
    pub remaining_entries: u64,
    /// Bytes left after gc; at most the limit passed to gc.
    pub remaining_bytes: u64,
}

/// A content-addressed cache directory.
///
/// # On-disk layout
///
/// ```text
/// DIR/VERSION                      "ludus-anim-cache store layout 1\n"
/// DIR/objects/<hh>/<64 hex>        an entry; <hh> = its first two hex digits
/// DIR/objects/<hh>/.tmp-<hex>-…    a put in progress (or a crashed writer's)
/// ```
///
/// An entry file is an 88-byte header (magic `LUDCACHE`, layout version,
/// flags, payload length, the key, blake3 of the payload) followed by the
/// payload; see [`HEADER_LEN`](crate::HEADER_LEN). Recency is the entry
/// file's mtime: `put` creates it, a hit refreshes it.
///
/// # Concurrency and crash safety
///
/// Any number of threads, processes and machines may use one directory at
/// once; there are no locks.
/// - **Entries are immutable once visible.** `put` writes a uniquely named
///   temp file (created exclusively) in the entry's own shard directory,
///   then renames it onto the entry name (no fsync: see below). Rename within a
///   directory is atomic (also on NFS), so a reader opens either the old
///   complete file, the new complete file, or nothing. Concurrent puts of
///   one key each rename a complete file; the last one wins, and both are
///   valid values for the key.
/// - **A crash never exposes a partial entry.** A writer killed before the
///   rename leaves only a temp file, which `get` never opens (it opens
///   exactly the 64-hex name) and `gc` deletes once older than
///   [`StoreOptions::stale_temp_age`]. Entries are not fsynced: after a
///   power loss a recently renamed entry may be empty or short, and like
///   bit rot, a truncated copy or a foreign file it fails the length or
///   checksum check on read, is removed and recomputed (a miss). A cache
///   can lose entries; what matters is that it never returns a wrong one,
///   and the checksum guarantees that without paying a disk flush per
///   entry (which cost a cold cook more than its encoder's search).
/// - **Deletes race harmlessly.** gc and healing unlink files. A reader
///   that already opened the file keeps reading the complete old contents
///   (POSIX unlink semantics); one that opens afterwards sees a miss. The
///   worst outcome of any race (gc evicting an entry just used or just
///   rewritten, healing removing a file a concurrent put just replaced) is
///   a later miss and a recompute, never a wrong or partial value.
///
/// A temp file that stays untouched for `stale_temp_age` is assumed dead; a
/// put that takes longer than that may fail its final rename with an error
/// (the value is then simply not cached).
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
    objects: PathBuf,
    options: StoreOptions,
}

impl Store {
    /// Opens (creating if needed) the store in `dir` with default options.
    ///
    /// Creates `dir`, `dir/objects` and the `VERSION` file. Fails with
    /// [`CacheError::LayoutMismatch`] if `VERSION` names another layout, so
    /// two builds with different entry formats never share a directory.
    pub fn open(dir: &Path) -> Result<Store, CacheError> {
        Store::open_with(dir, StoreOptions::default())
    }

    /// [`Store::open`] with explicit [`StoreOptions`].
    pub fn open_with(dir: &Path, options: StoreOptions) -> Result<Store, CacheError> {
        fs::create_dir_all(dir).map_err(|e| CacheError::io("create cache directory", dir, e))?;
        let version_path = dir.join(VERSION_FILE);
        let expected = version_line();
        let found = match read_version(&version_path)? {
            Some(found) => found,
            None => {
                // Atomic, so concurrent first opens cannot see a half-written
                // file; if another process wins the race, its file is the one
                // checked below.
                write_atomically(dir, VERSION_FILE, format!("{expected}\n").as_bytes())?;
                read_version(&version_path)?.unwrap_or_default()
            }
        };
        if found != expected {
            return Err(CacheError::LayoutMismatch {
                dir: dir.to_path_buf(),
                version_file: version_path,
                found,
                expected,
            });
        }
        let objects = dir.join(OBJECTS_DIR);
        fs::create_dir_all(&objects)
            .map_err(|e| CacheError::io("create objects directory", &objects, e))?;
        Ok(Store {
            dir: dir.to_path_buf(),
            objects,
            options,
        })
    }

    /// The store directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The options this store was opened with.
    pub fn options(&self) -> &StoreOptions {
        &self.options
    }

    /// Where `key`'s entry lives (for diagnostics and tests; never write to
    /// it directly, use [`Store::put`]).
    pub fn entry_path(&self, key: &Key) -> PathBuf {
        let hex = key.to_hex();
        self.objects.join(&hex[..2]).join(hex)
    }

    /// Looks `key` up.
    ///
    /// - `Ok(Some(bytes))`: a hit; the bytes passed the length and blake3
    ///   checks. The entry's mtime is refreshed (best effort) for LRU.
    /// - `Ok(None)`: a miss.
    /// - `Err(CacheError::Corrupt { healed: true, .. })`: the entry failed
    ///   a check and has been removed. Log the error ("corrupted entry X
    ///   ... healed") and recompute as on a miss; the next `put` stores a
    ///   good entry. [`CacheError::is_healed_corruption`] identifies it.
    ///   This is an error rather than a silent miss so a corrupting disk or
    ///   network file system is never invisible in the logs.
    /// - Other `Err`: the store itself is unusable (permissions, I/O).
    pub fn get(&self, key: &Key) -> Result<Option<Vec<u8>>, CacheError> {
        let path = self.entry_path(key);
        let mut file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(CacheError::io("open entry", path, e)),
        };
        let meta = file
            .metadata()
            .map_err(|e| CacheError::io("stat entry", &path, e))?;
        match read_verified(&mut file, &meta, key) {
            Ok(payload) => {
                self.touch(&file, &path, &meta);
                Ok(Some(payload))
            }
            Err(ReadFailure::Io(e)) => Err(CacheError::io("read entry", path, e)),
            Err(ReadFailure::Corrupt(reason)) => {
                drop(file);
                let healed = remove_judged_file(&path, &meta);
                Err(CacheError::Corrupt {
                    key: *key,
                    path,
                    reason,
                    healed,
                })
            }
        }
    }

    /// Stores `value` under `key`, replacing any existing entry.
    ///
    /// Atomic: the entry is written to a temp file in the entry's directory
    /// and renamed into place, so no reader (in any process) ever
    /// sees a partial entry, and concurrent puts of the same key are
    /// harmless (one complete value wins). On error the temp file is
    /// removed and any previous entry is untouched.
    pub fn put(&self, key: &Key, value: &[u8]) -> Result<(), CacheError> {
        let path = self.entry_path(key);
        let shard = self.objects.join(&key.to_hex()[..2]);
        fs::create_dir_all(&shard)
            .map_err(|e| CacheError::io("create shard directory", &shard, e))?;
        let header = Header::for_payload(key, value).encode();
        let (mut file, temp) = create_temp(&shard, &key.to_hex())?;
        let write = |file: &mut File| -> io::Result<()> {
            file.write_all(&header)?;
            file.write_all(value)
        };
        write(&mut file).map_err(|e| CacheError::io("write temp file", temp.path(), e))?;
        drop(file);
        fs::rename(temp.path(), &path)
            .map_err(|e| CacheError::io("rename temp file onto", &path, e))?;
        temp.disarm();
        Ok(())
    }

    /// Entry count, bytes and recency, from one scan of the directory. With
    /// concurrent writers this is a snapshot, not an exact count.
    pub fn stats(&self) -> Result<Stats, CacheError> {
        let scan = self.scan()?;
        let mut stats = Stats::default();
        for e in &scan.entries {
            stats.entries += 1;
            stats.total_bytes += e.bytes;
            stats.oldest_use = Some(stats.oldest_use.map_or(e.last_use, |t| t.min(e.last_use)));
            stats.newest_use = Some(stats.newest_use.map_or(e.last_use, |t| t.max(e.last_use)));
        }
        for t in &scan.temps {
            stats.temp_files += 1;
            stats.temp_bytes += t.bytes;
        }
        Ok(stats)
    }

    /// Evicts least-recently-used entries (oldest mtime first; ties by key)
    /// until the entries total at most `max_size_bytes`, and removes temp
    /// files older than [`StoreOptions::stale_temp_age`].
    ///
    /// Safe while other processes read and write: see the type docs. An
    /// entry that disappears before gc removes it (another gc, healing) is
    /// not reported as evicted but no longer counts toward the total.
    pub fn gc(&self, max_size_bytes: u64) -> Result<GcReport, CacheError> {
        let now = SystemTime::now();
        let scan = self.scan()?;
        let mut report = GcReport::default();

        for t in scan.temps {
            // A future mtime (clock skew) counts as age zero: keep it.
            let age = now.duration_since(t.modified).unwrap_or(Duration::ZERO);
            if age < self.options.stale_temp_age {
                continue;
            }
            if remove_if_present(&t.path)
                .map_err(|e| CacheError::io("remove stale temp file", &t.path, e))?
            {
                report.stale_temp_bytes += t.bytes;
                report.stale_temps_removed.push(t.path);
            }
        }

        let mut entries = scan.entries;
        entries.sort_by(|a, b| a.last_use.cmp(&b.last_use).then(a.key.cmp(&b.key)));
        let mut total: u64 = entries.iter().map(|e| e.bytes).sum();
        let mut remaining = entries.len() as u64;
        for e in entries {
            if total <= max_size_bytes {
                break;
            }
            let removed = remove_if_present(&e.path)
                .map_err(|err| CacheError::io("evict entry", &e.path, err))?;
            total -= e.bytes;
            remaining -= 1;
            if removed {
                report.evicted_bytes += e.bytes;
                report.evicted.push(EvictedEntry {
                    key: e.key,
                    bytes: e.bytes,
                    last_use: e.last_use,
                });
            }
        }
        report.remaining_entries = remaining;
        report.remaining_bytes = total;
        Ok(report)
    }

    /// Refreshes the mtime of a hit entry for LRU. Best effort: recency is
    /// advisory, and a shared directory may hold files we cannot modify, so
    /// failures are ignored.
    fn touch(&self, file: &File, path: &Path, meta: &Metadata) {
        let now = SystemTime::now();
        let due = match meta.modified() {
            // A future mtime (clock skew) already sorts as recent.
            Ok(mtime) => now
                .duration_since(mtime)
                .is_ok_and(|age| age >= self.options.touch_granularity),
            Err(_) => true,
        };
        if !due || file.set_modified(now).is_ok() {
            return;
        }
        // Some platforms (Windows) need write access to set times. Opening
        // for write without truncation does not touch the contents.
        if let Ok(w) = OpenOptions::new().write(true).open(path) {
            let _ = w.set_modified(now);
        }
    }

    /// Lists entries and temp files. Files that vanish mid-scan are skipped.
    fn scan(&self) -> Result<Scan, CacheError> {
        let mut scan = Scan::default();
        // Temp files of `VERSION` writers live in the top directory.
        for (name, path, meta) in list_files(&self.dir)? {
            if name.starts_with(TEMP_PREFIX) {
                scan.temps.push(TempInfo::new(path, &meta));
            }
        }
        let shards = match fs::read_dir(&self.objects) {
            Ok(rd) => rd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(scan),
            Err(e) => return Err(CacheError::io("list", &self.objects, e)),
        };
        for shard in shards {
            let shard = shard.map_err(|e| CacheError::io("list", &self.objects, e))?;
            let shard_name = shard.file_name();
            let Some(shard_name) = shard_name.to_str() else {
                continue;
            };
            if shard_name.len() != 2 || !shard.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            for (name, path, meta) in list_files(&shard.path())? {
                if name.starts_with(TEMP_PREFIX) {
                    scan.temps.push(TempInfo::new(path, &meta));
                } else if let Some(key) =
                    Key::from_hex(&name).filter(|_| name.starts_with(shard_name))
                {
                    scan.entries.push(EntryInfo {
                        key,
                        path,
                        bytes: meta.len(),
                        // Unknown recency sorts as oldest.
                        last_use: meta.modified().unwrap_or(UNIX_EPOCH),
                    });
                }
                // Anything else is not ours; leave it alone.
            }
        }
        Ok(scan)
    }
}

#[derive(Default)]
struct Scan {
    entries: Vec<EntryInfo>,
    temps: Vec<TempInfo>,
}

struct EntryInfo {
    key: Key,
    path: PathBuf,
    bytes: u64,
    last_use: SystemTime,
}

struct TempInfo {
    path: PathBuf,
    bytes: u64,
    modified: SystemTime,
}

impl TempInfo {
    fn new(path: PathBuf, meta: &Metadata) -> TempInfo {
        TempInfo {
            path,
            bytes: meta.len(),
            // Unknown age: never treat as stale.
            modified: meta.modified().unwrap_or_else(|_| SystemTime::now()),
        }
    }
}

/// Regular files in `dir` as (name, path, metadata); non-UTF-8 names and
/// files that vanish while listing are skipped; a missing `dir` is empty.
fn list_files(dir: &Path) -> Result<Vec<(String, PathBuf, Metadata)>, CacheError> {
    let rd = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(CacheError::io("list", dir, e)),
    };
    let mut out = Vec::new();
    for item in rd {
        let item = match item {
            Ok(item) => item,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(CacheError::io("list", dir, e)),
        };
        let Ok(name) = item.file_name().into_string() else {
            continue;
        };
        let meta = match item.metadata() {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(CacheError::io("stat", item.path(), e)),
        };
        if meta.is_file() {
            out.push((name, item.path(), meta));
        }
    }
    Ok(out)
}

enum ReadFailure {
    Io(io::Error),
    Corrupt(CorruptReason),
}

impl From<io::Error> for ReadFailure {
    fn from(e: io::Error) -> Self {
        ReadFailure::Io(e)
    }
}

impl From<CorruptReason> for ReadFailure {
    fn from(r: CorruptReason) -> Self {
        ReadFailure::Corrupt(r)
    }
}

/// Reads and checks an entry; returns its payload.
///
/// The header's length is checked against the file size before anything is
/// allocated, so a corrupted length cannot trigger a huge allocation.
fn read_verified(file: &mut File, meta: &Metadata, key: &Key) -> Result<Vec<u8>, ReadFailure> {
    let file_len = meta.len();
    let header_len = HEADER_LEN as u64;
    if file_len < header_len {
        return Err(CorruptReason::TruncatedHeader { len: file_len }.into());
    }
    let mut raw = [0u8; HEADER_LEN];
    match file.read_exact(&mut raw) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
            return Err(CorruptReason::TruncatedHeader { len: file_len }.into())
        }
        Err(e) => return Err(e.into()),
    }
    let header = Header::decode(&raw, key)?;
    let mismatch = |actual: u64| CorruptReason::LengthMismatch {
        expected: header.payload_len,
        actual,
    };
    if file_len - header_len != header.payload_len {
        return Err(mismatch(file_len - header_len).into());
    }
    let capacity =
        usize::try_from(header.payload_len).map_err(|_| mismatch(file_len - header_len))?;
    let mut payload = Vec::with_capacity(capacity);
    // One byte more than expected, to notice a file that grew under us.
    file.take(header.payload_len.saturating_add(1))
        .read_to_end(&mut payload)?;
    header.check_payload(&payload)?;
    debug_assert_eq!(header.key, *key);
    Ok(payload)
}

/// Removes the corrupted file at `path` that `judged` describes. Returns
/// whether that file is gone.
///
/// On Unix it first checks that `path` still names the same file (device
/// and inode): a concurrent put may already have renamed a fresh, valid
/// entry over it, which must not be deleted. (A put that lands between the
/// check and the unlink is still removed; that costs a miss, nothing more.)
fn remove_judged_file(path: &Path, judged: &Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match fs::symlink_metadata(path) {
            Ok(now) if (now.dev(), now.ino()) != (judged.dev(), judged.ino()) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return true,
            Err(_) => return false,
        }
    }
    #[cfg(not(unix))]
    let _ = judged;
    remove_if_present(path).is_ok()
}

/// `remove_file` that treats "already gone" as success; returns whether
/// this call removed the file.
fn remove_if_present(path: &Path) -> io::Result<bool> {
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// The first line of `path`, or `None` if it does not exist. Long or binary
/// contents are shortened so the error message stays readable.
fn read_version(path: &Path) -> Result<Option<String>, CacheError> {
    match fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let line = text.lines().next().unwrap_or("").trim();
            Ok(Some(line.chars().take(100).collect()))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(CacheError::io("read", path, e)),
    }
}

/// Writes `dir/name` via temp file + fsync + rename.
fn write_atomically(dir: &Path, name: &str, contents: &[u8]) -> Result<(), CacheError> {
    let (mut file, temp) = create_temp(dir, name)?;
    file.write_all(contents)
        .and_then(|()| file.sync_all())
        .map_err(|e| CacheError::io("write temp file", temp.path(), e))?;
    drop(file);
    let target = dir.join(name);
    fs::rename(temp.path(), &target)
        .map_err(|e| CacheError::io("rename temp file onto", &target, e))?;
    temp.disarm();
    Ok(())
}

/// A temp file that is removed when dropped unless [`TempFile::disarm`]ed
/// (after a successful rename), so failed puts clean up after themselves.
struct TempFile {
    path: PathBuf,
    armed: bool,
}

impl TempFile {
    fn path(&self) -> &Path {
        &self.path
    }

    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if self.armed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Creates a new, uniquely named temp file in `dir` (exclusive create).
///
/// The name combines the label (the key's hex, for debugging), the process
/// id, a per-process counter and the clock; exclusive creation (`O_EXCL`,
/// honoured by NFSv3+) makes even a cross-machine collision a retry rather
/// than two writers sharing a file.
fn create_temp(dir: &Path, label: &str) -> Result<(File, TempFile), CacheError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut last_err = None;
    for _ in 0..16 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let name = format!(
            "{TEMP_PREFIX}{label}-{:x}-{n:x}-{nanos:x}",
            std::process::id()
        );
        let path = dir.join(name);
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((file, TempFile { path, armed: true })),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last_err = Some(e),
            Err(e) => return Err(CacheError::io("create temp file", path, e)),
        }
    }
    let e = last_err.unwrap_or_else(|| io::Error::from(io::ErrorKind::AlreadyExists));
    Err(CacheError::io("create temp file in", dir, e))
}
