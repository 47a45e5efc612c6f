//! The entry file format: a fixed header followed by the payload.
//!
//! ```text
//! offset  size  field
//!      0     8  magic            b"LUDCACHE"
//!      8     4  layout version   u32 LE (LAYOUT_VERSION)
//!     12     4  flags            u32 LE: 0, or FLAG_SIGNED (remote only)
//!     16     8  payload length   u64 LE
//!     24    32  key              the entry's own key
//!     56    32  payload hash     blake3(payload)
//!     88     …  payload
//! ```
//!
//! The key is stored as well as being the file name so that a valid file
//! that ends up under the wrong name (a manual copy, a file system mishap)
//! is rejected instead of served as another key's value.
//!
//! The same framed bytes are the unit a remote cache stores, so an entry
//! downloaded from a server passes exactly the check a local file does
//! ([`check_entry`]): a truncated, corrupted or misplaced object is caught
//! by the same code that catches bit rot on disk.

use crate::error::CorruptReason;
use crate::key::Key;

/// First eight bytes of every entry file.
pub const MAGIC: [u8; 8] = *b"LUDCACHE";

/// Store layout version: written to the store's `VERSION` file and to every
/// entry header. Bump it when the directory layout or the entry format
/// changes; stores of another version are refused by
/// [`Store::open`](crate::Store::open).
pub const LAYOUT_VERSION: u32 = 1;

/// Size in bytes of the entry header that precedes the payload.
pub const HEADER_LEN: usize = 88;

/// Header flag: the payload's last 32 bytes are a signature over the key
/// and the rest of the payload (a remote cache's per-writer signing, see
/// `ludus-anim-remote-cache`). Only [`check_entry_allowing`] accepts it;
/// the local store never writes or reads a signed entry.
pub const FLAG_SIGNED: u32 = 1;

/// A parsed entry header.
pub(crate) struct Header {
    pub flags: u32,
    pub payload_len: u64,
    pub key: Key,
    pub payload_hash: blake3::Hash,
}

impl Header {
    /// The header for storing `payload` under `key`.
    pub fn for_payload(key: &Key, payload: &[u8]) -> Header {
        Header {
            flags: 0,
            payload_len: payload.len() as u64,
            key: *key,
            payload_hash: blake3::hash(payload),
        }
    }

    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..12].copy_from_slice(&LAYOUT_VERSION.to_le_bytes());
        h[12..16].copy_from_slice(&self.flags.to_le_bytes());
        h[16..24].copy_from_slice(&self.payload_len.to_le_bytes());
        h[24..56].copy_from_slice(&self.key.0);
        h[56..88].copy_from_slice(self.payload_hash.as_bytes());
        h
    }

    /// Parses and checks a header read from the file of `expected_key`.
    /// The payload itself is checked separately, by
    /// [`Header::check_payload`].
    pub fn decode(h: &[u8; HEADER_LEN], expected_key: &Key) -> Result<Header, CorruptReason> {
        Header::decode_allowing(h, expected_key, 0)
    }

    /// [`Header::decode`] that also accepts the flags in `allowed`.
    fn decode_allowing(
        h: &[u8; HEADER_LEN],
        expected_key: &Key,
        allowed: u32,
    ) -> Result<Header, CorruptReason> {
        if h[0..8] != MAGIC {
            return Err(CorruptReason::BadMagic);
        }
        let version = u32::from_le_bytes([h[8], h[9], h[10], h[11]]);
        if version != LAYOUT_VERSION {
            return Err(CorruptReason::EntryVersion { found: version });
        }
        let flags = u32::from_le_bytes([h[12], h[13], h[14], h[15]]);
        if flags & !allowed != 0 {
            return Err(CorruptReason::UnknownFlags { flags });
        }
        let mut len = [0u8; 8];
        len.copy_from_slice(&h[16..24]);
        let mut key = [0u8; 32];
        key.copy_from_slice(&h[24..56]);
        if key != expected_key.0 {
            return Err(CorruptReason::KeyMismatch { found: Key(key) });
        }
        let mut hash = [0u8; 32];
        hash.copy_from_slice(&h[56..88]);
        Ok(Header {
            flags,
            payload_len: u64::from_le_bytes(len),
            key: Key(key),
            payload_hash: blake3::Hash::from_bytes(hash),
        })
    }
}

impl Header {
    /// Checks the payload that followed this header: exact length, then
    /// blake3. Shared by the local store and [`check_entry`].
    pub fn check_payload(&self, payload: &[u8]) -> Result<(), CorruptReason> {
        if payload.len() as u64 != self.payload_len {
            return Err(CorruptReason::LengthMismatch {
                expected: self.payload_len,
                actual: payload.len() as u64,
            });
        }
        if blake3::hash(payload) != self.payload_hash {
            return Err(CorruptReason::HashMismatch);
        }
        Ok(())
    }
}

/// Frames `payload` as the entry of `key`: the exact bytes of a local entry
/// file, and what a remote cache stores under the key.
pub fn encode_entry(key: &Key, payload: &[u8]) -> Vec<u8> {
    encode_entry_with_flags(key, payload, 0)
}

/// [`encode_entry`] with header `flags` (a remote cache's
/// [`FLAG_SIGNED`] entries).
pub fn encode_entry_with_flags(key: &Key, payload: &[u8], flags: u32) -> Vec<u8> {
    let mut entry = Vec::with_capacity(HEADER_LEN + payload.len());
    let header = Header {
        flags,
        ..Header::for_payload(key, payload)
    };
    entry.extend_from_slice(&header.encode());
    entry.extend_from_slice(payload);
    entry
}

/// Checks a complete entry (header and payload, from any source) against
/// the key it was fetched under and returns its payload.
///
/// This is the check every local read goes through (magic, layout version,
/// flags, key, exact length, blake3), so bytes from a remote cache are
/// trusted exactly as far as a local file is.
pub fn check_entry<'a>(key: &Key, entry: &'a [u8]) -> Result<&'a [u8], CorruptReason> {
    check_entry_allowing(key, entry, 0).map(|(_, payload)| payload)
}

/// [`check_entry`] that also accepts the header flags in `allowed`;
/// returns the entry's flags with its payload.
pub fn check_entry_allowing<'a>(
    key: &Key,
    entry: &'a [u8],
    allowed: u32,
) -> Result<(u32, &'a [u8]), CorruptReason> {
    let Some((raw, payload)) = entry.split_first_chunk::<HEADER_LEN>() else {
        return Err(CorruptReason::TruncatedHeader {
            len: entry.len() as u64,
        });
    };
    let header = Header::decode_allowing(raw, key, allowed)?;
    header.check_payload(payload)?;
    Ok((header.flags, payload))
}
