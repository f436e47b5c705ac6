"""Every answer names its index (issue 29: "a JSON field gives the index file and checkout"), and every command that
prints file paths takes --absolute (sql, profile, coverage as the listings and trace do): listing JSON version 2
(docs/json.md)."""
from __future__ import annotations

import csv
import io
import json
import re
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import SAMPLE

PROFILE = Path(__file__).resolve().parent / "data" / "train_step_h200_torch2.11.json.gz"
ACTIVATION = "aten/src/ATen/native/Activation.cpp"


def cli(db, *args, env=None):
    from opindex.cli import main
    return CliRunner().invoke(main, [*args, "--db", str(db)], env=env)


def index_of(db) -> dict:
    return {"file": str(db), "checkout": str(SAMPLE)}


@pytest.mark.parametrize("args", [["find", "at::native::relu"], ["callers", "relu"], ["callees", "at::native::relu"],
                                  ["op", "relu"], ["stub", "LayerNormKernel"], ["kernels"], ["stats"],
                                  ["sql", "SELECT name FROM symbols WHERE name = 'relu' LIMIT 1"],
                                  ["coverage", "--op", "relu", "--device", "cuda"]])
def test_each_json_row_ends_with_the_index_that_answered(sample_db, args):
    rows = json.loads(cli(sample_db, *args, "--json").stdout)
    assert rows and all(list(r)[-1] == "index" and r["index"] == index_of(sample_db) for r in rows)
    lines = cli(sample_db, *args, "--ndjson").stdout.splitlines()
    assert [json.loads(line) for line in lines] == rows  # the same rows, one a line


def test_a_listing_row_in_full(sample_db):
    assert json.loads(cli(sample_db, "find", "at::native::relu", "--json").stdout) == [
        {"name": "relu", "qualified_name": "at::native::relu", "kind": "function", "language": "cpp",
         "file": ACTIVATION, "line": 8, "signature": "(const Tensor& self)", "index": index_of(sample_db)}]


def test_a_query_column_named_index_is_kept(sample_db):
    rows = json.loads(cli(sample_db, "sql", "SELECT 7 AS \"index\", 8 AS index_2", "--json").stdout)
    assert rows == [{"index": 7, "index_2": 8, "index_3": index_of(sample_db)}]


def test_csv_and_tables_are_the_rows_alone_the_table_with_a_footer(sample_db):
    out = cli(sample_db, "sql", "SELECT name, file, line FROM symbols WHERE qualified_name = 'at::native::relu'",
              "--csv").stdout
    assert out == f"name,file,line\nrelu,{ACTIVATION},8\n"
    table = cli(sample_db, "sql", "SELECT name FROM symbols WHERE qualified_name = 'at::native::relu'").stdout
    assert table.splitlines()[-1] == f"index {sample_db} (checkout {SAMPLE})"


def test_sql_absolute_and_hyperlinks(sample_db):
    query = "SELECT name, file, line FROM symbols WHERE qualified_name = 'at::native::relu'"
    assert json.loads(cli(sample_db, "sql", query, "--absolute", "--json").stdout)[0]["file"] == \
        f"{SAMPLE}/{ACTIVATION}"
    assert cli(sample_db, "sql", query, "--absolute", "--tsv").stdout.splitlines()[1] == \
        f"relu\t{SAMPLE}/{ACTIVATION}\t8"
    files = cli(sample_db, "sql", "SELECT path FROM files WHERE path LIKE '%Activation.cpp'", "--absolute",
                "--csv").stdout
    assert files == f"path\n{SAMPLE}/{ACTIVATION}\n"
    linked = cli(sample_db, "sql", query, "--hyperlinks").stdout.splitlines()
    url = f"file://{socket.gethostname()}{SAMPLE}/{ACTIVATION}"
    assert linked[2] == f"relu  \x1b]8;;{url}\x1b\\{ACTIVATION}\x1b]8;;\x1b\\  8"
    assert "\x1b]8" not in cli(sample_db, "sql", query).stdout  # piped: none


def test_a_long_streamed_table_links_its_paths(monkeypatch):
    from opindex.render import stream
    monkeypatch.setattr(stream, "BLOCK", 1)
    out: list[str] = []
    rows = [{"file": "a.cpp", "line": 1}, {"file": "b.cpp", "line": 2}]
    stream.write_rows(iter(rows), ["file", "line"], "table", out.append, link=lambda r, c: f"file:///r/{r[c]}")
    assert "".join(out) == ("file   line\n-----  ----\n\x1b]8;;file:///r/a.cpp\x1b\\a.cpp\x1b]8;;\x1b\\  1\n"
                            "\x1b]8;;file:///r/b.cpp\x1b\\b.cpp\x1b]8;;\x1b\\  2\n(2 rows)\n")


def test_profile_absolute_in_every_format(sample_db):
    rnn = f"{SAMPLE}/aten/src/ATen/native/cudnn/RNN.cpp"
    data = json.loads(cli(sample_db, "profile", str(PROFILE), "--limit", "1", "--absolute", "--json").stdout)
    top = data["kernels"][0]
    assert top["library_calls"] == [f"{rnn}:18 cudnnRNNForward (at::native::_cudnn_rnn)"]
    assert [h["file"] for h in top["chain"]][:2] == [rnn, rnn]
    assert data["summary"]["index"] == str(sample_db) and data["summary"]["checkout_root"] == str(SAMPLE)
    plain = json.loads(cli(sample_db, "profile", str(PROFILE), "--limit", "1", "--json").stdout)
    assert plain["kernels"][0]["library_calls"] == ["aten/src/ATen/native/cudnn/RNN.cpp:18 cudnnRNNForward "
                                                    "(at::native::_cudnn_rnn)"]
    rows = list(csv.DictReader(io.StringIO(cli(sample_db, "profile", str(PROFILE), "--limit", "3", "--absolute",
                                               "--csv").stdout)))
    assert rows[2]["library_call"] == (f"{SAMPLE}/aten/src/ATen/native/cuda/Blas.cpp:10 at::cuda::blas::gemm "
                                       f"(at::native::mm_out_cuda_impl)")
    md = cli(sample_db, "profile", str(PROFILE), "--limit", "1", "--absolute", "--markdown").stdout
    assert f"  - cudnn: `cudnnRNNForward` {rnn}:18 - in at::native::_cudnn_rnn" in md
    table = cli(sample_db, "profile", str(PROFILE), "--limit", "1", "--absolute").stdout
    assert f" {rnn}:18 cudnnRNNForward  -> aten::_cudnn_rnn" in table
    linked = cli(sample_db, "profile", str(PROFILE), "--limit", "1", "--hyperlinks").stdout
    url = f"file://{socket.gethostname()}{rnn}"
    assert f"\x1b]8;;{url}\x1b\\aten/src/ATen/native/cudnn/RNN.cpp:18\x1b]8;;\x1b\\ cudnnRNNForward" in linked
    assert "\x1b]8" not in cli(sample_db, "profile", str(PROFILE), "--limit", "1").stdout


def test_coverage_is_a_table_when_piped_and_takes_absolute(sample_db):
    out = cli(sample_db, "coverage", "--op", "relu", "--device", "cuda").stdout.splitlines()
    assert out[0].split() == ["op", "key", "status", "file", "line", "kernel", "lacks"]
    assert out[2].split() == ["aten::relu", "CUDA", "kernel", "aten/src/ATen/native/native_functions.yaml", "8",
                              "relu"]
    assert out[-1] == f"index {sample_db} (checkout {SAMPLE})"
    row = json.loads(cli(sample_db, "coverage", "--op", "relu", "--device", "cuda", "--json", "--absolute").stdout)[0]
    assert row["file"] == f"{SAMPLE}/aten/src/ATen/native/native_functions.yaml"


def test_the_coverage_page_links_each_cell_and_names_its_index(sample_db):
    page = cli(sample_db, "coverage", "--op", "relu", "--device", "cuda", "--html").stdout
    assert f'<a href="file://{SAMPLE}/aten/src/ATen/native/native_functions.yaml">K</a>' in page
    assert f"<p>index {sample_db} (checkout {SAMPLE})</p>" in page
    assert re.search(r"http", page) is None  # self-contained


def test_every_rendering_of_a_trace_names_its_index(sample_db, ix):
    said = f"index {sample_db} (checkout {SAMPLE})"
    assert cli(sample_db, "trace", "relu", "--markdown").stdout.splitlines()[:3] == [
        "### opindex trace `relu` (down, device cuda)", "", said]
    assert cli(sample_db, "trace", "relu", "--dot").stdout.splitlines()[:2] == ["digraph trace {", f"  // {said}"]
    assert cli(sample_db, "trace", "relu", "--mermaid").stdout.splitlines()[:2] == ["flowchart TD", f"  %% {said}"]
    assert cli(sample_db, "trace", "relu").stdout.splitlines()[1] == said
    assert json.loads(cli(sample_db, "trace", "relu", "--json").stdout)["index"] == index_of(sample_db)
    t = ix.trace("relu")  # a notebook's views too
    assert f'<p class="d">{said}</p>' in t._repr_html_()
    assert f"\n\nindex {sample_db} (checkout {SAMPLE.parent}/sample\\_checkout)\n\n" in t._repr_markdown_()
