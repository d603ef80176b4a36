"""Sending with each partitioning and polling with each strategy.

Partition 1 of the "polling" topic gets ten messages in two batches sent
apart in time; the poll steps read them back by offset, first, last, next
and timestamp and check payloads and offsets.
"""

from __future__ import annotations

import asyncio

import apache_iggy as iggy

import wire
from scenario import POLLING_TOPIC, ROUTING_TOPIC, World

PARTITION = 1
PAYLOADS = [f"poll-{i}".encode() for i in range(10)]
Offset = iggy.PollingStrategy.Offset


def messages(payloads: list[bytes]) -> list[iggy.SendMessage]:
    """Wraps payloads as SendMessage values."""
    return [iggy.SendMessage(p) for p in payloads]


async def poll(
    client: iggy.IggyClient,
    topic: str,
    strategy: iggy.PollingStrategy,
    count: int,
    consumer: iggy.Consumer | None = None,
    auto_commit: bool = False,
    partition_id: int = PARTITION,
    stream: str = World.stream,
) -> list[tuple[int, bytes]]:
    """Polls and returns (offset, payload) pairs."""
    got = await client.poll_messages(
        stream,
        topic,
        consumer=consumer or iggy.Consumer.Single(1),
        polling_strategy=strategy,
        count=count,
        auto_commit=auto_commit,
        partition_id=partition_id,
    )
    return [(m.offset(), m.payload()) for m in got]


def expect(offsets: range) -> list[tuple[int, bytes]]:
    """The (offset, payload) pairs partition 1 holds at these offsets."""
    return [(i, PAYLOADS[i]) for i in offsets]


async def test_send_to_partition_id(world: World) -> None:
    """Send two batches to an explicit partition id."""
    await world.ensure_topic(POLLING_TOPIC)
    root = await world.root()
    first = await root.send_messages(
        world.stream,
        POLLING_TOPIC.name,
        iggy.Partitioning.partition_id(PARTITION),
        messages(PAYLOADS[:5]),
    )
    await asyncio.sleep(0.05)  # the second batch gets a later server timestamp
    second = await root.send_messages(
        world.stream, POLLING_TOPIC.name, PARTITION, messages(PAYLOADS[5:])
    )
    got = [(c.partition_id, c.base_offset) for c in first.confirmations + second.confirmations]
    assert got == [(PARTITION, 0), (PARTITION, 5)], got
    topic = await root.get_topic(world.stream, POLLING_TOPIC.name)
    counts = {p.id: p.messages_count for p in topic.partitions}
    assert counts == {0: 0, 1: 10}, counts


async def test_send_balanced(world: World) -> None:
    """Balanced sends go round-robin over the partitions."""
    await world.ensure_topic(ROUTING_TOPIC)
    root = await world.root()
    placed = []
    for i in range(3):
        payloads = [f"balanced-{i}-{j}".encode() for j in range(2)]
        reply = await root.send_messages(
            world.stream, ROUTING_TOPIC.name, iggy.Partitioning.balanced(), messages(payloads)
        )
        assert len(reply.confirmations) == 1, reply.confirmations
        conf = reply.confirmations[0]
        placed.append((conf.partition_id, conf.base_offset, payloads))
    assert sorted(p for p, _, _ in placed) == [0, 1, 2], placed
    for partition, base, payloads in placed:
        got = await poll(root, ROUTING_TOPIC.name, Offset(base), 2, partition_id=partition)
        assert got == [(base, payloads[0]), (base + 1, payloads[1])], (partition, got)


async def test_send_messages_key(world: World) -> None:
    """Sends with the same messages key land in the same partition."""
    await world.ensure_topic(ROUTING_TOPIC)
    root = await world.root()
    placed = []
    for i in range(2):
        payload = f"keyed-{i}".encode()
        reply = await root.send_messages(
            world.stream,
            ROUTING_TOPIC.name,
            iggy.Partitioning.messages_key("customer-7"),
            messages([payload]),
        )
        conf = reply.confirmations[0]
        placed.append((conf.partition_id, conf.base_offset, payload))
    assert placed[0][0] == placed[1][0], placed
    assert placed[1][1] == placed[0][1] + 1, placed
    for partition, offset, payload in placed:
        got = await poll(root, ROUTING_TOPIC.name, Offset(offset), 1, partition_id=partition)
        assert got == [(offset, payload)], got


async def test_producer_send(world: World) -> None:
    """The high-level producer sends to a bound stream and topic."""
    await world.ensure_topic(ROUTING_TOPIC)
    root = await world.root()
    producer = await root.producer(
        world.stream,
        ROUTING_TOPIC.name,
        partitioning=iggy.Partitioning.partition_id(2),
        create_stream_if_not_exists=False,
        create_topic_if_not_exists=False,
    )
    async with producer:
        reply = await producer.send(
            [iggy.SendMessage("produced-0"), iggy.SendMessage("produced-1")]
        )
    assert len(reply.confirmations) == 1, reply.confirmations
    conf = reply.confirmations[0]
    assert conf.partition_id == 2
    got = await poll(root, ROUTING_TOPIC.name, Offset(conf.base_offset), 2, partition_id=2)
    assert got == [(conf.base_offset, b"produced-0"), (conf.base_offset + 1, b"produced-1")], got


async def test_poll_by_offset(world: World) -> None:
    """Poll by offset returns the messages from that offset on."""
    root = await world.root()
    assert await poll(root, POLLING_TOPIC.name, Offset(3), 4) == expect(range(3, 7))
    assert await poll(root, POLLING_TOPIC.name, Offset(8), 10) == expect(range(8, 10))
    assert await poll(root, POLLING_TOPIC.name, Offset(10), 5) == []


async def test_poll_first(world: World) -> None:
    """Poll first returns the oldest messages."""
    root = await world.root()
    assert await poll(root, POLLING_TOPIC.name, iggy.PollingStrategy.First(), 3) == expect(
        range(0, 3)
    )


async def test_poll_last(world: World) -> None:
    """Poll last returns the newest messages."""
    root = await world.root()
    assert await poll(root, POLLING_TOPIC.name, iggy.PollingStrategy.Last(), 2) == expect(
        range(8, 10)
    )


async def test_poll_by_timestamp(world: World) -> None:
    """Poll by timestamp starts at the first message at or after it."""
    root = await world.root()
    got = await root.poll_messages(
        world.stream,
        POLLING_TOPIC.name,
        consumer=iggy.Consumer.Single(1),
        polling_strategy=iggy.PollingStrategy.First(),
        count=10,
        auto_commit=False,
        partition_id=PARTITION,
    )
    stamps = [m.timestamp() for m in got]
    assert len(stamps) == 10, stamps
    assert stamps[4] < stamps[5], f"second batch not later: {stamps}"
    from_second = await poll(
        root, POLLING_TOPIC.name, iggy.PollingStrategy.Timestamp(stamps[5]), 10
    )
    assert from_second == expect(range(5, 10))
    from_start = await poll(root, POLLING_TOPIC.name, iggy.PollingStrategy.Timestamp(stamps[0]), 3)
    assert from_start == expect(range(0, 3))
    assert (
        await poll(root, POLLING_TOPIC.name, iggy.PollingStrategy.Timestamp(stamps[9] + 1), 3) == []
    )


async def test_poll_next_with_auto_commit(world: World) -> None:
    """Next with auto-commit resumes after the committed offset, also on a new connection."""
    root = await world.root()
    reader = iggy.Consumer.Single(11)
    nxt = iggy.PollingStrategy.Next()
    assert await poll(root, POLLING_TOPIC.name, nxt, 4, reader, auto_commit=True) == expect(
        range(0, 4)
    )
    stored = await world.stored_offset(wire.CONSUMER_SINGLE, 11, POLLING_TOPIC.name, PARTITION)
    assert stored is not None and stored.stored_offset == 3, stored
    assert await poll(root, POLLING_TOPIC.name, nxt, 4, reader, auto_commit=True) == expect(
        range(4, 8)
    )
    other = await world.root_connection()
    assert await poll(other, POLLING_TOPIC.name, nxt, 10, reader, auto_commit=True) == expect(
        range(8, 10)
    )
    stored = await world.stored_offset(wire.CONSUMER_SINGLE, 11, POLLING_TOPIC.name, PARTITION)
    assert stored == wire.ConsumerOffset(PARTITION, 9, 9), stored
    assert await poll(other, POLLING_TOPIC.name, nxt, 10, reader, auto_commit=True) == []


async def test_poll_without_auto_commit_stores_nothing(world: World) -> None:
    """A poll without auto-commit leaves no stored offset."""
    root = await world.root()
    reader = iggy.Consumer.Single(12)
    assert await poll(root, POLLING_TOPIC.name, iggy.PollingStrategy.Next(), 2, reader) == expect(
        range(0, 2)
    )
    assert (
        await world.stored_offset(wire.CONSUMER_SINGLE, 12, POLLING_TOPIC.name, PARTITION) is None
    )
    assert await poll(root, POLLING_TOPIC.name, iggy.PollingStrategy.Next(), 2, reader) == expect(
        range(0, 2)
    )


async def test_poll_by_offset_with_auto_commit(world: World) -> None:
    """An auto-committed offset poll by a named consumer moves its Next position."""
    root = await world.root()
    reader = iggy.Consumer.Single("compat-reader")
    assert await poll(root, POLLING_TOPIC.name, Offset(5), 2, reader, auto_commit=True) == expect(
        range(5, 7)
    )
    stored = await world.stored_offset(
        wire.CONSUMER_SINGLE, "compat-reader", POLLING_TOPIC.name, PARTITION
    )
    assert stored is not None and stored.stored_offset == 6, stored
    assert await poll(root, POLLING_TOPIC.name, iggy.PollingStrategy.Next(), 2, reader) == expect(
        range(7, 9)
    )
