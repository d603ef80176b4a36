"""TLS: the second server listens with a certificate from make_cert.

The client verifies the certificate against that certificate as CA
(tls_validate_certificate, tls_domain "localhost"); a client trusting a
different CA must be refused, which shows the verification is real.
"""

from __future__ import annotations

import apache_iggy as iggy
import pytest

from scenario import CLUSTER, ROOT_PASSWORD, ROOT_USER, TopicSpec, World

# A cluster run checks the plain-TCP steps only; TLS stays single-node.
pytestmark = pytest.mark.skipif(CLUSTER, reason="TLS: single-node run only")

TLS_TOPIC = TopicSpec("secure", 1)


@pytest.fixture(scope="module")
def tls(world: World) -> World:
    """The scenario's view of the TLS server."""
    return world.tls_world()


async def test_tls_connect_and_login(tls: World) -> None:
    """Connect over TLS, verifying the certificate, and log in."""
    client = tls.client()
    await client.connect()
    await client.ping()
    await client.login_user(ROOT_USER, ROOT_PASSWORD)
    await client.get_streams()


async def test_tls_send_and_poll(tls: World) -> None:
    """Send and poll over TLS."""
    await tls.ensure_topic(TLS_TOPIC)
    root = await tls.root()
    payloads = [f"secure-{i}".encode() for i in range(3)]
    reply = await root.send_messages(
        tls.stream,
        TLS_TOPIC.name,
        iggy.Partitioning.partition_id(0),
        [iggy.SendMessage(p) for p in payloads],
    )
    assert [(c.partition_id, c.base_offset) for c in reply.confirmations] == [(0, 0)]
    got = await root.poll_messages(
        tls.stream,
        TLS_TOPIC.name,
        consumer=iggy.Consumer.Single(31),
        polling_strategy=iggy.PollingStrategy.Next(),
        count=10,
        auto_commit=True,
        partition_id=0,
    )
    assert [(m.offset(), m.payload()) for m in got] == list(enumerate(payloads))


async def test_tls_untrusted_ca_refused(world: World) -> None:
    """A client that trusts another CA cannot connect."""
    other = world.env.get("COMPAT_PY_OTHER_CA")
    assert other, "COMPAT_PY_OTHER_CA not set by run.sh"
    client = world.tls_world(ca_file=other).client()
    with pytest.raises(RuntimeError):
        await client.connect()
        await client.login_user(ROOT_USER, ROOT_PASSWORD)


async def test_tls_cleanup(tls: World) -> None:
    """Delete the TLS stream; it is gone."""
    root = await tls.root()
    await root.delete_stream(tls.stream)
    assert await root.get_stream(tls.stream) is None
