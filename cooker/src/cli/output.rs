//! How much the command line prints and in what colors: `-q` prints only
//! errors, `-v` adds decisions and per-clip lines; `--color auto` colors
//! terminals unless `NO_COLOR` is set.

use clap::{Args, ValueEnum};
use ludus_anim_cooker::progress::line;
use ludus_anim_cooker::report::{ReportDiagnostic, Severity};
use std::io::IsTerminal;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Args, Clone, Debug)]
pub struct OutputArgs {
    /// Print only errors.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print more: decisions, per-clip results.
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// Color diagnostics: auto (terminals, unless NO_COLOR is set),
    /// always, never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true)]
    pub color: ColorChoice,
}

/// Output settings after resolving `auto`.
#[derive(Clone, Copy, Debug)]
pub struct Output {
    pub quiet: bool,
    pub verbose: bool,
    pub color: bool,
}

impl OutputArgs {
    pub fn resolve(&self) -> Output {
        let color = match self.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
            }
        };
        Output {
            quiet: self.quiet,
            verbose: self.verbose,
            color,
        }
    }
}

impl Output {
    /// `error: ...` on stderr (always shown).
    pub fn error(&self, message: impl std::fmt::Display) {
        line(format!("{}: {message}\n", self.paint("error", "1;31")));
    }

    /// `warning: ...` on stderr (hidden by `-q`).
    pub fn warn(&self, message: impl std::fmt::Display) {
        if !self.quiet {
            line(format!("{}: {message}\n", self.paint("warning", "1;33")));
        }
    }

    /// `note: ...` on stderr (hidden by `-q`).
    pub fn note(&self, message: impl std::fmt::Display) {
        if !self.quiet {
            line(format!("{}: {message}\n", self.paint("note", "1;36")));
        }
    }

    fn paint(&self, text: &str, sgr: &str) -> String {
        if self.color {
            format!("\x1b[{sgr}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    /// One line per diagnostic:
    /// `error[code]: file '…', clip '…', joint '…', t=…s: message`.
    pub fn diagnostic(&self, d: &ReportDiagnostic) -> String {
        let mut parts = Vec::new();
        if let Some(v) = &d.file {
            parts.push(format!("file '{v}'"));
        }
        if let Some(v) = &d.clip {
            parts.push(format!("clip '{v}'"));
        }
        if let Some(v) = &d.joint {
            parts.push(format!("joint '{v}'"));
        }
        if let Some(v) = d.time_s {
            parts.push(format!("t={v:.4}s"));
        }
        let sev = match d.severity {
            Severity::Warning => self.paint(&format!("warning[{}]", d.code), "1;33"),
            Severity::Error => self.paint(&format!("error[{}]", d.code), "1;31"),
        };
        if parts.is_empty() {
            format!("{sev}: {}", d.message)
        } else {
            format!("{sev}: {}: {}", parts.join(", "), d.message)
        }
    }
}

/// Write to stdout. A closed pipe (`ludus-anim inspect --json | head`)
/// ends the process quietly with status 0, as a shell pipeline expects,
/// instead of `println!`'s panic; any other write error is reported and
/// exits with status 1. Outputs on disk are written atomically, so
/// stopping here leaves nothing half-written.
pub fn write_stdout(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|_| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to stdout: {e}");
        std::process::exit(1);
    }
}

/// `print!` through [`write_stdout`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::output::write_stdout(format_args!($($arg)*))
    };
}

/// `println!` through [`write_stdout`].
macro_rules! outln {
    () => {
        $crate::cli::output::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cli::output::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use {out, outln};
