//! Fault injection for tests: one hidden way to make the cook panic inside
//! one asset, proving per-asset isolation end to end from the CLI.
//!
//! Compiled in only with the `fault-injection` feature, which nothing but
//! the cooker's own tests enable (a dev-dependency of the package on
//! itself): `cargo build`, `cargo install` and release builds never have
//! it, and even a test build acts only when `LUDUS_ANIM_TEST_PANIC` is set.

/// Panic if this is a fault-injection build and `LUDUS_ANIM_TEST_PANIC`
/// is a substring of `file` (the asset's recorded path).
#[cfg(feature = "fault-injection")]
pub fn panic_point(file: &str) {
    let Some(pattern) = std::env::var_os("LUDUS_ANIM_TEST_PANIC") else {
        return;
    };
    let pattern = pattern.to_string_lossy();
    if !pattern.is_empty() && file.contains(pattern.as_ref()) {
        panic!("injected by LUDUS_ANIM_TEST_PANIC={pattern} while cooking '{file}'");
    }
}

/// Does nothing: this build has no fault injection.
#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub fn panic_point(_file: &str) {}
