//! `ludus-anim-server` (also `ludus-anim serve`): see the crate docs and
//! `schemas/server-api.md`.

use clap::Parser;

fn main() -> std::process::ExitCode {
    ludus_anim_server::run::main(ludus_anim_server::args::ServeArgs::parse())
}
