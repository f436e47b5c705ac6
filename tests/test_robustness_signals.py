"""Issue 33, items 7 and 8 (the rest): SIGTERM during the finish of a cold build of the 2.4 tree waited up to 5 s
(the call-graph process was given 5 s to end) plus the CREATE INDEX under way. An interrupted finish now kills that
process at once, and the writing connection lets signal handlers run between SQLite's VM steps."""
from __future__ import annotations

import multiprocessing
import time

import pytest

from conftest import SAMPLE

from opindex.api import build
from opindex.indexer import callgraph, link, store


def test_an_interrupted_finish_does_not_wait_for_the_call_graph_process(tmp_path, monkeypatch):
    def slow_parts(*args, **kwargs):  # in the forked process: a call graph that takes a minute
        time.sleep(60)
        yield {}
    monkeypatch.setattr(callgraph, "call_graph_parts", slow_parts)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(link, "derive", interrupted)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        build(str(SAMPLE), tmp_path / "i.sqlite", jobs=2)
    assert time.monotonic() - started < 4  # the old code gave the process 5 s
    assert [p.name for p in multiprocessing.active_children()] == []
    assert not (tmp_path / "i.sqlite").exists()


def test_a_signal_during_a_statement_stops_it_as_ctrl_c(tmp_path, monkeypatch):
    """The writing connection's progress handler is where a SIGTERM handler's KeyboardInterrupt is raised: the
    statement stops ("interrupted") and the build ends as on Ctrl-C, not as a failed write."""
    def signal_arrives():
        raise KeyboardInterrupt
    monkeypatch.setattr(store, "_let_signals_in", signal_arrives)
    monkeypatch.setattr(store, "SIGNAL_STEPS", 100)  # the sample's statements are short
    with pytest.raises(KeyboardInterrupt):
        build(str(SAMPLE), tmp_path / "i.sqlite", jobs=1)
    assert not (tmp_path / "i.sqlite").exists()
    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")] == []
