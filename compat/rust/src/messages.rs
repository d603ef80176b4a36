//! Checks for sending with each partitioning, plus message helpers.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use iggy::prelude::{
    Consumer, Identifier, IggyClient, IggyMessage, MessageClient, Partitioning, PolledMessages,
    PollingStrategy, TopicClient,
};

use crate::catalog::TopicRef;
use crate::outcome::{Context, Outcome, ensure, ensure_eq};

/// Messages the partition-id check writes to partition 0, one batch each.
pub const PARTITION_ZERO_MESSAGES: u64 = 5;

/// The payload of the `index`-th message sent to partition 0.
pub fn partition_zero_payload(index: u64) -> String {
    format!("p0-{index}")
}

/// Builds a message with a text payload.
pub fn message(payload: &str) -> Outcome<IggyMessage> {
    IggyMessage::builder()
        .payload(Bytes::from(payload.to_string()))
        .build()
        .ctx("build message")
}

/// The payloads of polled messages, in order.
pub fn payloads(polled: &PolledMessages) -> Outcome<Vec<String>> {
    polled
        .messages
        .iter()
        .map(|m| m.payload_as_string().ctx("payload as text"))
        .collect()
}

/// The offsets of polled messages, in order.
pub fn offsets(polled: &PolledMessages) -> Vec<u64> {
    polled.messages.iter().map(|m| m.header.offset).collect()
}

/// Sends `payloads` as one batch and returns the partition the server
/// confirmed and the batch's base offset.
async fn send_batch(
    client: &IggyClient,
    topic: &TopicRef,
    partitioning: &Partitioning,
    batch: &[String],
) -> Outcome<(u32, u64)> {
    let mut messages = batch
        .iter()
        .map(|p| message(p))
        .collect::<Outcome<Vec<_>>>()?;
    let response = client
        .send_messages(
            &topic.stream_id(),
            &topic.topic_id(),
            partitioning,
            &mut messages,
        )
        .await
        .ctx("send_messages")?;
    ensure_eq("confirmations per batch", response.confirmations.len(), 1)?;
    let confirmation = &response.confirmations[0];
    Ok((confirmation.partition_id, confirmation.base_offset))
}

/// Polls one partition without committing.
pub async fn poll(
    client: &IggyClient,
    topic: &TopicRef,
    partition: u32,
    strategy: PollingStrategy,
    count: u32,
) -> Outcome<PolledMessages> {
    let reader = Consumer::new(Identifier::named("compat-reader").ctx("consumer identifier")?);
    client
        .poll_messages(
            &topic.stream_id(),
            &topic.topic_id(),
            Some(partition),
            &reader,
            &strategy,
            count,
            false,
        )
        .await
        .ctx(&format!(
            "poll_messages {strategy:?} on partition {partition}"
        ))
}

/// Sends five single-message batches to partition 0 a little apart, so that
/// each batch gets its own server timestamp, and checks each confirmation.
pub async fn send_partition_id(client: &IggyClient, topic: &TopicRef) -> Outcome {
    for index in 0..PARTITION_ZERO_MESSAGES {
        let (partition, base) = send_batch(
            client,
            topic,
            &Partitioning::partition_id(0),
            &[partition_zero_payload(index)],
        )
        .await?;
        ensure_eq("confirmed partition", partition, 0)?;
        ensure_eq("confirmed base offset", base, index)?;
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    let polled = poll(client, topic, 0, PollingStrategy::offset(0), 100).await?;
    let expected: Vec<String> = (0..PARTITION_ZERO_MESSAGES)
        .map(partition_zero_payload)
        .collect();
    ensure_eq("payloads in partition 0", payloads(&polled)?, expected)
}

/// Sends one message per partition with balanced partitioning; each
/// partition must receive exactly one of them. Run after the poll checks,
/// which expect partition 0 to hold only the partition-id messages.
pub async fn send_balanced(client: &IggyClient, topic: &TopicRef) -> Outcome {
    let mut seen = BTreeMap::new();
    for index in 0..topic.partitions {
        let payload = format!("balanced-{index}");
        let (partition, _) = send_batch(
            client,
            topic,
            &Partitioning::balanced(),
            std::slice::from_ref(&payload),
        )
        .await?;
        seen.insert(partition, payload);
    }
    ensure_eq(
        "partitions that received a balanced message",
        seen.len(),
        topic.partitions as usize,
    )?;
    for (partition, payload) in &seen {
        let last = poll(client, topic, *partition, PollingStrategy::last(), 1).await?;
        ensure_eq(
            &format!("last message of partition {partition}"),
            payloads(&last)?,
            vec![payload.clone()],
        )?;
    }
    Ok(())
}

/// Sends two batches with the same message key; both must land in one
/// partition, in order, right after whatever it held before.
pub async fn send_messages_key(client: &IggyClient, topic: &TopicRef) -> Outcome {
    let key = Partitioning::messages_key_str("customer-42").ctx("messages key")?;
    let first: Vec<String> = (0..2).map(|i| format!("key-{i}")).collect();
    let second: Vec<String> = (2..4).map(|i| format!("key-{i}")).collect();
    let (partition_a, base_a) = send_batch(client, topic, &key, &first).await?;
    let (partition_b, base_b) = send_batch(client, topic, &key, &second).await?;
    ensure_eq(
        "partition of the second keyed batch",
        partition_b,
        partition_a,
    )?;
    ensure_eq("base offset of the second keyed batch", base_b, base_a + 2)?;
    let polled = poll(
        client,
        topic,
        partition_a,
        PollingStrategy::offset(base_a),
        10,
    )
    .await?;
    let expected: Vec<String> = (0..4).map(|i| format!("key-{i}")).collect();
    ensure_eq("keyed payloads", payloads(&polled)?, expected)?;
    ensure_eq(
        "keyed offsets",
        offsets(&polled),
        (base_a..base_a + 4).collect::<Vec<_>>(),
    )
}

/// After all sends the topic and its partitions report the message counts.
pub async fn topic_counts(client: &IggyClient, topic: &TopicRef, expected_total: u64) -> Outcome {
    let details = client
        .get_topic(&topic.stream_id(), &topic.topic_id())
        .await
        .ctx("get_topic")?
        .ctx("get_topic")?;
    let per_partition: u64 = details.partitions.iter().map(|p| p.messages_count).sum();
    ensure_eq(
        "sum of partition message counts",
        per_partition,
        expected_total,
    )?;
    ensure_eq(
        "topic messages_count",
        details.messages_count,
        expected_total,
    )?;
    ensure(details.size.as_bytes_u64() > 0, || {
        "topic size is 0 after sending".to_string()
    })
}
