//! Retarget profiles (TOML, issue #14's format): parse and check values;
//! a profile that parses must write back (`to_toml`, what `retarget
//! suggest` writes) to text that parses to the same profile.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ludus_anim_retarget::Profile;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(p) = Profile::parse(text, "fuzz/retarget.toml") else {
        return;
    };
    let written = p.to_toml().expect("a parsed profile writes back");
    let again = Profile::parse(&written, "fuzz/written.toml").expect("written profile parses");
    assert_eq!(p, again, "round trip changed the profile:\n{written}");
});
