"""Issue 33, item 13: `opindex profile` on malformed profiles gave tracebacks (JSON nested 100,000 levels, fields of
other types, a kernel name with 50,000 nested template arguments), read a 4 GiB gzip bomb or /dev/zero until memory
ran out, and read a Chrome trace with a UTF-8 BOM as a list of kernel names. Each now ends in rows or one line."""
from __future__ import annotations

import gzip
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from opindex.api import Index
from opindex.model import OpindexError
from opindex.profile.chrome import read_profile
from opindex.profile.kernel_name import parse_kernel_name

REPO = Path(__file__).resolve().parent.parent
KERNEL = {"ph": "X", "cat": "kernel", "name": "k", "ts": 10, "dur": 2, "pid": 0, "tid": 7, "args": {"correlation": 1}}
LAUNCH = {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 5, "dur": 1, "pid": 1, "tid": 2,
          "args": {"correlation": 1}}
OP = {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "ts": 0, "dur": 20, "pid": 1, "tid": 2}


def write(tmp_path: Path, events, name="p.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def run(*args):
    return subprocess.run([sys.executable, "-m", "opindex", "profile", *args], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("kernel, launch, op", [
    ({**KERNEL, "args": [1, 2]}, LAUNCH, OP),                       # args a list
    ({**KERNEL, "args": {"correlation": [1]}}, LAUNCH, OP),         # an id that cannot be a key
    (KERNEL, {**LAUNCH, "args": "x"}, OP),
    (KERNEL, {**LAUNCH, "pid": [1]}, {**OP, "pid": [1]}),           # a thread that cannot be a key
    ({**KERNEL, "dur": "abc"}, LAUNCH, {**OP, "ts": "nan"}),
])
def test_fields_of_other_types_are_read_as_absent(tmp_path, kernel, launch, op):
    prof = read_profile(write(tmp_path, [kernel, launch, op]))
    [k] = prof.kernels
    assert (k.name, k.calls, prof.skipped) == ("k", 1, 0)
    assert k.total_us == (0.0 if kernel["dur"] == "abc" else 2.0)


@pytest.mark.parametrize("bad", [5, {"a": 1}, ["kernel"], None])
def test_an_event_whose_name_or_cat_is_not_a_string_is_skipped_and_counted(tmp_path, bad):
    prof = read_profile(write(tmp_path, [{**KERNEL, "name": bad}, {**KERNEL, "cat": bad}, LAUNCH, OP]))
    assert (prof.kernels, prof.skipped) == ([], 2)


def test_a_cpu_op_of_another_type_leaves_the_kernel_unlinked(tmp_path):
    prof = read_profile(write(tmp_path, [KERNEL, LAUNCH, {**OP, "name": 7}]))
    assert (prof.kernels[0].ops, prof.unlinked, prof.skipped) == ({}, 1, 1)


def test_the_skipped_events_are_a_warning(sample_db, tmp_path):
    with Index(sample_db) as ix:
        rows = ix.profile(write(tmp_path, [KERNEL, LAUNCH, OP, {**KERNEL, "name": 5}]))
    assert "1 events skipped: their cat or name is not a string, as the profiler writes them" in rows.warnings


def test_json_nested_100000_levels_is_one_line(sample_db, tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"traceEvents": ' + "[" * 100_000 + "]" * 100_000 + "}")
    proc = run(str(path), "--db", str(sample_db))
    assert (proc.returncode, proc.stderr) == (2, f"Error: {path}: JSON nested deeper than Python's JSON reader "
                                                 f"follows (about 1,000 levels); a profiler trace nests 4\n")


def test_a_kernel_name_with_50000_nested_template_arguments(sample_db, tmp_path):
    """Past 100 levels a list is kept as its text: the name reads as it does at 3 levels."""
    name = "void at::native::k<" * 50_000 + "int" + ">" * 50_000 + "(int)"
    kn, small = parse_kernel_name(name), parse_kernel_name("void at::native::k<" * 3 + "int" + ">" * 3 + "(int)")
    assert (kn.name, kn.namespace, kn.params, kn.functors) == ("k", "at::native", ["int"], ["at::native::k"])
    assert (small.name, small.namespace, small.params, small.functors) == ("k", "at::native", ["int"],
                                                                           ["at::native::k"])
    assert len(kn.template_args) == 1 and kn.template_args[0].startswith("void at::native::k<void at::native::k<")
    proc = run(str(write(tmp_path, [{**KERNEL, "name": name}, LAUNCH, OP])), "--db", str(sample_db), "--json")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-500:]


def test_a_mangled_name_nested_past_the_stack_is_not_demangled():
    from opindex.profile.kernel_name import itanium_demangle
    assert itanium_demangle("_Z1fI" + "N1aI" * 20_000 + "i" + "EE" * 20_000 + "Evv") is None


def test_a_gzip_bomb_stops_at_the_size_limit(sample_db, tmp_path):
    """4 MB of gzip that expands to 4 GiB: refused once 512 MB came out, without holding the rest."""
    path = tmp_path / "bomb.json.gz"
    with gzip.open(path, "wb", compresslevel=9) as f:
        f.write(b'{"traceEvents": [')
        chunk = b" " * (1 << 24)
        for _ in range(256):
            f.write(chunk)
        f.write(b"]}")
    proc = run(str(path), "--db", str(sample_db))
    assert (proc.returncode, proc.stderr) == (2, f"Error: {path}: the profile is larger than 512 MB (after gunzip) "
                                                 f"and was not read (--max-size MB raises the limit, --max-size 0 "
                                                 f"lifts it)\n")
    with pytest.raises(OpindexError, match="larger than 1 MB"):
        read_profile(path, max_mb=1)


def test_dev_zero_stops_at_the_size_limit(sample_db):
    proc = run("/dev/zero", "--db", str(sample_db), "--max-size", "8")
    assert (proc.returncode, proc.stderr) == (2, "Error: /dev/zero: the profile is larger than 8 MB (after gunzip) "
                                                 "and was not read (--max-size MB raises the limit, --max-size 0 "
                                                 "lifts it)\n")


def test_gzip_members_and_a_cut_stream(tmp_path):
    body = json.dumps({"traceEvents": [KERNEL, LAUNCH, OP]}).encode()
    two = tmp_path / "two.json.gz"
    two.write_bytes(gzip.compress(body[:40]) + gzip.compress(body[40:]))  # concatenated members, as gzip writes
    assert [k.name for k in read_profile(two).kernels] == ["k"]
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(gzip.compress(body)[:30])
    with pytest.raises(OpindexError, match="not a readable gzip file"):
        read_profile(cut)


def test_a_chrome_trace_with_a_bom_is_a_chrome_trace(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"traceEvents": [KERNEL, LAUNCH, OP]}).encode())
    prof = read_profile(path)
    assert (prof.format, [k.name for k in prof.kernels], prof.kernels[0].op) == ("chrome", ["k"], "aten::relu")


def test_a_lone_surrogate_in_a_name_is_replaced(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"traceEvents": [{**KERNEL, "name": "k\udcff"}, LAUNCH, OP]}))
    assert [k.name for k in read_profile(path).kernels] == ["k\ufffd"]  # one U+FFFD for each


def test_the_sweep_of_malformed_profiles_finds_no_exception(sample_db):
    """A short run of benchmarks/profile_sweep.py (the long one: 1,000 mutants, docs/robustness.md)."""
    spec = importlib.util.spec_from_file_location("profile_sweep", REPO / "benchmarks" / "profile_sweep.py")
    sweep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sweep)
    with Index(sample_db) as ix:
        result = sweep.sweep(ix, sweep.seeds([]), 60, seed=1)
    assert result["exceptions"] == []
    assert sum(result["outcomes"].values()) == 60 and result["outcomes"]["clean error"] > 0
