//! Bounds-checked reads over package bytes, and the string table.

use super::format::NO_STRING;
use super::{invalid, PackageError};

/// Bounds-checked little-endian reads over a byte slice.
#[derive(Clone, Copy)]
pub(super) struct Bytes<'a> {
    pub(super) b: &'a [u8],
    pub(super) what: &'static str,
}

impl<'a> Bytes<'a> {
    pub(super) fn range(&self, start: u64, len: u64) -> Result<&'a [u8], PackageError> {
        let end = start.checked_add(len).ok_or(PackageError::Truncated {
            what: self.what,
            start,
            end: u64::MAX,
            len: self.b.len(),
        })?;
        if end > self.b.len() as u64 {
            return Err(PackageError::Truncated {
                what: self.what,
                start,
                end,
                len: self.b.len(),
            });
        }
        Ok(&self.b[start as usize..end as usize])
    }
    pub(super) fn u8(&self, at: u64) -> Result<u8, PackageError> {
        Ok(self.range(at, 1)?[0])
    }
    pub(super) fn u16(&self, at: u64) -> Result<u16, PackageError> {
        let r = self.range(at, 2)?;
        Ok(u16::from_le_bytes([r[0], r[1]]))
    }
    pub(super) fn u32(&self, at: u64) -> Result<u32, PackageError> {
        let r = self.range(at, 4)?;
        Ok(u32::from_le_bytes([r[0], r[1], r[2], r[3]]))
    }
    pub(super) fn u64(&self, at: u64) -> Result<u64, PackageError> {
        let r = self.range(at, 8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(r);
        Ok(u64::from_le_bytes(a))
    }
    pub(super) fn f32(&self, at: u64) -> Result<f32, PackageError> {
        Ok(f32::from_bits(self.u32(at)?))
    }
    pub(super) fn hash32(&self, at: u64) -> Result<[u8; 32], PackageError> {
        let mut h = [0u8; 32];
        h.copy_from_slice(self.range(at, 32)?);
        Ok(h)
    }
}

/// The string table: UTF-8 strings addressed by index.
#[derive(Clone, Debug)]
pub(crate) struct Strings<'a> {
    offsets: Vec<u32>,
    bytes: &'a [u8],
}

impl<'a> Strings<'a> {
    pub(super) fn parse(sec: Bytes<'a>) -> Result<Strings<'a>, PackageError> {
        let count = sec.u32(0)? as u64;
        if count > sec.b.len() as u64 / 4 {
            return Err(invalid("string count exceeds section size"));
        }
        let mut offsets = Vec::with_capacity(count as usize + 1);
        for i in 0..=count {
            offsets.push(sec.u32(4 + i * 4)?);
        }
        let data_start = 4 + (count + 1) * 4;
        let total = *offsets.last().unwrap_or(&0) as u64;
        let bytes = sec.range(data_start, total)?;
        for (i, w) in offsets.windows(2).enumerate() {
            let s = bytes
                .get(w[0] as usize..w[1] as usize)
                .ok_or_else(|| invalid(format!("string {i} lies outside the string table")))?;
            if std::str::from_utf8(s).is_err() {
                return Err(invalid(format!("string {i} is not UTF-8")));
            }
        }
        Ok(Strings { offsets, bytes })
    }

    pub(crate) fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// The string at `index` (validated at load), or "" for the "no string" index (`u32::MAX`).
    pub(crate) fn get(&self, index: u32) -> &'a str {
        let i = index as usize;
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => self
                .bytes
                .get(a as usize..b as usize)
                .and_then(|s| std::str::from_utf8(s).ok())
                .unwrap_or(""),
            _ => "",
        }
    }

    /// The string named by the u32 index at `at` of `sec` (checked).
    pub(super) fn read(
        &self,
        sec: &Bytes<'a>,
        at: u64,
        what: &str,
    ) -> Result<&'a str, PackageError> {
        let i = sec.u32(at)?;
        self.check(i, what)?;
        Ok(self.get(i))
    }

    pub(super) fn check(&self, index: u32, what: &str) -> Result<(), PackageError> {
        if index == NO_STRING || (index as usize) < self.len() {
            Ok(())
        } else {
            Err(invalid(format!(
                "{what} names string {index}, out of range"
            )))
        }
    }
}

/// One fixed-size record of a section (a CLIP record): reads at the
/// record's field offsets (`format::clip_record`), bounds-checked.
#[derive(Clone, Copy)]
pub(super) struct Record<'s, 'a> {
    pub(super) sec: &'s Bytes<'a>,
    pub(super) at: u64,
}

impl<'a> Record<'_, 'a> {
    pub(super) fn u8(&self, field: usize) -> Result<u8, PackageError> {
        self.sec.u8(self.at + field as u64)
    }
    pub(super) fn u16(&self, field: usize) -> Result<u16, PackageError> {
        self.sec.u16(self.at + field as u64)
    }
    pub(super) fn u32(&self, field: usize) -> Result<u32, PackageError> {
        self.sec.u32(self.at + field as u64)
    }
    pub(super) fn u64(&self, field: usize) -> Result<u64, PackageError> {
        self.sec.u64(self.at + field as u64)
    }
    pub(super) fn f32(&self, field: usize) -> Result<f32, PackageError> {
        self.sec.f32(self.at + field as u64)
    }
    pub(super) fn hash32(&self, field: usize) -> Result<[u8; 32], PackageError> {
        self.sec.hash32(self.at + field as u64)
    }
    pub(super) fn bytes(&self, field: usize, len: usize) -> Result<&'a [u8], PackageError> {
        self.sec.range(self.at + field as u64, len as u64)
    }
    /// The string a string-index field names (checked against the table).
    pub(super) fn str(
        &self,
        field: usize,
        strings: &Strings<'a>,
        what: &str,
    ) -> Result<&'a str, PackageError> {
        strings.read(self.sec, self.at + field as u64, what)
    }
}
