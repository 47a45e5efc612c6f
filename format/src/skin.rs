//! Mesh skin bindings as a package stores them (the optional `SKIN`
//! section): per skin, its palette -> skeleton joint map, each palette
//! entry's inverse bind transform (geometry space -> joint space at bind
//! time, with any mesh-to-skeleton conversion folded in) and the joint's
//! component-space transform at bind time (the skin's bind pose, kept
//! apart from the skeleton's rest). A renderer skins with
//! `skin[i] = component[joints[i]] * inverse_bind[i]`.

/// Bytes of the SKIN section header: skin count u32, reserved u32.
pub const SKIN_HEADER_SIZE: usize = 8;
/// Bytes of a skin's record header: name u32, palette count u32.
pub const SKIN_RECORD_HEADER_SIZE: usize = 8;
/// Bytes per palette entry: joint u32, inverse bind 12 x f32, bind
/// world 12 x f32 (each a column-major 3x4 affine matrix: the three
/// basis columns then the translation).
pub const SKIN_ENTRY_SIZE: usize = 4 + 48 + 48;

/// A column-major 3x4 affine matrix: `[x axis, y axis, z axis,
/// translation]`, three floats each.
pub type Affine34 = [f32; 12];

/// One skin binding of a loaded package.
#[derive(Clone, Debug, PartialEq)]
pub struct SkinBinding<'a> {
    /// The skin's name (unique within the source asset).
    pub name: &'a str,
    /// Palette entry -> joint index in the package's skeleton.
    pub joints: Vec<u32>,
    /// Per palette entry: geometry space -> joint space at bind time.
    pub inverse_bind: Vec<Affine34>,
    /// Per palette entry: the joint's component-space transform at bind
    /// time.
    pub bind_world: Vec<Affine34>,
}

/// Bytes of the BNDS section header: clip count u32, reserved u32.
pub const BOUNDS_HEADER_SIZE: usize = 8;
/// Bytes per clip in BNDS: present u32 (0 or 1), min, max, center
/// (3 x f32 each), radius f32.
pub const BOUNDS_RECORD_SIZE: usize = 4 + 40;

/// A clip's motion bounds in character space (meters): a box and a
/// sphere holding the clip's skinned vertices (or joints) at every
/// checked time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClipBounds {
    pub min: [f32; 3],
    pub max: [f32; 3],
    pub center: [f32; 3],
    pub radius: f32,
}

/// What a package carries beyond its skeleton and clips for a renderer:
/// its skin bindings (empty when the source had no skin) and each clip's
/// motion bounds (in clip order; an additive clip's applied on the rest
/// pose; `None` where a pose did not decode; empty when
/// the package has no BNDS section), its sockets (empty without a
/// SOCK section) and its cooked masks and LOD levels (empty without a
/// JSET section).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bindings<'a> {
    pub skins: Vec<SkinBinding<'a>>,
    pub clip_bounds: Vec<Option<ClipBounds>>,
    pub sockets: Vec<crate::sockets::Socket<'a>>,
    pub joint_sets: crate::joint_sets::JointSets<'a>,
}
