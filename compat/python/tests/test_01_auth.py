"""Logging in: password, refused credentials, personal access tokens.

apache-iggy 0.9.0 can log in with a token (AutoLogin.personal_access_token)
but has no call to create or list tokens; those go through the SDK's
send_binary_request with CREATE/GET_PERSONAL_ACCESS_TOKEN(S).
"""

from __future__ import annotations

import apache_iggy as iggy
import pytest

import wire
from scenario import ROOT_PASSWORD, ROOT_USER, World


async def test_login_with_password(world: World) -> None:
    """Log in with username and password."""
    client = world.client()
    await client.connect()
    await client.ping()
    await client.login_user(ROOT_USER, ROOT_PASSWORD)
    streams = await client.get_streams()
    assert isinstance(streams, list)


async def test_wrong_password_refused(world: World) -> None:
    """A wrong password is refused with InvalidCredentials."""
    client = world.client()
    await client.connect()
    with pytest.raises(RuntimeError) as err:
        await client.login_user(ROOT_USER, "not-the-password")
    assert "Invalid credentials" in str(err.value), str(err.value)


async def test_call_before_login_refused(world: World) -> None:
    """A read before login is refused by the server with Unauthenticated.

    The typed calls refuse client-side before login, so GET_STREAMS goes out
    raw to reach the server.
    """
    client = world.client(reconnect=True)
    await client.connect()
    with pytest.raises(RuntimeError) as err:
        await client.send_binary_request(wire.GET_STREAMS, b"")
    assert "Unauthenticated" in str(err.value), str(err.value)


async def test_create_personal_access_token(world: World) -> None:
    """Create a personal access token and find it in the token list."""
    root = await world.root()
    reply = await root.send_binary_request(
        wire.CREATE_PERSONAL_ACCESS_TOKEN, wire.create_pat(world.pat_name, 0)
    )
    token = wire.parse_raw_token(reply)
    assert len(token) >= 16, f"token {token!r} looks too short"
    world.pat_token = token
    tokens = wire.parse_pats(await root.send_binary_request(wire.GET_PERSONAL_ACCESS_TOKENS, b""))
    assert world.pat_name in tokens, tokens
    assert tokens[world.pat_name] == 0, "expiry 0 (server default) should never expire"


async def test_login_with_personal_access_token(world: World) -> None:
    """Log in with the token on a new connection, as the token's user."""
    assert world.pat_token, "no token from the previous step"
    client = world.client(auto_login=iggy.AutoLogin.personal_access_token(world.pat_token))
    await client.connect()
    await client.get_streams()
    me = wire.parse_me_user_id(await client.send_binary_request(wire.GET_ME, b""))
    root = await world.root()
    root_id = wire.parse_me_user_id(await root.send_binary_request(wire.GET_ME, b""))
    assert me == root_id, f"token session belongs to user {me}, root is {root_id}"


async def test_bad_token_refused(world: World) -> None:
    """A made-up token is refused at connect."""
    client = world.client(auto_login=iggy.AutoLogin.personal_access_token("x" * 44))
    with pytest.raises(RuntimeError) as err:
        await client.connect()
    assert "Invalid personal access token" in str(err.value), str(err.value)


async def test_server_stats(world: World) -> None:
    """get_stats decodes and reports a running server."""
    root = await world.root()
    stats = await root.get_stats()
    assert stats.process_id > 0
    assert stats.iggy_server_version, "empty server version"
    assert stats.clients_count >= 1
    assert stats.total_memory > 0


async def test_logout(world: World) -> None:
    """After logout the same connection is unauthenticated."""
    client = await world.root_connection()
    await client.logout_user()
    with pytest.raises(RuntimeError) as err:
        await client.get_streams()
    assert "Unauthenticated" in str(err.value), str(err.value)
