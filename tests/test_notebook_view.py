"""A trace in a notebook: the main chain one hop a line, each branch folded into an HTML <details> (one line with
the hops below it until opened), every hop present once."""
from __future__ import annotations

from html.parser import HTMLParser

from opindex.render.trace_view import TraceView
from opindex.trace.model import Hop


def small() -> TraceView:
    hops = [
        Hop(0, None, "python", "function", "torch.relu", "torch/functional.py", 10, "def relu(x)"),
        Hop(1, 0, "native", "entry", "aten::relu", "native_functions.yaml", 4, "relu(Tensor self) -> Tensor"),
        Hop(2, 1, "dispatch", "CUDA", "CUDA: relu", "native_functions.yaml", 7),
        Hop(3, 2, "cpp", "function", "at::native::relu", "Activation.cpp", 20),
        Hop(4, 3, "cuda", "launch", "relu_kernel<<<g, b>>>", "Activation.cu", 30, "<T, T_ACC> & *x*"),
        Hop(5, 1, "backward", "derivative", "derivatives.yaml: relu", "derivatives.yaml", 3),
        Hop(6, 5, "backward", "formula", "self: threshold_backward(grad, result, 0)", "derivatives.yaml", 4),
        Hop(7, 1, "dispatch", "MPS", "MPS: relu_mps", "native_functions.yaml", 8),
        Hop(8, 7, "registration", "absent", "no MPS registration found by opindex", absent=True),
    ]
    return TraceView(query="torch.relu", direction="down", device="cuda", depth=1, hops=hops)


def test_html_is_the_chain_with_the_branches_loaded_on_demand():
    page = small()._repr_html_()
    body = page.split("</style>", 1)[1].split('<script type="application/octet-stream"', 1)[0]
    assert body == (
        '<p><b>opindex trace <code>torch.relu</code></b> (top-down, device cuda, dtype float32, depth 1): 9 hops; the main chain '
        '(5 hops), then 2 branches folded (click to open)</p><ol>'
        '<li><b>python</b> <code>torch.relu</code> <span class="w">torch/functional.py:10</span> '
        '<span class="d">def relu(x)</span></li>'
        '<li><b>native</b> <code>aten::relu</code> <span class="w">native_functions.yaml:4</span> '
        '<span class="d">relu(Tensor self) -&gt; Tensor</span><ul>'
        '<li><details data-h="5"><summary><b>backward</b> <code>derivatives.yaml: relu</code> '
        '<span class="w">derivatives.yaml:3</span> <i>(1 hop below)</i></summary>'
        '<div class="b"><i>t.branch(5) shows them</i></div></details></li>'
        '<li><details data-h="7"><summary><b>dispatch</b> <code>MPS: relu_mps</code> <span class="w">'
        'native_functions.yaml:8</span> <i>(1 hop below)</i></summary>'
        '<div class="b"><i>t.branch(7) shows them</i></div></details></li></ul></li>'
        '<li><b>dispatch</b> <code>CUDA: relu</code> <span class="w">native_functions.yaml:7</span></li>'
        '<li><b>cpp</b> <code>at::native::relu</code> <span class="w">Activation.cpp:20</span></li>'
        '<li><b>cuda</b> <code>relu_kernel&lt;&lt;&lt;g, b&gt;&gt;&gt;</code> <span class="w">Activation.cu:30</span> '
        '<span class="d">&lt;T, T_ACC&gt; &amp; *x*</span></li></ol>')
    # the hops off the chain travel once, as data the page's script reads when a branch opens
    assert loaded(page) == {"f": ["derivatives.yaml", "native_functions.yaml"], "h": [
        [5, 1, "backward", "derivatives.yaml: relu", 0, 3, "", 0, 1],
        [6, 5, "backward", "self: threshold_backward(grad, result, 0)", 0, 4, "", 0, 0],
        [7, 1, "dispatch", "MPS: relu_mps", 1, 8, "", 0, 1],
        [8, 7, "registration", "no MPS registration found by opindex", -1, 0, "", 1, 0]]}


def loaded(page: str) -> dict:
    import base64
    import json
    import re
    import zlib
    data = re.search(r'class="opindex-data">([^<]*)</script>', page).group(1)
    return json.loads(zlib.decompress(base64.b64decode(data)))


def test_a_branch_on_demand_is_a_trace_of_its_own():
    b = small().branch(7)
    assert [(h.id, h.parent, h.name) for h in b.hops] == [(0, None, "MPS: relu_mps"),
                                                         (1, 0, "no MPS registration found by opindex")]
    assert b.query == "torch.relu, below hop 7"


def test_markdown_is_the_chain_then_a_line_per_branch():
    assert small()._repr_markdown_() == """\
### opindex trace `torch.relu` (top-down, device cuda, dtype float32, depth 1)

9 hops: the main chain (5 hops), then 2 branches, one line each.

1. **python** `torch.relu` — `torch/functional.py:10` — def relu(x)
2. **native** `aten::relu` — `native_functions.yaml:4` — relu(Tensor self) -&gt; Tensor
   - **backward** `derivatives.yaml: relu` — `derivatives.yaml:3` *(1 hop below: `t.branch(5)`)*
   - **dispatch** `MPS: relu_mps` — `native_functions.yaml:8` *(1 hop below: `t.branch(7)`)*
3. **dispatch** `CUDA: relu` — `native_functions.yaml:7`
4. **cpp** `at::native::relu` — `Activation.cpp:20`
5. **cuda** `relu_kernel<<<g, b>>>` — `Activation.cu:30` — &lt;T, T\\_ACC&gt; &amp; \\*x\\*
"""


def test_a_traces_repr_is_its_text_view():
    t = small()
    assert repr(t) == t.to_text(context=0) and repr(t).startswith("opindex trace torch.relu   (top-down")


def test_a_name_that_is_no_trace_shows_its_message_and_candidates():
    t = TraceView(query="LSTM", direction="down", device="cuda", depth=1, message="ambiguous: LSTM is 2 names",
                  candidates=["torch.nn.LSTM", "torch.ao.nn.quantized.dynamic.LSTM"])
    assert t._repr_html_() == (
        '<div class="opindex-trace"><p><b>opindex trace <code>LSTM</code></b> (top-down, device cuda, dtype float32, depth 1)</p>'
        '<p>ambiguous: LSTM is 2 names</p><ul><li><code>torch.nn.LSTM</code></li>'
        '<li><code>torch.ao.nn.quantized.dynamic.LSTM</code></li></ul></div>')


class Shown(HTMLParser):
    """What a notebook shows before any click: <li> items outside every <details> (but a <details>'s <summary>
    is shown); also checks that the tags nest."""

    def __init__(self):
        super().__init__()
        self.stack, self.shown, self.items = [], 0, 0

    def hidden(self) -> bool:
        # inside a <details> and not inside its own <summary>
        for i, tag in enumerate(self.stack):
            if tag == "details" and "summary" not in self.stack[i + 1:]:
                return True
        return False

    def handle_starttag(self, tag, attrs):
        if tag == "li":
            self.items += 1
            self.shown += not self.hidden()
        self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-3:])
        self.stack.pop()


def shown(t) -> Shown:
    parser = Shown()
    parser.feed(t._repr_html_())
    assert parser.stack == []
    return parser


def test_lstm_on_the_sample_shows_its_chain_and_one_line_per_branch(ix):
    t = ix.trace("nn.LSTM")
    chain = t.main_chain()
    on = {h.id for h in chain}
    branches = [h for h in t.hops if h.parent in on and h.id not in on]
    parsed = shown(t)
    assert parsed.items == parsed.shown == len(chain) + len(branches) < len(t.hops)
    assert len(loaded(t._repr_html_())["h"]) == len(t.hops) - len(chain)  # every other hop, once, on demand
    assert [c.name for c in chain][-1] in t._repr_markdown_()


def test_real_traces_show_the_chain_and_fold_the_rest(real_index):
    for name in ("nn.LSTM", "F.scaled_dot_product_attention", "nn.MultiheadAttention"):
        t = real_index.trace(name)
        chain = t.main_chain()
        on = {h.id for h in chain}
        branches = [h for h in t.hops if h.parent in on and h.id not in on]
        parsed = shown(t)
        assert parsed.items == parsed.shown == len(chain) + len(branches), name
        assert len(loaded(t._repr_html_())["h"]) == len(t.hops) - len(chain), name
    lstm = real_index.trace("nn.LSTM")
    # 50.9 KB for its 926 hops (2026-12-06: a copy into a strided view shows its launcher's ways, 47.2 KB for 786
    # the day before); every hop was 251 KB
    assert len(lstm._repr_html_().encode()) < 56_000


def test_a_notebook_states_the_build_and_what_decided_the_chain(real_index):
    """The notebook views say what the text says (issue 28, point 6): the dtype and the build traced, the choices
    the inputs leave open, and under each chain hop where the chain went one way of several its mark and test
    (F.nll_loss on -U USE_MACA: LossNLL.cpp:702 tests the input's rank, which a name does not give; Loss.cu:373
    the same, as n_dims)."""
    t = real_index.trace("F.nll_loss", undefines=["USE_MACA"])
    md = t._repr_markdown_().splitlines()
    assert md[0] == "### opindex trace `F.nll_loss` (top-down, device cuda, dtype float32, depth 1)"
    assert "Build: USE\\_MACA undefined (-U); USE\\_ROCM undefined (upstream default)" in md
    summary = "Main chain ranked at hops 6, 16 (2 choices the inputs do not settle)"
    assert summary in md
    at = next(i for i, line in enumerate(md) if line.startswith("6. **native** `at::nll_loss_symint`"))
    assert md[at].endswith("**◆ default of 3, ranked**")
    assert md[at + 1] == ("   *open: input\\_.dim() == 1 \\|\\| input\\_.dim() == 2 at LossNLL.cpp:702 -&gt; "
                          "nll\\_loss\\_forward\\_reduce\\_cuda\\_kernel\\_2d; or nll\\_loss2d\\_forward\\_kernel*")
    page = t._repr_html_()
    assert f'<p class="d">{summary}</p>' in page
    assert ('<b>◆ default of 3, ranked</b><div class="d">open: not (n_dims == 1) at Loss.cu:373 -&gt; '
            'nll_loss_forward_reduce_cuda_kernel_2d; or nll_loss_forward_reduce_cuda_kernel_1d</div>') in page
