//! Codec identifiers as stored in the package clip table.

/// A clip's codec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u16)]
pub enum CodecId {
    /// Uncompressed, uniformly sampled f32 TRS (fixtures, diagnostics).
    Reference = 0,
    /// ACL-design variable bit rate (see `schemas/codec-vbr.md`).
    Vbr = 1,
}

impl CodecId {
    pub fn from_u16(v: u16) -> Option<CodecId> {
        match v {
            0 => Some(CodecId::Reference),
            1 => Some(CodecId::Vbr),
            _ => None,
        }
    }
    pub fn name(&self) -> &'static str {
        match self {
            CodecId::Reference => "reference",
            CodecId::Vbr => "vbr",
        }
    }
    /// Version of the blob layout this crate describes.
    pub fn version(&self) -> u16 {
        match self {
            CodecId::Reference => crate::reference::VERSION,
            CodecId::Vbr => crate::vbr::VERSION,
        }
    }
}
