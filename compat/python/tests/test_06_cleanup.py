"""Deleting everything the scenario created and checking it is gone.

Runs after the other plain-TCP steps: token, user, consumer group, topics,
stream, in that order.
"""

from __future__ import annotations

import asyncio
import os

import apache_iggy as iggy
import pytest

import wire
from scenario import CLUSTER, GROUP_TOPIC, POLLING_TOPIC, ROUTING_TOPIC, SCRATCH_TOPIC, World


@pytest.mark.skipif(not CLUSTER, reason="cluster runs only")
async def test_record_partition_map(world: World) -> None:
    """Cluster run: record the partition map while the topics exist."""
    command = world.env.get("COMPAT_CLUSTER_MAP_CMD")
    assert command, "COMPAT_CLUSTER_MAP_CMD not set by run.sh"
    proc = await asyncio.create_subprocess_exec(
        "bash", "-c", command, stderr=asyncio.subprocess.PIPE, env=dict(os.environ)
    )
    _, err = await proc.communicate()
    assert proc.returncode == 0, f"partition map command failed: {err.decode().strip()}"


async def test_delete_personal_access_token(world: World) -> None:
    """Delete the token; it is no longer listed nor accepted."""
    root = await world.root()
    await root.send_binary_request(wire.DELETE_PERSONAL_ACCESS_TOKEN, wire.name(world.pat_name))
    tokens = wire.parse_pats(await root.send_binary_request(wire.GET_PERSONAL_ACCESS_TOKENS, b""))
    assert world.pat_name not in tokens, tokens
    assert world.pat_token, "no token was created earlier"
    client = world.client(auto_login=iggy.AutoLogin.personal_access_token(world.pat_token))
    with pytest.raises(RuntimeError) as err:
        await client.connect()
    assert "Invalid personal access token" in str(err.value), str(err.value)


async def test_delete_user(world: World) -> None:
    """Delete the user; it is gone and cannot log in."""
    root = await world.root()
    await root.delete_user(world.user)
    assert await root.get_user(world.user) is None
    assert world.user not in [u.username for u in await root.get_users()]
    with pytest.raises(RuntimeError) as err:
        await world.login(world.user, world.user_password)
    assert "Invalid credentials" in str(err.value), str(err.value)


async def test_delete_consumer_group(world: World) -> None:
    """Delete the consumer group; it is gone."""
    root = await world.root()
    await root.delete_consumer_group(world.stream, GROUP_TOPIC.name, world.group)
    assert await root.get_consumer_group(world.stream, GROUP_TOPIC.name, world.group) is None
    assert await root.get_consumer_groups(world.stream, GROUP_TOPIC.name) == []


async def test_delete_topics(world: World) -> None:
    """Delete the topics; they are gone."""
    root = await world.root()
    for spec in (POLLING_TOPIC, ROUTING_TOPIC, GROUP_TOPIC, SCRATCH_TOPIC):
        await root.delete_topic(world.stream, spec.name)
        assert await root.get_topic(world.stream, spec.name) is None, spec.name
    assert await root.get_topics(world.stream) == []


async def test_delete_stream(world: World) -> None:
    """Delete the stream; it is gone."""
    root = await world.root()
    await root.delete_stream(world.stream)
    assert await root.get_stream(world.stream) is None
    assert world.stream not in [s.name for s in await root.get_streams()]
