//! The transport part: the core checks again over the SDK's QUIC and
//! WebSocket clients (and WSS), each transport with its own stream, topic
//! and limited user so that a failure on one cannot disturb another.

use iggy::prelude::{Client, IggyClient};

use crate::catalog::{self, TopicRef};
use crate::connect::{self, Target, TlsSettings, Transport};
use crate::outcome::{Context, Outcome};
use crate::plan::created_or_existing;
use crate::report::Report;
use crate::{auth, cleanup, messages, offsets, polling, tls, users};

/// Topic each transport part sends to and polls from.
const TOPIC: &str = "orders";
/// Its partition count.
const PARTITIONS: u32 = 3;

/// The checks that need the topic, in the order they run.
const TOPIC_CHECKS: [&str; 10] = [
    "send.partition_id",
    "poll.offset",
    "poll.next.auto_commit",
    "poll.next.resume",
    "offset.store_get",
    "send.balanced",
    "send.messages_key",
    "user.create",
    "user.permissions",
    "delete.user",
];

fn named(prefix: &str, checks: &[&str]) -> Vec<String> {
    checks.iter().map(|c| format!("{prefix}.{c}")).collect()
}

fn block(report: &mut Report, prefix: &str, checks: &[&str], prerequisite: &str) {
    let names = named(prefix, checks);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    report.blocked(&names, &format!("{prefix}.{prerequisite}"));
}

/// With `validate_certificate = true` the SDK's QUIC client checks the
/// server with the platform verifier, whose roots (`SSL_CERT_FILE` under
/// run.sh) do not include the server's ephemeral self-signed certificate:
/// the client builds but must be refused promptly.
pub async fn quic_platform_verifier_refuses(target: &Target) -> Outcome {
    let verifying = target.with_tls(Some(TlsSettings {
        ca_file: None,
        domain: "localhost".to_string(),
    }));
    let client = connect::build(&verifying)?;
    let result = tokio::time::timeout(std::time::Duration::from_secs(8), client.connect()).await;
    let _ = client.shutdown().await;
    match result {
        Ok(Ok(())) => Err("connected although the certificate is not trusted".to_string()),
        Ok(Err(_)) => Ok(()),
        Err(_) => Err("connect neither failed nor succeeded within 8 s".to_string()),
    }
}

/// With certificate validation on, the SDK's QUIC client refuses a server
/// name the certificate lacks and logs in under the right one.
async fn quic_verifies_certificate(target: &Target) -> Outcome {
    let tls = target.tls.as_ref().ctx("TLS settings")?;
    let misnamed = target.with_tls(Some(TlsSettings {
        ca_file: tls.ca_file.clone(),
        domain: "not-this-server.example".to_string(),
    }));
    if tls::try_login(&misnamed).await.is_ok() {
        return Err("connected and logged in with a server name the certificate lacks".to_string());
    }
    tls::try_login(target)
        .await
        .ctx("the same connection under its own name")
}

/// Runs every check of one transport; names start with `prefix`.
pub async fn checks(report: &mut Report, prefix: &str, target: &Target) {
    report.section();
    let check = |name: &str| format!("{prefix}.{name}");
    if target.transport == Transport::Quic && target.tls.is_none() {
        report
            .run(
                &check("platform_verifier_refuses"),
                quic_platform_verifier_refuses(target),
            )
            .await;
    }
    if target.transport == Transport::Quic && target.tls.is_some() {
        report
            .run(
                &check("verify_certificate"),
                quic_verifies_certificate(target),
            )
            .await;
    } else if target.tls.is_some() {
        report
            .run(
                &check("verify_certificate"),
                tls::verifies_certificate(target),
            )
            .await;
    }
    let Some((root, _)) = report
        .run(&check("login"), auth::login_password(target))
        .await
    else {
        let mut rest = vec!["stream.create", "topic.create"];
        rest.extend(TOPIC_CHECKS);
        rest.extend(["delete.topic", "delete.stream"]);
        return block(report, prefix, &rest, "login");
    };
    let stream = format!("compat-rust-{prefix}");
    if report
        .run(
            &check("stream.create"),
            catalog::create_stream(&root, &stream),
        )
        .await
        .is_none()
    {
        let mut rest = vec!["topic.create"];
        rest.extend(TOPIC_CHECKS);
        rest.extend(["delete.topic"]);
        block(report, prefix, &rest, "stream.create");
    } else {
        let topic = created_or_existing(
            report
                .run(
                    &check("topic.create"),
                    catalog::create_plain_topic(&root, &stream, TOPIC, PARTITIONS),
                )
                .await,
            &root,
            &stream,
            TOPIC,
        )
        .await;
        match &topic {
            Some(topic) => {
                topic_checks(report, prefix, &root, target, topic).await;
                report
                    .run(&check("delete.topic"), cleanup::delete_topic(&root, topic))
                    .await;
            }
            None => {
                let mut rest = TOPIC_CHECKS.to_vec();
                rest.push("delete.topic");
                block(report, prefix, &rest, "topic.create");
            }
        }
    }
    report
        .run(
            &check("delete.stream"),
            cleanup::delete_stream(&root, &stream),
        )
        .await;
    connect::close(root).await;
}

/// Sends, polls, the stored offset and the limited user on one topic.
async fn topic_checks(
    report: &mut Report,
    prefix: &str,
    root: &IggyClient,
    target: &Target,
    topic: &TopicRef,
) {
    let check = |name: &str| format!("{prefix}.{name}");
    if report
        .run(
            &check("send.partition_id"),
            messages::send_partition_id(root, topic),
        )
        .await
        .is_some()
    {
        report
            .run(&check("poll.offset"), polling::by_offset(root, topic))
            .await;
        if report
            .run(
                &check("poll.next.auto_commit"),
                polling::next_auto_commit(root, topic),
            )
            .await
            .is_some()
        {
            report
                .run(
                    &check("poll.next.resume"),
                    polling::next_resumes(target, topic),
                )
                .await;
        } else {
            block(
                report,
                prefix,
                &["poll.next.resume"],
                "poll.next.auto_commit",
            );
        }
        report
            .run(&check("offset.store_get"), offsets::store_get(root, topic))
            .await;
    } else {
        block(
            report,
            prefix,
            &[
                "poll.offset",
                "poll.next.auto_commit",
                "poll.next.resume",
                "offset.store_get",
            ],
            "send.partition_id",
        );
    }
    report
        .run(
            &check("send.balanced"),
            messages::send_balanced(root, topic),
        )
        .await;
    report
        .run(
            &check("send.messages_key"),
            messages::send_messages_key(root, topic),
        )
        .await;
    let user = format!("compat-limited-{prefix}");
    if report
        .run(&check("user.create"), users::create(root, &user))
        .await
        .is_some()
    {
        report
            .run(
                &check("user.permissions"),
                users::permissions(target, topic, &user),
            )
            .await;
        report
            .run(&check("delete.user"), users::delete(root, target, &user))
            .await;
    } else {
        block(
            report,
            prefix,
            &["user.permissions", "delete.user"],
            "user.create",
        );
    }
}
