"""The four renderings of a check's :class:`~jetlink.core.monitor.result.Result`, in the shapes
natscli prints (jsm.go ``monitor``: ``renderNagios``, ``renderJSON``, ``renderPrometheus``,
``renderHuman``):

- ``nagios`` (the default): one line, ``STATUS name Crit:.. Warn:.. OK:.. | perfdata``; a perf
  item is ``name=value[unit][;warn][;crit]``, values with no decimals (4 for seconds), the
  thresholds only when one is set (``x=3;;5`` when only the critical one is);
- ``json``: the Result document (``status``, ``check_suite``, ``check_name``, ``warning``,
  ``critical``, ``ok``, ``perf_data``), indented by two spaces, numbers as Go writes them;
  a perf item whose value is stale (core/monitor/lag.py) carries ``"stale": true``;
- ``prometheus``: the text exposition format, one gauge per perf item named
  ``<namespace>_<check>_<item>`` with label ``item`` (the check's name), and the status gauge
  ``<namespace>_<check>_status_code{item, status}`` holding the Nagios code; families sorted
  by name as a Prometheus registry gathers them;
- ``text``: ``name: STATUS``, then the "Status Detail" and "Check Metrics" tables.

The caller writes a rendering followed by one newline, as natscli prints it (the text form
already ends with one, so it ends with an empty line).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from decimal import Decimal

from ..gojson import go_string
from .result import DEFAULT_NAMESPACE, PerfDataItem, Result

__all__ = ["FORMATS", "nagios", "perf_item", "prom_label", "prometheus", "render", "render_json",
           "text"]

FORMATS = ("nagios", "json", "prometheus", "text")


# -- numbers as Go prints them ------------------------------------------------------------------
def _shortest(value: float) -> tuple[str, int]:
    """The shortest decimal digits that read back as ``value`` (> 0, finite), and the
    power of ten of the first digit."""
    sign, digits, exp = Decimal(repr(value)).normalize().as_tuple()
    text = "".join(map(str, digits))
    assert isinstance(exp, int)
    return text, exp + len(text) - 1


def _exp_form(digits: str, point: int, *, min_exp_digits: int) -> str:
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    sign = "-" if point < 0 else "+"
    return f"{mantissa}e{sign}{abs(point):0{min_exp_digits}d}"


def _fixed_form(digits: str, point: int) -> str:
    if point < 0:
        return "0." + "0" * (-point - 1) + digits
    whole = digits[:point + 1].ljust(point + 1, "0")
    frac = digits[point + 1:]
    return whole + ("." + frac if frac else "")


def _go_float(value: float, *, exp_when: Callable[[int], bool], min_exp_digits: int) -> str:
    if value == 0:
        return "0"
    neg = value < 0
    digits, point = _shortest(abs(value))
    body = (_exp_form(digits, point, min_exp_digits=min_exp_digits) if exp_when(point)
            else _fixed_form(digits, point))
    return ("-" if neg else "") + body


def go_g(value: float) -> str:
    """Go's ``strconv.FormatFloat(v, 'g', -1, 64)`` (the Prometheus text format's values)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return _go_float(value, exp_when=lambda p: p < -4 or p >= 6,
                     min_exp_digits=2)


def go_json_number(value: float) -> str:
    """A float64 as Go's encoding/json writes it: integers without a point, ``e`` notation
    below 1e-6 and from 1e21 (exponent without leading zeros)."""
    return _go_float(value, exp_when=lambda p: p < -6 or p >= 21, min_exp_digits=1)


def _commaf3(value: float) -> str:
    """go-humanize ``CommafWithDigits(v, 3)``: thousands commas, at most 3 decimals (cut,
    not rounded), of the value as the float64 Go holds it (past 2**53 an integer is
    rounded: 18,446,744,073,709,552,000)."""
    value = float(value)
    neg = value < 0
    digits, point = _shortest(abs(value)) if value else ("0", 0)
    whole, _, frac = _fixed_form(digits, point).partition(".")
    groups: list[str] = []
    while len(whole) > 3:
        whole, groups = whole[:-3], [whole[-3:], *groups]
    out = ",".join([whole, *groups]) + ("." + frac[:3] if frac else "")
    return ("-" if neg else "") + out


# -- nagios ---------------------------------------------------------------------------------------
# The plugin guidelines reserve "|" for the one separator of the status text from the perf
# data, with no escape: a "|" of a name (a stream may be named a|b) is written as U+00A6
# (broken bar), so the line still splits where the perf data begins.
PIPE, PIPE_SHOWN = "|", "\u00a6"


def _unpiped(text: str) -> str:
    return text.replace(PIPE, PIPE_SHOWN)


def perf_item(item: PerfDataItem) -> str:
    """One Nagios perf datum: ``name=value[unit][;warn][;crit]``."""
    fmt = "%.4f" if item.unit == "s" else "%.0f"
    # the plugin guidelines' label rule: quoted when it holds a space, '=' or "'" (a "'"
    # doubled inside), so that a stream named a=b still reads as one label
    quote = any(c in item.name for c in " \t='")
    label = _unpiped(item.name)
    name = "'" + label.replace("'", "''") + "'" if quote else label
    out = f"{name}={fmt % item.value}{item.unit}"
    if item.warn or item.crit:
        out += ";" + (fmt % item.warn if item.warn else "")
        if item.crit:
            out += ";" + fmt % item.crit
    return out


def nagios(result: Result) -> str:
    # jsm.go's renderNagios: the Output, when set, stands in place of the OK messages
    oks = [result.output] if result.output else [f"OK:{o}" for o in result.oks]
    parts = [result.name, *(f"Crit:{c}" for c in result.criticals),
             *(f"Warn:{w}" for w in result.warnings), *oks]
    line = f"{result.status.value} {_unpiped(' '.join(parts))}"
    if not result.perf_data:
        return line
    return f"{line} | " + " ".join(perf_item(p) for p in result.perf_data).strip()


# -- json -----------------------------------------------------------------------------------------
def _encode(value: object, indent: str) -> str:
    inner = indent + "  "
    if isinstance(value, dict):
        if not value:
            return "{}"
        rows = [f"{inner}{go_string(k)}: {_encode(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(rows) + "\n" + indent + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(inner + _encode(v, inner) for v in value) + "\n" + indent + "]"
    if isinstance(value, str):
        return go_string(value)
    if isinstance(value, float):
        return go_json_number(value)
    return json.dumps(value)


def document(result: Result) -> dict[str, object]:
    """The Result document natscli's ``--format json`` prints (its fields in its order)."""
    doc: dict[str, object] = {"output": result.output} if result.output else {}
    doc.update(status=result.status.value, check_suite=result.check, check_name=result.name)
    for key, msgs in (("warning", result.warnings), ("critical", result.criticals),
                      ("ok", result.oks)):
        if msgs:
            doc[key] = list(msgs)
    items = []
    for p in result.perf_data:
        item: dict[str, object] = {"name": p.name, "value": float(p.value),
                                   "warning": float(p.warn), "critical": float(p.crit)}
        if p.unit:
            item["unit"] = p.unit
        if p.stale:  # jetlink's: a figure as last reported (core/monitor/lag.py)
            item["stale"] = True
        items.append(item)
    doc["perf_data"] = items
    return doc


def render_json(result: Result) -> str:
    return _encode(document(result), "")


# -- prometheus -----------------------------------------------------------------------------------
def _fq_name(*parts: str) -> str:
    return "_".join(p for p in parts if p)


def _help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def prom_label(text: str) -> str:
    """A Prometheus label value, escaped as the text exposition format asks."""
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def printed(text: str, fmt: str) -> str:
    """What a check prints (and writes to --outfile) of its rendering ``text`` in format
    ``fmt``: jsm.go's Result prints it with a newline (``fmt.Println``); the Prometheus
    text format ends every line with its own (expfmt), so that output ends with an empty
    line."""
    return text + ("\n\n" if fmt == "prometheus" else "\n")


def prometheus(result: Result, namespace: str = DEFAULT_NAMESPACE) -> str:
    check = result.check or result.name
    item = prom_label(result.name.replace('"', "."))
    families: list[tuple[str, str, str]] = []
    for p in result.perf_data:
        name = _fq_name(namespace, check, p.name)
        families.append((name, p.help or f"Data about the NATS CLI check {check}",
                         f'{name}{{item="{item}"}} {go_g(float(p.value))}'))
    status = _fq_name(namespace, check, "status_code")
    families.append((status, f"Nagios compatible status code for {check}",
                     f'{status}{{item="{item}",status="{result.status.value}"}} '
                     f"{go_g(float(result.exit_code))}"))
    lines = []
    for name, help_text, sample in sorted(families, key=lambda f: f[0]):
        lines += [f"# HELP {name} {_help(help_text)}", f"# TYPE {name} gauge", sample]
    return "\n".join(lines)


# -- text -----------------------------------------------------------------------------------------
def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A table in go-pretty's rounded style, every cell left-aligned (natscli's cells are
    strings)."""
    widths = [max(_width(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def rule(left: str, mid: str, right: str) -> str:
        return left + mid.join("─" * (w + 2) for w in widths) + right

    def row(cells: Sequence[str]) -> str:
        return "│" + "│".join(f" {c}{' ' * (w - _width(c))} "
                              for c, w in zip(cells, widths, strict=True)) + "│"

    return "\n".join([rule("╭", "┬", "╮"), row(header), rule("├", "┼", "┤"),
                      *(row(r) for r in rows), rule("╰", "┴", "╯")])


def _width(text: str) -> int:
    """The columns ``text`` takes on a terminal, as go-pretty measures a cell (go-runewidth):
    East Asian wide and full-width characters two, combining marks and zero-width ones
    none, every other one."""
    import unicodedata

    if text.isascii():
        return len(text)
    return sum(0 if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me", "Cf")
               else 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def text(result: Result) -> str:
    out = [f"{result.name}: {result.status.value}", ""]
    if result.unknown and result.output:  # (jsm.go's human form shows no Output: the reason)
        out += [result.output]
    detail = [*(("OK", m) for m in result.oks), *(("Warning", m) for m in result.warnings),
              *(("Critical", m) for m in result.criticals)]
    if detail:
        out += ["Status Detail", "", _table(("Status", "Message"), detail)]
    if result.perf_data:
        rows = [(p.name, _commaf3(p.value), p.unit, _commaf3(p.crit), _commaf3(p.warn), p.help)
                for p in result.perf_data]
        out += ["", "Check Metrics", "",
                _table(("Metric", "Value", "Unit", "Critical Threshold", "Warning Threshold",
                        "Description"), rows)]
    return "\n".join(out) + "\n"


def render(result: Result, fmt: str = "nagios", namespace: str = DEFAULT_NAMESPACE) -> str:
    """``result`` in ``fmt`` (one of :data:`FORMATS`)."""
    if fmt == "json":
        return render_json(result)
    if fmt == "prometheus":
        return prometheus(result, namespace)
    if fmt == "text":
        return text(result)
    return nagios(result)
