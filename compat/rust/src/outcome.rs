//! The result type of one scenario check and helpers to build it.
//!
//! A check either passes (`Ok(())`) or fails with a human-readable reason that
//! names what was attempted and what came back.

use std::any::Any;
use std::fmt::Display;

use iggy::prelude::IggyError;

/// The reason a check failed.
pub type Failure = String;

/// What a check returns.
pub type Outcome<T = ()> = Result<T, Failure>;

/// Adds context to an error so the failure line names the operation.
pub trait Context<T> {
    /// Wraps the error as "`what`: error".
    fn ctx(self, what: &str) -> Outcome<T>;
}

impl<T, E: Display + 'static> Context<T> for Result<T, E> {
    fn ctx(self, what: &str) -> Outcome<T> {
        self.map_err(
            |error| match (&error as &dyn Any).downcast_ref::<IggyError>() {
                Some(iggy) => format!("{what}: error {} ({iggy})", iggy.as_code()),
                None => format!("{what}: {error}"),
            },
        )
    }
}

impl<T> Context<T> for Option<T> {
    fn ctx(self, what: &str) -> Outcome<T> {
        self.ok_or_else(|| format!("{what}: nothing returned"))
    }
}

/// Fails with `reason` unless `condition` holds.
pub fn ensure(condition: bool, reason: impl FnOnce() -> String) -> Outcome {
    if condition { Ok(()) } else { Err(reason()) }
}

/// Fails unless `actual == expected`, naming `what` and both values.
pub fn ensure_eq<T: PartialEq + std::fmt::Debug>(what: &str, actual: T, expected: T) -> Outcome {
    ensure(actual == expected, || {
        format!("{what}: got {actual:?}, expected {expected:?}")
    })
}

/// Expects `result` to be the error with numeric code `code` (see
/// ../shared/protocol/errors.md); anything else fails the check.
pub fn expect_code<T: std::fmt::Debug>(
    what: &str,
    result: Result<T, IggyError>,
    code: u32,
) -> Outcome {
    match result {
        Ok(value) => Err(format!(
            "{what}: succeeded with {value:?}, expected error code {code}"
        )),
        Err(error) if error.as_code() == code => Ok(()),
        Err(error) => Err(format!(
            "{what}: got error {} ({error}), expected error code {code}",
            error.as_code()
        )),
    }
}
