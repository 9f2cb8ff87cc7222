"""A small JSON codec for config dataclasses, behaving like Go's encoding/json on NATS types.

Each dataclass field carries ``metadata={"json": name, "go": go_type, "omitempty": bool}``
(use :func:`jfield`). Decoding checks JSON types the way Go does and reports the server's
``invalid JSON`` error (10025) with Go's wording; ``null`` leaves the zero value, as in Go.
Encoding keeps the struct's field order and drops ``omitempty`` zero values.
"""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from ..errors import ApiError, json_default, nats_error

T = TypeVar("T")

# Go integer ranges by type name.
_INT_RANGES = {
    "int": (-(2**63), 2**63 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "time.Duration": (-(2**63), 2**63 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint64": (0, 2**64 - 1),
    "uint8": (0, 255),
}


def invalid_json(detail: str, *, field: str | None = None) -> ApiError:
    """10025 ``invalid JSON: <go error>``: the server's answer to an undecodable request."""
    return nats_error("InvalidJSON", err=detail, field=field)


def jfield(
    json_name: str,
    go_type: str,
    default: Any = dataclasses.MISSING,
    *,
    omitempty: bool = False,
    factory: Callable[[], Any] | None = None,
    enum: tuple[str, ...] | None = None,
) -> Any:
    meta = {"json": json_name, "go": go_type, "omitempty": omitempty, "enum": enum}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    if value is None:
        return "null"
    return type(value).__name__


class JsonNumber(float):
    """A JSON number written with a fraction or an exponent (``1e3``, ``5.0``), as written:
    Go's ``encoding/json`` refuses it for an integer field whatever its value
    (``strconv.ParseInt`` of the literal), and its error quotes the literal."""

    text: str

    def __new__(cls, text: str) -> JsonNumber:
        number = super().__new__(cls, text)
        number.text = text
        return number


def loads(text: str | bytes) -> Any:
    """A JSON document of configurations, its numbers with a fraction or an exponent kept as
    written (:class:`JsonNumber`); ValueError (errors.py TOO_DEEP) for one nested deeper
    than any configuration (core/limits.py ``nested_deeper``), however deep."""
    from ..errors import TOO_DEEP
    from ..limits import nested_deeper

    try:
        doc = json.loads(text, parse_float=JsonNumber)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None
    if nested_deeper(doc):
        raise ValueError(TOO_DEEP)
    return doc


def _type_error(value: Any, struct: str, path: str, go: str, *, number: bool = False) -> ApiError:
    kind = _json_kind(value)
    if number:
        kind = f"number {getattr(value, 'text', value)}"
    err = invalid_json(
        f"json: cannot unmarshal {kind} into Go struct field {struct}.{path} of type {go}",
        field=path,
    )
    err.detail = _rule_of(path, go)
    return err


def _rule_of(path: str, go: str) -> str | None:
    """The rule a value of Go type ``go`` breaks, for people (the error's detail; its JSON
    stays the server's): ``max_msgs is a whole number from -9223372036854775808 to ...``."""
    leaf = path.rsplit(".", 1)[-1]
    if go in _INT_RANGES:
        lo, hi = _INT_RANGES[go]
        return f"{leaf} is a whole number from {lo} to {hi}"
    friendly = {"bool": "true or false", "string": "a string",
                "[]string": 'an array of strings, e.g. ["a.>"]'}.get(go)
    return f"{leaf} is {friendly}" if friendly else None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _utf8(value: Any, path: str) -> Any:
    """``value`` (a string of the config) when it is UTF-8 text; one holding a lone
    surrogate (bytes that are not UTF-8 from a command line, a ``\\udcff`` escape of a JSON
    file) is refused, 10025 naming the field, before anything stores it: no later answer
    could be written out (``not_utf8`` on the error: the text, for the CLI to name the
    argument it came from)."""
    bad = _SURROGATE.search(value) if isinstance(value, str) else None
    if bad is not None:
        code = ord(bad.group())
        byte = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"
        err = invalid_json(f"{path}: not UTF-8 text ({byte})", field=path)
        err.not_utf8 = value  # type: ignore[attr-defined]
        raise err
    return value


def _decode_value(value: Any, go: str, hint: Any, struct: str, path: str, enum: Any, strict: bool):
    _utf8(value, path)
    if go in _INT_RANGES:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _type_error(value, struct, path, go)
        lo, hi = _INT_RANGES[go]
        if isinstance(value, float):  # a fraction or an exponent: never an integer in Go
            raise _type_error(value, struct, path, go, number=True)
        ivalue = int(value)
        if not lo <= ivalue <= hi:
            raise _type_error(value, struct, path, go, number=True)
        return ivalue
    if go == "bool":
        if not isinstance(value, bool):
            raise _type_error(value, struct, path, go)
        return value
    if go == "string":
        if not isinstance(value, str):
            raise _type_error(value, struct, path, go)
        return value
    if go in ("enum", "enum_fold"):
        # enum_fold: any case (DiscardPolicy's UnmarshalJSON: strings.ToLower)
        known = value.lower() if isinstance(value, str) and go == "enum_fold" else value
        if not isinstance(known, str) or known not in enum:
            # Go: fmt.Errorf("can not unmarshal %q", rawJSON)
            err = invalid_json(f"can not unmarshal {json.dumps(json.dumps(value))}", field=path)
            err.detail = f"{path.rsplit('.', 1)[-1]} is one of {', '.join(enum)}" + (
                " (any case)" if go == "enum_fold" else "")
            raise err
        return known
    if go == "compression":
        if not isinstance(value, str):
            raise invalid_json(
                f"json: cannot unmarshal {_json_kind(value)} into Go value of type string",
                field=path,
            )
        if value not in enum:
            raise invalid_json("unknown compression algorithm", field=path)
        return value
    if go == "time.Time":
        if not isinstance(value, str):
            raise invalid_json(
                f"json: cannot unmarshal {_json_kind(value)} into Go struct field {struct}.{path}"
                " of type time.Time", field=path)
        problem = rfc3339_error(value)
        if problem:
            raise invalid_json(problem, field=path)
        return value
    if go == "[]string":
        return _decode_strings(value, struct, path)
    if go == "map[string]string":
        return _decode_string_map(value, struct, path)
    # nested struct or list of structs
    if go.startswith("[]"):
        if not isinstance(value, list):
            raise _type_error(value, struct, path, go)
        cls = hint
        out = []
        for i, v in enumerate(value):
            try:
                out.append(decode(cls, v, strict=strict, struct=struct, prefix=f"{path}")
                           if v is not None else cls())
            except ApiError as err:  # Go's text names no index; the field does
                if err.field == path or (err.field or "").startswith(path + "."):
                    err.field = f"{path}[{i}]" + (err.field or "")[len(path):]
                raise
        return out
    if not isinstance(value, dict):
        raise _type_error(value, struct, path, go)
    return decode(hint, value, strict=strict, struct=struct, prefix=path)


def _decode_strings(value: Any, struct: str, path: str) -> list[str]:
    """A Go ``[]string``: a list of UTF-8 strings (the element that is not one named)."""
    if not isinstance(value, list):
        raise _type_error(value, struct, path, "[]string")
    for i, v in enumerate(value):
        if not isinstance(v, str):  # Go names the list; people get the element
            err = _type_error(v, struct, path, "string")
            err.field = f"{path}[{i}]"
            shown = json.dumps(v, default=json_default)  # (a TOML date or time: its text)
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            err.detail = (f"{path.rsplit('.', 1)[-1]}[{i}] is {shown}: "
                          f"{_rule_of(path, '[]string')}")
            raise err
        _utf8(v, f"{path}[{i}]")
    return list(value)


def _decode_string_map(value: Any, struct: str, path: str) -> dict[str, str]:
    """A Go ``map[string]string``: an object of UTF-8 strings, keys and values."""
    if not isinstance(value, dict) or any(not isinstance(v, str) for v in value.values()):
        raise _type_error(value, struct, path, "map[string]string")
    for k, v in value.items():
        _utf8(k, f"{path}.{k}")
        _utf8(v, f"{path}.{k}")
    return dict(value)


def _inner_class(tp: Any) -> Any:
    """The dataclass inside ``X | None`` or ``list[X]``."""
    for arg in typing.get_args(tp) or (tp,):
        if arg is type(None):
            continue
        inner = typing.get_args(arg)
        if inner:
            return _inner_class(arg)
        if dataclasses.is_dataclass(arg):
            return arg
    return None


_SPECS: dict[type, dict[str, tuple[str, str, Any, Any]]] = {}


def _specs(cls: type) -> dict[str, tuple[str, str, Any, Any]]:
    """json name -> (attribute, go type, nested dataclass, enum), computed once per class."""
    spec = _SPECS.get(cls)
    if spec is None:
        hints = typing.get_type_hints(cls)
        spec = {
            f.metadata["json"]: (f.name, f.metadata["go"], _inner_class(hints[f.name]),
                                 f.metadata["enum"])
            for f in dataclasses.fields(cls)
        }
        _SPECS[cls] = spec
    return spec


def require_object(doc: Any, type_name: str) -> dict[str, Any]:
    """``doc`` when it is a JSON object; else the server's 10025 for a request body that is
    not one (``json: cannot unmarshal array into Go value of type server.StreamConfig``)."""
    if not isinstance(doc, dict):
        raise invalid_json(
            f"json: cannot unmarshal {_json_kind(doc)} into Go value of type server.{type_name}")
    return doc


def decode(cls: type[T], doc: Any, *, strict: bool = False, struct: str | None = None,
           prefix: str = "") -> T:
    """Build ``cls`` from a JSON object. ``strict`` refuses unknown fields (server strict mode)."""
    struct = struct or cls.__name__
    require_object(doc, cls.__name__)
    by_json = _specs(cls)
    kwargs: dict[str, Any] = {}
    for key, value in doc.items():
        spec = by_json.get(key)
        if spec is None:
            if strict:
                raise invalid_json(f'json: unknown field "{key}"',
                                   field=f"{prefix}.{key}".lstrip("."))
            continue
        if value is None:
            continue
        attr, go, inner, enum = spec
        path = f"{prefix}.{key}" if prefix else key
        kwargs[attr] = _decode_value(value, go, inner, struct, path, enum, strict)
    obj = cls(**kwargs)
    empty = frozenset(k for k, v in doc.items() if (v == [] or v == {}) and k in by_json)
    if empty:
        # Go keeps `[]` apart from an absent list (nil); the server's equality checks see it.
        object.__setattr__(obj, "_given_empty", empty)
    return obj


class DuplicateKey(ValueError):
    """A JSON object giving ``key`` twice (:func:`one_of_each`)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"key {json.dumps(key)} given twice in one object")
        self.key = key


def one_of_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``' ``object_pairs_hook`` for a document a person writes (a topology
    file, a REST request's body): each key of an object given once, a second refused
    (:class:`DuplicateKey`), never the last one taken silently, as Python's and Java's
    readers take it."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(key)
        out[key] = value
    return out


REQUIRED_LEVEL_KEY = "_nats.req.level"
SERVER_VERSION_KEY = "_nats.ver"
SERVER_LEVEL_KEY = "_nats.level"
# Metadata keys the server sets (jsm.go FilterServerMetadata's list: the versioning keys of
# jetstream_versioning.go and a mirror's or source's consumer's origin): natscli hides them
# and never edits them; a file or a lake export never declares them. Any other key, a
# ``_nats.``-prefixed one of the user's too, is the user's and kept.
SERVER_METADATA_KEYS = frozenset({
    SERVER_VERSION_KEY, SERVER_LEVEL_KEY, REQUIRED_LEVEL_KEY,
    "_nats.mirror.stream", "_nats.mirror.acc", "_nats.mirror.domain",
    "_nats.src.stream", "_nats.src.acc", "_nats.src.domain",
})


def user_metadata(metadata: Mapping[str, str] | None) -> dict[str, str]:
    """``metadata`` without the keys the server sets (:data:`SERVER_METADATA_KEYS`)."""
    return {k: v for k, v in (metadata or {}).items() if k not in SERVER_METADATA_KEYS}


def with_user_metadata(current: Mapping[str, str] | None,
                       user: Mapping[str, str]) -> dict[str, str]:
    """The metadata an edit stores: the server-set keys of ``current`` kept, the user's
    replaced by ``user`` (natscli's rule for ``--metadata`` on an edit)."""
    reserved = {k: v for k, v in (current or {}).items() if k in SERVER_METADATA_KEYS}
    return {**reserved, **user}


def given_stored(given: Any, stored: Any, *, durations: frozenset[str] = frozenset()
                 ) -> list[str]:
    """Each field in which the config ``given`` (a create's, defaults filled in) differs
    from ``stored``, as a refusal of the create says it: ``max_msgs 5 given, -1 stored``
    (the server's own ``_nats.*`` metadata left out; a ``time.Duration`` field, or one named
    in ``durations``, as a duration; the rest as compact JSON)."""
    from ..durations import format_duration

    out = []
    for f in dataclasses.fields(stored):
        a, b = getattr(given, f.name), getattr(stored, f.name)
        if f.name == "metadata":  # the server's own keys are not a setting
            a, b = user_metadata(a), user_metadata(b)
        if a == b:
            continue
        if f.metadata.get("go") == "time.Duration" or f.name in durations:
            shown = [format_duration(x) if x else "none" for x in (a, b)]
        else:
            shown = [json.dumps(x, separators=(",", ":"), default=json_default) for x in (a, b)]
        out.append(f"{f.metadata.get('json', f.name)} {shown[0]} given, {shown[1]} stored")
    return out


def given_empty(obj: Any) -> frozenset[str]:
    """The JSON fields that were present but empty (``[]``/``{}``) when ``obj`` was decoded."""
    return getattr(obj, "_given_empty", frozenset())


def json_as_given(obj: Any) -> dict[str, Any]:
    """``obj.to_json()`` with the lists and maps given empty kept (Go keeps ``[]`` apart from
    an absent list; what the engine stores and what the live client sends, so the server's
    equality checks see the document as the user wrote it). An empty object given for a
    struct, such as a placement the checks dropped, is not kept."""
    doc = obj.to_json()
    for name in given_empty(obj):
        value = getattr(obj, name, None)
        if name not in doc and isinstance(value, (list, dict)):
            doc[name] = {} if isinstance(value, dict) else []
    return doc


def _is_empty(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, (bool, int, float, str, list, dict)):
        return not value
    return False


def encode(obj: Any) -> dict[str, Any]:
    """The Go JSON document of a config dataclass (struct order, omitempty honoured)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if f.metadata.get("omitempty") and _is_empty(value):
            continue
        if dataclasses.is_dataclass(value):
            value = encode(value)
        elif isinstance(value, list):
            value = [encode(v) if dataclasses.is_dataclass(v) else v for v in value]
        elif isinstance(value, dict):  # a Go map: encoding/json writes its keys sorted
            value = dict(sorted(value.items()))
        out[f.metadata["json"]] = value
    return out


# Go's time.Parse(time.RFC3339, v) error texts, element by element of the layout.
_RFC3339_LAYOUT = (
    ("2006", 4), ("-", 0), ("01", 2), ("-", 0), ("02", 2), ("T", 0),
    ("15", 2), (":", 0), ("04", 2), (":", 0), ("05", 2),
)
_LAYOUT = "2006-01-02T15:04:05Z07:00"


def _ascii_digits(text: str) -> bool:
    """Go's digits: '0' to '9' (Python's isdigit takes '²' and other scripts' too)."""
    return text.isascii() and text.isdigit()


def rfc3339_error(value: str) -> str | None:
    """None when ``value`` is an RFC3339 time, else Go's ``parsing time ...`` message."""
    head = f'parsing time "{value}" as "{_LAYOUT}": cannot parse '
    rest = value
    for elem, width in _RFC3339_LAYOUT:
        if width == 0:
            if not rest.startswith(elem) and not (elem == "T" and rest[:1] == "t"):
                return head + f'"{rest}" as "{elem}"'
            rest = rest[1:]
            continue
        digits = rest[:width]
        if len(digits) < width or not _ascii_digits(digits):
            return head + f'"{rest}" as "{elem}"'
        rest = rest[width:]
    if rest.startswith("."):
        n = 1
        while n < len(rest) and _ascii_digits(rest[n]):
            n += 1
        rest = rest[n:]
    if rest in ("Z", "z"):
        tz_ok = True
    else:
        tz_ok = (
            len(rest) == 6 and rest[0] in "+-" and _ascii_digits(rest[1:3]) and rest[3] == ":"
            and _ascii_digits(rest[4:6])
        )
    if not tz_ok:
        if not rest:
            return head + '"" as "Z07:00"'
        return head + f'"{rest}" as "Z07:00"'
    # Go's time.Parse checks each element's range as it reads it: the month, the hour, the
    # minute, the second, then the zone (up to 24h and 60m); the day after them all
    month, day = int(value[5:7]), int(value[8:10])
    if not 1 <= month <= 12:
        return f'parsing time "{value}": month out of range'
    if int(value[11:13]) > 23:
        return f'parsing time "{value}": hour out of range'
    if int(value[14:16]) > 59:
        return f'parsing time "{value}": minute out of range'
    if int(value[17:19]) > 59:
        return f'parsing time "{value}": second out of range'
    if rest not in ("Z", "z"):
        if int(rest[1:3]) > 24:
            return f'parsing time "{value}": time zone offset hour out of range'
        if int(rest[4:6]) > 60:
            return f'parsing time "{value}": time zone offset minute out of range'
    import calendar

    if not 1 <= day <= calendar.monthrange(int(value[:4]), month)[1]:
        return f'parsing time "{value}": day out of range'
    return None
