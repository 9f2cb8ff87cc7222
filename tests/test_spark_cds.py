"""The class-data-sharing archives of Spark's JVMs (sparkops/session.py): keyed by what decides
their content, shared by installations, at most two sets kept. No JVM is started: the Java
runtime and Spark installations are directories made here."""

from __future__ import annotations

import os
from pathlib import Path

from jetlink.sparkops import session as S

OLD = 1_000_000.0  # a last use long ago (1970)


def _java(root: Path, version: str = "17.0.15", libjvm: int = 100) -> Path:
    (root / "lib" / "server").mkdir(parents=True)
    (root / "release").write_text(f'JAVA_VERSION="{version}"\nIMPLEMENTOR="x"\n')
    lib = root / "lib" / "server" / "libjvm.so"
    lib.write_bytes(b"j" * libjvm)
    os.utime(lib, (OLD, OLD))
    return root


def _spark(root: Path, jars: dict[str, int]) -> Path:
    (root / "jars").mkdir(parents=True)
    for name, size in jars.items():
        (root / "jars" / name).write_bytes(b"x" * size)
    return root


JARS = {"spark-core_2.13-4.3.0.jar": 300, "spark-launcher_2.13-4.3.0.jar": 120,
        "scala-library-2.13.16.jar": 500}


def test_installations_with_the_same_spark_and_java_share_the_archives(tmp_path):
    java = _java(tmp_path / "jdk")
    one = S.archive_stem(java, _spark(tmp_path / "venv1" / "pyspark", JARS), "4.3.0")
    two = S.archive_stem(java, _spark(tmp_path / "clone" / "venv" / "pyspark", JARS), "4.3.0")
    assert one is not None and one == two
    stem, feature = one
    assert feature == 17 and stem.startswith("cds-spark-4.3.0-java17-")
    # the same Java runtime installed elsewhere (same release, same libjvm) shares it too
    assert S.archive_stem(_java(tmp_path / "jdk-copy"), tmp_path / "venv1" / "pyspark",
                          "4.3.0") == one


def test_what_decides_the_content_changes_the_key(tmp_path):
    java = _java(tmp_path / "jdk")
    base = S.archive_stem(java, _spark(tmp_path / "a", JARS), "4.3.0")
    other_jar = {**JARS, "spark-core_2.13-4.3.0.jar": 301}  # a jar of another size
    more_jars = {**JARS, "extra.jar": 1}
    renamed = {("spark-core_2.13-4.3.1.jar" if k.startswith("spark-core") else k): v
               for k, v in JARS.items()}
    stems = {
        base,
        S.archive_stem(java, _spark(tmp_path / "b", other_jar), "4.3.0"),
        S.archive_stem(java, _spark(tmp_path / "c", more_jars), "4.3.0"),
        S.archive_stem(java, _spark(tmp_path / "d", renamed), "4.3.0"),
        S.archive_stem(java, tmp_path / "a", "4.3.1"),  # another pyspark
        S.archive_stem(_java(tmp_path / "jdk2", version="17.0.16"), tmp_path / "a", "4.3.0"),
        S.archive_stem(_java(tmp_path / "jdk3", libjvm=101), tmp_path / "a", "4.3.0"),
    }
    assert len(stems) == 7 and None not in stems
    # Java 21: dynamic archives by themselves; before 13: none
    assert S.archive_stem(_java(tmp_path / "jdk21", version="21.0.2"), tmp_path / "a",
                          "4.3.0")[1] == 21
    assert S.archive_stem(_java(tmp_path / "jdk11", version="11.0.2"), tmp_path / "a",
                          "4.3.0") is None


def _set(folder: Path, stem: str, used: float, *, link: bool = False) -> None:
    for part in ("driver.jsa", "driver.jsa.size", "launcher.jsa", "launcher.jsa.size"):
        f = folder / f"{stem}-{part}"
        f.write_bytes(b"x")
        os.utime(f, (used, used))
    if link:
        home = folder / f"{stem}{S.HOME_SUFFIX}"
        home.symlink_to(folder)
        os.utime(home, (used, used), follow_symlinks=False)


def _sets(folder: Path) -> list[str]:
    return sorted({k for f in folder.iterdir() if (k := S._set_of(f.name)) is not None})


def test_at_most_two_sets_are_kept_the_oldest_by_last_use_removed(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    stems = [f"cds-spark-4.3.0-java17-{c * 16}" for c in "abcd"]
    for age, stem in enumerate(stems):  # a the most recently used ... d the least
        _set(folder, stem, OLD - age * 100, link=True)
    path_keyed = ["spark-4.3.0-java17-93c22abeabb532b4", "spark-4.2.1-java17-d526054446f7a52b"]
    for stem in path_keyed:  # the sets kept per installation path before: used recently
        _set(folder, stem, OLD + 500)
    (folder / f"{stems[3]}-driver.jsa.123.tmp").write_bytes(b"x")  # being written: left
    (folder / "notes.txt").write_text("not ours")
    S.ClassDataSharing._keep_recent(folder, stems[2], now=OLD + 10_000)  # this run: c
    assert _sets(folder) == [stems[0], stems[2]]  # this run's and the most recently used
    assert len(list(folder.glob(f"{stems[0]}*"))) == 5  # its four files and its link
    assert (folder / f"{stems[3]}-driver.jsa.123.tmp").exists()
    assert (folder / "notes.txt").exists()


def test_a_set_used_a_moment_ago_is_not_removed(tmp_path):
    # a JVM may be starting with it: kept past the count until a later run
    folder = tmp_path / "cache"
    folder.mkdir()
    now = OLD + 100_000
    recent = "cds-spark-4.3.0-java17-" + "e" * 16
    _set(folder, recent, now - 60)
    _set(folder, "cds-spark-4.3.0-java17-" + "f" * 16, now - 30)
    _set(folder, "spark-4.3.0-java17-93c22abeabb532b4", now - 5)  # an older jetlink's, in use
    S.ClassDataSharing._keep_recent(folder, "cds-spark-4.3.0-java17-" + "0" * 16, now=now)
    assert len(_sets(folder)) == 3
    S.ClassDataSharing._keep_recent(folder, "cds-spark-4.3.0-java17-" + "0" * 16,
                                    now=now + S.IN_USE_SECONDS)
    assert _sets(folder) == ["cds-spark-4.3.0-java17-" + "f" * 16]


def test_the_link_is_pointed_at_this_installation_atomically(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    link = tmp_path / "set.home"
    assert S._point(link, one) and os.readlink(link) == str(one)
    assert S._point(link, two) and os.readlink(link) == str(two)
    assert S._point(link, two) and sorted(p.name for p in tmp_path.iterdir()) == [
        "one", "set.home", "two"]
    (tmp_path / "dir.home").mkdir()  # not a link: left alone, no archives then
    assert not S._point(tmp_path / "dir.home", one)


def test_the_sets_link_stays_on_the_first_installation_while_it_has_the_same_jars(tmp_path):
    """The JVM maps an archive only with the jar files it was made with (their sizes and
    times: two installations differ in their times), so the link keeps the Spark it points
    at while that one is there with the same jars; else it is this installation's."""
    first = _spark(tmp_path / "venv1" / "pyspark", JARS)
    second = _spark(tmp_path / "venv2" / "pyspark", JARS)  # same jars, newer files
    link = tmp_path / "cache" / "set.home"
    link.parent.mkdir()
    assert S.shared_home(link, second) == second  # no link yet: this installation's
    os.symlink(first, link)
    assert S.shared_home(link, second) == first
    assert S._point(link, S.shared_home(link, second)) and os.readlink(link) == str(first)
    other = _spark(tmp_path / "venv3" / "pyspark", {**JARS, "extra.jar": 1})
    assert S.shared_home(link, other) == other  # other jars: not the set's Spark
    (first / "jars" / "scala-library-2.13.16.jar").write_bytes(b"x" * 501)
    assert S.shared_home(link, second) == second  # the first one changed
    import shutil

    shutil.rmtree(tmp_path / "venv1")
    assert S.shared_home(link, second) == second  # the first one is gone
