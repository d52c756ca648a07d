//! Running independent parts of the report build at once. The core has no threads of its
//! own: by default the jobs run one after the other, and a caller that may use threads (the
//! CLI) hands in a [`Fork`] that runs the second job of each join on another thread, and says
//! how many threads it has for a pass split into many pieces ([`Fork::map`]).

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

/// A job handed to a fork: called once.
pub type Job<'a> = &'a mut (dyn FnMut() + Send);

type Both = dyn Fn(Job, Job) + Send + Sync;

/// How two independent jobs run: one after the other (the default), or as the caller's
/// function runs them. The function calls each job at most once and returns once those it
/// called are done; a job it did not call (a thread that could not start) runs after it.
/// A pass with many independent pieces (the critical path's steps) splits them in halves,
/// and halves again, until there are [`Fork::ways`] of them.
#[derive(Clone, Default)]
pub struct Fork(Option<(Arc<Both>, usize)>);

impl Fork {
    /// Jobs run by `both`, e.g. the second on a scoped thread while the first runs here; two
    /// ways.
    pub fn new(both: impl Fn(Job, Job) + Send + Sync + 'static) -> Fork {
        Fork(Some((Arc::new(both), 2)))
    }

    /// The same fork, for a caller with `n` threads (at least two ways, as [`Fork::new`]).
    pub fn with_ways(self, n: usize) -> Fork {
        Fork(self.0.map(|(both, _)| (both, n.max(2))))
    }

    /// Whether jobs may run at once: work done ahead on speculation is then free.
    pub fn at_once(&self) -> bool {
        self.0.is_some()
    }

    /// How many jobs may usefully run at once (1 when one after the other).
    pub fn ways(&self) -> usize {
        self.0.as_ref().map_or(1, |f| f.1)
    }

    /// Runs `a` and `b` (maybe at once) and returns both results.
    pub fn join<A: Send, B: Send>(&self, a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B) {
        let Some((both, _)) = &self.0 else {
            return (a(), b());
        };
        let (mut a, mut b) = (Some(a), Some(b));
        let (mut ra, mut rb) = (None, None);
        both(&mut || ra = a.take().map(|f| f()), &mut || rb = b.take().map(|f| f()));
        // A job the fork did not run runs here.
        let ra = ra.unwrap_or_else(|| a.take().expect("job ran or is still here")());
        let rb = rb.unwrap_or_else(|| b.take().expect("job ran or is still here")());
        (ra, rb)
    }

    /// `f` of each index in `range`, in order: the range cut in halves, and halves again,
    /// into [`Fork::ways`] pieces run through [`Fork::join`] (one after the other by default).
    pub fn map<T: Send>(&self, range: Range<usize>, f: &(dyn Fn(usize) -> T + Sync)) -> Vec<T> {
        self.map_in(range, self.ways(), f)
    }

    fn map_in<T: Send>(&self, range: Range<usize>, ways: usize, f: &(dyn Fn(usize) -> T + Sync)) -> Vec<T> {
        if ways < 2 || range.len() < 2 {
            return range.map(f).collect();
        }
        let mid = range.start + range.len() / 2;
        let (mut a, b) = self
            .join(|| self.map_in(range.start..mid, ways - ways / 2, f), || self.map_in(mid..range.end, ways / 2, f));
        a.extend(b);
        a
    }
}

impl fmt::Debug for Fork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some((_, n)) => write!(f, "Fork(caller's, {n} ways)"),
            None => f.write_str("Fork(one after the other)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_jobs_run_once_in_either_fork() {
        let swapped = Fork::new(|a, b| {
            b();
            a();
        });
        for fork in [Fork::default(), swapped] {
            let (x, y) = fork.join(|| 2 + 3, || "b".repeat(2));
            assert_eq!((x, y.as_str()), (5, "bb"), "{fork:?}");
        }
    }

    #[test]
    fn map_gives_every_index_in_order_whatever_the_ways() {
        let swapped = Fork::new(|a, b| {
            b();
            a();
        });
        let want: Vec<usize> = (3..40).map(|i| i * i).collect();
        for fork in [Fork::default(), swapped.clone(), swapped.clone().with_ways(3), swapped.with_ways(16)] {
            let calls = std::sync::atomic::AtomicUsize::new(0);
            let got = fork.map(3..40, &|i| {
                calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                i * i
            });
            assert_eq!((got, calls.into_inner()), (want.clone(), 37), "{fork:?}");
            assert!(fork.map(5..5, &|i| i).is_empty());
        }
        let in_order = Fork::new(|a, b| {
            a();
            b();
        });
        assert_eq!((Fork::default().ways(), in_order.clone().ways(), in_order.with_ways(1).ways()), (1, 2, 2));
    }

    #[test]
    fn a_job_the_fork_does_not_run_runs_after_it() {
        let lazy = Fork::new(|a, _b| a());
        assert_eq!(lazy.join(|| 1, || 2), (1, 2));
    }
}
