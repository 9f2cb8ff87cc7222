"""Kafka's default partitioner: murmur2 of the serialized key, made positive, mod partitions.

A transcription of ``org.apache.kafka.common.utils.Utils.murmur2`` / ``Utils.toPositive`` and
``BuiltInPartitioner.partitionForKey`` (Apache Kafka, clients module), with Java's signed
32-bit int arithmetic: a keyed record lands on the same partition as with the Java producer
(and librdkafka's ``murmur2_random`` partitioner).

Unkeyed records are not hashed: :class:`~jetlink.core.kafka.topics.Kafka` places them with a
sticky partitioner (one partition per produce call, rotating between calls), see docs/kafka.md.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SEED", "murmur2", "to_positive", "default_partition"]

SEED = 0x9747B28C
_M = 0x5BD1E995
_R = 24
_MASK = 0xFFFFFFFF


def murmur2(data: bytes, _from_bytes: Any = int.from_bytes) -> int:
    """Kafka's ``Utils.murmur2``: a signed 32-bit int (as Java returns it)."""
    length = len(data)
    h = SEED ^ length
    n4 = length & ~3
    for i in range(0, n4, 4):
        k = (_from_bytes(data[i:i + 4], "little") * _M) & _MASK
        k = ((k ^ (k >> _R)) * _M) & _MASK  # Java's >>> on the unsigned 32-bit pattern
        h = ((h * _M) & _MASK) ^ k
    rest = length & 3
    if rest:
        if rest == 3:
            h ^= data[n4 + 2] << 16
        if rest >= 2:
            h ^= data[n4 + 1] << 8
        h = ((h ^ data[n4]) * _M) & _MASK
    h = ((h ^ (h >> 13)) * _M) & _MASK
    h ^= h >> 15
    return h - 0x1_0000_0000 if h & 0x8000_0000 else h


def to_positive(number: int) -> int:
    """Kafka's ``Utils.toPositive``: ``number & 0x7fffffff`` (not ``abs``: MIN_VALUE maps to 0)."""
    return number & 0x7FFFFFFF


def default_partition(key: bytes, num_partitions: int) -> int:
    """``BuiltInPartitioner.partitionForKey``: ``toPositive(murmur2(key)) % num_partitions``."""
    if num_partitions <= 0:
        raise ValueError("num_partitions must be positive")
    return to_positive(murmur2(key)) % num_partitions
