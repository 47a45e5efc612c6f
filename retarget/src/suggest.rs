use crate::profile::Profile;
use ludus_anim_runtime::Skeleton;
pub fn suggest(_s: &Skeleton, _t: &Skeleton) -> Profile { todo!() }
pub fn rest_kind(_s: &Skeleton) -> &'static str { todo!() }
