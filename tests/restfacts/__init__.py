"""Confluent's REST API v3, as facts: the operations jetlink serves and calls, and checkers.

The project holds no copy of Confluent's API descriptions, only what they say, as data, with
the description and commit each fact comes from (``DESCRIPTIONS``):

- ``OPERATIONS`` (operations.py): every operation ``jetlink serve`` answers or the
  ``--rest-url`` client sends, by operation id;
- ``SCHEMAS`` (schemas.py): the documents' schemas, per description.

Where the Cloud and the Platform descriptions differ, both are recorded (a fact's ``differs``;
``SCHEMAS["cloud"]`` / ``SCHEMAS["platform"]``). The checkers below return lists of problems
(empty: the request / answer agrees with the description):

- :func:`request_problems`: a request as a client sends it, checked as strictly as a client
  must be: the operation exists, every query parameter and body field is declared, required
  ones are present, types and enums hold (a server that follows the description ignores an
  undeclared parameter, so a client may never rely on one);
- :func:`response_problems`: an answer: its status is declared, its body has the declared
  schema (required fields present, types, nullability, closed enums; more fields are
  allowed, as JSON Schema allows them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .operations import CLOUD, KAFKA_REST, OPERATIONS, PLATFORM
from .schemas import SCHEMAS

__all__ = [
    "DESCRIPTIONS",
    "OPERATIONS",
    "SCHEMAS",
    "accepting",
    "for_source",
    "match",
    "query_problems",
    "request_problems",
    "response_problems",
    "schema_problems",
]

DESCRIPTIONS = {
    "cloud": ("confluentinc/ccloud-sdk-go-v2", "kafkarest/v3/api/openapi.yaml", CLOUD),
    "platform": ("confluentinc/kafka-rest-sdk-go", "kafkarestv3/api/openapi.yaml", PLATFORM),
    "kafka-rest": ("confluentinc/kafka-rest", "api/v3/openapi.yaml", KAFKA_REST),
}

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "boolean": (bool,), "array": (list,),
    "object": (dict,), "number": (int, float),
}


def for_source(fact: Mapping[str, Any], source: str) -> dict[str, Any]:
    """The fact as ``source``'s description states it (its ``differs`` applied)."""
    if source not in fact["sources"]:
        raise KeyError(f"{fact['operation_id']} is not declared by {source}")
    out = {k: v for k, v in fact.items() if k != "differs"}
    out.update(fact["differs"].get(source, {}))
    return out


def _relative(path: str) -> str:
    """``path`` from ``/clusters`` on (an API root such as ``/kafka/v3`` or ``/v3`` cut)."""
    at = path.find("/clusters")
    return path[at:] if at >= 0 else path


def match(method: str, path: str) -> tuple[dict[str, Any], dict[str, str]] | None:
    """The operation of ``method path`` (a URL path, any API root) and its path parameters;
    the template with the most literal segments wins (``/links/-/mirrors`` before
    ``/links/{link_name}/mirrors``). None: no operation."""
    segments = _relative(path).rstrip("/").split("/")
    best: tuple[int, dict[str, Any], dict[str, str]] | None = None
    for fact in OPERATIONS.values():
        if fact["method"] != method.upper():
            continue
        template = fact["path"].split("/")
        if len(template) != len(segments):
            continue
        params: dict[str, str] = {}
        literal = 0
        for t, s in zip(template, segments, strict=True):
            m = re.fullmatch(r"\{(\w+)\}", t)
            if m:
                if not s:
                    break
                params[m.group(1)] = s
            elif t == s:
                literal += 1
            else:
                break
        else:
            if best is None or literal > best[0]:
                best = (literal, fact, params)
    return None if best is None else (best[1], best[2])


def _type_ok(schema: Mapping[str, Any], value: Any) -> bool:
    kind = schema.get("type")
    if kind is None:
        return True
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    return isinstance(value, _TYPES[kind])


def schema_problems(schema: Mapping[str, Any], value: Any, source: str, where: str = "body",
                    *, strict: bool = False) -> list[str]:
    """How ``value`` breaks ``schema`` (of ``SCHEMAS[source]``); ``strict``: fields the schema
    does not declare are problems too (the client's rule)."""
    if "ref" in schema:
        return schema_problems(SCHEMAS[source][schema["ref"]], value, source, where,
                               strict=strict)
    if value is None:
        return [] if schema.get("nullable") else [f"{where}: null where "
                                                    f"{schema.get('type', 'a value')} is declared"]
    if not _type_ok(schema, value):
        return [f"{where}: {type(value).__name__} {value!r} where {schema['type']} is declared"]
    problems: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where}: {value!r} is not one of {', '.join(schema['enum'])}")
    if schema.get("type") == "array" and "items" in schema:
        for i, item in enumerate(value):
            problems += schema_problems(schema["items"], item, source, f"{where}[{i}]",
                                        strict=strict)
    if schema.get("type") == "object":
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                problems.append(f"{where}: required field {name} is missing")
        for name, item in value.items():
            if name in props:
                problems += schema_problems(props[name], item, source, f"{where}.{name}",
                                            strict=strict)
            elif strict and props:
                problems.append(f"{where}: field {name} is not declared")
    return problems


def _pairs(query: Mapping[str, Any] | Iterable[tuple[str, str]] | None) -> list[tuple[str, str]]:
    if query is None:
        return []
    if isinstance(query, Mapping):
        return [(str(k), str(v)) for k, v in query.items()]
    return [(str(k), str(v)) for k, v in query]


def query_problems(fact: Mapping[str, Any], query: Any, source: str) -> list[str]:
    """How the query string (a mapping or (name, value) pairs) breaks ``fact`` as ``source``
    declares it: undeclared or repeated parameters, a required one missing, a value of the
    wrong type (booleans are ``true`` / ``false``) or outside the enum."""
    declared = for_source(fact, source)["query"]
    pairs = _pairs(query)
    problems: list[str] = []
    seen: set[str] = set()
    for name, value in pairs:
        spec = declared.get(name)
        if spec is None:
            problems.append(f"query parameter {name} is not declared by {fact['operation_id']}")
            continue
        if name in seen:
            problems.append(f"query parameter {name} is given twice")
        seen.add(name)
        kind = spec.get("type")
        if kind == "boolean" and value not in ("true", "false"):
            problems.append(f"query parameter {name}={value!r}: not a boolean")
        elif kind == "integer" and not re.fullmatch(r"-?\d+", value):
            problems.append(f"query parameter {name}={value!r}: not an integer")
        elif "enum" in spec and value not in spec["enum"]:
            problems.append(f"query parameter {name}={value!r}: not one of "
                            f"{', '.join(spec['enum'])}")
    for name, spec in declared.items():
        if spec.get("required") and name not in seen:
            problems.append(f"required query parameter {name} is missing")
    return problems


def request_problems(method: str, path: str, query: Any = None, body: Any = None,
                     *, has_body: bool | None = None) -> dict[str, list[str]]:
    """Per description that declares the operation, how this request breaks it (strict: no
    undeclared parameter or field). An unknown operation is ``{"*": [problem]}``.
    ``has_body``: whether a body was sent (default: ``body is not None``)."""
    found = match(method, path)
    if found is None:
        return {"*": [f"{method} {path}: no operation of the descriptions"]}
    fact, _params = found
    sent = body is not None if has_body is None else has_body
    out: dict[str, list[str]] = {}
    for source in fact["sources"]:
        problems = query_problems(fact, query, source)
        schema = for_source(fact, source)["body"]
        if schema is None:
            if sent:
                problems.append(f"{fact['operation_id']} declares no request body")
        elif not sent:
            problems.append(f"{fact['operation_id']} needs a request body")
        else:
            problems += schema_problems(schema, body, source, strict=True)
        out[source] = problems
    return out


def response_problems(fact: Mapping[str, Any], status: int, body: Any, source: str,
                      *, content_type: str = "application/json") -> list[str]:
    """How an answer (``status``, the parsed JSON ``body`` or None when empty) breaks
    ``fact`` as ``source`` declares it."""
    responses = for_source(fact, source)["responses"]
    if status in fact.get("observed", {}):
        return [] if body is None else [f"status {status} (observed) has no content"]
    declared = responses.get(status)
    if declared is None and status not in responses and 500 <= status <= 599:
        declared, status_known = responses.get("5XX"), "5XX" in responses
    else:
        status_known = status in responses
    if not status_known:
        listed = ", ".join(str(s) for s in responses)
        return [f"{fact['operation_id']}: status {status} is not declared ({listed})"]
    options = declared if isinstance(declared, tuple) else (declared,)
    attempts: list[list[str]] = []
    for option in options:
        if option is None:
            attempts.append([] if body is None else [f"status {status} declares no content"])
        elif option == "text":
            attempts.append([] if content_type.startswith("text/")
                            else [f"status {status} declares text"])
        else:
            attempts.append(schema_problems({"ref": option}, body, source,
                                            where=f"{status} {option}"))
    return min(attempts, key=len)


def accepting(problems: Mapping[str, list[str]]) -> list[str]:
    """The descriptions under which there was no problem."""
    return [source for source, found in problems.items() if not found]
