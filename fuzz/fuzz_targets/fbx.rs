//! FBX (binary and ASCII) through ufbx and the FBX importer. ufbx is C:
//! a crash in it is an abort the importer cannot contain, so this target
//! is what shows the importer only hands ufbx what it can evaluate.
#![no_main]

mod common;
use libfuzzer_sys::fuzz_target;
use ludus_anim_model::SourceFormat;

fuzz_target!(|data: &[u8]| common::import("fuzz/a.fbx", SourceFormat::Fbx, data));
