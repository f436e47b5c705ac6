"""One op's two main chains side by side, hop by hop, matched by role and ignoring line shifts.

Each hop of a main chain has a role (ROLES: entry, dispatch row, C++, stub, registration, launch, device code ...).
The two chains are aligned as sequences (the alignment that pairs the most hops of one role, hops of the same name
first), and each pair says what happened: same (one name in one file: a line shift is no change), moved (one name,
another file), changed (another name in that role), added or removed (a hop one side has and the other has not).
"""
from __future__ import annotations

from ..trace.model import bare_name

ROLES = {("native", "entry"): "entry", ("native", "structured_delegate"): "delegate",
         ("native", "calls_op"): "op call", ("cpp", "launcher"): "launcher",
         ("cuda", "launch"): "launch", ("cuda", "global_kernel"): "device code",
         ("cuda", "tensor_iterator"): "launcher call"}
LAYER_ROLES = {"python": "python", "bridge": "bridge", "native": "native", "dispatch": "dispatch row",
               "cpp": "C++", "stub": "stub", "registration": "registration", "cuda": "device code",
               "library": "library call", "codegen": "codegen"}


def role(hop) -> str:
    return ROLES.get((hop.layer.value, str(hop.kind)), LAYER_ROLES.get(hop.layer.value, hop.layer.value))


key_name = bare_name  # the name a hop is matched by (trace/model.py)


def hop_dict(hop) -> dict:
    return {"role": role(hop), "kind": str(hop.kind), "name": hop.name, "file": hop.file, "line": hop.line}


def align(a: list, b: list) -> list[tuple]:
    """(hop of a or None, hop of b or None) in chain order: the alignment with the best score, where a pair of one
    role scores 1, and 3 when the names match too (gaps score 0)."""
    ka, kb = [(role(h), key_name(h)) for h in a], [(role(h), key_name(h)) for h in b]
    n, m = len(a), len(b)
    score = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            pair = (3 if ka[i] == kb[j] else 1) if ka[i][0] == kb[j][0] else -1
            best = max(score[i + 1][j], score[i][j + 1])
            score[i][j] = max(best, score[i + 1][j + 1] + pair) if pair > 0 else best
    out, i, j = [], 0, 0
    while i < n and j < m:
        pair = (3 if ka[i] == kb[j] else 1) if ka[i][0] == kb[j][0] else -1
        if pair > 0 and score[i][j] == score[i + 1][j + 1] + pair:
            out.append((a[i], b[j]))
            i, j = i + 1, j + 1
        elif score[i][j] == score[i + 1][j]:
            out.append((a[i], None))
            i += 1
        else:
            out.append((None, b[j]))
            j += 1
    return out + [(h, None) for h in a[i:]] + [(None, h) for h in b[j:]]


def status(ha, hb) -> str:
    if hb is None:
        return "removed"
    if ha is None:
        return "added"
    if key_name(ha) != key_name(hb):
        return "changed"
    return "same" if ha.file == hb.file else "moved"


def steps(ta, tb) -> list[dict]:
    """The two main chains as aligned steps: role, status, and each side's hop (None where it has none)."""
    out = []
    for ha, hb in align(ta.main_chain() if ta.hops else [], tb.main_chain() if tb.hops else []):
        out.append({"role": role(ha or hb), "status": status(ha, hb), "a": ha and hop_dict(ha),
                    "b": hb and hop_dict(hb)})
    return out


def device_code(ta, tb) -> dict:
    """What each side runs on the device: the main chain's end, and the device code anywhere in each trace (the
    __global__ kernels and library functions of its ends) that the other trace does not reach."""
    def ends(t):
        return {key_name(h) for h in t.ends() if str(h.kind) != "launch"} if t.hops else set()

    def end(t):
        chain = t.main_chain() if t.hops else []
        last = chain[-1] if chain else None
        return hop_dict(last) if last is not None and last.layer.value in ("cuda", "library") else None
    ea, eb = ends(ta), ends(tb)
    return {"a": end(ta), "b": end(tb), "only_a": sorted(ea - eb), "only_b": sorted(eb - ea)}


def chain_ops(ta, tb) -> tuple[set[str], set[str]]:
    """(base names, full names) of the native entries on either main chain: the registry entries the op's diff
    shows."""
    full = {h.op for t in (ta, tb) if t.hops for h in t.main_chain() if h.op and role(h) == "entry"}
    return {f.split(".")[0] for f in full}, full
