"""Tiered storage: reading back across the boundary of local disk and bucket.

run.sh starts a third server with [tiered_storage] on, uploading sealed
segments to a versitygw bucket (start_versitygw in lib.sh) and dropping each
local copy as soon as it is uploaded (local_retention_size "0"). The steps
create a topic with 1 MiB segments, send 20 MB through the SDK, wait until
the sealed segments are in the bucket and gone from the server's disk, then
poll every message from offset 0 through the SDK, checking offsets and
payloads: all but the active segment's come from the bucket. Deleting the
stream removes its objects from the bucket.

The SDK's create_topic has no segment_size, so the topic is created with a
raw CREATE_TOPIC (tests/wire.py). Progress is watched on the file system:
the partition directory under the server's data directory
($COMPAT_PY_TIERED_DATA) and the bucket's directory in versitygw's posix root
($COMPAT_PY_TIERED_BUCKET_DIR), where object KEY is the file KEY.
"""

from __future__ import annotations

import asyncio
import glob
import os
import random
import struct

import apache_iggy as iggy
import pytest

import wire
from scenario import CLUSTER, World

SKIP = os.environ.get("COMPAT_PY_TIERED_SKIP", "")
# Tiered storage is not supported in cluster mode; without versitygw outside
# CI, run.sh asks for a skip.
pytestmark = pytest.mark.skipif(
    CLUSTER or bool(SKIP), reason=SKIP or "tiered storage: single-node run only"
)

STREAM = "compat-tiered"
TOPIC = "tiered"
SEGMENT_SIZE = 1 << 20
BATCHES = 200
PER_BATCH = 100
SIZE = 1000
TOTAL = BATCHES * PER_BATCH
WAIT_S = 45.0

# Payloads are a function of the offset, checked without keeping them: the
# offset (8 bytes, little-endian) and a window of a fixed random block.
_BLOCK = random.Random(20).randbytes(1 << 20)


def payload(offset: int) -> bytes:
    """The payload of the message at offset."""
    at = (offset * 7919) % (len(_BLOCK) - SIZE)
    return struct.pack("<Q", offset) + _BLOCK[at : at + SIZE - 8]


class Tiered:
    """The tiered server's address, directories and shared root client."""

    def __init__(self) -> None:
        self.addr = os.environ.get("COMPAT_PY_TIERED_ADDR", "")
        self.data = os.environ.get("COMPAT_PY_TIERED_DATA", "")
        self.bucket_dir = os.environ.get("COMPAT_PY_TIERED_BUCKET_DIR", "")
        self.prefix = os.environ.get("COMPAT_PY_TIERED_PREFIX", "")
        self._root: iggy.IggyClient | None = None

    async def root(self) -> iggy.IggyClient:
        """The root client of the tiered server, connected on first use."""
        if not self.addr:
            error = os.environ.get("COMPAT_PY_TIERED_ERROR")
            raise AssertionError(error or "COMPAT_PY_TIERED_ADDR not set by run.sh")
        if self._root is None:
            self._root = await World(self.addr).root_connection()
        return self._root

    def local_logs(self) -> list[str]:
        """The segment logs on the server's disk (the only partition's)."""
        pattern = os.path.join(self.data, "streams", "*", "topics", "*", "partitions", "*", "*.log")
        return sorted(glob.glob(pattern))

    def bucket_objects(self, suffix: str) -> list[str]:
        """The keys of the bucket's segment objects ending in suffix."""
        root = os.path.join(self.bucket_dir, self.prefix, "streams")
        found = glob.glob(os.path.join(root, "**", "*" + suffix), recursive=True)
        return sorted(os.path.relpath(p, self.bucket_dir) for p in found)


TIERED = Tiered()


def start_offset(path: str) -> int:
    """The first offset of a segment file or object ({start:020}.log)."""
    return int(os.path.basename(path).split(".")[0])


async def test_create_topic_with_small_segments() -> None:
    """Create a topic with 1 MiB segments on the tiered server."""
    root = await TIERED.root()
    await root.create_stream(STREAM)
    await root.send_binary_request(
        wire.CREATE_TOPIC, wire.create_topic(STREAM, TOPIC, 1, segment_size=SEGMENT_SIZE)
    )
    topic = await root.get_topic(STREAM, TOPIC)
    assert topic is not None and topic.partitions_count == 1, topic


async def test_send_20_mb() -> None:
    """Send 20 MB in batches of 100 messages to partition 0."""
    root = await TIERED.root()
    for b in range(BATCHES):
        base = b * PER_BATCH
        msgs = [iggy.SendMessage(payload(o)) for o in range(base, base + PER_BATCH)]
        reply = await root.send_messages(STREAM, TOPIC, 0, msgs)
        got = [(c.partition_id, c.base_offset) for c in reply.confirmations]
        assert got == [(0, base)], f"batch {b}: {got}"


async def test_sealed_segments_move_to_the_bucket() -> None:
    """The sealed segments are uploaded and their local copies dropped."""
    await TIERED.root()  # fails at once when the tiered server is missing
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while True:
        local = TIERED.local_logs()
        logs = TIERED.bucket_objects(".log")
        indexes = TIERED.bucket_objects(".index")
        # Done: only the active segment is local, after every segment in
        # the bucket, each of which has its index object.
        if (
            len(local) == 1
            and len(logs) >= 10
            and start_offset(local[0]) > start_offset(logs[-1])
            and [p.removesuffix(".log") for p in logs]
            == [p.removesuffix(".index") for p in indexes]
        ):
            break
        if loop.time() > deadline:
            raise AssertionError(
                f"after {WAIT_S:.0f} s: {len(local)} segment files on the server's disk "
                f"({[os.path.basename(p) for p in local]}), {len(logs)} log and "
                f"{len(indexes)} index objects in the bucket"
            )
        await asyncio.sleep(0.2)


async def test_poll_everything_from_offset_0() -> None:
    """Every message polls back from offset 0, those in the bucket included."""
    root = await TIERED.root()
    nxt = 0
    for _ in range(TOTAL):
        if nxt == TOTAL:
            break
        got = await root.poll_messages(
            STREAM,
            TOPIC,
            consumer=iggy.Consumer.Single(1),
            polling_strategy=iggy.PollingStrategy.Offset(nxt),
            count=1000,
            auto_commit=False,
            partition_id=0,
        )
        assert got, f"no messages at offset {nxt} of {TOTAL}"
        for m in got:
            assert m.offset() == nxt, f"offset {m.offset()} where {nxt} was expected"
            assert m.payload() == payload(nxt), f"payload of offset {nxt} differs"
            nxt += 1
    assert nxt == TOTAL, f"read {nxt} messages, sent {TOTAL}"
    topic = await root.get_topic(STREAM, TOPIC)
    counts = {p.id: p.messages_count for p in topic.partitions}
    assert counts == {0: TOTAL}, counts


async def test_delete_stream_removes_objects() -> None:
    """Deleting the stream removes its objects from the bucket."""
    root = await TIERED.root()
    await root.delete_stream(STREAM)
    assert await root.get_stream(STREAM) is None
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while True:
        left = TIERED.bucket_objects(".log") + TIERED.bucket_objects(".index")
        if not left:
            break
        if loop.time() > deadline:
            raise AssertionError(
                f"after {WAIT_S:.0f} s the bucket still holds {len(left)} objects: {left[:3]}"
            )
        await asyncio.sleep(0.2)
