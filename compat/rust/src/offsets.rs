//! Check for storing, reading and deleting a consumer offset by hand.
//!
//! Reads partition 0 of a topic holding exactly the
//! [`PARTITION_ZERO_MESSAGES`] messages of the partition-id send check.

use iggy::prelude::{
    Consumer, ConsumerOffsetClient, Identifier, IggyClient, MessageClient, PollingStrategy,
};

use crate::catalog::TopicRef;
use crate::messages::{PARTITION_ZERO_MESSAGES, offsets};
use crate::outcome::{Context, Outcome, ensure_eq};

/// Name of the consumer whose offset is stored by hand.
const STORED_CONSUMER: &str = "compat-stored";

fn consumer() -> Outcome<Consumer> {
    Ok(Consumer::new(
        Identifier::named(STORED_CONSUMER).ctx("consumer identifier")?,
    ))
}

/// The stored and current offset the server reports, if any.
async fn read(client: &IggyClient, topic: &TopicRef) -> Outcome<Option<(u64, u64)>> {
    let info = client
        .get_consumer_offset(&consumer()?, &topic.stream_id(), &topic.topic_id(), Some(0))
        .await
        .ctx("get_consumer_offset")?;
    Ok(info.map(|i| (i.stored_offset, i.current_offset)))
}

async fn store(client: &IggyClient, topic: &TopicRef, offset: u64) -> Outcome {
    client
        .store_consumer_offset(
            &consumer()?,
            &topic.stream_id(),
            &topic.topic_id(),
            Some(0),
            offset,
        )
        .await
        .ctx(&format!("store_consumer_offset {offset}"))
}

/// Stores an offset, reads it back (with the partition's current offset),
/// polls "next" from it, overwrites it, and deletes it.
pub async fn store_get(client: &IggyClient, topic: &TopicRef) -> Outcome {
    let last = PARTITION_ZERO_MESSAGES - 1;
    ensure_eq("offset before storing", read(client, topic).await?, None)?;
    store(client, topic, 2).await?;
    ensure_eq(
        "(stored, current) after storing 2",
        read(client, topic).await?,
        Some((2, last)),
    )?;
    let polled = client
        .poll_messages(
            &topic.stream_id(),
            &topic.topic_id(),
            Some(0),
            &consumer()?,
            &PollingStrategy::next(),
            10,
            false,
        )
        .await
        .ctx("poll_messages next after storing 2")?;
    ensure_eq(
        "next after storing 2",
        offsets(&polled),
        (3..PARTITION_ZERO_MESSAGES).collect::<Vec<_>>(),
    )?;
    store(client, topic, 0).await?;
    ensure_eq(
        "(stored, current) after storing 0",
        read(client, topic).await?,
        Some((0, last)),
    )?;
    client
        .delete_consumer_offset(&consumer()?, &topic.stream_id(), &topic.topic_id(), Some(0))
        .await
        .ctx("delete_consumer_offset")?;
    ensure_eq("offset after deleting", read(client, topic).await?, None)
}
