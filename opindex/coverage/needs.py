"""What a model needs and what a backend lacks: the ops of a torch.profiler trace, and the gap list of a backend
(`--missing`): the ops it has no kernel for (missing, or only its backend fallback) that CUDA has, ranked by how
many Python APIs reach each."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

from ..model import OpindexError

# what a backend runs with code of its own, or a composite of such code: the reference backend's "has"
HAS = ("kernel", "inherited", "composite_explicit", "composite_implicit")
LACKS = ("missing", "fallback")
REFERENCE = "CUDA"
_CPU_CATS = ("cpu_op", "operator")


def profile_ops(path: str | Path) -> list[str]:
    """The op names (aten::add, quantized::linear) of a torch.profiler Chrome trace (.json or .json.gz), in the
    order first seen: the CPU-side op events carry them without an overload."""
    p = Path(path)
    try:
        raw = p.read_bytes()
        data = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise OpindexError(f"{p}: cannot read the profile ({e})") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise OpindexError(f"{p}: not a Chrome trace (JSON): {e}") from None
    events = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(events, list):
        raise OpindexError(f"{p}: no traceEvents list: not a torch.profiler Chrome trace")
    seen: dict[str, None] = {}
    for e in events:
        if isinstance(e, dict) and e.get("cat") in _CPU_CATS and "::" in str(e.get("name", "")):
            seen.setdefault(str(e["name"]).split(" ")[0], None)
    return list(seen)


def gaps(rows: list[dict], key: str, reference: str = REFERENCE) -> list[dict]:
    """The rows of `key` whose op the key lacks (missing or fallback) while `reference` has it, most Python APIs
    first. `rows` must hold both keys' rows."""
    has = {r["op"] for r in rows if r["key"] == reference and r["status"] in HAS}
    out = [r for r in rows if r["key"] == key and r["status"] in LACKS and r["op"] in has]
    return sorted(out, key=lambda r: (-r["python_apis"], r["op"]))


def with_lacks(rows: list[dict], names: set[str]) -> set[str]:
    """`names` and the ops their composite kernels lack (the rows' lacks), as aten::name."""
    out = set(names)
    for r in rows:
        if r["lacks"] and (r["op"] in names or r["op"].split(".")[0] in names):
            out |= {f"aten::{n}" for n in r["lacks"]}
    return out
