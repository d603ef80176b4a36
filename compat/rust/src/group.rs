//! The consumer-group check, driven through the SDK's high-level
//! `IggyConsumer`: one member consumes part of the topic with offsets
//! committed by the server on every poll, a second member joins, and the
//! group finishes the topic without losing or repeating a message.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use futures_util::StreamExt;
use iggy::prelude::{
    AutoCommit, AutoCommitWhen, Consumer, ConsumerGroupClient, ConsumerOffsetClient, Identifier,
    IggyClient, IggyConsumer, IggyDuration, MessageClient, NonZeroIggyDuration, Partitioning,
    ReceivedMessage,
};
use tokio::time::{Instant, sleep, timeout};

use crate::catalog::TopicRef;
use crate::connect::{self, Target};
use crate::messages::message;
use crate::outcome::{Context, Failure, Outcome, ensure, ensure_eq};

/// Name of the consumer group.
pub const GROUP: &str = "compat-group";
/// Messages per partition of the group topic.
const PER_PARTITION: u64 = 10;
/// Messages the first member consumes before the second joins.
const BEFORE_REBALANCE: usize = 6;
/// How long the group may take to drain the rest of the topic.
const DRAIN_LIMIT: Duration = Duration::from_secs(20);

/// One message as a member received it.
#[derive(Clone, Debug)]
struct Delivery {
    member: &'static str,
    partition: u32,
    offset: u64,
    payload: String,
}

fn payload_for(partition: u32, offset: u64) -> String {
    format!("g{partition}-{offset}")
}

/// The members, their connections and what they received so far.
pub struct GroupRun {
    topic: TopicRef,
    first_client: IggyClient,
    first: IggyConsumer,
    second: Option<(IggyClient, IggyConsumer)>,
    before: Vec<Delivery>,
    stored_before: BTreeMap<u32, u64>,
}

/// Fills every partition of the group topic with [`PER_PARTITION`] messages.
pub async fn fill(root: &IggyClient, topic: &TopicRef) -> Outcome {
    for partition in 0..topic.partitions {
        let mut batch = (0..PER_PARTITION)
            .map(|offset| message(&payload_for(partition, offset)))
            .collect::<Outcome<Vec<_>>>()?;
        root.send_messages(
            &topic.stream_id(),
            &topic.topic_id(),
            &Partitioning::partition_id(partition),
            &mut batch,
        )
        .await
        .ctx(&format!("send to partition {partition}"))?;
    }
    Ok(())
}

fn group_id() -> Identifier {
    Identifier::named(GROUP).expect("the group name is a valid identifier")
}

/// Builds a group member that lets the server commit every poll, one
/// message per poll so that what was delivered is exactly what was committed.
fn member(client: &IggyClient, topic: &TopicRef) -> Outcome<IggyConsumer> {
    let retry = NonZeroIggyDuration::new(Duration::from_millis(100)).ctx("retry interval")?;
    Ok(client
        .consumer_group(GROUP, &topic.stream, &topic.topic)
        .ctx("consumer_group builder")?
        .auto_commit(AutoCommit::When(AutoCommitWhen::PollingMessages))
        .batch_length(1)
        .poll_interval(IggyDuration::new(Duration::from_millis(20)))
        .polling_retry_interval(retry)
        .auto_join_consumer_group()
        .build())
}

/// Partition ids each member of the group owns, as the server reports them.
async fn assignment(root: &IggyClient, topic: &TopicRef) -> Outcome<Vec<Vec<u32>>> {
    let details = root
        .get_consumer_group(&topic.stream_id(), &topic.topic_id(), &group_id())
        .await
        .ctx("get_consumer_group")?
        .ctx("get_consumer_group")?;
    ensure_eq(
        "members_count",
        details.members_count as usize,
        details.members.len(),
    )?;
    let mut owned: Vec<Vec<u32>> = details
        .members
        .iter()
        .map(|m| {
            let mut p = m.partitions.clone();
            p.sort_unstable();
            p
        })
        .collect();
    owned.sort();
    Ok(owned)
}

/// The group's stored offset per partition, as the server reports it.
async fn stored_offsets(root: &IggyClient, topic: &TopicRef) -> Outcome<BTreeMap<u32, u64>> {
    let consumer = Consumer::group(group_id());
    let mut stored = BTreeMap::new();
    for partition in 0..topic.partitions {
        let info = root
            .get_consumer_offset(
                &consumer,
                &topic.stream_id(),
                &topic.topic_id(),
                Some(partition),
            )
            .await
            .ctx(&format!(
                "get_consumer_offset for the group on partition {partition}"
            ))?;
        if let Some(info) = info {
            stored.insert(partition, info.stored_offset);
        }
    }
    Ok(stored)
}

fn record(
    member: &'static str,
    item: Option<Result<ReceivedMessage, iggy::prelude::IggyError>>,
) -> Outcome<Delivery> {
    let received = item
        .ctx(&format!("member {member}: stream ended"))?
        .ctx(&format!("member {member}: poll"))?;
    Ok(Delivery {
        member,
        partition: received.partition_id,
        offset: received.message.header.offset,
        payload: received
            .message
            .payload_as_string()
            .ctx("payload as text")?,
    })
}

/// Creates the group and lets a first member join it; it must own every partition.
pub async fn join_first(root: &IggyClient, target: &Target, topic: &TopicRef) -> Outcome<GroupRun> {
    let created = root
        .create_consumer_group(&topic.stream_id(), &topic.topic_id(), GROUP)
        .await
        .ctx("create_consumer_group")?;
    ensure_eq("group name", created.name.as_str(), GROUP)?;
    ensure_eq(
        "group partitions_count",
        created.partitions_count,
        topic.partitions,
    )?;
    ensure_eq("members of a new group", created.members_count, 0)?;
    let client = connect::login_root(target).await?;
    let mut first = member(&client, topic)?;
    first.init().await.ctx("first member init (join)")?;
    let all: Vec<u32> = (0..topic.partitions).collect();
    ensure_eq(
        "assignment with one member",
        assignment(root, topic).await?,
        vec![all],
    )?;
    Ok(GroupRun {
        topic: topic.clone(),
        first_client: client,
        first,
        second: None,
        before: Vec::new(),
        stored_before: BTreeMap::new(),
    })
}

/// The first member consumes some messages; each must come in partition
/// order and the server must have committed exactly what was delivered.
pub async fn consume_first(root: &IggyClient, run: &mut GroupRun) -> Outcome {
    for _ in 0..BEFORE_REBALANCE {
        let item = timeout(Duration::from_secs(10), run.first.next())
            .await
            .ctx("first member: next message")?;
        run.before.push(record("first", item)?);
    }
    let mut last = BTreeMap::new();
    for (index, d) in run.before.iter().enumerate() {
        ensure_eq(
            &format!("payload of delivery {index}"),
            d.payload.clone(),
            payload_for(d.partition, d.offset),
        )?;
        let expected = last.get(&d.partition).map_or(0, |o| o + 1);
        ensure_eq(
            &format!("offset of delivery {index} (partition {})", d.partition),
            d.offset,
            expected,
        )?;
        last.insert(d.partition, d.offset);
    }
    let stored = stored_offsets(root, &run.topic).await?;
    ensure_eq("group offsets stored by auto-commit", stored.clone(), last)?;
    run.stored_before = stored;
    Ok(())
}

/// A second member joins; the server must split the partitions between them.
pub async fn join_second(root: &IggyClient, target: &Target, run: &mut GroupRun) -> Outcome {
    let client = connect::login_root(target).await?;
    let mut second = member(&client, &run.topic)?;
    second.init().await.ctx("second member init (join)")?;
    run.second = Some((client, second));
    let owned = assignment(root, &run.topic).await?;
    ensure_eq("members after the join", owned.len(), 2)?;
    ensure(owned.iter().all(|p| !p.is_empty()), || {
        format!("a member owns nothing after the rebalance: {owned:?}")
    })?;
    let union: BTreeSet<u32> = owned.iter().flatten().copied().collect();
    ensure_eq(
        "partitions covered after the rebalance",
        union.len() as u32,
        run.topic.partitions,
    )?;
    ensure_eq(
        "partitions owned twice",
        owned.iter().map(Vec::len).sum::<usize>() as u32,
        run.topic.partitions,
    )
}

/// Both members drain the rest of the topic. Across the whole run every
/// message is delivered exactly once, the second member starts after the
/// committed offsets, and the final stored offsets point at the last messages.
pub async fn drain(root: &IggyClient, run: &mut GroupRun) -> Outcome {
    let (_, second) = run.second.as_mut().ctx("second member")?;
    let total = PER_PARTITION as usize * run.topic.partitions as usize;
    let mut after: Vec<Delivery> = Vec::new();
    let mut errors: Vec<Failure> = Vec::new();
    let deadline = Instant::now() + DRAIN_LIMIT;
    while run.before.len() + after.len() < total && Instant::now() < deadline && errors.len() < 5 {
        let outcome = tokio::select! {
            item = run.first.next() => Some(record("first", item)),
            item = second.next() => Some(record("second", item)),
            _ = sleep(Duration::from_millis(500)) => None,
        };
        match outcome {
            Some(Ok(delivery)) => after.push(delivery),
            Some(Err(error)) => errors.push(error),
            None => {}
        }
    }
    ensure(errors.is_empty(), || {
        format!("members reported errors: {errors:?}")
    })?;
    let mut seen: BTreeMap<(u32, u64), Vec<&'static str>> = BTreeMap::new();
    for d in run.before.iter().chain(after.iter()) {
        ensure_eq(
            "payload",
            d.payload.clone(),
            payload_for(d.partition, d.offset),
        )?;
        seen.entry((d.partition, d.offset))
            .or_default()
            .push(d.member);
    }
    let repeated: Vec<_> = seen.iter().filter(|(_, m)| m.len() > 1).collect();
    ensure(repeated.is_empty(), || {
        format!("delivered more than once: {repeated:?}")
    })?;
    let missing: Vec<(u32, u64)> = (0..run.topic.partitions)
        .flat_map(|p| (0..PER_PARTITION).map(move |o| (p, o)))
        .filter(|key| !seen.contains_key(key))
        .collect();
    ensure(missing.is_empty(), || {
        format!("never delivered (partition, offset): {missing:?}")
    })?;
    for (partition, stored) in &run.stored_before {
        let resumed = after
            .iter()
            .filter(|d| d.partition == *partition)
            .map(|d| d.offset)
            .min();
        ensure_eq(
            &format!("first offset after the rebalance on partition {partition}"),
            resumed,
            Some(stored + 1),
        )?;
    }
    let per_member: BTreeMap<&str, BTreeSet<u32>> =
        after.iter().fold(BTreeMap::new(), |mut acc, d| {
            acc.entry(d.member).or_default().insert(d.partition);
            acc
        });
    ensure(
        per_member.values().all(|p| p.len() == 1) && per_member.len() == 2,
        || {
            format!(
                "after the rebalance each member should read only its own partition: {per_member:?}"
            )
        },
    )?;
    let stored = stored_offsets(root, &run.topic).await?;
    let last: BTreeMap<u32, u64> = (0..run.topic.partitions)
        .map(|p| (p, PER_PARTITION - 1))
        .collect();
    ensure_eq("group offsets stored at the end", stored, last)
}

/// Both members shut down, which leaves the group; it must end up empty.
/// The final offset flush a member sends on shutdown must not move a
/// partition it no longer owns back to where that member last read it.
pub async fn leave(root: &IggyClient, run: GroupRun) -> Outcome {
    let GroupRun {
        topic,
        first_client,
        mut first,
        second,
        ..
    } = run;
    let stored = stored_offsets(root, &topic).await?;
    first
        .shutdown()
        .await
        .ctx("first member shutdown (leave)")?;
    if let Some((client, mut second)) = second {
        second
            .shutdown()
            .await
            .ctx("second member shutdown (leave)")?;
        connect::close(client).await;
    }
    connect::close(first_client).await;
    ensure_eq(
        "assignment after both left",
        assignment(root, &topic).await?,
        Vec::<Vec<u32>>::new(),
    )?;
    ensure_eq(
        "group offsets after both left",
        stored_offsets(root, &topic).await?,
        stored,
    )
}
