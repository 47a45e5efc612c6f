//! Which generations stay on disk: the retention policy (`--keep`,
//! `--keep-within`, `--keep-max-mb`) applied to what is on disk. A pure
//! function of its inputs, so that every rule is unit-tested without files.
//!
//! A generation is kept when any rule keeps it (as restic's `forget`
//! combines its `--keep-*` rules): it is current, pinned or under a live
//! lease (*held*: never removed), among the newest `keep` up to current,
//! or was superseded less than `within` ago. The size budget then removes
//! the oldest kept generations that are not held until the kept ones (their
//! files and the packages they name, each package counted once) fit, as
//! Prometheus's size retention removes the oldest blocks first.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, SystemTime};

/// The retention settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// The newest `keep` generations up to current are kept.
    pub keep: usize,
    /// Generations superseded less than this long ago are kept too.
    pub within: Option<Duration>,
    /// The kept generations' files and packages fit in this many bytes
    /// (held generations are kept even above it).
    pub max_bytes: Option<u64>,
}

/// One generation on disk, as retention sees it.
#[derive(Clone, Debug)]
pub struct Candidate<'a> {
    pub number: u64,
    /// Pinned, or under a lease that has not expired.
    pub held: bool,
    /// When the next generation was published (`None`: not superseded).
    pub superseded: Option<SystemTime>,
    /// Bytes of its own files (manifest, report, stale, sidecar).
    pub own_bytes: u64,
    /// The packages it names (paths relative to the output directory).
    pub packages: Vec<&'a str>,
}

/// The generation numbers to keep, of `on_disk`, when `current` is
/// served; `size` gives a package's bytes.
pub fn kept(
    on_disk: &[Candidate],
    current: u64,
    policy: &Policy,
    now: SystemTime,
    size: impl Fn(&str) -> u64,
) -> BTreeSet<u64> {
    let first = current.saturating_sub(policy.keep.max(1) as u64 - 1);
    let young = |c: &Candidate| match (policy.within, c.superseded) {
        (Some(w), Some(at)) => now.duration_since(at).map_or(true, |age| age < w),
        _ => false,
    };
    let by_number: BTreeMap<u64, &Candidate> = on_disk.iter().map(|c| (c.number, c)).collect();
    let mut kept: BTreeSet<u64> = by_number
        .values()
        .filter(|c| {
            let held = c.held || c.number == current;
            let counted = c.number <= current && c.number >= first;
            held || counted || (c.number < current && young(c))
        })
        .map(|c| c.number)
        .collect();
    let Some(budget) = policy.max_bytes else {
        return kept;
    };
    // Each package once, however many kept generations name it.
    let mut refs: HashMap<&str, usize> = HashMap::new();
    let mut total = 0u64;
    for n in &kept {
        let c = by_number[n];
        total += c.own_bytes;
        for p in &c.packages {
            let r = refs.entry(p).or_insert(0);
            if *r == 0 {
                total += size(p);
            }
            *r += 1;
        }
    }
    let droppable: Vec<u64> = kept
        .iter()
        .copied()
        .filter(|n| !by_number[n].held && *n != current)
        .collect();
    for n in droppable {
        if total <= budget {
            break;
        }
        let c = by_number[&n];
        kept.remove(&n);
        total = total.saturating_sub(c.own_bytes);
        for p in &c.packages {
            if let Some(r) = refs.get_mut(p) {
                *r -= 1;
                if *r == 0 {
                    total = total.saturating_sub(size(p));
                }
            }
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: u64 = 1 << 20;

    fn gen(number: u64, superseded_s_ago: Option<u64>, packages: Vec<&str>) -> Candidate<'_> {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(10_000);
        Candidate {
            number,
            held: false,
            superseded: superseded_s_ago.map(|s| now - Duration::from_secs(s)),
            own_bytes: MB,
            packages,
        }
    }

    fn now() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(10_000)
    }

    fn policy(keep: usize, within_s: Option<u64>, max_mb: Option<u64>) -> Policy {
        Policy {
            keep,
            within: within_s.map(Duration::from_secs),
            max_bytes: max_mb.map(|m| m * MB),
        }
    }

    /// Generations 1..=10, generation n superseded (11 - n) * 60 s ago,
    /// each naming its own 1 MiB package and the shared one.
    fn ten() -> Vec<Candidate<'static>> {
        const P: [&str; 10] = ["p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", "p10"];
        (1..=10u64)
            .map(|n| {
                let ago = (n < 10).then_some((11 - n) * 60);
                gen(n, ago, vec![P[n as usize - 1], "shared"])
            })
            .collect()
    }

    #[test]
    fn count_keeps_the_newest_up_to_current_and_drops_numbers_above_it() {
        let k = kept(&ten(), 8, &policy(3, None, None), now(), |_| MB);
        assert_eq!(k, BTreeSet::from([6, 7, 8]));
    }

    #[test]
    fn age_keeps_recently_superseded_generations_beyond_the_count() {
        // Generations 7, 8, 9 were superseded 240, 180, 120 s ago.
        let k = kept(&ten(), 10, &policy(2, Some(200), None), now(), |_| MB);
        assert_eq!(k, BTreeSet::from([8, 9, 10]));
    }

    #[test]
    fn held_generations_and_current_are_kept_whatever_the_rules() {
        let mut g = ten();
        g[1].held = true; // generation 2
        let k = kept(&g, 10, &policy(2, None, Some(0)), now(), |_| MB);
        assert_eq!(
            k,
            BTreeSet::from([2, 10]),
            "a zero budget keeps held and current"
        );
    }

    #[test]
    fn the_size_budget_drops_the_oldest_first_counting_shared_packages_once() {
        // Each kept generation: 1 MiB files + 1 MiB own package; the shared
        // package (1 MiB) once. Five generations: 11 MiB.
        let k = kept(&ten(), 10, &policy(5, None, Some(11)), now(), |_| MB);
        assert_eq!(k, BTreeSet::from([6, 7, 8, 9, 10]));
        let k = kept(&ten(), 10, &policy(5, None, Some(7)), now(), |_| MB);
        assert_eq!(k, BTreeSet::from([8, 9, 10]));
    }

    #[test]
    fn a_clock_that_went_back_keeps_the_generation() {
        let mut g = ten();
        g[8].superseded = Some(now() + Duration::from_secs(60));
        let k = kept(&g, 10, &policy(1, Some(30), None), now(), |_| MB);
        assert_eq!(k, BTreeSet::from([9, 10]));
    }
}
