"""Java's patterns read into Python's (core/kafka/javaregex.py): the names each pattern of
the table matches are java.util.regex's answers (Java 17, ``Pattern.compile(p).matcher(n)
.matches()``), checked again against the JVM when a JDK is at hand; the constructs Python
would read otherwise are refused by name."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from jetlink.core.kafka.javaregex import JavaRegexError, to_python

NAMES = ["orders", "payments", "a.b", "ab", "ORDERS", "t3", "x-y", "a_b", "a"]
ERROR = None  # Java refuses the pattern

# (pattern, the names Java matches); every one read the same here
SAME = [
    ("orders.*", ["orders"]),
    ("[]a]", ["a"]),
    ("(?<x>or)ders", ["orders"]),
    (r"\Qorders\E", ["orders"]),
    (r"\Qa.b", ["a.b"]),
    (r"\Ql.\Ex", []),
    (r"\p{Lower}+", ["orders", "payments", "ab", "a"]),
    (r"\p{IsLower}+", ["orders", "payments", "ab", "a"]),
    (r"\p{javaLowerCase}+", ["orders", "payments", "ab", "a"]),
    (r"[\p{Lower}_]+", ["orders", "payments", "ab", "a_b", "a"]),
    (r"[^\p{Lower}]+", ["ORDERS"]),
    (r"\P{Lower}+", ["ORDERS"]),
    (r"\p{L}+", ["orders", "payments", "ab", "ORDERS", "a"]),
    (r"\p{Lu}+", ["ORDERS"]),
    (r"\p{Nd}", []),
    (r"[\p{Alpha}\p{P}]+", ["orders", "payments", "a.b", "ab", "ORDERS", "x-y", "a_b", "a"]),
    (r"\p{Punct}", []),
    (r"\x{61}b", ["ab"]),
    (r"\0141", ["a"]),
    (r"\ca", []),
    (r"\e", []),
    (r"\h", []),
    ("(?i)ORDERS", ["orders", "ORDERS"]),
    ("(?-i)orders", ["orders"]),
    ("(?i-s)ORDERS", ["orders", "ORDERS"]),
    ("(?i:orders)|t3", ["orders", "ORDERS", "t3"]),
    ("(?<=o)rders", []),
    (r"a\zb", []),
    (".*s$", ["orders", "payments"]),
    ("[a-z]++", ["orders", "payments", "ab", "a"]),
    ("(?>or)ders", ["orders"]),
    (r"\w+", ["orders", "payments", "ab", "ORDERS", "t3", "a_b", "a"]),
    (r"[\w-]+", ["orders", "payments", "ab", "ORDERS", "t3", "x-y", "a_b", "a"]),
    (r"[a\-y]+", ["a"]),
    (r"(?<n>a)\k<n>*", ["a"]),
    (r"a\.b", ["a.b"]),
    (r"x\-y", ["x-y"]),
    ("ord(", ERROR),
    ("[a-", ERROR),
    ("x**", ERROR),
]

# (pattern, what Java matches, the refusal's words): read otherwise here, so refused
REFUSED = [
    ("[a-z&&[^x]]+", ["orders", "payments", "ab", "a"], "class intersection &&"),
    ("[[a-c][x-z]]+", ["ab", "a"], "a class inside a class"),
    (r"[\P{Lower}]+", ["ORDERS"], "a negated class"),
    ("a(?i)b", ["ab"], "only at the start"),
    ("(?x) o r d e r s", ["orders"], "inline flag 'x'"),
    (r"(?U)\w+", ["orders", "payments", "ab", "ORDERS", "t3", "a_b", "a"], "inline flag 'U'"),
    (r"\p{Sc}", [], r"\p{Sc}"),
    (r"\R", [], r"\R"),
    ("(?P<x>orders)", ERROR, "(?P at 0 is Python's syntax"),
    (r"\p{Zzz}", ERROR, r"\p{Zzz}"),
]


def _python(pattern: str) -> list[str] | None:
    try:
        compiled = re.compile(to_python(pattern))
    except re.error:
        return None
    return [n for n in NAMES if compiled.fullmatch(n)]


@pytest.mark.parametrize(("pattern", "java"), SAME)
def test_read_as_java_reads_it(pattern, java):
    assert _python(pattern) == java


@pytest.mark.parametrize(("pattern", "java", "words"), REFUSED)
def test_read_otherwise_here_is_refused_by_name(pattern, java, words):
    with pytest.raises(JavaRegexError, match=re.escape(words)):
        to_python(pattern)


JAVA_SOURCE = """
import java.util.regex.*;
public class Match {
  public static void main(String[] args) {
    String[] names = args[0].split(",");
    for (int k = 1; k < args.length; k++) {
      StringBuilder sb = new StringBuilder();
      try {
        Pattern c = Pattern.compile(args[k]);
        for (String n : names) if (c.matcher(n).matches()) sb.append(n).append(',');
        System.out.println("=" + sb);
      } catch (PatternSyntaxException e) { System.out.println("!"); }
    }
  }
}
"""


@pytest.mark.skipif(shutil.which("javac") is None, reason="no JDK (javac) on this machine")
def test_the_table_is_what_the_jvm_answers(tmp_path):
    """The recorded answers above, asked of java.util.regex again."""
    (tmp_path / "Match.java").write_text(JAVA_SOURCE)
    subprocess.run(["javac", "Match.java"], cwd=tmp_path, check=True, timeout=120)
    rows = [(p, java) for p, java in SAME] + [(p, java) for p, java, _ in REFUSED]
    done = subprocess.run(["java", "-cp", str(tmp_path), "Match", ",".join(NAMES),
                           *(p for p, _ in rows)], capture_output=True, text=True,
                          check=True, timeout=120)
    answers = done.stdout.splitlines()
    assert len(answers) == len(rows), done.stdout
    for (pattern, java), answer in zip(rows, answers, strict=True):
        got = None if answer == "!" else [n for n in answer[1:].split(",") if n]
        assert got == java, (pattern, got, java)
