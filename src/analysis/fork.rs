//! Running two independent passes of the report build at once. The core has no threads of
//! its own: by default the two jobs run one after the other, and a caller that may use
//! threads (the CLI) hands in a [`Fork`] that runs the second job on another thread.

use std::fmt;
use std::sync::Arc;

/// A job handed to a fork: called once.
pub type Job<'a> = &'a mut (dyn FnMut() + Send);

type Both = dyn Fn(Job, Job) + Send + Sync;

/// How two independent jobs run: one after the other (the default), or as the caller's
/// function runs them. The function calls each job at most once and returns once those it
/// called are done; a job it did not call (a thread that could not start) runs after it.
#[derive(Clone, Default)]
pub struct Fork(Option<Arc<Both>>);

impl Fork {
    /// Jobs run by `both`, e.g. the second on a scoped thread while the first runs here.
    pub fn new(both: impl Fn(Job, Job) + Send + Sync + 'static) -> Fork {
        Fork(Some(Arc::new(both)))
    }

    /// Whether jobs may run at once: work done ahead on speculation is then free.
    pub fn at_once(&self) -> bool {
        self.0.is_some()
    }

    /// Runs `a` and `b` (maybe at once) and returns both results.
    pub fn join<A: Send, B: Send>(&self, a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B) {
        let Some(both) = &self.0 else {
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
}

impl fmt::Debug for Fork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() { "Fork(caller's)" } else { "Fork(one after the other)" })
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
    fn a_job_the_fork_does_not_run_runs_after_it() {
        let lazy = Fork::new(|a, _b| a());
        assert_eq!(lazy.join(|| 1, || 2), (1, 2));
    }
}
