"""Creating a stream and a topic with options.

The SDK's create_topic takes partitions, compression, message expiry and
maximum topic size; protocol 0.11.0 has no replication factor, so the SDK
offers none. It also always sends the `durability` and
`consumer_offset_durability` option keys (iggy_common 0.11.0 catalog).
"""

from __future__ import annotations

import datetime

import apache_iggy as iggy

import wire
from scenario import POLLING_TOPIC, SCRATCH_TOPIC, World

# Keys apache-iggy 0.9.0 puts in every CREATE_TOPIC options block, plus the
# ones this scenario sets explicitly.
SDK_TOPIC_KEYS = {
    "compression_algorithm",
    "message_expiry",
    "max_topic_size",
    "durability",
    "consumer_offset_durability",
}


async def test_create_stream(world: World) -> None:
    """Create a stream and read it back."""
    root = await world.root()
    await root.create_stream(world.stream)
    stream = await root.get_stream(world.stream)
    assert stream is not None
    assert stream.name == world.stream
    assert stream.topics_count == 0
    names = [s.name for s in await root.get_streams()]
    assert world.stream in names


async def test_create_topic_with_options(world: World) -> None:
    """Create a topic with partitions, gzip, message expiry and max size."""
    await world.ensure_stream()
    root = await world.root()
    spec = POLLING_TOPIC
    try:
        await root.create_topic(world.stream, spec.name, spec.partitions, **spec.sdk_kwargs())
    except RuntimeError as err:
        # Create it the raw way so the later steps still have their topic.
        await root.send_binary_request(wire.CREATE_TOPIC, spec.raw_body(world.stream))
        raise AssertionError(f"create_topic refused: {err}") from err


async def test_topic_options_read_back(world: World) -> None:
    """The topic reports the partitions and options it was created with."""
    topic = await world.ensure_topic(POLLING_TOPIC)
    assert topic.name == POLLING_TOPIC.name
    assert topic.partitions_count == 2
    assert [p.id for p in topic.partitions] == [0, 1]
    assert topic.compression_algorithm == "gzip"
    assert isinstance(topic.message_expiry, iggy.IggyExpiry.ExpireDuration), topic.message_expiry
    assert topic.message_expiry.duration == datetime.timedelta(hours=1)
    assert isinstance(topic.max_topic_size, iggy.MaxTopicSize.Custom), topic.max_topic_size
    assert topic.max_topic_size.bytes == POLLING_TOPIC.max_size
    explicit = topic.options.to_scalar_dict()
    assert explicit.get("compression_algorithm") == "gzip", explicit
    assert explicit.get("message_expiry") == 3_600_000_000, explicit
    assert explicit.get("max_topic_size") == POLLING_TOPIC.max_size, explicit
    stream = await world.ensure_stream()
    assert POLLING_TOPIC.name in [t.name for t in stream.topics]


async def test_topic_option_catalog(world: World) -> None:
    """The topic option catalog has every key the SDK sends."""
    root = await world.root()
    keys = {spec.key for spec in await root.describe_options("topic")}
    missing = SDK_TOPIC_KEYS - keys
    assert not missing, f"catalog lacks {sorted(missing)}; it has {sorted(keys)}"


async def test_update_and_resize_topic(world: World) -> None:
    """Update a topic's options, add and delete partitions, purge it."""
    topic = await world.ensure_topic(SCRATCH_TOPIC)
    assert topic.partitions_count == 1
    root = await world.root()
    await root.update_topic(
        world.stream,
        SCRATCH_TOPIC.name,
        SCRATCH_TOPIC.name,
        compression_algorithm="gzip",
        message_expiry=iggy.IggyExpiry.ExpireDuration(datetime.timedelta(hours=2)),
    )
    topic = await root.get_topic(world.stream, SCRATCH_TOPIC.name)
    assert topic.compression_algorithm == "gzip"
    assert topic.message_expiry.duration == datetime.timedelta(hours=2)
    await root.create_partitions(world.stream, SCRATCH_TOPIC.name, 2)
    topic = await root.get_topic(world.stream, SCRATCH_TOPIC.name)
    assert [p.id for p in topic.partitions] == [0, 1, 2]
    await root.delete_partitions(world.stream, SCRATCH_TOPIC.name, 1)
    topic = await root.get_topic(world.stream, SCRATCH_TOPIC.name)
    assert [p.id for p in topic.partitions] == [0, 1]
    await root.send_messages(world.stream, SCRATCH_TOPIC.name, 1, [iggy.SendMessage("gone")])
    topic = await root.get_topic(world.stream, SCRATCH_TOPIC.name)
    assert topic.messages_count == 1
    await root.purge_topic(world.stream, SCRATCH_TOPIC.name)
    topic = await root.get_topic(world.stream, SCRATCH_TOPIC.name)
    assert topic.messages_count == 0


async def test_update_stream(world: World) -> None:
    """Rename a stream and rename it back."""
    await world.ensure_stream()
    root = await world.root()
    renamed = world.stream + "-renamed"
    await root.update_stream(world.stream, renamed)
    assert await root.get_stream(world.stream) is None
    stream = await root.get_stream(renamed)
    assert stream is not None and stream.name == renamed
    await root.update_stream(renamed, world.stream)
    assert await root.get_stream(world.stream) is not None
