"""Issue 33 (12, 14, 15): every input reader fails with one line and an exit code of the documented set, or goes on
without what it cannot read: a file name that is not UTF-8, a closed standard output, a damaged trace cache."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import SAMPLE


def run(*args, **kw):
    return subprocess.run([sys.executable, "-m", "opindex", *args], capture_output=True, text=True, timeout=120, **kw)


def test_a_file_name_that_is_not_utf8_is_skipped_by_name(sample_copy, tmp_path):
    name = os.path.join(os.fsencode(sample_copy / "torch"), b"caf\xe9.py")
    with open(name, "wb") as f:
        f.write(b"def cafe():\n    pass\n")
    proc = run("build", str(sample_copy), "--db", str(tmp_path / "i.sqlite"), "-q", "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    assert "warning: torch/caf\\udce9.py: a file name that is not UTF-8; skipped" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_closed_standard_output_is_said_on_stderr(sample_db):
    proc = subprocess.run(f'"{sys.executable}" -m opindex sql "SELECT 1" --db "{sample_db}" >&-', shell=True,
                          capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stderr) == (3, "opindex: standard output is closed: nowhere to write the answer\n")


def test_a_damaged_trace_cache_is_walked_again(sample_db, tmp_path):
    """The cache of fill/copy paths is derived data (trace/cache.py): a file of another shape is ignored and
    rewritten, never a reason for every later trace to fail."""
    env = {**os.environ, "OPINDEX_CACHE": str(tmp_path / "cache")}
    first = run("trace", "aten::native_layer_norm_backward", "--db", str(sample_db), "--json", env=env)
    assert first.returncode == 0, first.stderr
    [cache] = list((tmp_path / "cache" / "paths").glob("*.json"))
    key = json.loads(cache.read_text())["key"]
    expected = json.loads(first.stdout)["hops"]
    for damaged in ("[]", "null", json.dumps({"key": key, "paths": [1]}),
                    json.dumps({"key": key, "paths": [{"ops": [1], "device": "cuda", "hops": [[0, ["x"], []]]}]})):
        cache.write_text(damaged)
        again = run("trace", "aten::native_layer_norm_backward", "--db", str(sample_db), "--json", env=env)
        assert again.returncode == 0 and "Traceback" not in again.stderr, (damaged, again.stderr)
        assert json.loads(again.stdout)["hops"] == expected
    assert SAMPLE.is_dir()


def test_a_yaml_alias_bomb_in_a_registry_is_refused_at_its_line(sample_copy, tmp_path):
    """Issue 33 (6): nine levels of nine aliases (a 1 KB file that expands to 387 million strings) is refused with
    the line of the alias past the bound (yaml_lines.MAX_NODES); the other layers are indexed, the index stays
    small."""
    lines = ['- a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"- {name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    registry = sample_copy / "aten/src/ATen/native/native_functions.yaml"
    registry.write_text("\n".join(lines) + "\n- func: x(Tensor self) -> Tensor\n")
    db = tmp_path / "i.sqlite"
    proc = run("build", str(sample_copy), "--db", str(db), "-q", "--jobs", "1")
    assert "aten/src/ATen/native/native_functions.yaml:7: malformed YAML: its aliases expand to more than " \
           "2,000,000 nodes (an alias bomb?)" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and db.stat().st_size < 5_000_000


def test_control_characters_and_html_from_names_reach_no_terminal_or_markdown_raw(sample_copy, tmp_path):
    """Issue 33 (3): a file named with ESC and an OSC 52 sequence (a clipboard write), a kernel named `<script>`:
    every table, trace text and Markdown shows them escaped (render/printable.py)."""
    name = "evil\x1b]52;c;aGk=\x07.py"
    (sample_copy / "torch" / name).write_text("def evil_def():\n    pass\n")
    db = tmp_path / "i.sqlite"
    assert run("build", str(sample_copy), "--db", str(db), "-q", "--jobs", "1").returncode == 0
    found = run("find", "evil_def", "--db", str(db), "--table")
    assert found.returncode == 0 and "\x1b" not in found.stdout and "\x07" not in found.stdout
    assert "evil\\x1b]52;c;aGk=\\x07.py" in found.stdout
    kernels = tmp_path / "kernels.txt"
    kernels.write_text("void k<<script>alert(1)</script>>(float*)\n")
    md = run("profile", str(kernels), "--db", str(db), "--markdown")
    assert md.returncode in (0, 1) and "<script>" not in md.stdout and "&lt;script&gt;" in md.stdout, md.stdout


def test_printable_escapes_control_characters_only():
    from opindex.render.printable import markdown_text, printable
    assert printable("at::native::relu  file.cu:3") == "at::native::relu  file.cu:3"
    assert printable("a\x1b[2Jb\nc\x9bd") == "a\\x1b[2Jb\\x0ac\\x9bd"
    assert markdown_text("k<T> & x\x07") == "k&lt;T&gt; &amp; x\\x07"


def test_an_index_shared_by_threads_takes_turns(sample_db):
    """Issue 33 (10): two threads tracing and querying through one Index finish (they deadlocked on the connection)."""
    import threading

    from opindex.api import Index
    ix = Index(sample_db)
    results, errors = [], []

    def work():
        try:
            for _ in range(5):
                results.append((len(ix.trace("nn.LSTM").hops), len(ix.rows("SELECT name FROM native_functions"))))
        except Exception as exc:  # noqa: BLE001 - any failure is the test's answer
            errors.append(exc)
    threads = [threading.Thread(target=work) for _ in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert not any(th.is_alive() for th in threads) and errors == []
    assert len(results) == 10 and len(set(results)) == 1


def test_a_full_disk_leaves_no_temporary_cache_file(sample_db, tmp_path, monkeypatch):
    """Issue 33 (15): the cache file is written to a temporary file, then renamed; a write that fails (ENOSPC) keeps
    the old file and removes the part-written one."""
    import errno

    from opindex.api import Index
    from opindex.trace import cache as cache_module
    monkeypatch.setenv("OPINDEX_CACHE", str(tmp_path / "cache"))

    def full_disk(data, f):
        f.write("{")
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(cache_module.json, "dump", full_disk)
    with Index(sample_db) as ix:
        t = ix.trace("aten::native_layer_norm_backward")
    assert t.hops
    folder = tmp_path / "cache" / "paths"
    assert folder.is_dir() and list(folder.iterdir()) == []
