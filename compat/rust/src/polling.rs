//! Checks for every polling strategy and for auto-commit with "next".
//!
//! They read partition 0 of the main topic, which holds exactly the
//! [`PARTITION_ZERO_MESSAGES`] messages of the partition-id send check.

use iggy::prelude::{
    Consumer, ConsumerOffsetClient, Identifier, IggyClient, IggyTimestamp, MessageClient,
    PollingStrategy,
};

use crate::catalog::TopicRef;
use crate::connect::{self, Target};
use crate::messages::{PARTITION_ZERO_MESSAGES, offsets, partition_zero_payload, payloads, poll};
use crate::outcome::{Context, Outcome, ensure, ensure_eq};

/// Name of the consumer whose offset the "next" checks commit.
pub const NEXT_CONSUMER: &str = "compat-next";

fn expected(range: std::ops::Range<u64>) -> Vec<String> {
    range.map(partition_zero_payload).collect()
}

/// Offset strategy: starts at the given offset and stops at the count.
pub async fn by_offset(client: &IggyClient, topic: &TopicRef) -> Outcome {
    let polled = poll(client, topic, 0, PollingStrategy::offset(2), 2).await?;
    ensure_eq("partition_id", polled.partition_id, 0)?;
    ensure_eq("offsets", offsets(&polled), vec![2, 3])?;
    ensure_eq("payloads", payloads(&polled)?, expected(2..4))?;
    ensure_eq(
        "current_offset",
        polled.current_offset,
        PARTITION_ZERO_MESSAGES - 1,
    )?;
    let beyond = poll(
        client,
        topic,
        0,
        PollingStrategy::offset(PARTITION_ZERO_MESSAGES),
        10,
    )
    .await?;
    ensure_eq("messages past the end", beyond.messages.len(), 0)
}

/// First strategy: starts at offset 0.
pub async fn first(client: &IggyClient, topic: &TopicRef) -> Outcome {
    let polled = poll(client, topic, 0, PollingStrategy::first(), 3).await?;
    ensure_eq("offsets", offsets(&polled), vec![0, 1, 2])?;
    ensure_eq("payloads", payloads(&polled)?, expected(0..3))
}

/// Last strategy: the newest `count` messages.
pub async fn last(client: &IggyClient, topic: &TopicRef) -> Outcome {
    let n = PARTITION_ZERO_MESSAGES;
    let polled = poll(client, topic, 0, PollingStrategy::last(), 2).await?;
    ensure_eq("offsets", offsets(&polled), vec![n - 2, n - 1])?;
    ensure_eq("payloads", payloads(&polled)?, expected(n - 2..n))
}

/// Timestamp strategy: from the first message stamped at or after the value.
pub async fn by_timestamp(client: &IggyClient, topic: &TopicRef) -> Outcome {
    let all = poll(client, topic, 0, PollingStrategy::first(), 100).await?;
    ensure_eq(
        "messages in partition 0",
        all.messages.len() as u64,
        PARTITION_ZERO_MESSAGES,
    )?;
    let stamps: Vec<u64> = all.messages.iter().map(|m| m.header.timestamp).collect();
    ensure(stamps.windows(2).all(|w| w[0] <= w[1]), || {
        format!("timestamps go backwards: {stamps:?}")
    })?;
    let pivot = stamps[3];
    let want: Vec<u64> = all
        .messages
        .iter()
        .filter(|m| m.header.timestamp >= pivot)
        .map(|m| m.header.offset)
        .collect();
    let polled = poll(
        client,
        topic,
        0,
        PollingStrategy::timestamp(IggyTimestamp::from(pivot)),
        100,
    )
    .await?;
    ensure_eq(
        &format!("offsets from timestamp {pivot} (stamps {stamps:?})"),
        offsets(&polled),
        want,
    )?;
    let future = IggyTimestamp::from(stamps[stamps.len() - 1] + 60_000_000);
    let later = poll(client, topic, 0, PollingStrategy::timestamp(future), 100).await?;
    ensure_eq("messages after a future timestamp", later.messages.len(), 0)
}

fn next_consumer() -> Outcome<Consumer> {
    Ok(Consumer::new(
        Identifier::named(NEXT_CONSUMER).ctx("consumer identifier")?,
    ))
}

async fn poll_next(
    client: &IggyClient,
    topic: &TopicRef,
    count: u32,
    commit: bool,
) -> Outcome<Vec<u64>> {
    let polled = client
        .poll_messages(
            &topic.stream_id(),
            &topic.topic_id(),
            Some(0),
            &next_consumer()?,
            &PollingStrategy::next(),
            count,
            commit,
        )
        .await
        .ctx("poll_messages next")?;
    let got = offsets(&polled);
    let want: Vec<String> = got.iter().copied().map(partition_zero_payload).collect();
    ensure_eq("payloads of the polled offsets", payloads(&polled)?, want)?;
    Ok(got)
}

async fn stored_offset(client: &IggyClient, topic: &TopicRef) -> Outcome<Option<u64>> {
    let info = client
        .get_consumer_offset(
            &next_consumer()?,
            &topic.stream_id(),
            &topic.topic_id(),
            Some(0),
        )
        .await
        .ctx("get_consumer_offset")?;
    Ok(info.map(|i| i.stored_offset))
}

/// Next with auto-commit: each poll continues after the committed offset and
/// the server stores the last polled offset.
pub async fn next_auto_commit(client: &IggyClient, topic: &TopicRef) -> Outcome {
    ensure_eq(
        "stored offset before the first poll",
        stored_offset(client, topic).await?,
        None,
    )?;
    ensure_eq(
        "first next poll",
        poll_next(client, topic, 2, true).await?,
        vec![0, 1],
    )?;
    ensure_eq(
        "stored offset after the first poll",
        stored_offset(client, topic).await?,
        Some(1),
    )?;
    ensure_eq(
        "second next poll",
        poll_next(client, topic, 2, true).await?,
        vec![2, 3],
    )?;
    ensure_eq(
        "stored offset after the second poll",
        stored_offset(client, topic).await?,
        Some(3),
    )
}

/// A new connection polling "next" for the same consumer resumes after the
/// auto-committed offset; without auto-commit the offset stays put.
pub async fn next_resumes(target: &Target, topic: &TopicRef) -> Outcome {
    let client = connect::login_root(target).await?;
    let result = async {
        let last = PARTITION_ZERO_MESSAGES - 1;
        ensure_eq(
            "next on a new connection",
            poll_next(&client, topic, 10, false).await?,
            vec![last],
        )?;
        ensure_eq(
            "stored offset after a poll without commit",
            stored_offset(&client, topic).await?,
            Some(3),
        )?;
        ensure_eq(
            "next again",
            poll_next(&client, topic, 10, true).await?,
            vec![last],
        )?;
        ensure_eq(
            "stored offset after committing the rest",
            stored_offset(&client, topic).await?,
            Some(last),
        )?;
        ensure_eq(
            "next at the end",
            poll_next(&client, topic, 10, true).await?,
            Vec::<u64>::new(),
        )
    }
    .await;
    connect::close(client).await;
    result
}
