//! The conditions a bench ran under, stated beside its figures (#17: "state
//! your load and method"). On a shared machine the same build's cold
//! figures move by up to 2x from run to run, so a figure without the load it
//! was taken at cannot be judged; the spread of the passes (in the JSON)
//! says how steady the run itself was.

use serde::Serialize;
use std::fmt::Write;

/// How the decode figures are taken, in one line for the table and the JSON.
pub const METHOD: &str = "ACL's method: the package copied thousands of times (half the poses a \
33 MB cache holds, at least 4,000, fewer for packages over 64 KiB) into 128 KiB-aligned slots, a \
context per copy, decodes rotating through the copies (clip data cold, code and output warm), 12 \
timed passes after 2 warm-up passes, median of the passes' mean ns per decode; strict: one copy \
after a 128 MiB read-modify-write, median of the runs; one thread, not pinned by the bench (pin \
it with taskset)";

/// The machine and its load around a bench run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Conditions {
    /// The CPU model as the OS names it (empty if unknown).
    pub cpu: String,
    /// Logical CPUs this process may run on (its affinity mask).
    pub usable_cpus: usize,
    /// Load averages (1, 5, 15 minutes) before and after the run; none
    /// where the OS does not report them.
    pub load_before: Option<[f64; 3]>,
    pub load_after: Option<[f64; 3]>,
    pub method: &'static str,
    /// Where decode figures against ACL come from ([`ACL_BASIS`]).
    pub acl_basis: &'static str,
}

/// Where decode figures against ACL come from. In the JSON and under the
/// decode table.
pub const ACL_BASIS: &str = "no ACL decode figure: one counts only when ACL ran beside ours in \
the same run (tools/acl-harness with ../shared/anchors/acl-side-by-side, phase B)";

impl Conditions {
    /// The conditions at the start of a run.
    pub fn start() -> Self {
        Conditions {
            cpu: cpu_model(),
            usable_cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            load_before: load_average(),
            load_after: None,
            method: METHOD,
            acl_basis: ACL_BASIS,
        }
    }

    /// Record the load at the end of the run.
    pub fn finish(&mut self) {
        self.load_after = load_average();
    }

    /// True if something besides the bench kept the machine busy: a
    /// 1-minute load above the usable CPUs less the bench's own thread,
    /// before or after the run.
    pub fn busy(&self) -> bool {
        let limit = self.usable_cpus.saturating_sub(1).max(1) as f64;
        [self.load_before, self.load_after]
            .iter()
            .flatten()
            .any(|l| l[0] > limit)
    }

    /// Two lines for the table: the machine and load, then the method; a
    /// third when the load makes the figures unreliable.
    pub fn render(&self) -> String {
        let load = |l: Option<[f64; 3]>| {
            l.map_or("unknown".to_string(), |l| {
                format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2])
            })
        };
        let mut s = String::new();
        let cpu = if self.cpu.is_empty() {
            "unknown CPU"
        } else {
            &self.cpu
        };
        let _ = writeln!(
            s,
            "conditions: {cpu}, {} usable CPUs; load average (1/5/15 min) {} before, {} after",
            self.usable_cpus,
            load(self.load_before),
            load(self.load_after)
        );
        let _ = writeln!(s, "method: {}", self.method);
        if self.busy() {
            let _ = writeln!(
                s,
                "warning: the machine was busy (load above {} CPU): cold figures are not comparable with quiet-machine anchors",
                self.usable_cpus.saturating_sub(1).max(1)
            );
        }
        s
    }
}

/// `/proc/loadavg`'s first three fields.
fn load_average() -> Option<[f64; 3]> {
    parse_loadavg(&std::fs::read_to_string("/proc/loadavg").ok()?)
}

fn parse_loadavg(s: &str) -> Option<[f64; 3]> {
    let mut it = s.split_whitespace().map(|x| x.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

/// The first `model name` of `/proc/cpuinfo`.
fn cpu_model() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    parse_cpu_model(&info)
}

fn parse_cpu_model(info: &str) -> String {
    info.lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == "model name").then(|| v.trim().to_string())
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_and_model_parse_and_a_busy_machine_is_flagged() {
        assert_eq!(
            parse_loadavg("0.52 1.07 0.98 2/301 4242\n"),
            Some([0.52, 1.07, 0.98])
        );
        assert_eq!(parse_loadavg("0.5 x 1"), None);
        assert_eq!(parse_loadavg(""), None);
        let info = "processor\t: 0\nmodel name\t: AMD EPYC 9B14\nflags\t: sse2\n";
        assert_eq!(parse_cpu_model(info), "AMD EPYC 9B14");
        assert_eq!(parse_cpu_model("processor : 0\n"), "");
        let mut c = Conditions {
            cpu: "x".into(),
            usable_cpus: 2,
            load_before: Some([0.9, 0.5, 0.5]),
            load_after: Some([1.0, 0.5, 0.5]),
            method: METHOD,
            acl_basis: ACL_BASIS,
        };
        assert!(!c.busy(), "the bench's own thread is allowed");
        assert!(!c.render().contains("warning"));
        c.load_after = Some([1.6, 0.5, 0.5]);
        assert!(c.busy());
        assert!(c.render().contains("warning: the machine was busy"));
        c.load_before = None;
        c.load_after = None;
        assert!(!c.busy());
        assert!(c.render().contains("unknown before, unknown after"));
    }
}
