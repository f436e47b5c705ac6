"""The default index is per checkout: building the sample never replaces a real checkout's index; a query finds the
index of the checkout it runs in, else the last one built; --db and $OPINDEX_DB still win; `opindex list`."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3

import pytest
from click.testing import CliRunner

from conftest import SAMPLE, SAMPLE_ENTRIES


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache folder of our own (never the user's ~/.cache/opindex) and no $OPINDEX_DB."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("OPINDEX_DB", raising=False)
    return tmp_path / "cache" / "opindex"


@pytest.fixture
def two_checkouts(tmp_path):
    """Two PyTorch-shaped trees with the same folder name in different places, the second with one op more."""
    a, b = tmp_path / "one" / "pytorch", tmp_path / "two" / "pytorch"
    shutil.copytree(SAMPLE, a)
    shutil.copytree(SAMPLE, b)
    (b / "torch" / "extra.py").write_text("def extra_only_in_b():\n    pass\n")
    return a, b


def cli(*args, env=None):
    from opindex.cli import main
    return CliRunner().invoke(main, list(args), env=env)


def expected_path(cache, root) -> str:
    digest = hashlib.sha1(os.fsencode(os.path.realpath(root))).hexdigest()[:10]
    return str(cache / f"pytorch-{digest}.sqlite")


def symbols(path) -> int:
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT count(*) FROM symbols").fetchone()[0]
    finally:
        con.close()


def test_each_checkout_gets_its_own_index_and_neither_replaces_the_other(cache, two_checkouts):
    a, b = two_checkouts
    assert cli("build", str(a), "-q", "-j", "1").exit_code == 0
    n_a = symbols(expected_path(cache, a))
    result = cli("build", str(b), "-j", "1")
    assert result.exit_code == 0, result.output
    assert f"index:    {expected_path(cache, b)} (this checkout's own; `opindex list` shows them)" in result.output
    assert sorted(p.name for p in cache.iterdir() if p.suffix == ".sqlite") == sorted(
        os.path.basename(expected_path(cache, r)) for r in (a, b))
    assert symbols(expected_path(cache, a)) == n_a  # A's index is untouched
    assert symbols(expected_path(cache, b)) == n_a + 1


def test_a_query_opens_the_index_of_the_checkout_it_runs_in_else_the_last_built(cache, two_checkouts, tmp_path,
                                                                               monkeypatch):
    a, b = two_checkouts
    for root in (a, b):
        assert cli("build", str(root), "-q", "-j", "1").exit_code == 0
    query = ("sql", "SELECT count(*) AS n FROM symbols WHERE name = 'extra_only_in_b'", "--json")

    def asked(*extra, env=None) -> tuple[int, str]:  # the answer, and the index its JSON row names
        [row] = json.loads(cli(*query, *extra, env=env).output)
        return row["n"], row["index"]["file"]
    in_a, in_b = (0, expected_path(cache, a)), (1, expected_path(cache, b))
    monkeypatch.chdir(a / "aten" / "src")  # inside A, below its root
    assert asked() == in_a
    monkeypatch.chdir(b)
    assert asked() == in_b
    monkeypatch.chdir(tmp_path)  # in no checkout: the last built, B
    assert asked() == in_b
    assert cli("build", str(a), "-q", "-j", "1").exit_code == 0  # now A is the last built
    assert asked() == in_a
    # --db and $OPINDEX_DB win over both
    assert asked("--db", expected_path(cache, b)) == in_b
    assert asked(env={"OPINDEX_DB": expected_path(cache, b)}) == in_b
    import opindex
    with opindex.open() as ix:  # the library finds it the same way
        assert str(ix.path) == expected_path(cache, a)


def test_opindex_list(cache, two_checkouts, tmp_path, monkeypatch):
    a, b = two_checkouts
    monkeypatch.chdir(tmp_path)
    assert json.loads(cli("list", "--json").output) == []
    for root in (a, b):
        assert cli("build", str(root), "-q", "-j", "1").exit_code == 0
    monkeypatch.chdir(a)
    rows = json.loads(cli("list", "--json").output)
    assert [(r["index"], r["checkout"], r["pytorch_version"], r["current"], r["last"]) for r in rows] == sorted([
        (expected_path(cache, a), str(a), "2.13.0a0+sample", True, False),
        (expected_path(cache, b), str(b), "2.13.0a0+sample", False, True)])
    assert all(r["built_at"] and r["size_mb"] > 0 for r in rows)
    import opindex
    assert opindex.list_indexes() == rows  # the library twin


def test_no_index_yet_says_what_to_run(cache, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli("sql", "SELECT 1")
    assert result.exit_code == 3  # a missing index is a broken environment
    assert result.output == ("Error: no index yet: run `opindex build [CHECKOUT]` first (or pass --db / set "
                             "OPINDEX_DB)\n")


def test_the_index_of_an_older_opindex_is_still_found(cache, sample_db, tmp_path, monkeypatch):
    cache.mkdir(parents=True)
    shutil.copyfile(sample_db, cache / "index.sqlite")
    monkeypatch.chdir(tmp_path)
    assert json.loads(cli("sql", "SELECT count(*) AS n FROM native_functions", "--json").output) == [
        {"n": SAMPLE_ENTRIES, "index": {"file": str(cache / "index.sqlite"), "checkout": str(SAMPLE)}}]


def test_opindex_db_naming_another_checkouts_index_is_refused_without_force(cache, two_checkouts, tmp_path):
    a, b = two_checkouts
    db = tmp_path / "mine.sqlite"
    assert cli("build", str(a), "-q", "-j", "1", env={"OPINDEX_DB": str(db)}).exit_code == 0
    n_a = symbols(db)
    result = cli("build", str(b), "-q", "-j", "1", env={"OPINDEX_DB": str(db)})
    assert result.exit_code == 2
    assert result.output == (f"Error: $OPINDEX_DB={db}: the index of another checkout ({a}); refused to replace "
                             f"it with one of {b} (--force replaces it; --db names another file; with $OPINDEX_DB "
                             f"unset each checkout has its own index: `opindex list`)\n")
    assert symbols(db) == n_a
    assert cli("build", str(a), "-q", "-j", "1", env={"OPINDEX_DB": str(db)}).exit_code == 0  # its own: rebuilt
    assert cli("build", str(b), "-q", "-j", "1", "--force", env={"OPINDEX_DB": str(db)}).exit_code == 0
    assert symbols(db) == n_a + 1
    # --db names the file for this build: not refused
    assert cli("build", str(a), "-q", "-j", "1", "--db", str(db)).exit_code == 0
    assert symbols(db) == n_a
    # builds through --db / $OPINDEX_DB write no index into the cache folder, only its name into the list of them
    assert [p.name for p in cache.iterdir()] == ["elsewhere"]
    assert (cache / "elsewhere").read_text() == f"{db}\n"


def test_a_db_build_is_listed_and_a_query_inside_its_checkout_opens_it(cache, two_checkouts, tmp_path,
                                                                        monkeypatch):
    a, b = two_checkouts
    assert cli("build", str(b), "-q", "-j", "1").exit_code == 0  # B's own index: the last built
    db = tmp_path / "fn.sqlite"
    assert cli("build", str(a), "-q", "-j", "1", "--db", str(db)).exit_code == 0
    monkeypatch.chdir(tmp_path)
    rows = json.loads(cli("list", "--json").output)
    assert [(r["index"], r["checkout"], r["current"], r["last"]) for r in rows] == [
        (expected_path(cache, b), str(b), True, True), (str(db), str(a), False, False)]
    monkeypatch.chdir(a / "torch")  # inside A: its --db index answers, not the last built (B's)
    result = cli("sql", "SELECT count(*) AS n FROM symbols WHERE name = 'extra_only_in_b'", "--table")
    assert result.output == f"n\n-\n0\n(1 row)\nindex {db} (checkout {a})\n"
    assert [r["current"] for r in json.loads(cli("list", "--json").output)] == [False, True]


def test_every_answer_names_its_index_and_a_query_in_another_checkout_says_so(cache, two_checkouts, tmp_path,
                                                                               monkeypatch):
    a, b = two_checkouts
    db = tmp_path / "b.sqlite"
    assert cli("build", str(b), "-q", "-j", "1", "--db", str(db)).exit_code == 0
    monkeypatch.chdir(a)  # A has no index: the one opened ($OPINDEX_DB) is B's; said on stderr
    monkeypatch.setenv("OPINDEX_DB", str(db))
    runner = CliRunner()
    from opindex.cli import main
    result = runner.invoke(main, ["trace", "torch.sort"])
    assert result.exit_code == 1
    assert result.stderr == (
        f"warning: this folder is in the checkout {a}, but the index opened, {db}, is of {b}; it has no index yet: "
        f"`opindex build {a}`\n"
        f"'torch.sort' is not a Python name, op, C++ function, stub or kernel in the index {db} (checkout {b})\n")
    traced = runner.invoke(main, ["trace", "relu"])
    assert traced.stdout.splitlines()[1] == f"index {db} (checkout {b})"
    assert json.loads(runner.invoke(main, ["trace", "relu", "--json"]).stdout)["index"] == {
        "file": str(db), "checkout": str(b)}
    op = runner.invoke(main, ["op", "nope"])
    assert op.exit_code == 1 and op.stderr.endswith(
        f"Error: no native_functions.yaml entry named nope in index {db} (checkout {b})\n")
    found = runner.invoke(main, ["find", "nope", "--json"])
    assert found.exit_code == 1 and found.stderr.endswith(f"opindex: no definition named nope in index {db} "
                                                          f"(checkout {b})\n")
    monkeypatch.chdir(b / "aten")  # inside B's own checkout: no warning
    assert runner.invoke(main, ["find", "relu", "--json"]).stderr == ""
    import warnings

    import opindex
    with opindex.open(db) as ix:
        assert repr(ix) == f"<opindex.Index {str(db)!r} checkout={str(b)!r} pytorch='2.13.0a0+sample'>"
    monkeypatch.chdir(a)  # the library: Index() (the index chosen for the user) warns; Index(path) only says it
    with pytest.warns(UserWarning, match=f"^this folder is in the checkout {a}, but the index opened, {db}, is of "
                                         f"{b}; it has no index yet"):
        opindex.open().close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with opindex.open(db) as ix:
            assert ix.mismatch.startswith(f"this folder is in the checkout {a}")
