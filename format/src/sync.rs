//! Sync groups as a package stores them (the `SYNC` section, format
//! version 3): which clips of the package play in a group, on which named
//! contact markers, and the playback-rate range a follower needs.

/// Bytes of the SYNC section header: group count, marker-name total,
/// clip-index total, reserved.
pub const SYNC_HEADER_SIZE: usize = 16;
/// Bytes per group record: name u32, marker count u32, first marker u32,
/// clip count u32, first clip u32, rate min f32, rate max f32, reserved u32.
pub const SYNC_GROUP_RECORD_SIZE: usize = 32;

/// One sync group of a loaded package.
#[derive(Clone, Debug, PartialEq)]
pub struct SyncGroup<'a> {
    /// The group's name (the manifest's `[[sync_group]] name`).
    pub name: &'a str,
    /// The group's sync markers in cycle order; every member clip carries
    /// each of them as a sync marker, in this cyclic order.
    pub markers: Vec<&'a str>,
    /// The member clips of this package (indices into its clip table).
    pub clips: Vec<u32>,
    /// Cook-time figure: the smallest and largest playback rate a member
    /// plays at to follow another member of this package marker interval
    /// by marker interval (`1/r` and `r`; `(1, 1)` for one member).
    pub rate_range: (f32, f32),
}
