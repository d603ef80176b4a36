"""Users and permissions.

The limited user may read the scenario stream (which includes reading its
topics and polling) and nothing else. Denied calls must fail with the
SDK's text for code 41, "Unauthorized" (../shared/protocol/errors.md), and
leave the connection usable.
"""

from __future__ import annotations

import apache_iggy as iggy
import pytest

import wire
from scenario import POLLING_TOPIC, World


def limited_permissions(stream_id: int) -> iggy.Permissions:
    """No global permission; read access to one stream."""
    return iggy.Permissions(
        iggy.GlobalPermissions(),
        {stream_id: iggy.StreamPermissions(read_stream=True)},
    )


@pytest.fixture(scope="module")
def session() -> dict:
    """The limited user's logged-in client, shared by the steps."""
    return {}


async def limited(world: World, session: dict) -> iggy.IggyClient:
    """The limited user's client, logged in on first use."""
    if "client" not in session:
        session["client"] = await world.login(world.user, world.user_password)
    return session["client"]


async def test_create_user_with_permissions(world: World) -> None:
    """Create a user that may only read the scenario stream."""
    stream = await world.ensure_stream()
    await world.ensure_topic(POLLING_TOPIC)
    root = await world.root()
    perms = limited_permissions(stream.id)
    created = await root.create_user(world.user, world.user_password, iggy.UserStatus.Active, perms)
    assert created.username == world.user
    assert created.status == iggy.UserStatus.Active
    assert created.permissions == perms, created.permissions


async def test_read_user_back(world: World) -> None:
    """The user and its permissions read back unchanged."""
    stream = await world.ensure_stream()
    root = await world.root()
    user = await root.get_user(world.user)
    assert user is not None
    assert user.username == world.user
    assert user.permissions == limited_permissions(stream.id), user.permissions
    assert world.user in [u.username for u in await root.get_users()]


async def test_limited_user_logs_in_and_reads(world: World, session) -> None:
    """The limited user logs in, reads its stream and polls."""
    client = await limited(world, session)
    stream = await client.get_stream(world.stream)
    assert stream is not None and stream.name == world.stream
    got = await client.poll_messages(
        world.stream,
        POLLING_TOPIC.name,
        consumer=iggy.Consumer.Single(21),
        polling_strategy=iggy.PollingStrategy.First(),
        count=1,
        auto_commit=False,
        partition_id=1,
    )
    assert [m.offset() for m in got] == [0], [m.offset() for m in got]


async def denied(call) -> None:
    """Awaits call and checks it fails with Unauthorized."""
    with pytest.raises(RuntimeError) as err:
        await call
    assert "Unauthorized" in str(err.value), f"want Unauthorized, got {err.value!r}"


async def test_send_denied(world: World, session) -> None:
    """Sending without the permission is refused with Unauthorized."""
    client = await limited(world, session)
    await denied(
        client.send_messages(world.stream, POLLING_TOPIC.name, 0, [iggy.SendMessage("nope")])
    )
    await client.ping()
    assert await client.get_stream(world.stream) is not None, "connection unusable after the denial"


async def test_create_stream_denied(world: World, session) -> None:
    """Creating a stream without the permission is refused with Unauthorized."""
    client = await limited(world, session)
    await denied(client.create_stream("compat-forbidden"))
    root = await world.root()
    assert await root.get_stream("compat-forbidden") is None


async def test_read_users_denied(world: World, session) -> None:
    """Listing users without the permission is refused with Unauthorized."""
    client = await limited(world, session)
    await denied(client.get_users())


async def test_update_permissions(world: World, session) -> None:
    """Granting send_messages lets the same user send."""
    stream = await world.ensure_stream()
    root = await world.root()
    grant = iggy.Permissions(
        iggy.GlobalPermissions(),
        {stream.id: iggy.StreamPermissions(read_stream=True, send_messages=True)},
    )
    await root.update_permissions(world.user, grant)
    user = await root.get_user(world.user)
    assert user is not None and user.permissions == grant, user and user.permissions
    client = await world.login(world.user, world.user_password)
    reply = await client.send_messages(
        world.stream, POLLING_TOPIC.name, 0, [iggy.SendMessage("granted")]
    )
    assert [c.partition_id for c in reply.confirmations] == [0]


async def test_change_password(world: World) -> None:
    """After a password change only the new password logs in."""
    root = await world.root()
    new_password = world.user_password + "-new"
    await root.change_password(world.user, world.user_password, new_password)
    with pytest.raises(RuntimeError) as err:
        await world.login(world.user, world.user_password)
    assert "Invalid credentials" in str(err.value), str(err.value)
    world.user_password = new_password
    await world.login(world.user, world.user_password)


async def test_inactive_user_refused(world: World) -> None:
    """An inactive user cannot log in by password or token; reactivated, it can.

    The reference refuses an inactive user's password login as invalid
    credentials (eviction 9) and its token login with eviction 11
    (../shared/design/semantics.md §2), which the SDK maps to Unauthenticated.
    """
    own = await world.login(world.user, world.user_password)
    token = wire.parse_raw_token(
        await own.send_binary_request(
            wire.CREATE_PERSONAL_ACCESS_TOKEN, wire.create_pat("limited-pat", 0)
        )
    )
    root = await world.root()
    await root.update_user(world.user, status=iggy.UserStatus.Inactive)
    user = await root.get_user(world.user)
    assert user is not None and user.status == iggy.UserStatus.Inactive
    with pytest.raises(RuntimeError) as err:
        await world.login(world.user, world.user_password)
    assert "Invalid credentials" in str(err.value), str(err.value)
    by_token = world.client(iggy.AutoLogin.personal_access_token(token), reconnect=True)
    with pytest.raises(RuntimeError) as err:
        await by_token.connect()
    assert "Unauthenticated" in str(err.value), str(err.value)
    await root.update_user(world.user, status=iggy.UserStatus.Active)
    await world.login(world.user, world.user_password)
    by_token = world.client(auto_login=iggy.AutoLogin.personal_access_token(token))
    await by_token.connect()
    await by_token.get_stream(world.stream)
