"""A consumer group through the SDK's high-level consumer.

Each of the two partitions holds ten messages. Member A joins alone,
consumes six messages and stores the offset of each one it consumed
(AutoCommit.Disabled + store_offset, batch_length 1, so nothing is polled
beyond what is committed). Member B then joins on its own connection: the
group rebalances, and the two members must together consume exactly the
fourteen messages not yet committed, none of the committed six again.
"""

from __future__ import annotations

import asyncio
import datetime
import types

import apache_iggy as iggy
import pytest

import wire
from scenario import GROUP_TOPIC, World

PER_PARTITION = 10
BEFORE_REBALANCE = 6
ALL = {(p, o) for p in range(2) for o in range(PER_PARTITION)}
WAIT_S = 20.0


def payload(partition: int, offset: int) -> bytes:
    """The payload sent to this partition at this offset."""
    return f"group-{partition}-{offset}".encode()


@pytest.fixture(scope="module")
def state() -> types.SimpleNamespace:
    """Consumers and what they consumed, carried from step to step."""
    return types.SimpleNamespace(members={}, committed=set(), after=[])


async def group_consumer(world: World) -> tuple[iggy.IggyClient, iggy.IggyConsumer]:
    """A new connection and a high-level group consumer on it (joins at creation)."""
    client = await world.root_connection()
    consumer = await client.consumer_group(
        world.group,
        world.stream,
        GROUP_TOPIC.name,
        polling_strategy=iggy.PollingStrategy.Next(),
        batch_length=1,
        auto_commit=iggy.AutoCommit.Disabled(),
        create_consumer_group_if_not_exists=False,
        poll_interval=datetime.timedelta(milliseconds=20),
        polling_retry_interval=datetime.timedelta(milliseconds=100),
    )
    return client, consumer


async def consume_one(consumer: iggy.IggyConsumer, it, timeout: float | None) -> tuple[int, int]:
    """Takes the next message, checks its payload and stores its offset."""
    try:
        msg = await asyncio.wait_for(it.__anext__(), timeout)
    except TimeoutError:
        raise AssertionError(f"no message within {timeout} s") from None
    key = (msg.partition_id(), msg.offset())
    assert msg.payload() == payload(*key), (key, msg.payload())
    await consumer.store_offset(msg.offset(), msg.partition_id())
    return key


async def members(world: World) -> dict[int, list[int]]:
    """Member id -> owned partitions, as get_consumer_group reports them."""
    root = await world.root()
    details = await root.get_consumer_group(world.stream, GROUP_TOPIC.name, world.group)
    assert details is not None, "consumer group not found"
    assert details.members_count == len(details.members)
    return {m.id: sorted(m.partitions) for m in details.members}


async def test_create_consumer_group(world: World) -> None:
    """Create a consumer group on a topic holding ten messages per partition."""
    await world.ensure_topic(GROUP_TOPIC)
    root = await world.root()
    for p in range(2):
        batch = [iggy.SendMessage(payload(p, o)) for o in range(PER_PARTITION)]
        await root.send_messages(
            world.stream, GROUP_TOPIC.name, iggy.Partitioning.partition_id(p), batch
        )
    await root.create_consumer_group(world.stream, GROUP_TOPIC.name, world.group)
    details = await root.get_consumer_group(world.stream, GROUP_TOPIC.name, world.group)
    assert details is not None
    assert (details.name, details.partitions_count, details.members_count) == (world.group, 2, 0)
    listed = await root.get_consumer_groups(world.stream, GROUP_TOPIC.name)
    assert [g.name for g in listed] == [world.group]


async def test_first_member_consumes_and_stores(world: World, state) -> None:
    """One member joins, owns both partitions and consumes with stored offsets."""
    client, consumer = await group_consumer(world)
    it = consumer.iter_messages()
    state.members["a"] = (client, consumer, it)
    assert list((await members(world)).values()) == [[0, 1]]
    for _ in range(BEFORE_REBALANCE):
        state.committed.add(await consume_one(consumer, it, WAIT_S))
    assert len(state.committed) == BEFORE_REBALANCE, state.committed
    for p in range(2):
        done = [o for q, o in state.committed if q == p]
        stored = await world.stored_offset(wire.CONSUMER_GROUP, world.group, GROUP_TOPIC.name, p)
        if done:
            assert stored is not None and stored.stored_offset == max(done), (p, stored)
            assert sorted(done) == list(range(len(done))), f"partition {p} skipped: {done}"


async def test_second_member_joins_and_rebalances(world: World, state) -> None:
    """A second member joins; the partitions are split between the two."""
    assert "a" in state.members, "first member missing"
    client, consumer = await group_consumer(world)
    state.members["b"] = (client, consumer, consumer.iter_messages())
    owned = await members(world)
    assert len(owned) == 2, owned
    assert sorted(p for parts in owned.values() for p in parts) == [0, 1], owned
    assert all(len(parts) == 1 for parts in owned.values()), owned


async def test_group_resumes_from_stored_offsets(world: World, state) -> None:
    """Both members consume the rest: nothing committed repeats, nothing is lost."""
    assert len(state.members) == 2, "members missing"
    want = len(ALL) - len(state.committed)
    enough = asyncio.Event()

    async def drain(name: str) -> None:
        # No per-message timeout: cancelling a poll in flight could drop a
        # message the consumer already took. The tasks are cancelled once
        # everything arrived or the step's wait is over.
        _, consumer, it = state.members[name]
        while True:
            key = await consume_one(consumer, it, None)
            state.after.append((name, key))
            if len(state.after) >= want:
                enough.set()

    tasks = [asyncio.create_task(drain(name)) for name in ("a", "b")]
    waiter = asyncio.create_task(enough.wait())
    try:
        await asyncio.wait([waiter, *tasks], timeout=WAIT_S, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (waiter, *tasks):
            task.cancel()
        await asyncio.gather(waiter, *tasks, return_exceptions=True)
    for task in tasks:
        if not task.cancelled() and task.exception() is not None:
            raise task.exception()
    got = [key for _, key in state.after]
    repeated = sorted(set(got) & state.committed)
    assert not repeated, f"committed messages delivered again: {repeated}"
    assert len(got) == len(set(got)), f"duplicates after rebalance: {sorted(got)}"
    missing = sorted(ALL - state.committed - set(got))
    assert not missing, f"never delivered: {missing}"
    by_member = {name: {p for n, (p, _) in state.after if n == name} for name in ("a", "b")}
    assert all(len(parts) <= 1 for parts in by_member.values()), (
        f"a partition read by both: {by_member}"
    )
    for p in range(2):
        stored = await world.stored_offset(wire.CONSUMER_GROUP, world.group, GROUP_TOPIC.name, p)
        assert stored is not None and stored.stored_offset == PER_PARTITION - 1, (p, stored)


async def test_members_leave(world: World, state) -> None:
    """Members leave the group; a plain join and leave work too."""
    for client, _, _ in state.members.values():
        await client.leave_consumer_group(world.stream, GROUP_TOPIC.name, world.group)
    assert await members(world) == {}
    client = await world.root_connection()
    await client.join_consumer_group(world.stream, GROUP_TOPIC.name, world.group)
    assert list((await members(world)).values()) == [[0, 1]]
    await client.leave_consumer_group(world.stream, GROUP_TOPIC.name, world.group)
    assert await members(world) == {}
