"""The default text fits 100 columns without cutting a launch configuration (a line that is too wide wraps at its
column gaps), the legend of "◆ default of N" is shown once per terminal session or with --legend, and each note is
said once (issue 29, item 6)."""
from __future__ import annotations

import re
import socket

from click.testing import CliRunner

from opindex.render.screen import wrap
from opindex.render.trace_view import TraceView
from opindex.trace.builder import TraceBuilder
from opindex.trace.model import Hop, Trace

HOST = socket.gethostname()
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
    assert "     ◆ default of N (◆N where the line is narrow): N-1 other branches" in \
        _rnn_like().to_text(legend=True)


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


# -- a screen 100 columns wide: wrapped lines counted, the main chain whole (issue 29, items 6 and 3) -------------
def test_the_short_mark_where_the_long_one_would_wrap_the_line():
    from test_trace_text import _rnn_like
    lines = _rnn_like().to_text(width=75).splitlines()
    assert "  4  stub         lstm_cudnn_stub                  RNN.cpp:30  ◆2 ranked" in lines
    assert "  4  stub         lstm_cudnn_stub                  RNN.cpp:30  ◆ default of 2, ranked" in \
        _rnn_like().to_text(width=100).splitlines()


def test_a_name_is_cut_only_where_its_line_then_fits():
    from opindex.render.screen import cut_name as _cut_name
    long = "at::native::_scaled_dot_product_flash_attention_cuda"
    assert _cut_name(long, 45) == "…_scaled_dot_product_flash_attention_cuda"
    assert _cut_name(long, 50) == "…native::_scaled_dot_product_flash_attention_cuda"
    assert _cut_name("CompositeImplicitAutograd: scaled_dot_product_attention", 30) == \
        "CompositeImplicitAutograd: sc…"
    path = "aten/src/ATen/native/transformers/cuda/flash_attn/flash_fwd_launch_template.h"
    hops = [Hop(0, None, "cpp", "function", long, path, 58)]
    lines = TraceView(query="q", direction="down", device="cuda", depth=1, hops=hops).to_text(width=100).splitlines()
    at = lines.index(f"  1  cpp          {long}")  # the line wraps whatever the name: the name stays whole
    assert lines[at + 1] == f"       {path}:58"


def _long_chain(branches: int, derivatives: int, length: int = 23, one_file: bool = False) -> TraceView:
    """A chain of `length` hops whose lines wrap at 100 columns (each in a file of its own, or all but the first in
    `one_file`), `branches` leaves off its second hop, `derivatives` derivatives.yaml entries under its first."""
    path = lambda i: ("aten/src/ATen/native/transformers/cuda/flash_attn/flash_fwd_launch_template.h" if one_file
                      else f"aten/src/ATen/native/transformers/cuda/flash_attn/flash_fwd_launch_tmpl_{i:02d}.h")
    hops = [Hop(0, None, "python", "function", "torch.nn.functional.scaled_dot_product_attention",
                "torch/nn/functional.py", 1)]
    for i in range(1, length):
        hops.append(Hop(i, i - 1, "cpp", "function", f"at::native::run_flash_attention_forward_step_{i}", path(i),
                        i))
    hops[-1] = Hop(length - 1, length - 2, "cuda", "launch",
                   "flash_fwd_kernel<<<grid, Kernel_traits::kNThreads, smem, stream>>>", path(length - 1), 93)
    for i in range(branches):
        hops.append(Hop(len(hops), 1, "cpp", "calls", f"at::native::branch_{i}", "aten/src/ATen/native/x.cpp", i + 1))
        hops.append(Hop(len(hops), len(hops) - 1, "cuda", "launch", f"k{i}<<<1, 1>>>", "aten/src/x.cu", i + 1))
    for i in range(derivatives):
        hops.append(Hop(len(hops), 0, "backward", "derivative", f"derivatives.yaml: op_{i}",
                        "tools/autograd/derivatives.yaml", 10 * i + 1))
        hops.append(Hop(len(hops), len(hops) - 1, "backward", "formula", f"self: grad_{i}(grad)",
                        "tools/autograd/derivatives.yaml", 10 * i + 2, detail="grad formula"))
    return TraceView(query="F.scaled_dot_product_attention", direction="down", device="cuda", depth=1, hops=hops)


def test_a_chain_that_wraps_keeps_every_hop_and_the_rest_gives_way():
    t = _long_chain(branches=30, derivatives=3)
    lines = t.to_text(width=100).splitlines()
    assert len(lines) <= 60 and all(len(line) <= 100 for line in lines), len(lines)
    chain = [h for h in t.main_chain()]
    # each path on a line of its own below its name (the third's with the choice mark)
    assert len(chain) == 23 and all(f"       {h.file}:{h.line}" in lines for h in chain[1:2] + chain[3:])
    assert lines[lines.index("  3  cpp          at::native::run_flash_attention_forward_step_2") + 1] == \
        f"       {chain[2].file}:2  ◆31 ranked"  # the short mark: the long one would take a line of its own
    # no blank line under a title; one backward entry and the count of the others
    assert lines[lines.index("Main chain: the default path on CUDA, to the device code it ends in") + 1].startswith(
        "  1  python")
    back = lines.index("Backward")
    assert lines[back + 1:back + 4] == [
        "     backward     derivatives.yaml: op_0  tools/autograd/derivatives.yaml:1  (1 formula)",
        "       backward     self: grad_0(grad)  tools/autograd/derivatives.yaml:2",
        "     … and 2 more derivatives.yaml entries (--tree)"]
    more = next(line for line in lines if line.startswith("  … and "))
    n, folded = map(int, re.findall(r"\d+", more))
    shown = sum(" ↳ " in line for line in lines)
    assert shown >= 1 and shown + n == 30 and folded == 2 * n  # every branch on a line or counted
    assert lines[-1] == "Expand: --tree (all 89 hops)  --snippets  --depth 2  --backward  --json  --legend"
    # unwrapped (piped), the same trace keeps its blank lines and three backward entries
    plain = t.to_text().splitlines()
    assert len(plain) == 60 and plain[plain.index("Backward") + 1] == ""
    assert sum(line.startswith("     backward ") for line in plain) == 3
    assert plain[-1].startswith("Expand: --tree (all 89 hops)  --snippets (source lines)  --depth 2 (follow")


def test_a_chain_longer_than_the_screen_is_never_cut():
    t = _long_chain(branches=30, derivatives=3, length=26)  # 26 hops of two lines each: 52 lines
    lines = t.to_text(width=100).splitlines()
    assert len(lines) == 66 and sum(line[:5].strip().isdigit() for line in lines) == 26
    assert "  … and 28 more branches (56 hops): --tree shows them" in lines  # the least: two branches and the count


def test_a_wrapping_chain_shows_the_line_alone_of_a_hop_in_the_file_above():
    t = _long_chain(branches=30, derivatives=3, length=26, one_file=True)
    lines = t.to_text(width=100).splitlines()
    path = t.hops[1].file
    at = lines.index("  2  cpp          at::native::run_flash_attention_forward_step_1")
    assert lines[at + 1] == f"       {path}:1"  # the first hop in that file: its whole path
    assert lines[at + 2] == "  3  cpp          at::native::run_flash_attention_forward_step_2" + " " * 20 + \
        ":2  ◆31 ranked"  # in the name column of the chain (its longest name, the first hop's)
    assert lines[at + 3] == "  4  cpp          at::native::run_flash_attention_forward_step_3" + " " * 20 + ":3"
    assert len(lines) <= 60 and sum(line[:5].strip().isdigit() for line in lines) == 26
    t.root = "/src/pytorch"
    linked = t.to_text(width=100, links=True)  # the hyperlink of `:2` is to the whole file
    assert f"\x1b]8;;file://{HOST}/src/pytorch/{path}\x1b\\:2\x1b]8;;\x1b\\" in linked
    piped = t.to_text().splitlines()  # unwrapped, every hop its whole file:line
    assert sum(f"{path}:" in line for line in piped) == 25


def test_each_note_once_a_cap_in_the_truncated_line_only():
    hops = [Hop(0, None, "native", "entry", "aten::x", "n.yaml", 1),
            Hop(1, 0, "cpp", "function", "at::native::x", "x.cpp", 2),
            Hop(2, 1, "cuda", "launch", "k<<<1, 1>>>", "x.cu", 3),
            Hop(3, 1, "cpp", "capped", "3 more calls not followed (--limit 0 follows them)", absent=True)]
    t = TraceView(query="x", direction="down", device="cuda", depth=1, hops=hops)
    TraceBuilder(t).state_caps()
    text = t.to_text()
    assert "TRUNCATED: 1 hop follows only the first few of what they lead to" in text
    assert "follow only the first few" not in text.split("TRUNCATED:")[0]  # said once, not also under "Also in"


def test_a_branch_note_gives_way_before_its_name():
    from test_trace_text import _rnn_like
    t = _rnn_like()
    t.hops[5].name, t.hops[5].file = "at::native::matmul_long_name_12345", "aten/src/ATen/native/RNN.cpp"
    lines = t.to_text(width=100).splitlines()
    # unwrapped: "(4 hops; device code: gemv_kernel)"; at 100 columns its hop count alone, the name whole
    assert "  3 ↳ native       at::native::matmul_long_name_12345  aten/src/ATen/native/RNN.cpp:20  (4 hops)" in lines
    assert "  3 ↳ native       at::native::matmul_long_name_12345  aten/src/ATen/native/RNN.cpp:20  (4 hops; " \
           "device code: gemv_kernel)" in t.to_text().splitlines()
