"""The default text fits 100 columns without cutting a launch configuration (a line that is too wide wraps at its
column gaps), the legend of "◆ default of N" is shown once per terminal session or with --legend, and each note is
said once (issue 29, item 6)."""
from __future__ import annotations

import re

from click.testing import CliRunner

from opindex.render.trace_text import wrap
from opindex.render.trace_view import TraceView
from opindex.trace.builder import TraceBuilder
from opindex.trace.model import Hop, Trace

LAUNCH = "RowwiseMomentsCUDAKernel<T, T_ACC><<<M, cuda_utils::kCUDABlockReduceNumThreads, 0, cuda_stream>>>"


def visible(line: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m|\x1b\]8;[^\x1b]*\x1b\\", "", line)


def launch_trace() -> TraceView:
    hops = [Hop(0, None, "native", "entry", "aten::native_layer_norm", "aten/src/ATen/native/native_functions.yaml",
                3260),
            Hop(1, 0, "cpp", "function", "at::native::LayerNormKernelImplInternal",
                "aten/src/ATen/native/cuda/layer_norm_kernel.cu", 855),
            Hop(2, 1, "cuda", "launch", LAUNCH, "aten/src/ATen/native/cuda/layer_norm_kernel.cu", 891)]
    return TraceView(query="native_layer_norm", direction="down", device="cuda", depth=1, hops=hops)


def test_a_launch_configuration_wraps_and_is_never_cut():
    for color in (False, True):
        text = launch_trace().to_text(width=100, color=color, links=color)
        lines = [visible(line) for line in text.splitlines()]
        assert all(len(line) <= 100 for line in lines), [line for line in lines if len(line) > 100]
        assert "<<<M, cuda_utils::kCUDABlockReduceNumThreads, 0," in " ".join(lines)
        assert "…" not in " ".join(line for line in lines if "<<<" in line)
    lines = launch_trace().to_text(width=100).splitlines()
    at = next(i for i, line in enumerate(lines) if "RowwiseMomentsCUDAKernel" in line)
    assert lines[at:at + 2] == [
        "  3  cuda         RowwiseMomentsCUDAKernel<T, T_ACC><<<M, cuda_utils::kCUDABlockReduceNumThreads, 0,",
        "       cuda_stream>>>  aten/src/ATen/native/cuda/layer_norm_kernel.cu:891"]


def test_wrap_breaks_at_column_gaps_and_keeps_a_long_word_whole():
    assert wrap("  1  native       aten::x" + " " * 2 + "a/b.yaml:1  ◆ default of 2", 40) == [
        "  1  native       aten::x  a/b.yaml:1", "       ◆ default of 2"]
    assert wrap("x" * 120, 100) == ["x" * 120]


def test_the_legend_is_shown_on_request_and_named_otherwise():
    from test_trace_text import _rnn_like
    plain = _rnn_like().to_text()
    assert "◆ default of 2" in plain and "◆ default of N: N-1 other branches" not in plain
    assert plain.rstrip().endswith("--legend (what ◆ means)")
    assert "     ◆ default of N: N-1 other branches" in _rnn_like().to_text(legend=True)


def test_the_legend_once_per_terminal_session(tmp_path, monkeypatch):
    from opindex.render.terminal import once_per_session
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert [once_per_session("legend"), once_per_session("legend")] == [True, False]


def test_a_cap_is_said_once(sample_db):
    from opindex.cli import main
    text = CliRunner().invoke(main, ["trace", "nn.LSTM", "--max-hops", "3", "--db", str(sample_db)])
    assert "TRUNCATED: the walk stopped at 3 hops" in text.stdout and text.stderr == ""
    data = CliRunner().invoke(main, ["trace", "nn.LSTM", "--max-hops", "3", "--json", "--db", str(sample_db)])
    assert data.stderr == "opindex: the walk stopped at 3 hops; raise max_hops (--max-hops N, 0 for no limit) to " \
                          "see the rest\n"


def test_one_capped_hop_is_one_hop():
    t = Trace(query="q", direction="down", device="cuda", depth=1,
              hops=[Hop(0, None, "cpp", "capped", "more calls not followed")])
    TraceBuilder(t).state_caps()
    assert t.truncated["reason"].startswith("1 hop follows only the first few of what they lead to")
