//! Checks for a user with limited permissions: what it may do works, what
//! it may not is refused with Unauthorized (41).

use iggy::prelude::{
    GlobalPermissions, Identifier, IggyClient, MessageClient, Partitioning, Permissions,
    PollingStrategy, StreamClient, TopicClient, UserClient, UserStatus,
};

use crate::catalog::TopicRef;
use crate::connect::{self, Target};
use crate::messages::{message, poll};
use crate::outcome::{Context, Outcome, ensure, ensure_eq, expect_code};

/// Name of the limited user of the plain-TCP checks; each transport part
/// creates its own, so that one part's leftovers cannot break another.
pub const USER: &str = "compat-limited";
/// Password of every limited user.
pub const PASSWORD: &str = "limited-secret-1";

fn user_id(user: &str) -> Outcome<Identifier> {
    Identifier::named(user).ctx("user identifier")
}

/// Read-only access to streams, topics and messages; nothing else.
fn limited_permissions() -> Permissions {
    Permissions {
        global: GlobalPermissions {
            read_streams: true,
            ..GlobalPermissions::default()
        },
        streams: None,
    }
}

/// Creates the user and checks it reads back with its permissions.
pub async fn create(root: &IggyClient, user: &str) -> Outcome {
    let created = root
        .create_user(
            user,
            PASSWORD,
            UserStatus::Active,
            Some(limited_permissions()),
        )
        .await
        .ctx("create_user")?;
    ensure_eq("created username", created.username.as_str(), user)?;
    let read = root
        .get_user(&user_id(user)?)
        .await
        .ctx("get_user")?
        .ctx("get_user")?;
    ensure_eq("get_user id", read.id, created.id)?;
    ensure_eq("get_user status", read.status, UserStatus::Active)?;
    ensure_eq(
        "get_user permissions",
        read.permissions,
        Some(limited_permissions()),
    )?;
    let users = root.get_users().await.ctx("get_users")?;
    ensure(users.iter().any(|u| u.username == user), || {
        format!("{user} missing from get_users")
    })
}

/// Logged in as the limited user, reads succeed and writes are refused.
pub async fn permissions(target: &Target, topic: &TopicRef, user: &str) -> Outcome {
    let client = connect::login(target, user, PASSWORD).await?;
    let result = async {
        let streams = client
            .get_streams()
            .await
            .ctx("get_streams as the limited user")?;
        ensure(streams.iter().any(|s| s.name == topic.stream), || {
            format!("stream {} not visible to the limited user", topic.stream)
        })?;
        client
            .get_topic(&topic.stream_id(), &topic.topic_id())
            .await
            .ctx("get_topic as the limited user")?
            .ctx("get_topic as the limited user")?;
        let polled = poll(&client, topic, 0, PollingStrategy::first(), 1).await?;
        ensure_eq(
            "messages polled by the limited user",
            polled.messages.len(),
            1,
        )?;
        expect_code(
            "create_stream as the limited user",
            client.create_stream("compat-denied").await,
            41,
        )?;
        let mut batch = vec![message("denied")?];
        let sent = client
            .send_messages(
                &topic.stream_id(),
                &topic.topic_id(),
                &Partitioning::partition_id(0),
                &mut batch,
            )
            .await;
        expect_code("send_messages as the limited user", sent, 41)?;
        let created = client
            .create_user("compat-other", "other-secret-1", UserStatus::Active, None)
            .await;
        expect_code("create_user as the limited user", created, 41)?;
        expect_code(
            "delete_stream as the limited user",
            client.delete_stream(&topic.stream_id()).await,
            41,
        )
    }
    .await;
    connect::close(client).await;
    result
}

/// Deletes the user; it is gone and can no longer log in (42).
pub async fn delete(root: &IggyClient, target: &Target, user: &str) -> Outcome {
    root.delete_user(&user_id(user)?).await.ctx("delete_user")?;
    ensure(
        root.get_user(&user_id(user)?)
            .await
            .ctx("get_user")?
            .is_none(),
        || "deleted user still returned".to_string(),
    )?;
    let users = root.get_users().await.ctx("get_users")?;
    ensure(users.iter().all(|u| u.username != user), || {
        format!("{user} still in get_users")
    })?;
    let client = connect::connect(target).await?;
    let result = client.login_user(user, PASSWORD).await;
    connect::close(client).await;
    expect_code("login as the deleted user", result, 42)
}
