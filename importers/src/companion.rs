//! Companion files (a `.gltf`'s external buffers): how importers ask for
//! them, and the path policy every URI passes before anything is read.
//!
//! Policy, in two layers:
//! - here, lexically, before any file system access: a URI must be a
//!   relative path (no scheme other than `data:`, not absolute, no NUL)
//!   that, percent-decoded and with `.`/`..` resolved against the asset's
//!   directory, stays inside the allowed root ([`resolve_companion`]);
//! - in the reader (the cooker's snapshot over its `SourceReader`), on the
//!   real file system: symlinks resolved, the target inside the allowed
//!   root, a regular file (never a device, FIFO or socket), at most the
//!   size limit ([`read_regular_file`]).

use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

/// Reads the other files an asset names (a `.gltf`'s external buffers).
/// Importers never open files themselves: the cooker serves companions
/// from the same snapshot it hashes, so what is imported is exactly what
/// the cache key covers, and the asset server can serve in-memory edits.
pub trait CompanionReader {
    /// The whole file at `path` (already resolved against the asset's
    /// directory).
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// Whether `path` names a readable regular file, without reading it
    /// (for warnings about buffers nothing uses).
    fn exists(&self, path: &Path) -> bool;
    /// The file at `path` if it holds at most `max_bytes`; readers that
    /// can check the size before reading should.
    fn read_bounded(&self, path: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
        let bytes = self.read(path)?;
        if bytes.len() as u64 > max_bytes {
            return Err(too_large(bytes.len() as u64, max_bytes));
        }
        Ok(bytes)
    }
    /// The directory companions must stay inside; `None`: the asset's own
    /// directory.
    fn allowed_root(&self) -> Option<&Path> {
        None
    }
}

/// Companions straight from the file system (tools and tests that import
/// one file outside a cook), under the same rules as a cook's reader.
pub struct FileSystem;

impl CompanionReader for FileSystem {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        read_regular_file(path, crate::Limits::default().max_file_bytes)
    }
    fn exists(&self, path: &Path) -> bool {
        path.is_file()
    }
    fn read_bounded(&self, path: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
        read_regular_file(path, max_bytes)
    }
}

fn too_large(len: u64, max: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{len} bytes, over the limit max_file_bytes = {max}"),
    )
}

/// The whole regular file at `path` (symlinks followed), if it holds at
/// most `max_bytes`. The type and size are checked before opening (a FIFO
/// is never opened, so it cannot block), the file is opened non-blocking
/// and checked again through the open handle (in case it was swapped), and
/// at most `max_bytes + 1` bytes are ever read (a file that grows is cut
/// off, not followed).
pub fn read_regular_file(path: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
    check_regular(&std::fs::metadata(path)?, max_bytes)?;
    let file = open_nonblocking(path)?;
    let meta = file.metadata()?;
    check_regular(&meta, max_bytes)?;
    let mut bytes = Vec::with_capacity(meta.len().min(max_bytes) as usize);
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(bytes.len() as u64, max_bytes));
    }
    Ok(bytes)
}

fn check_regular(meta: &std::fs::Metadata, max_bytes: u64) -> io::Result<()> {
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file ({})", file_kind(meta)),
        ));
    }
    if meta.len() > max_bytes {
        return Err(too_large(meta.len(), max_bytes));
    }
    Ok(())
}

fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
    }
    if meta.is_dir() {
        "a directory"
    } else {
        "not a plain file"
    }
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<std::fs::File> {
    std::fs::File::open(path)
}

/// Where a companion URI (already percent-decoded) points, resolved
/// lexically against the asset's directory, or why it is refused. `root`
/// is the directory it must stay inside (`None`: the asset's directory).
pub fn resolve_companion(asset: &Path, uri: &str, root: Option<&Path>) -> Result<PathBuf, String> {
    if uri.contains('\0') {
        return Err("it contains a NUL byte".to_string());
    }
    if let Some(scheme) = scheme_of(uri) {
        return Err(format!(
            "scheme '{scheme}:' is not read (only data: URIs and relative paths)"
        ));
    }
    let relative = uri.replace('\\', "/");
    let as_path = Path::new(&relative);
    if relative.starts_with('/') || as_path.has_root() || as_path.is_absolute() {
        return Err(
            "absolute paths are not followed (companions are relative to the asset)".into(),
        );
    }
    let dir = asset.parent().unwrap_or_else(|| Path::new(""));
    let target = normalize(&dir.join(as_path));
    let root = normalize(root.unwrap_or(dir));
    let inside = target.starts_with(&root) && leading_parents(&target) == leading_parents(&root);
    if !inside || target == root {
        return Err(format!(
            "it resolves to '{}', outside '{}'",
            target.display(),
            if root.as_os_str().is_empty() {
                Path::new(".").display()
            } else {
                root.display()
            }
        ));
    }
    Ok(target)
}

/// `scheme` of `scheme:rest` per RFC 3986 (a letter, then letters,
/// digits, `+`, `-`, `.`); a one-letter scheme is a Windows drive.
fn scheme_of(uri: &str) -> Option<&str> {
    let (scheme, _) = uri.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let ok = first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    ok.then_some(scheme)
}

/// `path` with `.` removed and `..` applied to the components before it
/// (without touching the file system); `..` that cannot be applied stays
/// in front.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out: Vec<Component<'_>> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(c),
            },
            other => out.push(other),
        }
    }
    out.iter().collect()
}

fn leading_parents(path: &Path) -> usize {
    path.components()
        .take_while(|c| matches!(c, Component::ParentDir))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(asset: &str, uri: &str) -> String {
        resolve_companion(Path::new(asset), uri, None)
            .unwrap_or_else(|e| panic!("{uri}: {e}"))
            .display()
            .to_string()
    }

    fn refused(asset: &str, uri: &str, root: Option<&str>) -> String {
        resolve_companion(Path::new(asset), uri, root.map(Path::new))
            .err()
            .unwrap_or_else(|| panic!("{uri} was not refused"))
    }

    #[test]
    fn relative_uris_inside_the_asset_directory_resolve() {
        assert_eq!(ok("assets/a.gltf", "a.bin"), "assets/a.bin");
        assert_eq!(ok("assets/a.gltf", "./sub/../b.bin"), "assets/b.bin");
        assert_eq!(ok("a.gltf", "bin/a.bin"), "bin/a.bin");
        assert_eq!(ok("/p/assets/a.gltf", "sub\\c.bin"), "/p/assets/sub/c.bin");
        assert_eq!(ok("../x/a.gltf", "a.bin"), "../x/a.bin");
    }

    #[test]
    fn escaping_absolute_and_schemed_uris_are_refused() {
        assert!(refused("assets/a.gltf", "../../etc/passwd", None).contains("outside"));
        assert!(refused("a.gltf", "../a.bin", None).contains("outside"));
        assert!(refused("../x/a.gltf", "../y.bin", None).contains("outside"));
        assert!(refused("assets/a.gltf", "sub/../../b.bin", None).contains("outside"));
        assert!(refused("assets/a.gltf", "/dev/zero", None).contains("absolute"));
        assert!(refused("assets/a.gltf", "\\\\server\\share", None).contains("absolute"));
        assert!(refused("assets/a.gltf", "C:/x.bin", None).contains("scheme"));
        assert!(refused("assets/a.gltf", "file:///etc/passwd", None).contains("scheme"));
        assert!(refused("assets/a.gltf", "https://x/y.bin", None).contains("scheme"));
        assert!(refused("assets/a.gltf", "a\0.bin", None).contains("NUL"));
        assert!(refused("assets/a.gltf", ".", None).contains("outside"));
    }

    #[test]
    fn a_project_root_allows_sibling_directories_only_below_it() {
        let root = Some(Path::new("proj"));
        let r = resolve_companion(Path::new("proj/chars/a.gltf"), "../shared/b.bin", root);
        assert_eq!(r.unwrap(), Path::new("proj/shared/b.bin"));
        assert!(refused("proj/chars/a.gltf", "../../b.bin", Some("proj")).contains("outside"));
    }

    #[cfg(unix)]
    #[test]
    fn devices_fifos_and_oversized_files_are_not_read() {
        let e = read_regular_file(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(e.to_string().contains("device"), "{e}");
        let dir = std::env::temp_dir().join(format!("ludus-companion-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo.bin");
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let e = read_regular_file(&fifo, 1 << 20).unwrap_err();
            assert!(e.to_string().contains("FIFO"), "{e}");
        }
        let big = dir.join("big.bin");
        std::fs::write(&big, [0u8; 100]).unwrap();
        assert!(read_regular_file(&big, 99).is_err());
        assert_eq!(read_regular_file(&big, 100).unwrap().len(), 100);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
