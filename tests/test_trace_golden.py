"""Every golden trace in sample_checkout/README.md, exactly (regenerate with `python tests/golden.py`)."""
from __future__ import annotations

import pytest

from golden import README, blocks, render

GOLDEN = blocks(README.read_text(encoding="utf-8"))


def test_readme_has_golden_traces():
    names = [args.split()[0] for args, _ in GOLDEN]
    for op in ("relu", "torch.add", "mm", "nn.LSTM", "F.layer_norm", "F.softmax"):
        assert op in names


@pytest.mark.parametrize("args,expected", GOLDEN, ids=[a for a, _ in GOLDEN])
def test_golden_trace(ix, args, expected):
    assert render(ix, args) == expected
