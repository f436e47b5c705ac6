"""Issue 33, item 11: pathological nesting was super-linear (60,000 nested calls in a 180 KB .py took 49 s, 40,000
in C++ 28 s, 60,000 over 120 s) and stalled a build with no word of the file. Past MAX_NESTING brackets the text
inside is blanked, extraction stays linear, and the build names the file."""
from __future__ import annotations

import shutil
import subprocess
import sys
import time

from conftest import SAMPLE

from opindex.extract import extract
from opindex.extract.nesting import MAX_NESTING, flatten, too_deep


def nested_py(n: int) -> bytes:
    return ("import torch\n\n\ndef g(x):\n    return torch.relu(" + "f(" * n + "x" + ")" * n + ")\n").encode()


def nested_cpp(n: int) -> bytes:
    return ("namespace at { namespace native {\nint g(int x) {\n  return h(" + "f(" * n + "x" + ")" * n
            + ");\n}\n}}\n").encode()


def test_too_deep_counts_matched_brackets_of_every_kind():
    assert not too_deep(b"f(" * 64 + b")" * 64)
    assert too_deep(b"f(" * 65 + b")" * 65)
    assert too_deep(b"{[(" * 22 + b")]}" * 22)  # 66 levels of three kinds
    assert not too_deep(b"'" + b"(" * 500 + b"'")  # unmatched, as in a string: nothing nests


def test_flatten_blanks_inside_the_deepest_brackets_and_keeps_every_line():
    data = b"a(" * 3 + b"x,\ny" + b")" * 3 + b"\nb(\n(z))"
    out, lines = flatten(data, limit=2)
    assert out == b"a(a(a(  \n )))\nb(\n(z))"
    assert lines == [1] and len(out) == len(data)


def test_extraction_of_60000_nested_calls_is_linear():
    for data, lang, path, module in ((nested_py(60_000), "python", "torch/deep.py", "torch.deep"),
                                     (nested_cpp(60_000), "cpp", "aten/src/ATen/native/Deep.cpp", None)):
        started = time.monotonic()
        facts = extract(path, data, lang, module)
        assert time.monotonic() - started < 10, lang
        assert facts.message == (f"brackets nested deeper than {MAX_NESTING} levels (line {3 if lang == 'cpp' else 5}"
                                 f"): the text inside them is not indexed")
        callees = [r for r in facts.records("calls")]
        assert {c.callee for c in callees} == {"relu" if lang == "python" else "h", "f"}
        # the f(s) whose own bracket opens at level 64 or 65 (inside relu's, or the namespaces', body's and h's)
        assert sum(c.callee == "f" for c in callees) == (61 if lang == "cpp" else 64)


def test_a_build_names_the_deep_file_and_goes_on(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(SAMPLE, tree)
    (tree / "torch" / "deep.py").write_bytes(nested_py(60_000))
    (tree / "aten/src/ATen/native/Deep.cpp").write_bytes(nested_cpp(40_000))
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "opindex", "build", str(tree), "--db", str(tmp_path / "i.sqlite"),
                           "--jobs", "1", "-q"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - started < 60
    assert ("warning: torch/deep.py: brackets nested deeper than 64 levels (line 5): the text inside them is not "
            "indexed") in proc.stderr
    assert "warning: aten/src/ATen/native/Deep.cpp: brackets nested deeper than 64 levels (line 3)" in proc.stderr
