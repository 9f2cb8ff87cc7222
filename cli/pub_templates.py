"""natscli's body templates (``PubReplyBodyTemplate``), which ``jetlink pub`` and
``jetlink topic produce`` expand in bodies, subjects and header values: ``{{Count}}``,
``{{ID}}``, ``{{TimeStamp}}``, ``{{Time}}``, ``{{Unix}}``, ``{{UnixNano}}``,
``{{Random min max}}``; and the unique ids they and the batch publishes use (a NUID's
shape). Below cli/pub.py and cli/pub_fast.py, which both use it.
"""

import functools
import random
import re
import string
from datetime import datetime

# An action; "{{- " and " -}}" (the dash beside white space, Go's text/template trim
# markers) trim the white space of the text before / after it.
_TEMPLATE = re.compile(r"\{\{(-[ \t\r\n])?\s*(.*?)\s*([ \t\r\n]-)?\}\}", re.S)
_GO_SPACE = " \t\r\n"
_ID_ALPHABET = string.digits + string.ascii_letters


class TemplateError(ValueError):
    pass


def unique_id(rng: random.Random) -> str:
    # natscli uses a NUID: 22 base-62 characters.
    return "".join(rng.choice(_ID_ALPHABET) for _ in range(22))


def _random_text(rng: random.Random, low: int, high: int) -> str:
    if low > high:
        low, high = high, low
    return "".join(
        rng.choice(string.ascii_letters + string.digits) for _ in range(rng.randint(low, high))
    )


RANDOM_MAX = 64 * 1024 * 1024  # nats-server refuses a max_payload over 64 MiB
_RNG = random.Random()  # seeded once: seeding per message costs more than the publish


_NAMES = frozenset(("Count", "Cnt", "Unix", "UnixNano", "TimeStamp", "Time", "ID", "Random"))
# natscli's pubData: the fields a template reads as {{.Name}} (Request: the request a reply
# answers, empty for a publish)
_FIELDS = frozenset(("Count", "Cnt", "Unix", "UnixNano", "TimeStamp", "Time", "Request"))
Action = tuple[str, tuple[str, ...]]


def _shown(name: str) -> str:
    """A name of a template action as said in an error: bytes that are not UTF-8 (a binary
    body read from stdin) as ``\\xNN``, never Python's surrogate escapes."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _action(m: re.Match[str]) -> Action:
    """A template action checked: its function (or ``.Field``) name and arguments
    (TemplateError)."""
    words = m.group(2).split()
    if not words:
        raise TemplateError(f"empty template action in {m.group(0)!r}")
    name, args = words[0], words[1:]
    if name.startswith("."):
        if name[1:] not in _FIELDS:
            raise TemplateError(f"can't evaluate field {_shown(name[1:])} (the fields: "
                                f"{', '.join('.' + f for f in sorted(_FIELDS))})")
        if args:
            raise TemplateError(f"can't give argument to non-function {name}")
        return name, ()
    if name not in _NAMES:
        raise TemplateError(f'function "{_shown(name)}" not defined')
    if name == "Random":
        if len(args) != 2 or not all(re.fullmatch(r"\d+", x) for x in args):
            raise TemplateError("Random takes two numbers: {{Random min max}}")
        if max(int(x) for x in args) > RANDOM_MAX:
            # checked before the text is built: a message is never larger
            raise TemplateError(f"Random {args[0]} {args[1]}: at most {RANDOM_MAX:,} "
                                "characters (nats-server's largest max_payload)")
    elif args:
        raise TemplateError(f"{name} takes no arguments")
    return name, tuple(args)


@functools.lru_cache(maxsize=64)
def _parse(text: str) -> tuple[str | Action, ...]:
    """``text`` as literal pieces and checked actions, left to right (parsed once per text:
    a publish of N messages expands the same subject and body N times)."""
    parts: list[str | Action] = []
    pos = 0
    trim_next = False
    for m in _TEMPLATE.finditer(text):
        before = text[pos:m.start()]
        if trim_next:
            before = before.lstrip(_GO_SPACE)
        if m.group(1):
            before = before.rstrip(_GO_SPACE)
        parts.append(before)
        parts.append(_action(m))
        trim_next = bool(m.group(3))
        pos = m.end()
    parts.append(text[pos:].lstrip(_GO_SPACE) if trim_next else text[pos:])
    if any(isinstance(p, str) and "{{" in p for p in parts):
        raise TemplateError("unclosed action")  # Go's text/template: "{{" never closed
    return tuple(parts)


def _value(name: str, args: tuple[str, ...], count: int, now_ns: int,
           rng: random.Random) -> str:
    if name == ".Request":  # a publish answers no request
        return ""
    name = name.lstrip(".")
    if name in ("Count", "Cnt"):
        return str(count)
    if name == "Unix":
        return str(now_ns // 1_000_000_000)
    if name == "UnixNano":
        return str(now_ns)
    if name == "TimeStamp":
        now = datetime.fromtimestamp(now_ns / 1e9).astimezone().replace(microsecond=0)
        text = now.isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text
    if name == "Time":
        return datetime.fromtimestamp(now_ns / 1e9).astimezone().strftime("%I:%M%p").lstrip("0")
    if name == "ID":
        return unique_id(rng)
    return _random_text(rng, int(args[0]), int(args[1]))  # Random (checked by _action)


def expand(text: str, count: int, now_ns: int, rng: random.Random | None = None) -> str:
    """natscli's ``PubReplyBodyTemplate``: expand ``{{Count}}``, ``{{ID}}``... in ``text``.

    Raises TemplateError on an unknown function; text without ``{{`` is returned as is.
    """
    if "{{" not in text:
        return text
    rng = rng or _RNG
    return "".join(p if isinstance(p, str) else _value(p[0], p[1], count, now_ns, rng)
                   for p in _parse(text))


def new_batch_id() -> str:
    """A batch id: a unique 22-character id, as natscli's batch publisher makes (a NUID)."""
    return unique_id(random.Random())
