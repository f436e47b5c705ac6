"""Fuzzing: random and mutated real sources into every extractor; no exception may escape.

A short run is part of the tests. The long run (docs/robustness.md, "Fuzzing") is:
    OPINDEX_FUZZ_EXAMPLES=10000 python -m pytest -q tests/test_fuzz.py
"""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import SAMPLE

from opindex.extract import FileFacts, check_rows, extract
from opindex.extract import derivatives_yaml, native_yaml
from opindex.model import SourceError
from opindex.records import FACT_ROWS

EXAMPLES = int(os.environ.get("OPINDEX_FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 60,
                suppress_health_check=list(HealthCheck))


def corpus(*suffixes: str) -> list[bytes]:
    files = sorted(p for p in SAMPLE.rglob("*") if p.suffix in suffixes and p.is_file())
    return [p.read_bytes() for p in files] or [b""]


CPP, PY = corpus(".cpp", ".cu", ".h", ".cuh"), corpus(".py", ".pyi")
NATIVE = (SAMPLE / "aten/src/ATen/native/native_functions.yaml").read_bytes()
DERIVATIVES = (SAMPLE / "tools/autograd/derivatives.yaml").read_bytes()


@st.composite
def mutated(draw, sources: list[bytes]) -> bytes:
    """A real source with a few random cuts, insertions and byte flips."""
    data = bytearray(draw(st.sampled_from(sources)))
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["cut", "insert", "flip", "dup"]))
        pos = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "cut":
            del data[pos:pos + draw(st.integers(1, 200))]
        elif op == "insert":
            data[pos:pos] = draw(st.binary(max_size=40) | st.sampled_from(
                [b"{", b"}", b"(", b")", b"<<<", b">>>", b"#define X(a) a##_stub\n", b"\\\n", b'"', b"'''",
                 b"\n    ", b"\x00", b"TORCH_IMPL_FUNC(", b"REGISTER_DISPATCH(", b"class :", b"def (", b"@"]))
        elif op == "flip" and data:
            data[pos] ^= draw(st.integers(1, 255))
        elif op == "dup":
            data[pos:pos] = data[pos:pos + draw(st.integers(1, 400))]
    return bytes(data)


def check(facts: FileFacts) -> None:
    assert isinstance(facts, FileFacts)
    for table, rows in facts.rows.items():
        width = len(FACT_ROWS[table]._fields)
        assert all(isinstance(r, tuple) and len(r) == width for r in rows), table
    check_rows(facts.rows, "fuzzed", every_row=True)  # and every value of the column's type (NOT NULL kept)


@FUZZ
@given(st.one_of(mutated(CPP), st.binary(max_size=2000)), st.sampled_from(["cpp", "cuda"]))
def test_cpp_extractor_never_raises(data, language):
    check(extract("aten/src/ATen/native/cuda/Fuzz.cu", data, language, None))


@FUZZ
@given(st.one_of(mutated(PY), st.binary(max_size=2000), st.text(max_size=500).map(str.encode)))
def test_python_extractor_never_raises(data):
    check(extract("torch/nn/fuzz.py", data, "python", "torch.nn.fuzz"))


@FUZZ
@given(st.one_of(mutated([NATIVE]), st.binary(max_size=500)))
def test_native_yaml_raises_only_source_errors(data):
    try:
        entries, warnings = native_yaml.parse(data, "native_functions.yaml")
    except SourceError as exc:
        assert str(exc).startswith("native_functions.yaml:")
        return
    assert all(w.startswith("native_functions.yaml:") for w in warnings)


@FUZZ
@given(st.one_of(mutated([DERIVATIVES]), st.binary(max_size=500)))
def test_derivatives_yaml_raises_only_source_errors(data):
    try:
        entries, warnings = derivatives_yaml.parse(data, "derivatives.yaml")
    except SourceError as exc:
        assert str(exc).startswith("derivatives.yaml:")
        return
    assert all(w.startswith("derivatives.yaml:") for w in warnings)


@pytest.mark.parametrize("text", [b"- func: relu(\n", b"- func: 7\n", b"- func: [a, b]\n", b"- {func: 'x()', dispatch: 3}\n",
                                  b"- func: a(Tensor self) -> Tensor\n  dispatch:\n    : k\n", b"{a: b}\n", b"\xff\xfe"])
def test_native_yaml_odd_shapes(text):
    try:
        entries, warnings = native_yaml.parse(text, "nf.yaml")
    except SourceError as exc:
        assert str(exc).startswith("nf.yaml:")
