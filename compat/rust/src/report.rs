//! Runs named checks with a time bound and prints one PASS/FAIL line each.

use std::future::Future;
use std::time::{Duration, Instant};

use crate::outcome::Outcome;

/// Counts and prints the checks of one scenario run.
pub struct Report {
    sdk: &'static str,
    passed: u32,
    failed: u32,
    hangs: u32,
    limit: Duration,
}

/// After this many checks ran into the time limit, the rest are not run:
/// a server that hangs would otherwise cost the limit once per check.
const MAX_HANGS: u32 = 3;

impl Report {
    /// A report for `sdk` whose checks may each run for at most `limit`.
    pub fn new(sdk: &'static str, limit: Duration) -> Self {
        Self {
            sdk,
            passed: 0,
            failed: 0,
            hangs: 0,
            limit,
        }
    }

    /// Runs `check` under the time limit, prints its line and returns its
    /// value if it passed. A check that overruns the limit fails as a hang.
    pub async fn run<T>(
        &mut self,
        name: &str,
        check: impl Future<Output = Outcome<T>>,
    ) -> Option<T> {
        self.run_within(name, self.limit, check).await
    }

    /// Runs `check` like [`Report::run`] but under `limit` instead of the
    /// report's limit.
    pub async fn run_within<T>(
        &mut self,
        name: &str,
        limit: Duration,
        check: impl Future<Output = Outcome<T>>,
    ) -> Option<T> {
        if self.hangs >= MAX_HANGS {
            self.failed += 1;
            println!("FAIL {name}: not run, {MAX_HANGS} checks already hung");
            return None;
        }
        let started = Instant::now();
        let result = match tokio::time::timeout(limit, check).await {
            Ok(result) => result,
            Err(_) => {
                self.hangs += 1;
                Err(format!("no answer within {} s (hang)", limit.as_secs()))
            }
        };
        let millis = started.elapsed().as_millis();
        match result {
            Ok(value) => {
                self.passed += 1;
                println!("PASS {name} ({millis} ms)");
                Some(value)
            }
            Err(reason) => {
                self.failed += 1;
                println!("FAIL {name} ({millis} ms): {reason}");
                None
            }
        }
    }

    /// Starts an independent group of checks: the hang budget
    /// ([`MAX_HANGS`]) counts again from zero, so a transport that hangs
    /// does not keep the next one from running.
    pub fn section(&mut self) {
        self.hangs = 0;
    }

    /// Records checks that could not run because `prerequisite` failed;
    /// each counts as failed.
    pub fn blocked(&mut self, names: &[&str], prerequisite: &str) {
        for name in names {
            self.failed += 1;
            println!("FAIL {name}: not run, needs {prerequisite}");
        }
    }

    /// Prints the summary line and returns whether every check passed.
    pub fn finish(&self) -> bool {
        println!(
            "{}: {} passed, {} failed",
            self.sdk, self.passed, self.failed
        );
        self.failed == 0
    }
}
