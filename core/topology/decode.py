"""Decoding the objects of topology files: a cluster's server binding keys (URLs and timeouts
by core/live/settings.py's rules), a stream table or JSON StreamConfig (unknown keys, types,
durations, ``domain`` shorthands), the KV objects (``[kv]``, ``[kv_mirrors]``,
``[kv_aggregates]``) as their specs, and the origins (mirror, sources) of a stream with the
cluster each one resolves to.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..config.stream import (
    ExternalStream,
    Placement,
    RePublish,
    StreamConfig,
    StreamConsumerLimits,
    StreamConsumerSource,
    StreamSource,
    SubjectTransformConfig,
)
from ..durations import DURATION_FORMS, DurationError, parse_duration
from ..errors import ApiError, JetlinkError, did_you_mean, value_text
from ..limits import CLUSTER_NAME_RE
from .model import (
    _CONTEXT_NAME_RE,
    _NAME_RE,
    _PATH_KEYS,
    AUTHORIZER_KEYS,
    BINDING_KEYS,
    CLUSTER_RULE,
    DEFAULT_CLUSTER,
    TOP_LEVEL,
    Origin,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..config.kv import KeyValueConfig, KVAggregateConfig, KVMirrorConfig

__all__ = ["is_topology_document"]

def is_topology_document(doc: Any) -> bool:
    """A JSON object with any of the object tables (or ``clusters`` or ``version``) is a
    topology (a StreamConfig has none of these fields)."""
    return isinstance(doc, dict) and any(k in doc for k in TOP_LEVEL)



_AUTHORIZER_MEANING = {
    "authorizer": "a cluster that enforces Kafka ACLs",
    "super_users": "Kafka's super.users, principals the authorizer never refuses",
    "allow_everyone_if_no_acl_found": "Kafka's allow.everyone.if.no.acl.found",
}


def _authorizer_keys(body: dict[str, Any], kind: str, problem: Any
                     ) -> tuple[bool | None, tuple[str, ...] | None, bool | None]:
    """A cluster table's ``authorizer``, ``super_users`` and
    ``allow_everyone_if_no_acl_found`` (model.py AUTHORIZER_KEYS; None: not given or
    refused, each refusal a problem naming its key): kafka clusters only; the booleans
    true or false, the super users an array of principals ``TYPE:NAME`` (Kafka's
    super.users, core/kafka/acls.py ``parse_principal``)."""
    from ..kafka.acls import parse_principal

    out: list[Any] = []
    for key in AUTHORIZER_KEYS:
        value = body.get(key)
        if value is None:
            out.append(None)
            continue
        if kind != "kafka":
            problem(key, f'{key} ({_AUTHORIZER_MEANING[key]}) is for kind = "kafka" clusters')
            value = None
        elif key != "super_users":
            if not isinstance(value, bool):
                problem(key, f"{key} must be true or false, not {value!r}")
                value = None
        elif not isinstance(value, list) or not all(isinstance(u, str) for u in value):
            problem(key, 'super_users must be an array of principals, e.g. ["User:admin"]')
            value = None
        else:
            try:
                value = tuple(dict.fromkeys(parse_principal(u, field=key) for u in value))
            except JetlinkError as err:
                problem(key, f"super_users: {err}")
                value = None
        out.append(value)
    return out[0], out[1], out[2]


def _binding(name: str, body: dict[str, Any], problem: Callable[[str | None, str], None],
             file: str) -> dict[str, Any]:
    """The server binding keys of ``[clusters.<name>]`` that are valid (each bad one is a
    problem naming the key, the value and the rule). URLs and timeouts are checked with the
    rules of ``--server`` / ``--timeout`` (core/live/settings.py). A relative file path
    (``creds``, ``nkey``, the TLS files) is the one beside ``file``, made absolute, as a
    kubeconfig's or a compose file's paths are read: the file applies from any directory."""
    from ..live.settings import parse_servers, parse_timeout

    where = f"[clusters.{name}]"
    out: dict[str, Any] = {}
    for key in BINDING_KEYS:
        if key not in body:
            continue
        value = body[key]
        if key == "tls_first":
            if not isinstance(value, bool):
                problem(key, f"{where} tls_first = {value!r}: must be true or false")
                continue
        elif key == "timeout":
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                problem(key, f"{where} timeout = {value!r}: give seconds (a number) or a "
                        'duration such as "5s" or "500ms"')
                continue
            try:
                parse_timeout(value, f"{where} timeout")
            except JetlinkError as exc:
                problem(key, exc.description)
                continue
        elif not isinstance(value, str) or not value.strip():
            what = {"server": "one or more URLs (nats://host:port, comma-separated)",
                    "context": "a jetlink or natscli context name",
                    "js_domain": "a JetStream domain name"}.get(
                        key, "a file path" if key in _PATH_KEYS else "a string")
            problem(key, f"{where} {key} = {value_text(value)}: must be a non-empty string "
                         f"({what})")
            continue
        elif key == "server":
            try:
                parse_servers(value, f"{where} server")
            except JetlinkError as exc:
                problem(key, exc.description)
                continue
        elif key == "context":
            if not _CONTEXT_NAME_RE.fullmatch(value) or value in (".", ".."):
                problem(key, f"{where} context = {value!r}: invalid context name: a context "
                        'name has 1 to 100 letters, digits, "_", "-" or "."')
                continue
        elif key == "js_domain":
            if not _NAME_RE.fullmatch(value):
                problem(key, f"{where} js_domain = {value!r}: invalid JetStream domain: a "
                        'domain name may contain only letters, digits, "_" and "-"')
                continue
        elif key in _PATH_KEYS and not os.path.isabs(value) and not value.startswith("~"):
            value = os.path.abspath(os.path.join(os.path.dirname(file), value))
        out[key] = value
    if not ("server" in body or "context" in body):
        for key in out:
            problem(key, f"{where} {key} = {out[key]!r} without server or context: a cluster "
                    'is bound to a live server by server = "nats://host:port" or context = '
                    '"NAME"; the other connection keys only refine that binding')
        return {}
    return out


def _format_of(path: str, text: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext == ".toml":
        return "toml"
    if ext == ".json":
        return "json"
    if ext in (".yaml", ".yml"):
        return "yaml"
    return "sniff" if text.lstrip()[:1] in ("{", "[") else "toml"


def _cluster_of(body: Any) -> tuple[str, bool]:
    if isinstance(body, dict) and "cluster" in body:
        value = body["cluster"]
        if not isinstance(value, str):  # refused as no string (decode): no name to look up
            return repr(value), False
        return value, True
    return DEFAULT_CLUSTER, False


# The keys whose value is a time (Go's time.Time): a TOML date-time there is its RFC 3339
# text. Anywhere else a TOML date or time stays what it is, and the field's decoder refuses
# it as the type it is not (Go would: a string field takes no date).
_TIME_KEYS = frozenset({"opt_start_time"})

# A TOML date-time with more than 6 fractional digits: tomllib keeps microseconds only
_LONG_FRACTION = re.compile(
    r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})\.(\d{7,})(?![\d])")


def with_full_fractions(doc: Any, text: str) -> Any:
    """``doc`` (``text`` read by tomllib) with each date-time under a time key whose text
    has more than microseconds (RFC 3339 takes any number of fractional digits; Go's
    time.Time keeps nanoseconds) made its RFC 3339 string with every digit the file gave;
    one that two texts of the file could have made stays as tomllib read it."""
    digits: dict[tuple[str, str, str], set[str]] = {}
    for m in _LONG_FRACTION.finditer(text):
        digits.setdefault((m[1], m[2], m[3][:6]), set()).add(m[3])
    if not digits:
        return doc

    def fix(value: Any, key: str | None) -> Any:
        if isinstance(value, dict):
            return {k: fix(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [fix(v, key) for v in value]
        if key not in _TIME_KEYS or not isinstance(value, _dt.datetime):
            return value
        found = digits.get((value.date().isoformat(), value.strftime("%H:%M:%S"),
                            f"{value.microsecond:06d}"), set())
        if len(found) != 1:
            return value
        offset = value.utcoffset()
        zone = ("" if offset is None else "Z" if offset == _dt.timedelta(0)
                else value.strftime("%z")[:3] + ":" + value.strftime("%z")[3:])
        return f"{value.strftime('%Y-%m-%dT%H:%M:%S')}.{next(iter(found))}{zone}"

    return fix(doc, None)


def _plain(value: Any, key: str | None = None) -> Any:
    """Tables and arrays copied; a TOML date-time under a time key (``opt_start_time``) its
    RFC3339 string."""
    if isinstance(value, dict):
        return {k: _plain(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if key not in _TIME_KEYS:
        return value
    if isinstance(value, _dt.datetime):
        if value.tzinfo is not None and value.utcoffset() == _dt.timedelta(0):
            return value.replace(tzinfo=None).isoformat() + "Z"
        return value.isoformat()
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    return value


def _stream_doc_copy(body: dict[str, Any]) -> dict[str, Any]:
    """A copy of a stream table deep enough for the edits decoding makes (cheaper than
    :func:`_plain`); TOML datetimes (``opt_start_time``) become RFC3339 strings."""
    doc = dict(body)
    for key in ("mirror", "consumer_limits"):
        if isinstance(doc.get(key), dict):
            doc[key] = _plain(doc[key])
    if isinstance(doc.get("sources"), list):
        doc["sources"] = [_plain(s) for s in doc["sources"]]
    return doc


def _plain_table(body: Any, where: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise JetlinkError(f"{where} must be a table")
    return _plain(body)


# JSON field -> nested class (a list of them for "[]"), for the unknown-key check.
_NESTED: dict[type, dict[str, tuple[type, bool]]] = {
    StreamConfig: {
        "placement": (Placement, False),
        "mirror": (StreamSource, False),
        "sources": (StreamSource, True),
        "subject_transform": (SubjectTransformConfig, False),
        "republish": (RePublish, False),
        "consumer_limits": (StreamConsumerLimits, False),
    },
    StreamSource: {
        "subject_transforms": (SubjectTransformConfig, True),
        "external": (ExternalStream, False),
        "consumer": (StreamConsumerSource, False),
    },
}
_EXTRA_KEYS: dict[type, tuple[str, ...]] = {StreamSource: ("domain",)}
_JSON_NAMES: dict[type, tuple[str, ...]] = {}
_DURATIONS = ("max_age", "duplicate_window", "subject_delete_marker_ttl")


def _json_names(cls: type) -> tuple[str, ...]:
    names = _JSON_NAMES.get(cls)
    if names is None:
        import dataclasses

        names = _JSON_NAMES[cls] = tuple(f.metadata["json"] for f in dataclasses.fields(cls))
    return names


def _check_keys(cls: type, doc: Any, path: str) -> None:
    if not isinstance(doc, dict):
        return  # the decoder reports the type
    allowed = _json_names(cls)
    extra = _EXTRA_KEYS.get(cls, ())
    nested = _NESTED.get(cls, {})
    for key, value in doc.items():
        here = f"{path}.{key}" if path else key
        if key not in allowed and key not in extra:
            hint = did_you_mean(key, [*allowed, *extra]) if isinstance(key, str) else None
            raise JetlinkError(f'unknown key "{key}": not a {cls.__name__} field'
                               + (f"; {hint}" if hint else ""), field=here)
        sub = nested.get(key)
        if sub is not None and value is not None:
            sub_cls, is_list = sub
            if is_list and isinstance(value, list):
                for i, item in enumerate(value):
                    _check_keys(sub_cls, item, f"{here}[{i}]")
            elif not is_list:
                _check_keys(sub_cls, value, here)


def _duration(doc: dict[str, Any], key: str, path: str) -> None:
    value = doc.get(key)
    if isinstance(value, str):
        try:
            doc[key] = parse_duration(value)
        except DurationError as exc:
            raise JetlinkError(str(exc), field=path) from None


def _expand_domain(src: Any, path: str) -> None:
    """``domain = "east"`` -> ``external.api = "$JS.east.API"`` in a mirror/source table."""
    if not isinstance(src, dict) or "domain" not in src:
        return
    domain = src.pop("domain")
    if not isinstance(domain, str) or not _NAME_RE.fullmatch(domain):
        raise JetlinkError(
            f"{path}.domain: invalid domain {domain!r}: a domain (cluster) name may contain "
            'only letters, digits, "_" and "-"',
            field=f"{path}.domain",
        )
    api = f"$JS.{domain}.API"
    external = src.get("external")
    if isinstance(external, dict) and external.get("api") not in (None, "", api):
        raise JetlinkError(
            f'{path}: domain "{domain}" contradicts external.api "{external.get("api")}" '
            f'(domain = "{domain}" means external.api = "{api}")',
            field=f"{path}.domain",
        )
    src["external"] = {**(external if isinstance(external, dict) else {}), "api": api}


def _decode_stream(body: Any, key: str, *, allow_cluster: bool) -> tuple[str, StreamConfig]:
    """A stream table (or JSON StreamConfig) -> (cluster, StreamConfig). Raises JetlinkError."""
    if not isinstance(body, dict):
        raise JetlinkError("a stream must be a table/object of StreamConfig fields")
    doc = _stream_doc_copy(body)
    cluster = DEFAULT_CLUSTER
    if allow_cluster and "cluster" in doc:
        cluster = doc.pop("cluster")
        if not isinstance(cluster, str):
            raise JetlinkError("cluster must be a string (a cluster name)", field="cluster")
    if key and "name" not in doc:
        doc["name"] = key
    _check_keys(StreamConfig, doc, "")
    for k in _DURATIONS:
        _duration(doc, k, k)
    limits = doc.get("consumer_limits")
    if isinstance(limits, dict):
        _duration(limits, "inactive_threshold", "consumer_limits.inactive_threshold")
    _expand_domain(doc.get("mirror"), "mirror")
    sources = doc.get("sources")
    if isinstance(sources, list):
        for i, src in enumerate(sources):
            _expand_domain(src, f"sources[{i}]")
    try:
        return cluster, StreamConfig.from_json(doc, strict=True)
    except ApiError as exc:
        # The codec's own errors (10025 invalid JSON: ...): keep code and text, name the field;
        # a duration given a fraction: the forms a file may write it in (a string too)
        if exc.field in _DURATION_PATHS:
            value = _at(doc, exc.field)
            if isinstance(value, float):
                exc.detail = f"{exc.field} = {value!r}: a duration is {DURATION_FORMS}"
            elif not isinstance(value, int) or isinstance(value, bool):  # (true, a date...)
                exc.detail = f"{exc.field} = {value_text(value)}: a duration is {DURATION_FORMS}"
        if exc.field and not exc.detail:  # the value refused, as the file wrote it
            value = _at(doc, exc.field)
            if value is not None:
                exc.detail = f"{exc.field} = {value_text(value)}"
        raise exc from None


_DURATION_PATHS = (*_DURATIONS, "consumer_limits.inactive_threshold")


def _at(doc: dict[str, Any], path: str) -> Any:
    """The value at a dotted ``path`` of ``doc`` (None when absent)."""
    value: Any = doc
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _domain_of(external: ExternalStream | None) -> str | None:
    """The domain named by ``$JS.<domain>.API`` (one name token), else None."""
    if external is None:
        return None
    domain = StreamSource(name="", external=external).domain
    return domain if domain and _NAME_RE.fullmatch(domain) else None


def _origin_location(
    cluster: str,
    origin_cluster: Any,
    domain: str,
    external: ExternalStream | None,
    cluster_field: str,
    domain_field: str,
) -> str:
    """Where a KV mirror/aggregate origin lives: domain, else origin cluster, else here."""
    if origin_cluster is not None and (
        not isinstance(origin_cluster, str) or not CLUSTER_NAME_RE.fullmatch(origin_cluster)
    ):
        raise JetlinkError(
            f"{cluster_field}: invalid cluster name {origin_cluster!r}: {CLUSTER_RULE}",
            field=cluster_field,
        )
    if domain and not _NAME_RE.fullmatch(domain):
        raise JetlinkError(
            f'{domain_field}: invalid domain "{domain}": a domain (cluster) name may contain '
            'only letters, digits, "_" and "-"',
            field=domain_field,
        )
    ext_domain = _domain_of(external)
    named = [v for v in (domain, origin_cluster, ext_domain) if v]
    if len(set(named)) > 1:
        raise JetlinkError(
            f"{cluster_field} / {domain_field} disagree ({', '.join(sorted(set(named)))}): "
            "a cluster is a JetStream domain, name it once",
            field=domain_field,
        )
    return named[0] if named else cluster


def _kv_spec(doc: dict[str, Any], key: str, cluster: str) -> KeyValueConfig:
    from ..config.kv import KeyValueConfig

    _expand_domain(doc.get("mirror"), "mirror")  # legacy KV mirror/sources
    sources = doc.get("sources")
    for i, src in enumerate(sources if isinstance(sources, list) else ()):
        _expand_domain(src, f"sources[{i}]")
    return KeyValueConfig.from_dict(doc, bucket=key)


def _kv_mirror_spec(doc: dict[str, Any], key: str, cluster: str) -> KVMirrorConfig:
    from ..config.kv import KVMirrorConfig

    origin_cluster = doc.pop("origin_cluster", None)
    spec = KVMirrorConfig.from_dict(doc, name=key)
    where = _origin_location(
        cluster, origin_cluster, spec.domain, spec.external, "origin_cluster", "domain"
    )
    if where != cluster and not spec.domain and spec.external is None:
        spec.domain = where  # a cluster is a JetStream domain
    return spec


def _kv_aggregate_spec(doc: dict[str, Any], key: str, cluster: str) -> KVAggregateConfig:
    from ..config.kv import KVAggregateConfig

    origin_clusters: list[Any] = []
    origins = doc.get("origins")
    if isinstance(origins, list):
        doc["origins"] = []
        for item in origins:
            if isinstance(item, dict):
                item = dict(item)
                origin_clusters.append(item.pop("cluster", None))
            else:
                origin_clusters.append(None)
            doc["origins"].append(item)
    spec = KVAggregateConfig.from_dict(doc, bucket=key)
    for i, (origin, oc) in enumerate(zip(spec.origins, origin_clusters, strict=False)):
        where = _origin_location(
            cluster, oc, origin.domain, origin.external,
            f"origins[{i}].cluster", f"origins[{i}].domain",
        )
        if where != cluster and not origin.domain and origin.external is None:
            origin.domain = where
    return spec


def _kv_stream_name(bucket: str) -> str:
    """config/kv.py ``kv_stream_name`` (imported when a topology declares KV objects)."""
    from ..config.kv import kv_stream_name

    return kv_stream_name(bucket)


def _kv_mirror_stream_name(name: str) -> str:
    """config/kv.py ``KVMirrorConfig.stream_name``: ``KV_<name>``, or the name as given when
    it has the prefix already (the stream the mirror is, as a bucket's is ``KV_<bucket>``:
    one identity for duplicates and origins across the KV tables)."""
    from ..config.kvnames import bucket_of_stream

    return name if bucket_of_stream(name) is not None else _kv_stream_name(name)


# KV table -> (key naming the object, its stream name from that, the spec decoder), in the
# order the tables are read.
_KV_TABLES: dict[str, tuple[str, Callable[[str], str], Callable[..., Any]]] = {
    "kv": ("bucket", _kv_stream_name, _kv_spec),
    "kv_mirrors": ("name", _kv_mirror_stream_name, _kv_mirror_spec),
    "kv_aggregates": ("bucket", _kv_stream_name, _kv_aggregate_spec),
}


def _stream_origins(cfg: StreamConfig, cluster: str) -> list[Origin]:
    out = []
    items = [("mirror", cfg.mirror, True)] if cfg.mirror is not None else []
    items += [(f"sources[{i}]", s, False) for i, s in enumerate(cfg.sources)]
    for path, src, is_mirror in items:
        if src is None or not src.name:
            continue
        where: str | None = cluster
        if src.external is not None:
            where = _domain_of(src.external)  # None: an API prefix that names no domain
        out.append(Origin(path, src.name, where, is_mirror, src.filter_subject))
    return out
