//! The order of the checks and what each one needs from the earlier ones.

use std::time::Duration;

use iggy::prelude::IggyClient;

use crate::CHECK_LIMIT;
use crate::catalog::{self, TopicRef};
use crate::connect::{self, Target};
use crate::outcome::{Outcome, ensure};
use crate::report::Report;
use crate::{auth, cleanup, group, messages, polling, tls, users};

/// Stream holding everything the plain-TCP checks create.
const STREAM: &str = "compat-rust";
/// Topic for sending and polling.
const TOPIC: &str = "orders";
/// Its partition count.
const TOPIC_PARTITIONS: u32 = 3;
/// Topic for the consumer group.
const GROUP_TOPIC: &str = "group-events";
/// Its partition count.
const GROUP_PARTITIONS: u32 = 2;

/// The checks of [`message_checks`] after the first send.
const POLL_AND_SEND_CHECKS: [&str; 9] = [
    "poll.offset",
    "poll.first",
    "poll.last",
    "poll.timestamp",
    "poll.next.auto_commit",
    "poll.next.resume",
    "send.balanced",
    "send.messages_key",
    "topic.counts",
];
/// The checks of [`group_checks`].
const GROUP_CHECKS: [&str; 6] = [
    "group.fill",
    "group.join",
    "group.consume",
    "group.rebalance",
    "group.drain",
    "group.leave",
];

/// The topic a creation check produced or, when the check failed although
/// the topic exists, that topic, so that the later checks still run.
pub async fn created_or_existing(
    created: Option<TopicRef>,
    client: &IggyClient,
    stream: &str,
    name: &str,
) -> Option<TopicRef> {
    if created.is_some() {
        return created;
    }
    let existing = catalog::find_topic(client, stream, name).await;
    if existing.is_some() {
        println!(
            "NOTE {stream}/{name} exists although its creation check failed; later checks use it"
        );
    }
    existing
}

/// Everything except TLS, in dependency order. A failed check only blocks
/// the checks that need what it should have produced.
pub async fn plain_checks(report: &mut Report, target: &Target) {
    let Some((root, root_id)) = report
        .run("login.password", auth::login_password(target))
        .await
    else {
        return report.blocked(&["all other plain-TCP checks"], "login.password");
    };
    report
        .run("login.wrong_password", auth::wrong_password(target))
        .await;
    let token = report.run("pat.create", auth::create_pat(&root)).await;
    match &token {
        Some(token) => {
            report
                .run("login.pat", auth::login_pat(target, token, root_id))
                .await;
        }
        None => report.blocked(&["login.pat"], "pat.create"),
    }

    if report
        .run("stream.create", catalog::create_stream(&root, STREAM))
        .await
        .is_none()
    {
        return report.blocked(
            &["topic, message, group, user and delete checks"],
            "stream.create",
        );
    }
    let main_topic = created_or_existing(
        report
            .run(
                "topic.create",
                catalog::create_topic(&root, STREAM, TOPIC, TOPIC_PARTITIONS),
            )
            .await,
        &root,
        STREAM,
        TOPIC,
    )
    .await;
    match &main_topic {
        Some(topic) => {
            report
                .run("topic.options", catalog::check_topic(&root, topic))
                .await;
        }
        None => report.blocked(&["topic.options"], "topic.create"),
    }
    match &main_topic {
        Some(topic) => message_checks(report, &root, target, topic).await,
        None => {
            report.blocked(&["send.partition_id"], "topic.create");
            report.blocked(&POLL_AND_SEND_CHECKS, "topic.create");
        }
    }

    let group_topic = created_or_existing(
        report
            .run(
                "group.topic.create",
                catalog::create_plain_topic(&root, STREAM, GROUP_TOPIC, GROUP_PARTITIONS),
            )
            .await,
        &root,
        STREAM,
        GROUP_TOPIC,
    )
    .await;
    match &group_topic {
        Some(topic) => group_checks(report, &root, target, topic).await,
        None => report.blocked(&GROUP_CHECKS, "group.topic.create"),
    }
    if let Some(command) = cluster_map_command() {
        report
            .run("cluster.partition_map", record_partition_map(command))
            .await;
    }

    match &main_topic {
        Some(topic) => {
            if report
                .run("user.create", users::create(&root, users::USER))
                .await
                .is_some()
            {
                report
                    .run(
                        "user.permissions",
                        users::permissions(target, topic, users::USER),
                    )
                    .await;
            } else {
                report.blocked(&["user.permissions"], "user.create");
            }
            report
                .run("delete.user", users::delete(&root, target, users::USER))
                .await;
        }
        None => report.blocked(
            &["user.create", "user.permissions", "delete.user"],
            "topic.create",
        ),
    }

    match &token {
        Some(token) => {
            report
                .run("delete.pat", auth::delete_pat(&root, target, token))
                .await;
        }
        None => report.blocked(&["delete.pat"], "pat.create"),
    }
    if let Some(group_topic) = &group_topic {
        report
            .run("delete.group", cleanup::delete_group(&root, group_topic))
            .await;
        report
            .run(
                "delete.topic.group",
                cleanup::delete_topic(&root, group_topic),
            )
            .await;
    }
    if let Some(topic) = &main_topic {
        report
            .run("delete.topic", cleanup::delete_topic(&root, topic))
            .await;
    }
    report
        .run("delete.stream", cleanup::delete_stream(&root, STREAM))
        .await;
    connect::close(root).await;
}

/// Sending with each partitioning and polling with each strategy.
async fn message_checks(report: &mut Report, root: &IggyClient, target: &Target, topic: &TopicRef) {
    if report
        .run(
            "send.partition_id",
            messages::send_partition_id(root, topic),
        )
        .await
        .is_none()
    {
        return report.blocked(&POLL_AND_SEND_CHECKS, "send.partition_id");
    }
    report
        .run("poll.offset", polling::by_offset(root, topic))
        .await;
    report.run("poll.first", polling::first(root, topic)).await;
    report.run("poll.last", polling::last(root, topic)).await;
    report
        .run("poll.timestamp", polling::by_timestamp(root, topic))
        .await;
    if report
        .run(
            "poll.next.auto_commit",
            polling::next_auto_commit(root, topic),
        )
        .await
        .is_some()
    {
        report
            .run("poll.next.resume", polling::next_resumes(target, topic))
            .await;
    } else {
        report.blocked(&["poll.next.resume"], "poll.next.auto_commit");
    }
    let balanced = report
        .run("send.balanced", messages::send_balanced(root, topic))
        .await;
    let keyed = report
        .run(
            "send.messages_key",
            messages::send_messages_key(root, topic),
        )
        .await;
    if balanced.is_some() && keyed.is_some() {
        let total = messages::PARTITION_ZERO_MESSAGES + u64::from(topic.partitions) + 4;
        report
            .run("topic.counts", messages::topic_counts(root, topic, total))
            .await;
    } else {
        report.blocked(&["topic.counts"], "send.balanced and send.messages_key");
    }
}

/// The consumer group: fill, join, consume, rebalance, drain, leave.
async fn group_checks(report: &mut Report, root: &IggyClient, target: &Target, topic: &TopicRef) {
    if report
        .run("group.fill", group::fill(root, topic))
        .await
        .is_none()
    {
        return report.blocked(&GROUP_CHECKS[1..], "group.fill");
    }
    let Some(mut run) = report
        .run("group.join", group::join_first(root, target, topic))
        .await
    else {
        return report.blocked(&GROUP_CHECKS[2..], "group.join");
    };
    if report
        .run("group.consume", group::consume_first(root, &mut run))
        .await
        .is_some()
    {
        if report
            .run(
                "group.rebalance",
                group::join_second(root, target, &mut run),
            )
            .await
            .is_some()
        {
            report
                .run("group.drain", group::drain(root, &mut run))
                .await;
        } else {
            report.blocked(&["group.drain"], "group.rebalance");
        }
    } else {
        report.blocked(&["group.rebalance", "group.drain"], "group.consume");
    }
    // In a cluster the SDK sends a member's polls and offset stores over a
    // data connection to the partition's leader (one per node), which it
    // keeps locked for the whole of an exchange (iggy 0.11.0,
    // poll_routing.rs). The drain selects over both members, so the member
    // that did not deliver last is left with its poll future parked inside
    // the IggyConsumer, possibly in the middle of an exchange; nothing polls
    // it again, and the final offset flush in `shutdown()` then waits for
    // that lock until the SDK's 30 s routing budget runs out (the flush
    // fails, which the SDK ignores). The server answered long before (it is
    // not waiting), so leave gets that time on top of the usual limit.
    let limit = if cluster_run() {
        Duration::from_secs(75)
    } else {
        CHECK_LIMIT
    };
    report
        .run_within("group.leave", limit, group::leave(root, run))
        .await;
}

/// Connect, log in, send and poll over TLS with certificate verification.
pub async fn tls_checks(report: &mut Report, target: &Target) {
    report
        .run("tls.verify_certificate", tls::verifies_certificate(target))
        .await;
    let Some(client) = report.run("tls.login", tls::login(target)).await else {
        return report.blocked(
            &["tls.stream.create", "tls.topic.create", "tls.send_poll"],
            "tls.login",
        );
    };
    if report
        .run(
            "tls.stream.create",
            catalog::create_stream(&client, tls::STREAM),
        )
        .await
        .is_some()
    {
        match created_or_existing(
            report
                .run(
                    "tls.topic.create",
                    catalog::create_plain_topic(&client, tls::STREAM, tls::TOPIC, 1),
                )
                .await,
            &client,
            tls::STREAM,
            tls::TOPIC,
        )
        .await
        {
            Some(topic) => {
                report
                    .run("tls.send_poll", tls::send_poll(&client, &topic))
                    .await;
            }
            None => report.blocked(&["tls.send_poll"], "tls.topic.create"),
        }
    } else {
        report.blocked(&["tls.topic.create", "tls.send_poll"], "tls.stream.create");
    }
    connect::close(client).await;
}

/// Whether this run is against a node of a cluster (`COMPAT_CLUSTER`).
pub fn cluster_run() -> bool {
    std::env::var("COMPAT_CLUSTER").is_ok_and(|v| !v.is_empty())
}

/// The command that records the cluster's partition map
/// (`COMPAT_CLUSTER_MAP_CMD`, cluster runs only).
fn cluster_map_command() -> Option<String> {
    std::env::var("COMPAT_CLUSTER_MAP_CMD")
        .ok()
        .filter(|c| cluster_run() && !c.is_empty())
}

/// Runs the map command while the scenario's topics exist, so that run.sh
/// can check afterwards that the node under test holds none of them.
async fn record_partition_map(command: String) -> Outcome {
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new("bash")
            .arg("-c")
            .arg(&command)
            .output()
    })
    .await
    .map_err(|e| format!("partition map command: {e}"))?
    .map_err(|e| format!("partition map command: {e}"))?;
    ensure(output.status.success(), || {
        format!(
            "partition map command failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )
    })
}
