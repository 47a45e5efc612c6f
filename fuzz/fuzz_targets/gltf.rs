//! glTF JSON and GLB bytes through the glTF importer, validation and
//! normalize.
#![no_main]

mod common;
use libfuzzer_sys::fuzz_target;
use ludus_anim_model::SourceFormat;

fuzz_target!(|data: &[u8]| {
    let glb = data.starts_with(b"glTF");
    let (name, format) = if glb {
        ("fuzz/a.glb", SourceFormat::Glb)
    } else {
        ("fuzz/a.gltf", SourceFormat::Gltf)
    };
    common::import(name, format, data);
});
