"""Topology files: many clusters, streams, KV objects and Kafka objects declared together,
checked as a whole.

``jetlink validate FILE...`` reads every file into ONE :class:`Topology` and reports every
:class:`Problem` it finds (it never stops at the first one). File kinds:

* a JSON StreamConfig, or a StreamInfo (``nats stream info --json``): one stream in cluster
  ``local``; a JSON array of those: several streams;
* a topology, TOML or JSON, with the top-level tables ``version``, ``clusters``, ``streams``,
  ``kv``, ``kv_mirrors``, ``kv_aggregates``, ``topics``, ``links``, ``mirror_topics``,
  ``acls`` (a JSON
  object holding any of these keys is a topology; any other JSON object is a stream config).
  The format is in docs/topology.md.

A NATS cluster may be bound to a live server (``[clusters.west] server = "nats://..."`` or
``context = "NAME"``, with natscli's other connection keys: :data:`BINDING_KEYS`,
``TopologyCluster.binding``); the keys are checked here (URLs and timeouts by
core/live/settings.py's rules), resolved by :mod:`.bindings` and connected by :mod:`.live`.
A bound cluster holds no Kafka objects.

Kafka objects (``topics``, ``links``, ``mirror_topics``, ``acls``) are :class:`TopologyObject`
of kind ``topic`` / ``link`` / ``mirror_topic`` / ``acl`` whose ``spec`` is a
:class:`TopicSpec`, :class:`LinkSpec`, :class:`MirrorTopicSpec` or :class:`AclSpec` (``config``
None, no origins; an ACL's name is its binding, :func:`acl_identity`). They are kept in
``Topology.kafka`` keyed by (kind, cluster, name), never in ``Topology.streams``; the stream
checks pass them by. Their rules are the engine's own (core/kafka: topic names, partitions and
configs; LinkConfig.build; the mirror topic rules of Mirrors.create); their problems have
err_code 0 (the field holds NATS numbers) and end with the Kafka error's name and number,
``(INVALID_CONFIG 40)``, as jetlink prints engine errors.

Checks, in this order (problems are then sorted by file and object):

1. parsing: unreadable files and TOML/JSON syntax (err_code 0, with line and column);
   unknown keys, wrong types, bad durations (err_code 0, or the server's 10025 for a JSON
   type mismatch); bad server binding keys; undeclared clusters; duplicate definitions of
   one stream in one cluster; Kafka objects in a cluster bound to a NATS server.
2. each object's own rules: KV objects become their streams (``config.kv``), then every
   stream goes through the server's checks (``config.validate.stream_config_problems``: a
   STREAM.CREATE's unless the stream exists, then ``check_stream_config``'s) with a lookup
   of the streams of its cluster, and EVERY problem of the object is reported, the server's
   first one first;
   errors on KV objects name the KV field (``history``, ``origins[0].keys[1]``...). Kafka
   objects are checked against their own rules as they are loaded (every problem of one
   object, not only the first: name, partitions, configs).
3. whole-topology rules, which also reach across clusters (domains), where a single server
   cannot see:
   - a mirror or source whose origin is not declared in its cluster: a WARNING (in
     ``topo.warnings``, never a reason to fail: the server accepts such a stream and its
     mirror or source waits), 10059 ``stream not found: ...``, naming the stream and the
     cluster; ``stream add`` words it the same way (:func:`missing_origin_text`);
   - a KV mirror whose origin bucket lacks ``allow_direct`` (client error, err_code 0);
   - a mirror (10030) or source (10046) with a max_msg_size smaller than its origin's;
   - subjects of two streams of one cluster overlapping: 10065 on the later object;
   - mirror/source cycles: 10052 ``detected cycle: A -> B -> A`` on each stream of the cycle;
   - RePublish loops (ADR-28's "Loop Prevention" caution): stream X republishes into
     subjects stored by stream Y, and so on back to X: 10052 ``stream configuration for republish
     destination forms a cycle: X -> Y -> X (...)`` on each stream of the loop;
   - Kafka: a link's source cluster must be declared; a mirror topic's link must be declared
     in its cluster, in DESTINATION mode; its name is the link's prefix + the source topic,
     which must be declared (topic or mirror topic) in the link's source cluster; no topic of
     its name in its cluster; topic names of one cluster must not collide ('.' vs '_').
   A whole-topology problem that restates an object's own error (the server sees local
   cycles and message sizes too) replaces it with the more detailed text instead of
   repeating it.

Standard library only.

The package's modules: :mod:`.model` (constants, Problem, the objects, the Kafka specs, how a
problem names a KV field), :mod:`.decode` (stream, KV and binding decoding),
:mod:`.kafka_specs` (the Kafka objects and their own rules), :mod:`.load` (reading files into
a Topology), :mod:`.checks` (validation), :mod:`.subject_index` (the subject index the
overlap check uses), :mod:`.export` (a topology as a document); this module re-exports their
public names. Topology as code (``jetlink apply`` / ``export``) sits above them, imported by
its own module name: :mod:`.plan` (the planner), :mod:`.apply` (making a plan's changes),
:mod:`.stored` (what is stored, as a document), :mod:`.embedded` (a data directory's
clusters), :mod:`.bindings` (where bound clusters live) and :mod:`.live` (live servers'
clusters).
"""

from __future__ import annotations

from .checks import check_files, republish_image, validate_files, validate_topology
from .decode import is_topology_document
from .export import kv_table, object_table, stream_table, to_document
from .load import Topology, load_files, load_topology
from .model import (
    BINDING_KEYS,
    CLUSTER_KEYS,
    CLUSTER_KINDS,
    DEFAULT_CLUSTER,
    FORMAT_VERSION,
    KAFKA_KINDS,
    KIND_OF_TABLE,
    OBJECT_TABLES,
    TEXT_CYCLE,
    TEXT_REPUBLISH_CYCLE,
    TOP_LEVEL,
    LinkSpec,
    MirrorTopicSpec,
    Origin,
    Problem,
    TopicSpec,
    TopologyCluster,
    TopologyObject,
    kv_field,
)
from .subject_index import SubjectIndex

__all__ = [
    "BINDING_KEYS",
    "CLUSTER_KEYS",
    "CLUSTER_KINDS",
    "DEFAULT_CLUSTER",
    "FORMAT_VERSION",
    "KAFKA_KINDS",
    "KIND_OF_TABLE",
    "OBJECT_TABLES",
    "TEXT_CYCLE",
    "TEXT_REPUBLISH_CYCLE",
    "TOP_LEVEL",
    "LinkSpec",
    "MirrorTopicSpec",
    "Origin",
    "Problem",
    "SubjectIndex",
    "TopicSpec",
    "Topology",
    "TopologyCluster",
    "TopologyObject",
    "check_files",
    "is_topology_document",
    "kv_field",
    "kv_table",
    "load_files",
    "load_topology",
    "object_table",
    "republish_image",
    "stream_table",
    "to_document",
    "validate_files",
    "validate_topology",
]
