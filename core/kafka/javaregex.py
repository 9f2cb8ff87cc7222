"""Java's regular expressions (``java.util.regex.Pattern``, what Confluent's server matches a
``mirror_topic_name_pattern`` with) read into Python's ``re`` syntax, or refused by name.

The two dialects agree on most of what a topic pattern holds (literals, ``.``, classes,
groups, alternation, greedy / lazy / possessive quantifiers, atomic groups, ``^`` ``$``,
``\\b``, ``\\d`` ``\\w`` ``\\s``). What Java writes otherwise is rewritten:

| Java | Python |
|---|---|
| ``\\Q...\\E`` (quoted, to the end without ``\\E``) | each character escaped |
| ``(?<name>...)``, ``\\k<name>`` | ``(?P<name>...)``, ``(?P=name)`` |
| POSIX ``\\p{Lower}``, ``\\p{IsLower}``... ``\\P{...}`` | the class, or its complement |
| Unicode ``\\p{L}`` ``\\p{Ll}`` ``\\p{Nd}`` ``\\p{P}``... | those of a topic name's characters |
| ``\\h`` ``\\H``, ``\\v`` ``\\V`` (horizontal, vertical whitespace) | their characters |
| ``\\z``; ``\\Z`` | ``\\Z``; ``(?=\\n?\\Z)`` |
| ``\\e``, ``\\a``, ``\\cX``, ``\\0oo``, ``\\x{h..h}`` | the character |

What Python would read differently and cannot be rewritten simply is refused, naming the
construct and its position: a class intersection ``&&`` or a class nested in a class
(``[a-z&&[^x]]``, ``[[a-z][0-9]]``: Python reads them as other characters, so the pattern
would silently match something else), other ``\\p{...}`` properties, ``\\R`` ``\\X``
``\\G``, the flags ``d`` ``U`` ``x`` (Java's comments mode also drops blanks in classes),
inline flags past the start of the pattern unless scoped (``(?i:...)``), and Python's own
``(?P...)`` groups (an error in Java). Flags at the start are kept (those turned off: the
default). A pattern Java itself refuses may be accepted here when Python reads it.
"""

from __future__ import annotations

import re

__all__ = ["JavaRegexError", "to_python"]


class JavaRegexError(ValueError):
    """A Java pattern with a construct read otherwise here (its message says which)."""


# POSIX classes (Java: US-ASCII only), by name
_POSIX = {
    "Lower": "a-z", "Upper": "A-Z", "ASCII": "\\x00-\\x7f", "Alpha": "a-zA-Z",
    "Digit": "0-9", "Alnum": "a-zA-Z0-9",
    "Punct": "!-/:-@\\[-`{-~", "Graph": "!-~", "Print": " -~", "Blank": " \\t",
    "Cntrl": "\\x00-\\x1f\\x7f", "XDigit": "0-9a-fA-F", "Space": " \\t\\n\\x0b\\f\\r",
}
# Unicode properties, as their characters among a topic name's (ASCII letters, digits,
# '.', '_', '-'): what they match of the names a pattern is matched against
_TOPIC_PROPERTIES = {
    **{k: "a-zA-Z" for k in ("L", "IsL", "IsLetter", "IsAlphabetic", "javaLetter",
                             "javaAlphabetic")},
    **{k: "A-Z" for k in ("Lu", "IsLu", "IsUppercase", "javaUpperCase")},
    **{k: "a-z" for k in ("Ll", "IsLl", "IsLowercase", "javaLowerCase")},
    **{k: "0-9" for k in ("N", "IsN", "Nd", "IsNd", "IsDigit", "javaDigit")},
    **{k: "a-zA-Z0-9" for k in ("javaLetterOrDigit",)},
    **{k: "._\\-" for k in ("P", "IsP", "IsPunctuation")},
    "Pc": "_", "IsPc": "_", "Pd": "\\-", "IsPd": "\\-", "Po": ".", "IsPo": ".",
}
_HORIZONTAL = " \\t\\xa0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000"
_VERTICAL = "\\n\\x0b\\f\\r\\x85\\u2028\\u2029"
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_FLAGS = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])")


def to_python(pattern: str) -> str:
    """``pattern`` (Java's syntax) in Python's; :class:`JavaRegexError` for what is read
    otherwise (module doc)."""
    out: list[str] = []
    i, n, depth = 0, len(pattern), 0  # depth: inside a character class
    while i < n:
        c = pattern[i]
        if c == "\\":
            text, i = _escape(pattern, i, depth > 0)
            out.append(text)
            continue
        if depth:
            if c == "[":
                raise JavaRegexError(f"a class inside a class at {i} (Java's union) is read "
                                     "otherwise here: list the characters in one class")
            if c == "&" and pattern.startswith("&&", i):
                raise JavaRegexError(f"the class intersection && at {i} is read otherwise "
                                     "here: list the characters the class keeps")
            if c == "]":
                depth = 0
            out.append(c)
            i += 1
            continue
        if c == "[":
            depth = 1
            out.append(c)
            i += 1
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":  # a leading ] is a literal in both
                out.append("\\]")
                i += 1
            continue
        if c == "(" and pattern.startswith("(?", i):
            text, i = _group(pattern, i)
            out.append(text)
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _group(pattern: str, i: int) -> tuple[str, int]:
    """The opening of a ``(?...`` group at ``i``, rewritten; the index after it."""
    rest = pattern[i + 2:]
    if rest.startswith("<") and not rest.startswith(("<=", "<!")):
        m = _NAME.match(rest, 1)
        if m is None or not rest.startswith(">", m.end()):
            raise JavaRegexError(f"a named group at {i} needs a name of letters and digits, "
                                 "starting with a letter: (?<name>...)")
        return f"(?P<{m.group()}>", i + 2 + m.end() + 1
    if rest.startswith("P"):
        raise JavaRegexError(f"(?P at {i} is Python's syntax, an error in Java: write a "
                             "named group (?<name>...)")
    flags = _FLAGS.match(pattern, i)
    if flags is not None:
        used = (flags.group(1) or "") + (flags.group(2) or "")
        for f in used:
            if f not in "imsu":
                raise JavaRegexError(f"the inline flag {f!r} at {i} is not read here "
                                     "(i, m, s and u are)")
        if flags.group(3) == ")" and i == 0:  # at the start: what is on (off: the default)
            on = flags.group(1) or ""
            return (f"(?{on})" if on else ""), flags.end()
        if flags.group(3) == ")":
            raise JavaRegexError(f"the inline flags at {i} are read here only at the start "
                                 f"of the pattern: move them there or scope them "
                                 f"((?{flags.group(1)}:...))")
    return "(?", i + 2


def _escape(pattern: str, i: int, in_class: bool) -> tuple[str, int]:
    """The escape at ``i`` rewritten; the index after it."""
    if i + 1 >= len(pattern):
        raise JavaRegexError(f"a trailing backslash at {i}")
    e = pattern[i + 1]
    if e == "Q":
        end = pattern.find("\\E", i + 2)
        quoted = pattern[i + 2:] if end < 0 else pattern[i + 2:end]
        return "".join(re.escape(ch) for ch in quoted), len(pattern) if end < 0 else end + 2
    if e == "E":  # an \E without \Q: nothing, as in Java
        return "", i + 2
    if e in "pP":
        m = re.compile(r"\{([A-Za-z_]+)\}").match(pattern, i + 2)
        name = m.group(1) if m else pattern[i + 2:i + 3]
        posix = name[2:] if name.startswith("Is") and name[2:] in _POSIX else name
        chars = _POSIX.get(posix) or _TOPIC_PROPERTIES.get(name)
        if chars is None:
            raise JavaRegexError(f"\\{e}{{{name}}} at {i} is not read here: the POSIX "
                                 f"classes ({', '.join(_POSIX)}) and the letter, digit and "
                                 "punctuation properties (L, Lu, Ll, N, Nd, P, javaLowerCase"
                                 "...) are")
        end = m.end() if m else i + 3
        return _class(chars, e == "P", in_class, i), end
    if e in "hHvV":
        chars = _HORIZONTAL if e in "hH" else _VERTICAL
        return _class(chars, e.isupper(), in_class, i), i + 2
    if e == "k":
        m = re.compile(r"<([A-Za-z][A-Za-z0-9]*)>").match(pattern, i + 2)
        if m is None:
            raise JavaRegexError(f"\\k at {i} needs a group name: \\k<name>")
        return f"(?P={m.group(1)})", m.end()
    if e == "z":
        return "\\Z", i + 2
    if e == "Z":
        return "(?=\\n?\\Z)", i + 2
    if e in "RXG":
        raise JavaRegexError(f"\\{e} at {i} is not read here")
    if e == "e":
        return "\\x1b", i + 2
    if e == "c":
        if i + 2 >= len(pattern):
            raise JavaRegexError(f"\\c at {i} needs a control character")
        return f"\\x{ord(pattern[i + 2]) ^ 64:02x}", i + 3
    if e == "0":
        m = re.compile(r"[0-3]?[0-7]{1,2}|[0-7]").match(pattern, i + 2)
        if m is None:
            raise JavaRegexError(f"\\0 at {i} needs octal digits")
        return f"\\x{int(m.group(), 8):02x}", m.end()
    if e == "x" and pattern.startswith("{", i + 2):
        end = pattern.find("}", i + 3)
        digits = pattern[i + 3:end] if end > 0 else ""
        if not digits or not all(ch in "0123456789abcdefABCDEF" for ch in digits) \
                or int(digits, 16) > 0x10FFFF:
            raise JavaRegexError(f"\\x{{...}} at {i} needs a code point in hexadecimal")
        return f"\\U{int(digits, 16):08x}", end + 1
    return pattern[i:i + 2], i + 2


def _class(chars: str, negated: bool, in_class: bool, at: int) -> str:
    """A named class as Python writes it: inside a class its characters (a negated one
    cannot be: refused), outside it a class of them."""
    if in_class:
        if negated:
            raise JavaRegexError(f"a negated class (\\P, \\H, \\V) inside a class at {at} is "
                                 "read otherwise here: list the characters")
        return chars
    return f"[{'^' if negated else ''}{chars}]"
