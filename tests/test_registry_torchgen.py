"""The registries against torchgen's own parse of the torch wheel's packaged native_functions.yaml (the oracle).

Runs whenever torch is installed (CI installs it); opindex never uses torchgen itself.
"""
from __future__ import annotations

import os
from collections import defaultdict

import pytest

torchgen = pytest.importorskip("torchgen")


@pytest.fixture(scope="module")
def packaged():
    base = os.path.join(os.path.dirname(torchgen.__file__), "packaged")
    nf = os.path.join(base, "ATen", "native", "native_functions.yaml")
    if not os.path.isfile(nf):
        pytest.skip("this torchgen has no packaged native_functions.yaml")
    return base, nf


@pytest.fixture(scope="module")
def oracle(packaged):
    from torchgen.gen import parse_native_yaml
    base, nf = packaged
    parsed = parse_native_yaml(nf, os.path.join(base, "ATen", "native", "tags.yaml"))
    rows = defaultdict(set)
    for key, backend_index in parsed.backend_indices.items():
        for op, metadata in backend_index.index.items():
            rows[str(op)].add((str(key), metadata.kernel))
    return parsed, rows


@pytest.fixture(scope="module")
def ours(packaged):
    from opindex.extract import native_yaml
    entries, warnings = native_yaml.parse(open(packaged[1], "rb").read(), packaged[1])
    assert warnings == []
    return entries


def test_every_entry_agrees_with_torchgen(oracle, ours):
    parsed, _ = oracle
    by_name = {str(f.func.name): f for f in parsed.native_functions}
    ours_names = [e.full_name for e in ours]
    assert len(ours_names) == len(set(ours_names))
    # torchgen adds generated variants (named in autogen:) to its list; every other name is an entry of the file.
    autogen = {name.strip() for e in ours if e.autogen for name in e.autogen.split(",")}
    assert set(ours_names) <= set(by_name)
    assert set(by_name) - set(ours_names) <= autogen
    assert not autogen & set(ours_names)
    for e in ours:
        f = by_name[e.full_name]
        assert e.location.line == f.loc.line, e.full_name
        assert e.structured == f.structured, e.full_name
        assert e.structured_delegate == (str(f.structured_delegate) if f.structured_delegate else None), e.full_name
        assert e.is_out == f.func.is_out_fn(), e.full_name
        assert set(e.variants.split(", ")) == {v.name.lower() for v in f.variants}, e.full_name
        assert (e.python_module or None) == (f.python_module or None), e.full_name
        # torchgen adds tags it infers (pt2_compliant_tag on every aten op, inplace on some); the file's are kept
        assert set((e.tags or "").split(", ")) - {""} <= set(f.tags), e.full_name


def test_every_dispatch_row_agrees_with_torchgen(oracle, ours):
    _, rows = oracle
    for e in ours:
        mine = {(d.dispatch_key, d.kernel) for d in e.dispatch}
        assert mine == rows.get(e.full_name, set()), e.full_name
    assert sum(len(e.dispatch) for e in ours) == sum(len(rows[e.full_name]) for e in ours)


def test_derivatives_parse_like_torchgen_counts(packaged):
    from opindex.extract import derivatives_yaml
    import yaml
    path = os.path.join(packaged[0], "autograd", "derivatives.yaml")
    entries, warnings = derivatives_yaml.parse(open(path, "rb").read(), path)
    plain = yaml.safe_load(open(path))
    assert warnings == []
    assert [e.schema for e in entries] == [d["name"] for d in plain]
    formula_keys = sum(len([k for k in d if k not in ("name", "output_differentiability", "dispatch")])
                       + sum(len(v) for v in (d.get("dispatch") or {}).values()) for d in plain)
    assert sum(len(e.formulas) for e in entries) == formula_keys
