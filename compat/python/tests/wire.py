"""Byte encoders and decoders for the few commands the scenario sends raw.

apache-iggy 0.9.0 has no Python API for personal access tokens, consumer
offsets (IggyClient has neither a store nor a get call) or GET_ME, so the
scenario reaches them through the SDK's own
``IggyClient.send_binary_request(code, payload)``, which frames the request,
strips the result section and raises on an error status. The layouts follow
../shared/protocol/encodings.md and commands.md; everything is little-endian.
"""

from __future__ import annotations

import dataclasses
import struct

# Command codes (commands.md, summary table).
GET_ME = 20
GET_PERSONAL_ACCESS_TOKENS = 41
CREATE_PERSONAL_ACCESS_TOKEN = 42
DELETE_PERSONAL_ACCESS_TOKEN = 43
GET_CONSUMER_OFFSET = 120
STORE_CONSUMER_OFFSET = 121
GET_STREAMS = 201
CREATE_TOPIC = 302

# Header value kinds used in option blocks (encodings.md, header kinds).
KIND_STRING = 2
KIND_UINT64 = 12

CONSUMER_SINGLE = 1
CONSUMER_GROUP = 2


def name(text: str) -> bytes:
    """Encodes a Name: [len u8][UTF-8 bytes]."""
    raw = text.encode()
    if not 1 <= len(raw) <= 255:
        raise ValueError(f"name {text!r} must be 1..255 bytes")
    return bytes([len(raw)]) + raw


def identifier(value: str | int) -> bytes:
    """Encodes an Identifier: kind 1 numeric (u32) or kind 2 string."""
    if isinstance(value, int):
        return bytes([1, 4]) + struct.pack("<I", value)
    raw = value.encode()
    return bytes([2, len(raw)]) + raw


def consumer(kind: int, ident: str | int) -> bytes:
    """Encodes a Consumer: [kind u8][Identifier]."""
    return bytes([kind]) + identifier(ident)


def opt_partition(partition_id: int | None) -> bytes:
    """Encodes an OptPartition: [flag u8][u32], always 5 bytes."""
    if partition_id is None:
        return bytes(5)
    return b"\x01" + struct.pack("<I", partition_id)


def option(key: str, kind: int, value: bytes) -> bytes:
    """Encodes one options-TLV entry with a String key."""
    raw_key = key.encode()
    return (
        bytes([KIND_STRING])
        + struct.pack("<I", len(raw_key))
        + raw_key
        + bytes([kind])
        + struct.pack("<I", len(value))
        + value
    )


def create_topic(
    stream: str | int,
    topic: str,
    partitions: int,
    compression: str | None = None,
    expiry_us: int | None = None,
    max_size: int | None = None,
    segment_size: int | None = None,
) -> bytes:
    """Encodes a CREATE_TOPIC body with only the option keys listed in
    ../shared/protocol/encodings.md (no durability keys)."""
    body = identifier(stream) + struct.pack("<I", partitions) + name(topic)
    if compression is not None:
        body += option("compression_algorithm", KIND_STRING, compression.encode())
    if expiry_us is not None:
        body += option("message_expiry", KIND_UINT64, struct.pack("<Q", expiry_us))
    if max_size is not None:
        body += option("max_topic_size", KIND_UINT64, struct.pack("<Q", max_size))
    if segment_size is not None:
        body += option("segment_size", KIND_UINT64, struct.pack("<Q", segment_size))
    return body


def create_pat(token_name: str, expiry_us: int) -> bytes:
    """Encodes CREATE_PERSONAL_ACCESS_TOKEN: [name][expiry u64 µs, 0 = default]."""
    return name(token_name) + struct.pack("<Q", expiry_us)


def parse_raw_token(payload: bytes) -> str:
    """Decodes the CREATE_PERSONAL_ACCESS_TOKEN reply: [len u8][token]."""
    if not payload:
        raise ValueError("empty token reply")
    size = payload[0]
    if len(payload) != 1 + size:
        raise ValueError(f"token reply is {len(payload)} bytes, length byte says {size}")
    return payload[1:].decode()


def parse_pats(payload: bytes) -> dict[str, int]:
    """Decodes GET_PERSONAL_ACCESS_TOKENS: [name][expiry_at u64]* to the end."""
    tokens: dict[str, int] = {}
    pos = 0
    while pos < len(payload):
        size = payload[pos]
        token_name = payload[pos + 1 : pos + 1 + size].decode()
        pos += 1 + size
        (expiry_at,) = struct.unpack_from("<Q", payload, pos)
        pos += 8
        tokens[token_name] = expiry_at
    return tokens


def get_consumer_offset(
    kind: int, ident: str | int, stream: str | int, topic: str | int, partition_id: int
) -> bytes:
    """Encodes GET_CONSUMER_OFFSET: [consumer][stream][topic][OptPartition]."""
    return (
        consumer(kind, ident) + identifier(stream) + identifier(topic) + opt_partition(partition_id)
    )


def store_consumer_offset(
    kind: int,
    ident: str | int,
    stream: str | int,
    topic: str | int,
    partition_id: int,
    offset: int,
    ack: int = 1,
) -> bytes:
    """Encodes STORE_CONSUMER_OFFSET:
    [consumer][stream][topic][OptPartition][offset u64][ack u8], ack 1 = Quorum."""
    return (
        consumer(kind, ident)
        + identifier(stream)
        + identifier(topic)
        + opt_partition(partition_id)
        + struct.pack("<QB", offset, ack)
    )


@dataclasses.dataclass(frozen=True)
class ConsumerOffset:
    """The GET_CONSUMER_OFFSET reply."""

    partition_id: int
    current_offset: int
    stored_offset: int


def parse_consumer_offset(payload: bytes) -> ConsumerOffset | None:
    """Decodes the 20-byte offset reply; an empty body means none stored."""
    if not payload:
        return None
    if len(payload) != 20:
        raise ValueError(f"consumer offset reply is {len(payload)} bytes, want 20")
    return ConsumerOffset(*struct.unpack("<IQQ", payload))


def parse_me_user_id(payload: bytes) -> int:
    """Returns the user_id of a GET_ME ClientDetails reply (bytes 4..8)."""
    if len(payload) < 8:
        raise ValueError(f"GET_ME reply is {len(payload)} bytes")
    return struct.unpack_from("<I", payload, 4)[0]
