//! Checks that delete the group, the topics and the stream and verify each
//! is gone.

use iggy::prelude::{ConsumerGroupClient, Identifier, IggyClient, StreamClient, TopicClient};

use crate::catalog::TopicRef;
use crate::group::GROUP;
use crate::outcome::{Context, Outcome, ensure, expect_code};

/// Deletes the consumer group; reading or deleting it again finds nothing
/// (ConsumerGroupIdNotFound 5000 on the second delete).
pub async fn delete_group(root: &IggyClient, topic: &TopicRef) -> Outcome {
    let group = Identifier::named(GROUP).ctx("group identifier")?;
    let (stream, topic_id) = (topic.stream_id(), topic.topic_id());
    root.delete_consumer_group(&stream, &topic_id, &group)
        .await
        .ctx("delete_consumer_group")?;
    let read = root
        .get_consumer_group(&stream, &topic_id, &group)
        .await
        .ctx("get_consumer_group")?;
    ensure(read.is_none(), || {
        format!("deleted group still returned: {read:?}")
    })?;
    let groups = root
        .get_consumer_groups(&stream, &topic_id)
        .await
        .ctx("get_consumer_groups")?;
    ensure(groups.iter().all(|g| g.name != GROUP), || {
        format!("deleted group still listed: {groups:?}")
    })?;
    expect_code(
        "delete_consumer_group again",
        root.delete_consumer_group(&stream, &topic_id, &group).await,
        5000,
    )
}

/// Deletes a topic; it no longer reads back or lists.
pub async fn delete_topic(root: &IggyClient, topic: &TopicRef) -> Outcome {
    let (stream, topic_id) = (topic.stream_id(), topic.topic_id());
    root.delete_topic(&stream, &topic_id)
        .await
        .ctx("delete_topic")?;
    let read = root.get_topic(&stream, &topic_id).await.ctx("get_topic")?;
    ensure(read.is_none(), || {
        format!("deleted topic {} still returned", topic.topic)
    })?;
    let topics = root.get_topics(&stream).await.ctx("get_topics")?;
    ensure(topics.iter().all(|t| t.name != topic.topic), || {
        format!("deleted topic {} still listed", topic.topic)
    })
}

/// Deletes the stream; it no longer reads back or lists.
pub async fn delete_stream(root: &IggyClient, name: &str) -> Outcome {
    let stream = Identifier::named(name).ctx("stream identifier")?;
    root.delete_stream(&stream).await.ctx("delete_stream")?;
    let read = root.get_stream(&stream).await.ctx("get_stream")?;
    ensure(read.is_none(), || {
        format!("deleted stream {name} still returned")
    })?;
    let streams = root.get_streams().await.ctx("get_streams")?;
    ensure(streams.iter().all(|s| s.name != name), || {
        format!("deleted stream {name} still listed")
    })?;
    expect_code(
        "delete_stream again",
        root.delete_stream(&stream).await,
        1009,
    )
}
