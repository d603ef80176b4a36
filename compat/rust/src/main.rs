//! Compatibility scenario for the official Iggy Rust SDK (crate `iggy`
//! 0.11.0) against a running iggo server.
//!
//! Environment: `IGGO_ADDR` (host:port of a plain-TCP server),
//! `IGGO_TLS_ADDR` and `IGGO_TLS_CA` (a TLS server and the PEM of the CA
//! its certificate chains to), `IGGO_QUIC_ADDR` and `IGGO_WS_ADDR` (the
//! plain server's QUIC and WebSocket listeners), `IGGO_WSS_ADDR` (a WSS
//! listener whose certificate chains to `IGGO_TLS_CA`), `IGGO_QUIC_TLS_ADDR`
//! (a QUIC listener whose certificate chains to the CA in `SSL_CERT_FILE`,
//! the root store of the SDK's QUIC certificate verifier). Prints one PASS/FAIL line per check and
//! `rust: N passed, N failed`; exits non-zero if any check failed.
//!
//! With `COMPAT_CLUSTER` set (non-empty), `IGGO_ADDR` is a node of a
//! cluster and only the plain-TCP checks run: the TLS, QUIC and WebSocket
//! parts are left to the single-node run and not counted. Before deleting
//! what it created, the run then executes `COMPAT_CLUSTER_MAP_CMD` (with
//! bash) so that the caller can record the partition map.

mod auth;
mod catalog;
mod cleanup;
mod connect;
mod group;
mod messages;
mod offsets;
mod outcome;
mod plan;
mod polling;
mod report;
mod tls;
mod transports;
mod users;

use std::process::ExitCode;
use std::time::Duration;

use connect::{Target, TlsSettings, Transport};
use report::Report;

/// Upper bound for a single check.
pub const CHECK_LIMIT: Duration = Duration::from_secs(30);

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let mut report = Report::new("rust", CHECK_LIMIT);
    match std::env::var("IGGO_ADDR") {
        Ok(address) => plan::plain_checks(&mut report, &Target::plain(address)).await,
        Err(_) => report.blocked(&["login.password"], "IGGO_ADDR"),
    }
    if plan::cluster_run() {
        println!(
            "NOTE cluster run: the TLS, QUIC and WebSocket parts run against a single node only"
        );
        return if report.finish() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
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
    transport_part(&mut report).await;
    if report.finish() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The QUIC, WebSocket and WSS checks, each run when its address is set.
async fn transport_part(report: &mut Report) {
    let env = |key: &str| std::env::var(key).ok().filter(|v| !v.is_empty());
    let parts = [
        ("quic", Transport::Quic, env("IGGO_QUIC_ADDR"), None),
        (
            "quic-ca",
            Transport::Quic,
            // Verified QUIC runs only with a root store to verify against.
            env("IGGO_QUIC_TLS_ADDR").filter(|_| env("SSL_CERT_FILE").is_some()),
            env("SSL_CERT_FILE").map(|ca| TlsSettings {
                ca_file: Some(ca),
                domain: "localhost".to_string(),
            }),
        ),
        ("ws", Transport::WebSocket, env("IGGO_WS_ADDR"), None),
        (
            "wss",
            Transport::WebSocket,
            // WSS runs only with a CA to verify the server against.
            env("IGGO_WSS_ADDR").filter(|_| env("IGGO_TLS_CA").is_some()),
            env("IGGO_TLS_CA").map(|ca| TlsSettings {
                ca_file: Some(ca),
                domain: "localhost".to_string(),
            }),
        ),
    ];
    for (prefix, transport, address, tls) in parts {
        match address {
            Some(address) => {
                let target = Target::new(transport, address, tls);
                transports::checks(report, prefix, &target).await;
            }
            None => report.blocked(
                &[&format!("{prefix}.login")],
                "its address in the environment",
            ),
        }
    }
}
