"""render.source: snippets read each file once per render, and again when the file changed."""
from __future__ import annotations

import os

from opindex.render.source import snippet


def test_snippets_are_exact_and_follow_an_edited_file(tmp_path):
    f = tmp_path / "a.cu"
    f.write_text("one\ntwo\nthree\nfour\n")
    assert snippet(str(tmp_path), "a.cu", 2, 1, 1) == ["    1 | one", "    2 | two", "    3 | three"]
    assert snippet(str(tmp_path), "a.cu", 4, 0, 5) == ["    4 | four"]
    f.write_text("uno\ndos\ntres\ncuatro\ncinco\n")
    os.utime(f, ns=(1, 1))  # another stat, even on a filesystem with coarse times
    assert snippet(str(tmp_path), "a.cu", 2, 1, 1) == ["    1 | uno", "    2 | dos", "    3 | tres"]
    assert snippet(str(tmp_path), "../a.cu", 1) == [] and snippet(str(tmp_path), "missing.cu", 1) == []
