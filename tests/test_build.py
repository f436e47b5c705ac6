"""The build pipeline: checkout and database resolution, meta, incremental rebuilds identical to cold builds."""
from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import SAMPLE, SAMPLE_ENTRIES

from opindex.api import build
from opindex.cli import main
from opindex.schema import metadata


_IDS = ("id", "native_function_id", "derivative_id", "dispatch_id", "registration_id", "launch_id", "symbol_id",
        "built_at", "mtime_ns")


def dump(db: Path) -> dict[str, list[tuple]]:
    """Every table's content without ids (row ids and the links' references to rows) and build-time stamps,
    sorted: what 'identical' means."""
    con = sqlite3.connect(db)
    out = {}
    for table in metadata.sorted_tables:
        cols = [c.name for c in table.columns if c.name not in _IDS]
        if table.name == "meta":
            rows = con.execute("SELECT key, value FROM meta WHERE key NOT IN ('built_at', 'build_seconds')")
        else:
            rows = con.execute(f"SELECT {', '.join(cols)} FROM {table.name}")
        out[table.name] = sorted(map(tuple, rows), key=repr)
    con.close()
    return out


def test_meta_records_the_build(ix):
    meta = ix.meta
    assert meta["checkout_root"] == str(SAMPLE)
    assert meta["pytorch_version"] == (SAMPLE / "version.txt").read_text().strip()
    assert meta["schema_version"] == "0008"
    assert meta["checkout_kind"] == "source"
    assert meta["scope"] == "include=torch,aten,c10,tools,torchgen,functorch; " \
                            "exclude=torch/include,torch/lib,torch/share,torch/bin"
    row = ix.rows("SELECT root, kind, pytorch_version FROM checkouts")
    assert row == [{"root": str(SAMPLE), "kind": "source", "pytorch_version": meta["pytorch_version"]}]


def test_files_table_layers(ix):
    layers = {r["path"]: r["layer"] for r in ix.rows("SELECT path, layer FROM files")}
    assert layers["aten/src/ATen/native/native_functions.yaml"] == "registry"
    assert layers["tools/autograd/derivatives.yaml"] == "registry"
    assert all(not p.startswith(("third_party/", "build/")) for p in layers)


def test_rebuild_with_nothing_changed_is_up_to_date(sample_copy, tmp_path):
    db = tmp_path / "i.sqlite"
    first = build(str(sample_copy), db, jobs=1)
    assert not first.up_to_date and first.parsed == sum(first.files_by_layer.values())
    before = db.stat().st_mtime_ns
    again = build(str(sample_copy), db, jobs=1)
    assert again.up_to_date and again.parsed == 0
    assert db.stat().st_mtime_ns == before  # not rewritten


def test_rebuild_after_changes_equals_a_cold_build(sample_copy, tmp_path):
    db = tmp_path / "inc.sqlite"
    build(str(sample_copy), db, jobs=2)
    yaml = sample_copy / "aten/src/ATen/native/native_functions.yaml"
    yaml.write_text(yaml.read_text() + "\n- func: extra_op(Tensor self) -> Tensor\n")
    src = sorted(p for p in sample_copy.rglob("*") if p.suffix in (".cu", ".py", ".cpp") and p.is_file())
    changed = src[:2]
    for p in changed:
        p.write_bytes(p.read_bytes() + b"\n")
    touched_only = src[2] if len(src) > 2 else None
    if touched_only is not None:
        os.utime(touched_only, ns=(time.time_ns(), time.time_ns() + 10**9))  # new mtime, same content
    removed = src[-1]
    removed.unlink()
    report = build(str(sample_copy), db, jobs=2)
    assert report.removed == 1
    assert report.parsed == 1 + len(changed)
    cold = tmp_path / "cold.sqlite"
    build(str(sample_copy), cold, jobs=1)
    assert dump(db) == dump(cold)
    assert sqlite3.connect(db).execute("SELECT count(*) FROM native_functions WHERE name = 'extra_op'").fetchone() \
        == (1,)


def test_cold_build_derives_its_call_graph_beside_the_indexes(sample_copy, tmp_path, monkeypatch):
    """With two jobs the call graph (call_links, functor_links, device_reach) is derived in a forked process while
    the indexes are created: the index is the one a single process builds, and when that process fails the
    writing process derives the call graph itself."""
    from opindex.indexer import callgraph, link
    one = tmp_path / "one.sqlite"
    build(str(sample_copy), one, jobs=1)
    expected = dump(one)
    assert expected["call_links"] and expected["device_reach"]
    sent, ends = [], []  # the parts the process sent; whether each build received its last part
    receive = link.Beside.receive

    def receiving(self, insert):
        ends.append(receive(self, lambda part: sent.append(sorted(part)) or insert(part)))
        return ends[-1]
    monkeypatch.setattr(link.Beside, "receive", receiving)
    two = tmp_path / "two.sqlite"
    build(str(sample_copy), two, jobs=2)
    # call_links first (inserted while the process walks them), then the walks' tables
    assert sent == [["call_links"], ["device_reach", "functor_links"]] and ends == [True]
    assert dump(two) == expected
    parent, walks = os.getpid(), callgraph.walks

    def failing(*args, **kwargs):
        if os.getpid() != parent:
            raise RuntimeError("a bug in the call graph")
        return walks(*args, **kwargs)
    monkeypatch.setattr(callgraph, "walks", failing)  # the forked process fails after sending call_links
    fallback = tmp_path / "fallback.sqlite"
    build(str(sample_copy), fallback, jobs=2)
    # its call_links came and were inserted; derived again here, they are not there twice
    assert sent[2:] == [["call_links"]] and ends[1:] == [False] and dump(fallback) == expected


def test_db_resolution_from_environment(sample_copy, tmp_path, monkeypatch):
    db = tmp_path / "env.sqlite"
    monkeypatch.setenv("OPINDEX_DB", str(db))
    result = CliRunner().invoke(main, ["build", str(sample_copy), "-q"])
    assert result.exit_code == 0, result.output
    assert db.is_file()
    out = CliRunner().invoke(main, ["sql", "SELECT count(*) AS n FROM native_functions", "--csv"])
    assert out.output == f"n\n{SAMPLE_ENTRIES}\n"


def test_checkout_resolution_prefers_tilegym_cache(tmp_path, monkeypatch, sample_copy):
    from opindex.indexer.checkout import resolve
    cache = tmp_path / "cache"
    (cache / "pytorch-source").mkdir(parents=True)
    monkeypatch.setenv("TILEGYM_SKILL_CACHE_DIR", str(cache))
    ck = resolve(None)
    assert ck.root == (cache / "pytorch-source").resolve()
    assert ck.how == "$TILEGYM_SKILL_CACHE_DIR/pytorch-source"
    monkeypatch.setenv("TILEGYM_SKILL_CACHE_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve(None).root == SAMPLE.resolve()
    assert resolve(str(sample_copy)).how == "the CHECKOUT argument"


def test_include_and_exclude(sample_copy, tmp_path):
    db = tmp_path / "x.sqlite"
    (sample_copy / "extra").mkdir()
    (sample_copy / "extra" / "helper.py").write_text("def helper():\n    pass\n")
    build(str(sample_copy), db, include=("extra",), exclude=("tools",))
    con = sqlite3.connect(db)
    paths = {p for (p,) in con.execute("SELECT path FROM files")}
    assert "extra/helper.py" in paths
    assert not any(p.startswith("tools/") for p in paths)


def test_version_mismatch_warns(sample_copy, tmp_path, monkeypatch):
    import opindex.indexer.checkout as co
    monkeypatch.setattr(co, "installed_torch_version", lambda: "9.9.0")
    result = CliRunner().invoke(main, ["build", str(sample_copy), "--db", str(tmp_path / "w.sqlite"), "-q"])
    assert result.exit_code == 0
    assert "but this Python has torch 9.9.0" in result.output


def test_installed_build_reports_missing_layers(tmp_path):
    pytest.importorskip("torch")
    from opindex.indexer.checkout import installed_torch_root
    report = build(None, tmp_path / "wheel.sqlite", installed=True, exclude=("torch/include",),
                   include=(), jobs=2)
    assert report.checkout.kind == "installed"
    assert report.checkout.root == installed_torch_root().resolve()
    assert report.rows["native_functions"] > 2000
    assert report.rows["derivatives"] > 500
    assert report.absent == ["ATen C++ sources (native/*.cpp)", "ATen CUDA sources (native/**/*.cu)"]


def test_other_extractors_mean_a_cold_build(sample_copy, tmp_path):
    db = tmp_path / "f.sqlite"
    first = build(str(sample_copy), db, jobs=1)
    con = sqlite3.connect(db)
    con.execute("UPDATE meta SET value = 'older' WHERE key = 'extractor_fingerprint'")
    con.commit()
    con.close()
    again = build(str(sample_copy), db, jobs=1)
    assert not again.up_to_date
    assert again.parsed == first.parsed == sum(first.files_by_layer.values())


def test_the_fingerprint_covers_the_code_that_links_the_facts():
    """An index built by other indexer code is rebuilt, not updated: a changed link rule (indexer/link.py) leaves
    every file of a checkout as it was, and an update would keep the old links."""
    from opindex.extract import fingerprint_files
    names = {(p.parent.name, p.name) for p in fingerprint_files()}
    assert {("indexer", "link.py"), ("extract", "cpp.py"), ("pytorch", "build_config.py"),
            ("queries", "cpp-calls.scm")} <= names
