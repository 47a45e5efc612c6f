//! Typed errors. Every message names the profile chain and the joint it
//! concerns, so a build log line is enough to fix the profile or the rig.

/// A profile that cannot be read (TOML syntax, unknown keys, bad values).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProfileError {
    /// TOML syntax or shape; unknown keys carry a "did you mean" hint.
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    /// A value the schema allows but the retarget cannot use.
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

/// A profile that does not fit the given skeletons, or a clip that breaks
/// the retarget.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RetargetError {
    #[error("{side} chain '{chain}': joint '{joint}' does not exist in the {side} skeleton{hint}")]
    MissingJoint {
        side: &'static str,
        chain: String,
        joint: String,
        /// ` (did you mean 'X'?)` or empty.
        hint: String,
    },
    #[error("{side} chain '{chain}': '{start}' is not an ancestor of (or equal to) '{end}'")]
    DegenerateChain {
        side: &'static str,
        chain: String,
        start: String,
        end: String,
    },
    #[error(
        "target chain '{chain}' ({role}, joints '{start}' to '{end}') is required but no map \
         entry uses it; map a source chain onto it or set required = false on the chain"
    )]
    UnmappedRequiredChain {
        chain: String,
        role: String,
        start: String,
        end: String,
    },
    #[error("map entry '{source_chain}' -> '{target_chain}': {message}")]
    BadMap {
        source_chain: String,
        target_chain: String,
        message: String,
    },
    #[error("target joint '{joint}' is driven by two chains ('{first}' and '{second}')")]
    JointMappedTwice {
        joint: String,
        first: String,
        second: String,
    },
    #[error("{side} retarget pose: {message}")]
    BadPose { side: &'static str, message: String },
    #[error(
        "retarget poses disagree on chain '{chain}' (joint '{joint}'): arm-to-spine angle is \
         {source_deg:.0} deg on the source ({source_kind}) and {target_deg:.0} deg on the target \
         ({target_kind}); declare a retarget pose (rest, clip frame or rotation overrides) that \
         matches the other side, or set pose_check.on_mismatch = \"warn\""
    )]
    PoseMismatch {
        chain: String,
        joint: String,
        source_deg: f32,
        target_deg: f32,
        source_kind: &'static str,
        target_kind: &'static str,
    },
    #[error("twist '{joint}': {message}")]
    BadTwist { joint: String, message: String },
    #[error("contact '{joint}': {message}")]
    BadContact { joint: String, message: String },
    #[error("clip '{clip}': track targets joint index {joint} outside the source skeleton")]
    BadTrack { clip: String, joint: usize },
    #[error("root: {message}")]
    BadRoot { message: String },
    #[error("the profile maps no chain: nothing of the source would move the target (declare [[map]] entries)")]
    NoMaps,
}
