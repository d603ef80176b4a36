//! Compatibility scenario for the official Iggy Rust SDK (crate `iggy`
//! 0.11.0) against a running iggo server.
//!
//! Environment: `IGGO_ADDR` (host:port of a plain-TCP server),
//! `IGGO_TLS_ADDR` and `IGGO_TLS_CA` (a TLS server and the PEM of the CA
//! its certificate chains to). Prints one PASS/FAIL line per check and
//! `rust: N passed, N failed`; exits non-zero if any check failed.

mod auth;
mod catalog;
mod cleanup;
mod connect;
mod group;
mod messages;
mod outcome;
mod plan;
mod polling;
mod report;
mod tls;
mod users;

use std::process::ExitCode;
use std::time::Duration;

use connect::Target;
use report::Report;

/// Upper bound for a single check.
const CHECK_LIMIT: Duration = Duration::from_secs(30);

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let mut report = Report::new("rust", CHECK_LIMIT);
    match std::env::var("IGGO_ADDR") {
        Ok(address) => plan::plain_checks(&mut report, &Target::plain(address)).await,
        Err(_) => report.blocked(&["login.password"], "IGGO_ADDR"),
    }
    match (std::env::var("IGGO_TLS_ADDR"), std::env::var("IGGO_TLS_CA")) {
        (Ok(address), Ok(ca)) => {
            plan::tls_checks(&mut report, &Target::tls(address, ca, "localhost".into())).await
        }
        _ => report.blocked(
            &[
                "tls.verify_certificate",
                "tls.login",
                "tls.stream.create",
                "tls.topic.create",
                "tls.send_poll",
            ],
            "IGGO_TLS_ADDR and IGGO_TLS_CA",
        ),
    }
    if report.finish() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
