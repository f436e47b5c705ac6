"""Locations a person can click (issue 29, item 3): --absolute paths, OSC 8 hyperlinks on a terminal, and HTML
reports whose locations link to the file (file://, or an editor's URL scheme from --editor-url or
$OPINDEX_EDITOR_URL)."""
from __future__ import annotations

import json
import re
import socket
from pathlib import Path

from click.testing import CliRunner

from conftest import SAMPLE

PROFILE = Path(__file__).resolve().parent / "data" / "train_step_h200_torch2.11.json.gz"
HOST = socket.gethostname()


def cli(db, *args, env=None):
    from opindex.cli import main
    return CliRunner().invoke(main, [*args, "--db", str(db)], env=env)


def test_absolute_paths_in_trace_text_json_and_listings(sample_db):
    text = cli(sample_db, "trace", "relu", "--absolute").stdout
    assert f"  {SAMPLE}/aten/src/ATen/native/Activation.cpp:8" in text  # at::native::relu's definition
    hops = json.loads(cli(sample_db, "trace", "relu", "--absolute", "--json").stdout)["hops"]
    assert {h["file"] for h in hops if h["file"]} and all(h["file"].startswith(f"{SAMPLE}/") for h in hops
                                                           if h["file"])
    rows = json.loads(cli(sample_db, "find", "at::native::relu", "--absolute", "--json").stdout)
    assert [(r["file"], r["line"]) for r in rows] == [(f"{SAMPLE}/aten/src/ATen/native/Activation.cpp", 8)]
    plain = json.loads(cli(sample_db, "find", "at::native::relu", "--json").stdout)
    assert plain[0]["file"] == "aten/src/ATen/native/Activation.cpp"  # relative without --absolute


def test_osc8_hyperlinks_only_when_asked_or_on_a_terminal(sample_db):
    url = f"file://{HOST}{SAMPLE}/aten/src/ATen/native/Activation.cpp"
    linked = cli(sample_db, "trace", "relu", "--hyperlinks").stdout
    assert f"\x1b]8;;{url}\x1b\\aten/src/ATen/native/Activation.cpp:8\x1b]8;;\x1b\\" in linked
    assert "\x1b]8" not in cli(sample_db, "trace", "relu").stdout  # piped: no escape sequences
    assert "\x1b]8" not in cli(sample_db, "trace", "relu", env={"OPINDEX_HYPERLINKS": "0"}).stdout
    assert "\x1b]8" in cli(sample_db, "trace", "relu", env={"OPINDEX_HYPERLINKS": "1"}).stdout
    table = cli(sample_db, "find", "at::native::relu", "--hyperlinks").stdout.splitlines()
    assert table[2] == (f"relu  at::native::relu  function  cpp       \x1b]8;;{url}\x1b\\aten/src/ATen/native/"
                        f"Activation.cpp\x1b]8;;\x1b\\  8     (const Tensor& self)")
    # the columns stay aligned: the escape sequences take no room
    assert table[0].index("line") == re.sub(r"\x1b\]8;[^\x1b]*\x1b\\", "", table[2]).index("8     (")


def test_the_profile_html_links_each_location(sample_db, monkeypatch):
    page = cli(sample_db, "profile", str(PROFILE), "--html", "--editor-url", "vscode://file{path}:{line}").stdout
    rnn = f'<a href="vscode://file{SAMPLE}/aten/src/ATen/native/cudnn/RNN.cpp:18">aten/src/ATen/native/cudnn/RNN.cpp:18</a>'
    assert rnn in page
    monkeypatch.setenv("OPINDEX_EDITOR_URL", "idea://open?file={path}&line={line}")
    page = cli(sample_db, "profile", str(PROFILE), "--html").stdout
    assert f'<a href="idea://open?file={SAMPLE}/aten/src/ATen/native/cudnn/RNN.cpp&amp;line=18">' in page
    monkeypatch.delenv("OPINDEX_EDITOR_URL")
    page = cli(sample_db, "profile", str(PROFILE), "--html").stdout
    assert f'<a href="file://{SAMPLE}/aten/src/ATen/native/cudnn/RNN.cpp">' in page
