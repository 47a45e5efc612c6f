//! The subcommands of `ludus-anim`, one module each, and what they share:
//! output settings (quiet, verbose, color) and exit codes.

pub mod bench;
pub mod cache;
pub mod cache_verify;
pub mod cook;
pub mod cook_asset;
pub mod inspect;
pub mod limits;
pub mod merge;
pub mod merge_fragments;
pub mod output;
pub mod program;
pub mod program_view;
pub mod prune;
pub mod report;
pub mod retarget;
pub mod serve;

/// `--version`: the crate version and the source revision it was built
/// from (packages record only the version; see `COOKER_VERSION`).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (rev ",
    env!("LUDUS_ANIM_REVISION"),
    ")"
);

/// Process exit codes (documented in `main.rs` and the README).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Ok = 0,
    AssetsFailed = 1,
    Usage = 2,
    Write = 3,
}

impl From<Exit> for u8 {
    fn from(e: Exit) -> u8 {
        e as u8
    }
}
