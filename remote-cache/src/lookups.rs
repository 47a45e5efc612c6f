//! Background lookups: downloads run on a few threads of their own, so a
//! cook thread never blocks on a socket. The caller asks early
//! ([`Lookups::request`], the keys of a plan as soon as they are known,
//! several in flight at once) and waits only when it needs the value
//! ([`Lookups::wait`]), and then at most a short limit: an answer that has
//! not come by then is not waited for (the caller cooks locally), and a
//! server that answers nothing within the limit is reported as slow so
//! the caller can turn it off for the rest of the cook.

use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use ludus_anim_cache::Key;

use crate::config::WaitBudget;
use crate::error::RemoteError;

/// A download as the server answered it (an unchecked entry).
pub(crate) type Got = Result<Option<Vec<u8>>, RemoteError>;

/// What the worker threads download with.
pub(crate) trait Source: Send + Sync + 'static {
    fn download(&self, key: &Key) -> Got;
    /// The remote is off: queued keys are dropped unsent.
    fn off(&self) -> bool;
}

/// What became of a wait.
pub(crate) enum Answer {
    /// The server's answer.
    Got(Got),
    /// No answer in time. `silent`: the server answered no request within
    /// the limit while one was in flight that long (`in_flight` is the
    /// oldest such request's age): it is slower than cooking. `early`:
    /// the wait budget ran out before the server had answered anything
    /// and before it counted as silent (a first connection still being
    /// set up, or a slow server not yet judged).
    Late {
        silent: bool,
        early: bool,
        in_flight: Duration,
    },
    /// The remote was turned off meanwhile, or the key was never sent.
    Off,
}

enum Slot {
    Queued,
    Sent(Instant),
    Done(Got),
}

#[derive(Default)]
struct State {
    slots: HashMap<Key, Slot>,
    last_answer: Option<Instant>,
    /// Time from send to answer of every answered request.
    latencies: Vec<Duration>,
    /// The length of every wait that ended without an answer, summed over
    /// the callers' threads.
    waited: Duration,
}

struct Shared {
    state: Mutex<State>,
    answered: Condvar,
}

impl Shared {
    fn lock(&self) -> Option<MutexGuard<'_, State>> {
        self.state.lock().ok()
    }
}

/// The request queue, its worker threads and the answers.
pub(crate) struct Lookups {
    tx: Mutex<Option<Sender<Key>>>,
    shared: Arc<Shared>,
    /// How long an unanswered request may be in flight before the server
    /// counts as silent.
    limit: Duration,
    /// The most one wait lasts, silent server or not.
    max_wait: Duration,
    budget: Option<WaitBudget>,
    started: Instant,
}

/// How often a waiting caller re-checks the clock and the off switch.
const TICK: Duration = Duration::from_millis(20);

impl Lookups {
    /// Starts `threads` workers (at least one). `None` if no thread could
    /// be started (the caller downloads on its own thread then).
    pub fn start(
        source: Arc<dyn Source>,
        threads: usize,
        limit: Duration,
        max_wait: Duration,
        budget: Option<WaitBudget>,
    ) -> Option<Lookups> {
        let (tx, rx) = mpsc::channel();
        let rx = Arc::new(Mutex::new(rx));
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            answered: Condvar::new(),
        });
        let mut started = 0;
        for i in 0..threads.max(1) {
            let (rx, shared, source) = (rx.clone(), shared.clone(), source.clone());
            let spawned = thread::Builder::new()
                .name(format!("remote-cache-lookup-{i}"))
                .spawn(move || work(&rx, &shared, &*source));
            started += usize::from(spawned.is_ok());
        }
        (started > 0).then(|| Lookups {
            tx: Mutex::new(Some(tx)),
            shared,
            limit,
            max_wait: max_wait.max(limit),
            budget,
            started: Instant::now(),
        })
    }

    /// The longest a wait that began at `start` may last: `max_wait`, or
    /// while the server has answered nothing yet, what is left of the
    /// run's wait budget (`budgeted`). Once the server answers, waiting
    /// for it is what the remote is for.
    fn wait_cap(&self, state: &State, start: Instant) -> (Duration, bool) {
        let Some(b) = self.budget.filter(|_| state.last_answer.is_none()) else {
            return (self.max_wait, false);
        };
        let waited = state.waited + start.elapsed();
        let working = self.started.elapsed().saturating_sub(waited);
        let allowed = b.floor + working.mul_f64(b.share.clamp(0.0, 1e6));
        let cap = allowed.saturating_sub(state.waited);
        (cap.min(self.max_wait), cap < self.max_wait)
    }

    /// Queues a download of `key` unless one is queued, in flight or
    /// answered and not yet taken. Never blocks on the network.
    pub fn request(&self, key: &Key) {
        let Some(mut state) = self.shared.lock() else {
            return;
        };
        if state.slots.contains_key(key) {
            return;
        }
        let sent = self
            .tx
            .lock()
            .ok()
            .and_then(|tx| tx.as_ref().map(|tx| tx.send(*key).is_ok()));
        if sent == Some(true) {
            state.slots.insert(*key, Slot::Queued);
        }
    }

    /// The answer for `key` (requested now if it was not), waiting at most
    /// the limits; `off` is polled so a remote turned off by another
    /// thread releases the wait at once.
    pub fn wait(&self, key: &Key, off: &dyn Fn() -> bool) -> Answer {
        self.request(key);
        let start = Instant::now();
        let Some(mut state) = self.shared.lock() else {
            return Answer::Off;
        };
        let answer = loop {
            // Bounded: every pass waits at most TICK, and the clock checks
            // below end the loop after `cap` at the latest.
            match state.slots.get(key) {
                None => break Answer::Off,
                Some(Slot::Done(_)) => match state.slots.remove(key) {
                    Some(Slot::Done(got)) => break Answer::Got(got),
                    _ => break Answer::Off,
                },
                Some(_) => {}
            }
            if off() {
                break Answer::Off;
            }
            if let Some(late) = self.silence(&state) {
                break late;
            }
            let waited = start.elapsed();
            let (cap, budgeted) = self.wait_cap(&state, start);
            if waited >= cap {
                break Answer::Late {
                    silent: false,
                    early: budgeted,
                    in_flight: oldest_in_flight(&state),
                };
            }
            let left = (cap - waited).min(TICK);
            state = match self.shared.answered.wait_timeout(state, left) {
                Ok((s, _)) => s,
                Err(_) => return Answer::Off,
            };
        };
        // Only waits that came away empty spend the budget: waiting for a
        // server that answers is what the remote is for.
        if !matches!(answer, Answer::Got(_)) {
            state.waited += start.elapsed();
        }
        answer
    }

    /// `Late { silent }` when a request has been in flight for the limit
    /// and nothing was answered meanwhile.
    fn silence(&self, state: &State) -> Option<Answer> {
        let in_flight = oldest_in_flight(state);
        let quiet = state.last_answer.is_none_or(|t| t.elapsed() >= self.limit);
        (in_flight >= self.limit && quiet).then_some(Answer::Late {
            silent: true,
            early: false,
            in_flight,
        })
    }

    /// The server judged without waiting: `Some` if it is silent now (see
    /// [`Lookups::wait`]); what a run asks before it ends, so a server that
    /// never answered within a short run is still told.
    pub fn judge(&self) -> Option<Answer> {
        self.silence(&*self.shared.lock()?)
    }

    /// The answered requests' latencies: (count, median, max).
    pub fn latency(&self) -> (usize, Duration, Duration) {
        let Some(state) = self.shared.lock() else {
            return (0, Duration::ZERO, Duration::ZERO);
        };
        let mut l = state.latencies.clone();
        l.sort();
        let median = l.get(l.len() / 2).copied().unwrap_or_default();
        (l.len(), median, l.last().copied().unwrap_or_default())
    }

    /// Stops sending: queued keys are dropped, workers exit after the
    /// request in flight (bounded by the HTTP timeouts). Does not wait.
    pub fn close(&self) {
        if let Ok(mut tx) = self.tx.lock() {
            *tx = None;
        }
    }
}

impl Drop for Lookups {
    fn drop(&mut self) {
        self.close();
    }
}

/// How long the oldest request in flight has waited for its answer.
fn oldest_in_flight(state: &State) -> Duration {
    state
        .slots
        .values()
        .filter_map(|s| match s {
            Slot::Sent(t) => Some(t.elapsed()),
            _ => None,
        })
        .max()
        .unwrap_or_default()
}

/// A worker: downloads keys until the queue is closed.
fn work(rx: &Mutex<Receiver<Key>>, shared: &Shared, source: &dyn Source) {
    loop {
        // One idle worker waits on the channel, the others on the lock.
        let key = match rx.lock() {
            Ok(rx) => match rx.recv() {
                Ok(key) => key,
                Err(_) => return,
            },
            Err(_) => return,
        };
        let sent = Instant::now();
        {
            let Some(mut state) = shared.lock() else {
                return;
            };
            if source.off() {
                state.slots.remove(&key);
                shared.answered.notify_all();
                continue;
            }
            state.slots.insert(key, Slot::Sent(sent));
        }
        let got = source.download(&key);
        let Some(mut state) = shared.lock() else {
            return;
        };
        state.last_answer = Some(Instant::now());
        state.latencies.push(sent.elapsed());
        // A wait that gave up removed nothing: the late answer is kept
        // for a later wait on the same key.
        state.slots.insert(key, Slot::Done(got));
        shared.answered.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Answers after `delay`; a hit for every key.
    struct Slow {
        delay: Duration,
        off: AtomicBool,
    }

    impl Source for Slow {
        fn download(&self, key: &Key) -> Got {
            thread::sleep(self.delay);
            Ok(Some(key.0.to_vec()))
        }
        fn off(&self) -> bool {
            self.off.load(Ordering::SeqCst)
        }
    }

    fn start(delay_ms: u64, threads: usize) -> (Arc<Slow>, Lookups) {
        start_budgeted(delay_ms, threads, None)
    }

    fn start_budgeted(
        delay_ms: u64,
        threads: usize,
        budget: Option<WaitBudget>,
    ) -> (Arc<Slow>, Lookups) {
        let source = Arc::new(Slow {
            delay: Duration::from_millis(delay_ms),
            off: AtomicBool::new(false),
        });
        let l = Lookups::start(
            source.clone(),
            threads,
            Duration::from_millis(100),
            Duration::from_millis(400),
            budget,
        )
        .expect("start");
        (source, l)
    }

    #[test]
    fn requests_run_concurrently_and_answers_wait_for_their_taker() {
        let (_, l) = start(50, 8);
        let keys: Vec<Key> = (0..8u8).map(|i| Key([i; 32])).collect();
        let begin = Instant::now();
        keys.iter().for_each(|k| l.request(k));
        for k in &keys {
            match l.wait(k, &|| false) {
                Answer::Got(Ok(Some(v))) => assert_eq!(v, k.0.to_vec()),
                _ => panic!("no answer"),
            }
        }
        // Eight 50 ms downloads side by side, not one after another.
        assert!(begin.elapsed() < Duration::from_millis(300));
        assert_eq!(l.latency().0, 8);
    }

    #[test]
    fn a_silent_server_releases_the_wait_after_the_limit() {
        let (_, l) = start(2_000, 2);
        let begin = Instant::now();
        match l.wait(&Key([1; 32]), &|| false) {
            Answer::Late {
                silent, in_flight, ..
            } => {
                assert!(silent);
                assert!(in_flight >= Duration::from_millis(100));
            }
            _ => panic!("expected a late answer"),
        }
        assert!(begin.elapsed() < Duration::from_millis(300));
    }

    #[test]
    fn turning_the_remote_off_releases_waits() {
        let (source, l) = start(2_000, 1);
        l.request(&Key([1; 32]));
        source.off.store(true, Ordering::SeqCst);
        let begin = Instant::now();
        assert!(matches!(l.wait(&Key([2; 32]), &|| true), Answer::Off));
        assert!(begin.elapsed() < Duration::from_millis(100));
    }

    #[test]
    fn a_budget_bounds_all_waits_together_by_the_work_between_them() {
        let budget = WaitBudget {
            floor: Duration::from_millis(20),
            share: 0.5,
        };
        let (_, l) = start_budgeted(5_000, 8, Some(budget));
        let begin = Instant::now();
        let mut waited = Duration::ZERO;
        for i in 0..6u8 {
            std::thread::sleep(Duration::from_millis(10)); // "cooking"
            let w = Instant::now();
            match l.wait(&Key([i; 32]), &|| false) {
                // Early while the oldest request is younger than the
                // 100 ms limit, silent after.
                Answer::Late { early, silent, .. } => assert!(early || silent),
                _ => panic!("a 5 s server cannot have answered"),
            }
            waited += w.elapsed();
        }
        // 60 ms of work: at most 20 ms + 30 ms of waiting (and a tick of
        // scheduling slack), far below one 100 ms silence limit per key.
        assert!(waited < Duration::from_millis(80), "{waited:?}");
        assert!(begin.elapsed() < Duration::from_millis(200));
        // Not silent yet (100 ms limit): judged once the run is over.
        std::thread::sleep(Duration::from_millis(100));
        assert!(matches!(l.judge(), Some(Answer::Late { silent: true, .. })));
    }

    #[test]
    fn a_budget_does_not_cost_a_healthy_server_its_hits() {
        let budget = WaitBudget {
            floor: Duration::from_millis(20),
            share: 0.5,
        };
        let (_, l) = start_budgeted(2, 4, Some(budget));
        for i in 0..20u8 {
            assert!(matches!(
                l.wait(&Key([i; 32]), &|| false),
                Answer::Got(Ok(Some(_)))
            ));
        }
        assert!(l.judge().is_none());
    }
}
