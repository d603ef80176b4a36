"""QUIC, WebSocket and WSS: the same short scenario over each transport.

Over each link the client connects, logs in with a password, creates a
stream and a two-partition topic, sends to partition 1 by partition id,
polls back by offset, stores and reads a consumer offset, and deletes the
stream. The links:

- "quic": the TLS server's QUIC listener, which serves the make_cert
  certificate. QuicConfig has no CA-file option; with
  validate_certificate=True the SDK checks the certificate against the
  platform root store, which run.sh points at the make_cert CA through
  SSL_CERT_FILE. So this link verifies the certificate and server name.
- "ws": the plain server's WebSocket listener.
- "wss": the TLS server's WebSocket listener serving WSS with the make_cert
  certificate, verified against that CA (WebSocketConfig.tls_ca_file).

Besides, the plain server's QUIC listener (ephemeral self-signed
certificate) is reached with the SDK's skip-verification option, and
refused when verification is on; WSS trusting another CA is refused.

IggyClient has no store/get consumer offset calls, so those two go raw
through send_binary_request over the link under test (tests/wire.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import apache_iggy as iggy
import pytest

import wire
from scenario import CLUSTER, ROOT_PASSWORD, ROOT_USER, World

# A cluster run checks the plain-TCP steps only; QUIC and WebSocket stay single-node.
pytestmark = pytest.mark.skipif(CLUSTER, reason="QUIC and WebSocket: single-node run only")

TOPIC = "transported"
PARTITION = 1
PAYLOADS = [f"over-the-wire-{i}".encode() for i in range(5)]
CONSUMER_ID = 7
STORED = 3


@dataclasses.dataclass
class Link:
    """One transport to one server, with its own stream and root client."""

    label: str
    stream: str
    make: Callable[[], iggy.IggyClient]
    root: iggy.IggyClient | None = None

    async def login(self) -> iggy.IggyClient:
        """A new connection over this link, logged in as root."""
        client = self.make()
        await client.connect()
        await client.login_user(ROOT_USER, ROOT_PASSWORD)
        return client

    async def client(self) -> iggy.IggyClient:
        """The link's shared root client, connected on first use."""
        if self.root is None:
            self.root = await self.login()
        return self.root

    async def ensure_topic(self) -> iggy.TopicDetails:
        """The link's stream and topic, created if an earlier step did not."""
        root = await self.client()
        if await root.get_stream(self.stream) is None:
            await root.create_stream(self.stream)
        topic = await root.get_topic(self.stream, TOPIC)
        if topic is None:
            await root.create_topic(self.stream, TOPIC, 2)
            topic = await root.get_topic(self.stream, TOPIC)
        assert topic is not None, f"topic missing right after create over {self.label}"
        return topic


def _addr(env: dict, key: str) -> str:
    value = env.get(key)
    assert value, f"{key} not set by run.sh (server did not report the listener?)"
    return value


def quic_client(addr: str, verify: bool) -> iggy.IggyClient:
    """A QUIC client without reconnection, verifying the certificate or not."""
    return iggy.IggyClient(
        iggy.QuicConfig(
            server_address=addr,
            server_name="localhost",
            validate_certificate=verify,
            reconnection=iggy.QuicReconnectionConfig(enabled=False),
        )
    )


def ws_client(addr: str, ca_file: str | None = None) -> iggy.IggyClient:
    """A WebSocket client without reconnection; WSS verifying against
    ca_file when one is given."""
    tls: dict = {}
    if ca_file is not None:
        tls = dict(
            tls_enabled=True,
            tls_domain="localhost",
            tls_ca_file=ca_file,
            tls_validate_certificate=True,
        )
    return iggy.IggyClient(
        iggy.WebSocketConfig(
            server_address=addr,
            reconnection=iggy.WebSocketReconnectionConfig(enabled=False),
            **tls,
        )
    )


@pytest.fixture(scope="module")
def links(world: World) -> dict[str, Link]:
    """The three links, built lazily from the addresses run.sh exported."""
    env = world.env
    return {
        "quic": Link(
            "QUIC",
            "compat-python-quic",
            lambda: quic_client(_addr(env, "COMPAT_PY_QUIC_TLS_ADDR"), verify=True),
        ),
        "ws": Link(
            "WebSocket", "compat-python-ws", lambda: ws_client(_addr(env, "COMPAT_PY_WS_ADDR"))
        ),
        "wss": Link(
            "WSS",
            "compat-python-wss",
            lambda: ws_client(
                _addr(env, "COMPAT_PY_WSS_ADDR"), ca_file=_addr(env, "COMPAT_PY_TLS_CA")
            ),
        ),
    }


async def connect_and_login(link: Link) -> None:
    """Connect, ping, log in with the password and list streams."""
    client = link.make()
    await client.connect()
    await client.ping()
    await client.login_user(ROOT_USER, ROOT_PASSWORD)
    assert isinstance(await client.get_streams(), list)
    if link.root is None:
        link.root = client


async def create_stream_and_topic(link: Link) -> None:
    """Create the stream and a two-partition topic and read them back."""
    root = await link.client()
    await root.create_stream(link.stream)
    await root.create_topic(link.stream, TOPIC, 2)
    stream = await root.get_stream(link.stream)
    assert stream is not None and stream.name == link.stream, stream
    assert [t.name for t in stream.topics] == [TOPIC], [t.name for t in stream.topics]
    topic = await root.get_topic(link.stream, TOPIC)
    assert topic is not None and [p.id for p in topic.partitions] == [0, 1], topic


async def send_and_poll(link: Link) -> None:
    """Send to partition 1 by id and poll back by offset."""
    await link.ensure_topic()
    root = await link.client()
    reply = await root.send_messages(
        link.stream,
        TOPIC,
        iggy.Partitioning.partition_id(PARTITION),
        [iggy.SendMessage(p) for p in PAYLOADS],
    )
    got = [(c.partition_id, c.base_offset) for c in reply.confirmations]
    assert got == [(PARTITION, 0)], got
    topic = await root.get_topic(link.stream, TOPIC)
    counts = {p.id: p.messages_count for p in topic.partitions}
    assert counts == {0: 0, 1: len(PAYLOADS)}, counts

    async def by_offset(offset: int, count: int) -> list[tuple[int, bytes]]:
        polled = await root.poll_messages(
            link.stream,
            TOPIC,
            consumer=iggy.Consumer.Single(CONSUMER_ID),
            polling_strategy=iggy.PollingStrategy.Offset(offset),
            count=count,
            auto_commit=False,
            partition_id=PARTITION,
        )
        return [(m.offset(), m.payload()) for m in polled]

    assert await by_offset(0, 10) == list(enumerate(PAYLOADS))
    assert await by_offset(2, 2) == [(2, PAYLOADS[2]), (3, PAYLOADS[3])]


async def store_and_get_offset(link: Link) -> None:
    """Store a consumer offset and read it back."""
    await link.ensure_topic()
    root = await link.client()
    await root.send_binary_request(
        wire.STORE_CONSUMER_OFFSET,
        wire.store_consumer_offset(
            wire.CONSUMER_SINGLE, CONSUMER_ID, link.stream, TOPIC, PARTITION, STORED
        ),
    )
    reply = await root.send_binary_request(
        wire.GET_CONSUMER_OFFSET,
        wire.get_consumer_offset(wire.CONSUMER_SINGLE, CONSUMER_ID, link.stream, TOPIC, PARTITION),
    )
    got = wire.parse_consumer_offset(reply)
    want = wire.ConsumerOffset(PARTITION, len(PAYLOADS) - 1, STORED)
    assert got == want, f"got {got}, want {want}"


async def delete_stream(link: Link) -> None:
    """Delete the stream; it is gone."""
    root = await link.client()
    await root.delete_stream(link.stream)
    assert await root.get_stream(link.stream) is None
    assert link.stream not in [s.name for s in await root.get_streams()]


def _checks(key: str, title: str) -> dict[str, Callable]:
    """Named test functions running each step over links[key]."""
    steps = [connect_and_login, create_stream_and_topic, send_and_poll]
    steps += [store_and_get_offset, delete_stream]
    tests: dict[str, Callable] = {}
    for step in steps:

        async def check(links: dict[str, Link], step=step) -> None:
            await step(links[key])

        check.__doc__ = f"{title}: {step.__doc__}"
        check.__name__ = f"test_{key}_{step.__name__}"
        tests[check.__name__] = check
    return tests


globals().update(_checks("quic", "QUIC (certificate verified)"))


async def test_quic_self_signed_skip_verification(world: World) -> None:
    """QUIC, ephemeral self-signed certificate: connect and log in without verification."""
    client = quic_client(_addr(world.env, "COMPAT_PY_QUIC_ADDR"), verify=False)
    await client.connect()
    await client.login_user(ROOT_USER, ROOT_PASSWORD)
    assert isinstance(await client.get_streams(), list)


async def test_quic_untrusted_certificate_refused(world: World) -> None:
    """QUIC with verification on refuses the untrusted ephemeral certificate."""
    client = quic_client(_addr(world.env, "COMPAT_PY_QUIC_ADDR"), verify=True)
    with pytest.raises(RuntimeError) as err:
        await client.connect()
        await client.login_user(ROOT_USER, ROOT_PASSWORD)
    assert "Cannot establish connection" in str(err.value), str(err.value)


globals().update(_checks("ws", "WebSocket"))
globals().update(_checks("wss", "WSS (certificate verified)"))


async def test_wss_untrusted_ca_refused(world: World) -> None:
    """WSS: a client trusting another CA cannot connect."""
    client = ws_client(
        _addr(world.env, "COMPAT_PY_WSS_ADDR"), ca_file=_addr(world.env, "COMPAT_PY_OTHER_CA")
    )
    with pytest.raises(RuntimeError) as err:
        await client.connect()
        await client.login_user(ROOT_USER, ROOT_PASSWORD)
    assert "Cannot establish connection" in str(err.value), str(err.value)
