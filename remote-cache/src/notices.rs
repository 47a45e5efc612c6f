//! Notices: the human-readable lines a cook reports about the remote cache
//! (a corrupt download, a server error, the remote being disabled).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// A bounded list of notices. A failing server could otherwise add one line
/// per entry; past `cap`, notices are only counted, and [`Notices::take`]
/// ends with one line saying how many were left out.
pub(crate) struct Notices {
    list: Mutex<Vec<String>>,
    suppressed: AtomicU64,
    cap: usize,
}

impl Notices {
    pub fn new(cap: usize) -> Notices {
        Notices {
            list: Mutex::new(Vec::new()),
            suppressed: AtomicU64::new(0),
            cap,
        }
    }

    pub fn push(&self, notice: String) {
        if let Ok(mut list) = self.list.lock() {
            if list.len() < self.cap {
                list.push(notice);
                return;
            }
        }
        self.suppressed.fetch_add(1, Ordering::Relaxed);
    }

    /// The notices so far (and the count of suppressed ones); resets.
    pub fn take(&self) -> Vec<String> {
        let mut out = self
            .list
            .lock()
            .map(|mut l| std::mem::take(&mut *l))
            .unwrap_or_default();
        let suppressed = self.suppressed.swap(0, Ordering::Relaxed);
        if suppressed > 0 {
            out.push(format!(
                "{suppressed} more remote cache notices not shown (see the remote counters)"
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_and_counts() {
        let n = Notices::new(2);
        for i in 0..5 {
            n.push(format!("n{i}"));
        }
        let got = n.take();
        assert_eq!(got.len(), 3);
        assert_eq!(&got[..2], ["n0", "n1"]);
        assert!(got[2].starts_with("3 more"), "{got:?}");
        assert!(n.take().is_empty());
    }
}
