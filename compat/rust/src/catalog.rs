//! Checks that create the stream and the topics the later checks use.

use std::str::FromStr;

use iggy::prelude::{
    CompressionAlgorithm, Durability, HeaderKey, Identifier, IggyByteSize, IggyClient,
    IggyDuration, IggyExpiry, MaxTopicSize, StreamClient, TopicClient, TopicCreateOptions,
    TopicDetails,
};

use crate::outcome::{Context, Outcome, ensure_eq};

/// A topic the scenario created, addressed by name.
#[derive(Clone, Debug)]
pub struct TopicRef {
    /// Stream name.
    pub stream: String,
    /// Topic name.
    pub topic: String,
    /// Number of partitions it was created with.
    pub partitions: u32,
}

impl TopicRef {
    /// The stream as an SDK identifier.
    pub fn stream_id(&self) -> Identifier {
        Identifier::named(&self.stream).expect("scenario stream names are valid identifiers")
    }

    /// The topic as an SDK identifier.
    pub fn topic_id(&self) -> Identifier {
        Identifier::named(&self.topic).expect("scenario topic names are valid identifiers")
    }
}

/// Creates the stream and checks it reads back by name.
pub async fn create_stream(root: &IggyClient, name: &str) -> Outcome {
    let created = root.create_stream(name).await.ctx("create_stream")?;
    ensure_eq("created stream name", created.name.as_str(), name)?;
    ensure_eq("topics of a new stream", created.topics_count, 0)?;
    let stream_id = Identifier::named(name).ctx("stream identifier")?;
    let read = root
        .get_stream(&stream_id)
        .await
        .ctx("get_stream")?
        .ctx("get_stream")?;
    ensure_eq("get_stream id", read.id, created.id)?;
    ensure_eq("get_stream name", read.name.as_str(), name)?;
    let by_number = Identifier::numeric(created.id).ctx("numeric stream identifier")?;
    let read = root
        .get_stream(&by_number)
        .await
        .ctx("get_stream by numeric id")?
        .ctx("get_stream by numeric id")?;
    ensure_eq("get_stream by numeric id: name", read.name.as_str(), name)
}

/// The options a topic is created with: only the partition count, or with
/// `extras` also compression, expiry, a size cap and durability.
pub fn topic_options(partitions: u32, extras: bool) -> TopicCreateOptions {
    if !extras {
        return TopicCreateOptions {
            partitions_count: Some(partitions),
            ..TopicCreateOptions::default()
        };
    }
    TopicCreateOptions {
        partitions_count: Some(partitions),
        compression_algorithm: Some(CompressionAlgorithm::Gzip),
        message_expiry: Some(IggyExpiry::ExpireDuration(IggyDuration::new_from_secs(
            3600,
        ))),
        max_topic_size: Some(MaxTopicSize::Custom(IggyByteSize::from(1024 * 1024 * 1024))),
        durability: Durability::Replicated,
        ..TopicCreateOptions::default()
    }
}

/// Checks the fields a topic created with all [`topic_options`] must report.
fn check_topic_details(what: &str, details: &TopicDetails, name: &str, partitions: u32) -> Outcome {
    ensure_eq(&format!("{what}: name"), details.name.as_str(), name)?;
    ensure_eq(
        &format!("{what}: partitions_count"),
        details.partitions_count,
        partitions,
    )?;
    ensure_eq(
        &format!("{what}: partitions listed"),
        details.partitions.len(),
        partitions as usize,
    )?;
    ensure_eq(
        &format!("{what}: compression"),
        details.compression_algorithm,
        CompressionAlgorithm::Gzip,
    )?;
    ensure_eq(
        &format!("{what}: message expiry"),
        details.message_expiry,
        IggyExpiry::ExpireDuration(IggyDuration::new_from_secs(3600)),
    )?;
    ensure_eq(
        &format!("{what}: max topic size"),
        details.max_topic_size,
        MaxTopicSize::Custom(IggyByteSize::from(1024 * 1024 * 1024)),
    )?;
    ensure_eq(&format!("{what}: messages"), details.messages_count, 0)?;
    for (key, value, explicit) in [
        ("compression_algorithm", "gzip", true),
        ("durability", "replicated", true),
        ("segment_size", "1073741824", false),
    ] {
        let header = HeaderKey::from_str(key).ctx("option key")?;
        let option = details
            .options
            .get(&header)
            .ctx(&format!("{what}: option {key}"))?;
        let text = option.value.to_string_value();
        ensure_eq(
            &format!("{what}: option {key}"),
            (text.as_str(), option.explicit),
            (value, explicit),
        )?;
    }
    Ok(())
}

/// Creates a topic with partitions, expiry, size cap, compression and
/// durability and checks the reply carries them.
pub async fn create_topic(
    root: &IggyClient,
    stream: &str,
    name: &str,
    partitions: u32,
) -> Outcome<TopicRef> {
    let stream_id = Identifier::named(stream).ctx("stream identifier")?;
    let created = root
        .create_topic(&stream_id, name, &topic_options(partitions, true))
        .await
        .ctx("create_topic")?;
    check_topic_details("create_topic reply", &created, name, partitions)?;
    Ok(TopicRef {
        stream: stream.to_string(),
        topic: name.to_string(),
        partitions,
    })
}

/// A fresh read of a topic created with all [`topic_options`] reports them,
/// by name and by numeric id.
pub async fn check_topic(root: &IggyClient, topic: &TopicRef) -> Outcome {
    let read = root
        .get_topic(&topic.stream_id(), &topic.topic_id())
        .await
        .ctx("get_topic")?
        .ctx("get_topic")?;
    check_topic_details("get_topic", &read, &topic.topic, topic.partitions)?;
    let by_number = Identifier::numeric(read.id).ctx("numeric topic identifier")?;
    let again = root
        .get_topic(&topic.stream_id(), &by_number)
        .await
        .ctx("get_topic by numeric id")?
        .ctx("get_topic by numeric id")?;
    ensure_eq(
        "get_topic by numeric id: name",
        again.name.as_str(),
        topic.topic.as_str(),
    )
}

/// Creates a topic with only a partition count (server defaults otherwise).
pub async fn create_plain_topic(
    root: &IggyClient,
    stream: &str,
    name: &str,
    partitions: u32,
) -> Outcome<TopicRef> {
    let stream_id = Identifier::named(stream).ctx("stream identifier")?;
    let created = root
        .create_topic(&stream_id, name, &topic_options(partitions, false))
        .await
        .ctx("create_topic")?;
    ensure_eq("partitions_count", created.partitions_count, partitions)?;
    Ok(TopicRef {
        stream: stream.to_string(),
        topic: name.to_string(),
        partitions,
    })
}

/// The topic as the server has it, if it exists; `None` on any error.
pub async fn find_topic(client: &IggyClient, stream: &str, name: &str) -> Option<TopicRef> {
    let stream_id = Identifier::named(stream).ok()?;
    let topic_id = Identifier::named(name).ok()?;
    let details = client.get_topic(&stream_id, &topic_id).await.ok()??;
    Some(TopicRef {
        stream: stream.to_string(),
        topic: name.to_string(),
        partitions: details.partitions_count,
    })
}
