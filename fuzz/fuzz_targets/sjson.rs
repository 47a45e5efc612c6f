//! ACL SJSON raw clips through the SJSON importer, validation and
//! normalize.
#![no_main]

mod common;
use libfuzzer_sys::fuzz_target;
use ludus_anim_model::SourceFormat;

fuzz_target!(|data: &[u8]| common::import("fuzz/a.acl.sjson", SourceFormat::AclSjson, data));
