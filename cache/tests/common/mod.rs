//! Helpers shared by the integration tests.
#![allow(dead_code)] // each test binary uses a different subset

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use ludus_anim_cache::{Key, KeyBuilder};

/// The key of test item `i`.
pub fn key(i: u64) -> Key {
    KeyBuilder::new().str("test-item").u64(i).finish()
}

/// A deterministic value for item `i`, `len` bytes long.
pub fn value(i: u64, len: usize) -> Vec<u8> {
    let mut state = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            // xorshift64
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

/// Sets a file's mtime (needs write access, which tests have).
pub fn set_mtime(path: &Path, t: SystemTime) {
    let f = File::options()
        .write(true)
        .open(path)
        .expect("open for set_mtime");
    f.set_modified(t).expect("set_modified");
}

pub fn mtime(path: &Path) -> SystemTime {
    fs::metadata(path).expect("stat").modified().expect("mtime")
}

/// Every regular file under `dir/objects`, recursively.
pub fn object_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.join("objects")];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// True if `p`'s file name is an entry name (64 lowercase hex digits).
pub fn is_entry_name(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .and_then(Key::from_hex)
        .is_some()
}
