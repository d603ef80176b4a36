"""Shared state of the Python compatibility scenario.

The steps run in file order against one plain-TCP server and one TLS server
started by run.sh. ``World`` holds their addresses, the names of everything
the scenario creates, and a logged-in root client reused by the steps. Steps
that need a stream or topic call ``ensure_*`` so that one failed step does
not hide the checks after it.
"""

from __future__ import annotations

import dataclasses
import datetime
import os

import apache_iggy as iggy

import wire

ROOT_USER = "iggy"
ROOT_PASSWORD = "iggy"

# A cluster run (run.sh cluster): COMPAT_PY_ADDR is a node of a cluster and
# only the plain-TCP steps run; TLS, QUIC and WebSocket stay with the
# single-node run and are skipped here, not failed.
CLUSTER = bool(os.environ.get("COMPAT_CLUSTER"))

HOUR = datetime.timedelta(hours=1)
GIB = 1 << 30


@dataclasses.dataclass(frozen=True)
class TopicSpec:
    """A topic the scenario creates, with the options it asks for."""

    name: str
    partitions: int
    compression: str | None = None
    expiry: datetime.timedelta | None = None
    max_size: int | None = None

    def sdk_kwargs(self) -> dict:
        """Keyword arguments for IggyClient.create_topic."""
        kwargs: dict = {}
        if self.compression is not None:
            kwargs["compression_algorithm"] = self.compression
        if self.expiry is not None:
            kwargs["message_expiry"] = iggy.IggyExpiry.ExpireDuration(self.expiry)
        if self.max_size is not None:
            kwargs["max_topic_size"] = iggy.MaxTopicSize.Custom(self.max_size)
        return kwargs

    def raw_body(self, stream: str) -> bytes:
        """The same topic as a raw CREATE_TOPIC body, with only the option keys of
        ../shared/protocol/encodings.md (no durability keys)."""
        expiry_us = None
        if self.expiry is not None:
            expiry_us = self.expiry // datetime.timedelta(microseconds=1)
        return wire.create_topic(
            stream, self.name, self.partitions, self.compression, expiry_us, self.max_size
        )


# The topic created with options (step "create a topic with options").
POLLING_TOPIC = TopicSpec("polling", 2, compression="gzip", expiry=HOUR, max_size=2 * GIB)
# Partitioning checks (balanced / messages key).
ROUTING_TOPIC = TopicSpec("routing", 3)
# Consumer-group checks.
GROUP_TOPIC = TopicSpec("grouped", 2)
# Topic updates, partition changes and purge.
SCRATCH_TOPIC = TopicSpec("scratch", 1)


class World:
    """One server's address, the scenario's names and a shared root client."""

    stream = "compat-python"
    group = "compat-group"
    user = "compat-limited"
    user_password = "Limited-Pass-1"
    pat_name = "compat-pat"

    def __init__(self, addr: str, tls: dict | None = None, env: dict | None = None):
        self.addr = addr
        self.tls = tls or {}
        self.env = env or {}
        self.pat_token: str | None = None
        self._root: iggy.IggyClient | None = None

    @classmethod
    def from_env(cls) -> World:
        """The plain-TCP world, from the addresses run.sh exported."""
        return cls(os.environ["COMPAT_PY_ADDR"], env=dict(os.environ))

    def tls_world(self, ca_file: str | None = None) -> World:
        """The same scenario against the TLS server, verifying its
        certificate against ca_file (default: the server's own CA)."""
        addr = self.env.get("COMPAT_PY_TLS_ADDR")
        ca = ca_file or self.env.get("COMPAT_PY_TLS_CA")
        assert addr and ca, "COMPAT_PY_TLS_ADDR / COMPAT_PY_TLS_CA not set by run.sh"
        tls = dict(
            tls_enabled=True, tls_domain="localhost", tls_ca_file=ca, tls_validate_certificate=True
        )
        return World(addr, tls, self.env)

    def client(
        self, auto_login: iggy.AutoLogin | None = None, reconnect: bool = False
    ) -> iggy.IggyClient:
        """A new, not yet connected client of this world's server.

        Reconnection is off by default so that a dropped or evicted
        connection surfaces as an error of the step instead of being retried
        away. With it off, though, the SDK reports a server's Unauthenticated
        (status 40, eviction 11) as "Disconnected"; reconnect=True allows one
        quick redial so that such steps see the SDK's "Unauthenticated".
        """
        if reconnect:
            policy = iggy.TcpReconnectionConfig(
                enabled=True, max_retries=1, interval=datetime.timedelta(milliseconds=100)
            )
        else:
            policy = iggy.TcpReconnectionConfig(enabled=False)
        config = iggy.TcpConfig(
            server_address=self.addr,
            auto_login=auto_login,
            reconnection=policy,
            **self.tls,
        )
        return iggy.IggyClient(config)

    async def login(self, username: str, password: str) -> iggy.IggyClient:
        """A new connection logged in with login_user."""
        client = self.client()
        await client.connect()
        await client.login_user(username, password)
        return client

    async def root(self) -> iggy.IggyClient:
        """The shared root client, connected on first use."""
        if self._root is None:
            self._root = await self.root_connection()
        return self._root

    async def root_connection(self) -> iggy.IggyClient:
        """A new, separate connection logged in as root."""
        return await self.login(ROOT_USER, ROOT_PASSWORD)

    async def ensure_stream(self) -> iggy.StreamDetails:
        """Returns the scenario stream, creating it if an earlier step did not."""
        root = await self.root()
        stream = await root.get_stream(self.stream)
        if stream is None:
            await root.create_stream(self.stream)
            stream = await root.get_stream(self.stream)
        assert stream is not None, "stream missing right after create_stream"
        return stream

    async def ensure_topic(self, spec: TopicSpec) -> iggy.TopicDetails:
        """Returns the topic, creating it with create_topic, or, if the SDK
        call is refused, with the equivalent raw CREATE_TOPIC so later steps
        still run (the refusal itself fails the topic step)."""
        await self.ensure_stream()
        root = await self.root()
        topic = await root.get_topic(self.stream, spec.name)
        if topic is None:
            try:
                await root.create_topic(
                    self.stream, spec.name, spec.partitions, **spec.sdk_kwargs()
                )
            except RuntimeError:
                await root.send_binary_request(wire.CREATE_TOPIC, spec.raw_body(self.stream))
            topic = await root.get_topic(self.stream, spec.name)
        assert topic is not None, f"topic {spec.name} missing right after create"
        return topic

    async def stored_offset(
        self, kind: int, ident: str | int, topic: str, partition_id: int
    ) -> wire.ConsumerOffset | None:
        """The server-side stored offset, read with a raw GET_CONSUMER_OFFSET."""
        root = await self.root()
        reply = await root.send_binary_request(
            wire.GET_CONSUMER_OFFSET,
            wire.get_consumer_offset(kind, ident, self.stream, topic, partition_id),
        )
        return wire.parse_consumer_offset(reply)
