"""The main-chain fault sweep (issue 28): trace every forward native function of an index on one device and check
that its main chain (Trace.main_chain, the path the text shows first) holds no backward function, no code a stock
build of that device does not compile, no other device's code, and no branch its own conditions rule out.

    python benchmarks/main_chain_sweep.py --db INDEX [--limit N] [--device cuda] [--json OUT]

Ops: every `full_name` of native_functions whose name does not contain "backward" (sorted); `--limit N` takes a
deterministic sample of N of them, evenly spaced (the int(i * count / N)-th), and says so. Each is traced as
`aten::<full_name>` in-process (a name without an overload names all of its overloads, as `opindex trace` reads
it). Categories (a rule per hop; an op counts once per category, at its first hop in it); backward, placeholder,
other_device and false_branch are faults, the last three are counted apart:

- backward: a native hop (entry, calls_op, structured_delegate ...) whose op name contains "backward"; a hop of the
  C++/CUDA/stub/registration/library layers whose bare name (no namespace, template arguments or launch
  configuration) matches BACKWARD_NAME: "backward" in any case, `_bwd`/`bwd_`, `grad_input`/`grad_weight`, or a
  library's backward API (cudnnConvolutionBackwardData, cudnnRNNBackwardWeights, ...: "Backward" again). Exempt: a
  transposed convolution's own forward (the op being swept is a conv*transpose* op): its forward *is* the
  backward-data of a convolution (cudnn_convolution_transpose -> cudnn_convolution_backward_input ->
  cudnnConvolutionBackwardData is the real path), and the other uses LEGIT_BACKWARD lists (category
  backward_legit). A plain convolution whose main chain takes the transposed branch is still a fault.
- placeholder: a hop under an `#if` a stock build of the device makes false: the `#if` rows of the index's
  `conditions` table around the hop's file:line (line <= hop line <= end_line), and the hop's own `#if`
  conditions, evaluated by pp_value() with STOCK_CUDA (USE_ROCM, __HIP_PLATFORM_*__, AT_ROCM_ENABLED() ... false;
  USE_CUDA, AT_CUDNN_ENABLED() true; `0` false; any other macro unknown, so that code is kept) and false in the
  MACA build too; a hop of kind `raises` (a function that only raises). A file named like *Placeholder* is not
  a rule: 1.8's cudnn/ConvPlaceholders.cpp holds its `#if !AT_CUDNN_ENABLED()` stubs (the `#if` rule finds those)
  and, after the `#endif`, the real wrappers of the deprecated cudnn_convolution overloads.
- other_device: a hop whose file runs on another platform than the device (`not runs_on(file, device)`:
  cpu/, mps/, mkldnn/, miopen/, hip/, xpu/ ...), or a dispatch hop whose keys name neither the device's own key
  nor a composite key (`CPU: add_out`), or a registration by another device's macro (REGISTER_CPU_DISPATCH).
- false_branch: a hop with a condition the walk read as false for this call and build (`[called when
  self.is_complex(): not with the default arguments]`, `[not in this build: #if ...]`): the main chain took a way
  its own reading of the source rules out (a repeat of the machinery walked first under that branch).
- backward_legit (not a fault; counted): a backward-named hop LEGIT_BACKWARD says is the forward op's own
  algorithm (istft's overlap-add is at::unfold_backward), each read in the source.
- other_overload (not one of issue 28's faults; counted): the main chain starts at another overload's entry than
  the swept one (`aten::cudnn_convolution` names every overload of 1.8's cudnn_convolution; the chain may start at
  `.deprecated`).
- stopped (not a fault; counted, with the hop in each op's JSON): the main chain stops above a branch the call's
  defaults or the build rule out, because every way on to device code lies under one (Trace.ruled_out:
  torch.clamp's defaults give neither min nor max; a stock build of the fork's code calls USE_MACA-only launchers).
- switch (not a fault; counted, with the value and where it is tested in each op's JSON): the main chain ends at
  a hop whose ways switch on a number of dimensions the inputs leave open (trace/rank.py `_stop_at_switch`: the
  fork's strided launchers).
- vendor (not a fault; counted): a hop whose `#if` value differs between a stock build and the MACA vendor build
  (USE_MACA, __MACA_ARCH__, TORCH_MACA_LAMBDA defined): the vendor fork's macro decides it.

Output: counts per category, the first 30 ops of each with the offending hop (name file:line), ops swept, ops that
errored, wall time; `--json OUT` writes everything (every op's faults and main chain end). Exits 0 (a report,
not a gate)."""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from opindex.pytorch.devices import BY_OPTION, COMPOSITE_KEYS, MACRO_DEVICE, runs_on  # noqa: E402
from opindex.trace.rank import switch  # noqa: E402

CATEGORIES = ("backward", "placeholder", "other_device", "false_branch", "vendor", "backward_legit", "other_overload")
FAULTS = ("backward", "placeholder", "other_device", "false_branch")

# -- backward ----------------------------------------------------------------------------------------------------
BACKWARD_NAME = re.compile(r"backward|_bwd|bwd_|grad_input|grad_weight", re.I)
NATIVE_OP_KINDS = ("entry", "calls_op", "structured_delegate", "kernel_of", "writes")
NAME_LAYERS = ("cpp", "cuda", "stub", "registration", "library")


def bare_name(name: str) -> str:
    """The bare function name of a hop's display name: `__global__ at::native::k<4, f><<<g, b>>>` -> `k`,
    `CUDA: lstm_cudnn` -> `lstm_cudnn`."""
    name = name.split("<<<")[0]
    name = name.split(":", 1)[1] if re.match(r"^[A-Za-z_]+(, [A-Za-z_]+)*: ", name) else name
    name = name.removeprefix("__global__ ").strip()
    depth, out = 0, []
    for ch in name:  # drop template arguments
        depth += ch == "<"
        if depth == 0:
            out.append(ch)
        depth -= ch == ">" and depth > 0
    name = "".join(out).split("(")[0].strip()
    return name.split("::")[-1].split(" ")[-1]


# Forward ops whose own code calls a backward-named function as its algorithm (read in the source, each one):
# (op regex, bare-name regex of the hop, why). The op regex is matched against the swept op's full name.
LEGIT_BACKWARD = (
    (r"conv.*transpose", r"backward_input|BackwardData|backward_input_out",
     "a transposed convolution's forward is a convolution's backward-data (ConvShared.cpp: "
     "cudnn_convolution_transpose_forward calls cudnn_convolution_backward_input)"),
    (r"^_masked_scale$", r"^dropout_backward_cuda$",
     "masked_scale_cuda returns dropout_backward_cuda<uint8_t>(self, mask, scale) (cuda/Dropout.cu)"),
    (r"^istft$", r"^unfold_backward$",
     "istft's overlap-add is at::unfold_backward(y_tmp, ...) (SpectralOps.cpp)"),
)


def backward_name(hop) -> bool:
    """Whether a hop is named as a backward function or op (module docstring, `backward`)."""
    if hop.layer == "native" and str(hop.kind) in NATIVE_OP_KINDS:
        return "backward" in (hop.op or hop.name).lower()
    if hop.layer in NAME_LAYERS:
        return bool(BACKWARD_NAME.search(bare_name(hop.name)))
    return False


def legit_backward(hop, root_op: str) -> str | None:
    """Why a backward-named hop is the forward op's real path (LEGIT_BACKWARD), else None."""
    name = bare_name(hop.name) if hop.layer != "native" else (hop.op or hop.name).split("::")[-1]
    for op_rule, name_rule, why in LEGIT_BACKWARD:
        if re.search(op_rule, root_op) and re.search(name_rule, name):
            return why
    return None


# -- #if values ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Build:
    """What a build defines: `defined` (name -> True/False; absent: unknown) and `values` (name or `NAME()` -> int;
    absent: unknown, but a name `defined` says is undefined is 0, as the preprocessor reads it)."""
    name: str
    defined: dict
    values: dict


_ROCM = ("USE_ROCM", "USER_ROCM", "__HIP_PLATFORM_HCC__", "__HIP_PLATFORM_AMD__", "__HIPCC__", "__HIP__",
         "__HIP_DEVICE_COMPILE__", "__HIP_ARCH__", "TORCH_HIP_VERSION", "HIP_NEW_TYPE_ENUMS",
         "TORCH_HIP_BUILD_MAIN_LIB",
         "ROCM_VERSION", "HIPSPARSE_VERSION", "HIPBLAS_V2", "C10_USE_ROCM_KERNEL_ASSERT", "__GFX11__",
         "__SYCL_DEVICE_ONLY__", "USE_MPS")
_MACA = ("USE_MACA", "__MACA_ARCH__", "TORCH_MACA_LAMBDA")
_FUNCTIONS_OFF = ("AT_ROCM_ENABLED()", "AT_USE_HIPSPARSE_TRIANGULAR_SOLVE()", "AT_USE_HIPSPARSE_GENERIC_API()",
                  "AT_USE_HIPSPARSE_CONST_DESCRIPTORS()", "AT_USE_HIPSPARSE_NON_CONST_DESCRIPTORS()",
                  "IS_SPMM_HIP_AVAILABLE()")
# a stock CUDA build (NVIDIA, cuDNN on, no vendor macro)
STOCK_CUDA = Build("stock CUDA", {**dict.fromkeys(_ROCM + _MACA, False), "USE_CUDA": True, "USE_CUDNN": True,
                                  "AT_CUDNN_ENABLED": True, "AT_ROCM_ENABLED": True},
                   {**dict.fromkeys(_FUNCTIONS_OFF, 0), "AT_CUDNN_ENABLED()": 1, "USE_CUDA": 1, "USE_CUDNN": 1})
# the MACA vendor build of the 2.4 fork: the same, with its macros defined (their values: unknown)
MACA_CUDA = Build("MACA", {**STOCK_CUDA.defined, **dict.fromkeys(_MACA, True)},
                  {**STOCK_CUDA.values, "USE_MACA": 1})

_TOKEN = re.compile(r"\s*(\d+[uUlL]*|[A-Za-z_]\w*(?:\s*\(\s*\))?|&&|\|\||==|!=|<=|>=|[<>!()])")


def _tokens(text: str) -> list[str] | None:
    text = text.strip()
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            return None if text[pos:].strip() else out
        out.append(re.sub(r"\s+", "", m.group(1)))
        pos = m.end()
    return out


def pp_value(condition: str, build: Build = STOCK_CUDA) -> bool | None:
    """The value of an `#if` condition (as the conditions table writes it: `defined(USE_ROCM)`, `not (X)` for an
    #else, `!AT_CUDNN_ENABLED()`) in `build`: True, False, or None (unknown: a macro the build does not decide, a
    version comparison, anything this reader does not parse)."""
    tokens = _tokens(condition)
    if not tokens:
        return None
    try:
        value, rest = _or(tokens, build)
    except (IndexError, ValueError):
        return None
    if rest:
        return None
    return None if value is None else bool(value)


def _or(t, b):
    left, t = _and(t, b)
    while t and t[0] in ("||", "or"):
        right, t = _and(t[1:], b)
        left = 1 if (left or right) else None if None in (left, right) else 0
    return left, t


def _and(t, b):
    left, t = _cmp(t, b)
    while t and t[0] in ("&&", "and"):
        right, t = _cmp(t[1:], b)
        left = 0 if 0 in (left, right) else None if None in (left, right) else 1
    return left, t


_CMP = {"==": int.__eq__, "!=": int.__ne__, "<": int.__lt__, ">": int.__gt__, "<=": int.__le__, ">=": int.__ge__}


def _cmp(t, b):
    left, t = _unary(t, b)
    while t and t[0] in _CMP:
        op = t[0]
        right, t = _unary(t[1:], b)
        left = None if None in (left, right) else int(_CMP[op](left, right))
    return left, t


def _unary(t, b):
    word = t[0]
    if word in ("!", "not"):
        value, rest = _unary(t[1:], b)
        return (None if value is None else int(not value)), rest
    if word == "(":
        value, rest = _or(t[1:], b)
        if not rest or rest[0] != ")":
            raise ValueError(t)
        return value, rest[1:]
    if word == "defined":
        if t[1] == "(":
            name, rest = t[2], t[3:]
            if not rest or rest[0] != ")":
                raise ValueError(t)
            rest = rest[1:]
        else:
            name, rest = t[1], t[2:]
        known = b.defined.get(name.removesuffix("()"))
        return (None if known is None else int(known)), rest
    if word.startswith("defined("):  # `defined(X)` read as a call of `defined` with no arguments: not C
        raise ValueError(t)
    if re.fullmatch(r"\d+[uUlL]*", word):
        return int(re.sub(r"[uUlL]", "", word)), t[1:]
    if re.fullmatch(r"[A-Za-z_]\w*(\(\))?", word):
        if word in b.values:
            return b.values[word], t[1:]
        if b.defined.get(word.removesuffix("()")) is False:
            return 0, t[1:]  # an undefined macro reads 0
        return None, t[1:]
    raise ValueError(t)


class IfTable:
    """The `#if` rows of an index's conditions table, per file, to find those around a line."""

    def __init__(self, rows):
        self.by_file: dict[str, list[tuple[int, int, str]]] = {}
        for r in rows:
            self.by_file.setdefault(r["file"], []).append((r["line"], r["end_line"], r["condition"]))
        for spans in self.by_file.values():
            spans.sort()
        self.starts = {f: [s[0] for s in spans] for f, spans in self.by_file.items()}

    @classmethod
    def of(cls, ix) -> IfTable:
        return cls(ix.rows("SELECT file, line, end_line, condition FROM conditions WHERE kind = '#if'"))

    def around(self, file: str | None, line: int | None) -> list[str]:
        if not file or not line or file not in self.by_file:
            return []
        spans = self.by_file[file][:bisect_right(self.starts[file], line)]
        return [cond for start, end, cond in spans if start <= line <= end]


def hop_if_conditions(hop, table: IfTable | None) -> list[str]:
    """The `#if` conditions a hop's code is under: the table's around its file:line, then its own."""
    found = table.around(hop.file, hop.line) if table else []
    own = [c.text for c in (hop.conditions or []) if c.kind == "#if"]
    return list(dict.fromkeys(found + own))


def placeholder_reason(hop, table: IfTable | None, device: str = "cuda") -> str | None:
    """Why a hop is code a stock build does not run (module docstring, `placeholder`), else None."""
    if str(hop.kind) == "raises":
        return "only raises"
    if device != "cuda":
        return None
    for cond in hop_if_conditions(hop, table):
        if pp_value(cond, STOCK_CUDA) is False and pp_value(cond, MACA_CUDA) is False:
            return f"#if {cond}"
    return None


def vendor_reason(hop, table: IfTable | None, device: str = "cuda") -> str | None:
    """The `#if` a vendor macro decides for this hop (stock and MACA builds differ), else None."""
    if device != "cuda":
        return None
    for cond in hop_if_conditions(hop, table):
        stock, maca = pp_value(cond, STOCK_CUDA), pp_value(cond, MACA_CUDA)
        if stock != maca:
            return f"#if {cond} ({'on' if stock else 'off' if stock is False else '?'} in stock CUDA, " \
                   f"{'on' if maca else 'off' if maca is False else '?'} with USE_MACA)"
    return None


def other_device_reason(hop, device: str = "cuda") -> str | None:
    """Why a hop is another platform's code (module docstring, `other_device`), else None."""
    if hop.file and not runs_on(hop.file, device):
        return "another platform's folder"
    own = BY_OPTION[device].dispatch_keys
    if hop.layer == "dispatch" and str(hop.kind) not in ("note", "capped"):
        keys = [k.strip() for k in str(hop.kind).split(",")]
        if not any(k in own or k in COMPOSITE_KEYS for k in keys):
            return f"dispatch key {hop.kind}"
    if hop.layer == "registration":
        word = re.fullmatch(r"REGISTER_(\w+)_DISPATCH", str(hop.kind))
        if word and MACRO_DEVICE.get(word.group(1), BY_OPTION[device].device) != BY_OPTION[device].device:
            return f"registered by {hop.kind}"
    return None


def false_branch_reason(hop) -> str | None:
    """A hop the walk itself read as under a branch this call does not take (an `if` the default arguments and the
    input do not take, an `#if` the build does not compile): one of its conditions assumed false."""
    for c in getattr(hop, "conditions", ()) or ():
        if c.assumed is False:
            return f"{c.kind} {c.text}"
    return None


def classify(chain, root_op: str, table: IfTable | None = None, device: str = "cuda") -> dict[str, tuple]:
    """category -> (hop, reason) of the first hop of the main chain `chain` (Hops, root first) in that category;
    `root_op` is the swept op's full name (add.Tensor)."""
    out: dict[str, tuple] = {}
    for hop in chain:
        if backward_name(hop):
            if "backward_legit" in out:
                pass  # below a forward op's own use of a backward function: that function's implementation
            elif (why := legit_backward(hop, root_op)) is not None:
                out["backward_legit"] = (hop, why)
            else:
                out.setdefault("backward", (hop, "backward name"))
        for cat, check in (("placeholder", lambda h: placeholder_reason(h, table, device)),
                           ("false_branch", false_branch_reason),
                           ("other_device", lambda h: other_device_reason(h, device)),
                           ("vendor", lambda h: vendor_reason(h, table, device))):
            if cat not in out and (reason := check(hop)):
                out[cat] = (hop, reason)
    entry = next((h for h in chain if h.layer == "native" and str(h.kind) == "entry"), None)
    if entry is not None and (entry.op or entry.name.removeprefix("aten::")) != root_op:
        out["other_overload"] = (entry, f"starts at {entry.op or entry.name}")
    return out


# -- the sweep -----------------------------------------------------------------------------------------------------
def where(hop) -> str:
    return f"{hop.file}:{hop.line}" if hop.file else "(no file)"


def op_names(ix, limit: int) -> tuple[list[str], str]:
    names = [r["n"] for r in ix.rows("SELECT DISTINCT full_name AS n FROM native_functions ORDER BY full_name")
             if "backward" not in r["n"]]
    if limit and limit < len(names):
        step = len(names) / limit
        return [names[int(i * step)] for i in range(limit)], \
            f"{limit} of {len(names)}, every {step:.1f}-th (sorted by name, from the first)"
    return names, f"all {len(names)}"


def sweep(db: str, limit: int = 0, device: str = "cuda", progress: bool = True, defines=(), undefines=()) -> dict:
    from opindex.api import Index
    ix = Index(db)
    table = IfTable.of(ix)
    names, sample = op_names(ix, limit)
    start = time.perf_counter()
    ops, errors = {}, {}
    for i, name in enumerate(names):
        try:
            t = ix.trace(f"aten::{name}", device=device, defines=list(defines), undefines=list(undefines))
            chain, stop, open_switch = t.main_chain(), t.ruled_out(), switch(t)
        except Exception as e:  # noqa: BLE001 (a sweep reports every error)
            errors[name] = f"{type(e).__name__}: {e}"
            continue
        found = classify(chain, name, table, device)
        end = chain[-1] if chain else None
        ops[name] = {"faults": {cat: {"hop": hop.name, "layer": str(hop.layer), "kind": str(hop.kind),
                                      "at": where(hop), "reason": reason} for cat, (hop, reason) in found.items()},
                     "end": f"{end.layer}/{end.kind} {end.name} {where(end)}" if end else None,
                     "hops": len(chain),
                     "stopped": f"{stop.name} {where(stop)}" if stop is not None else None,
                     "switch": f"{open_switch['value']} at {open_switch['file']}:{open_switch['line']}"
                     if open_switch is not None else None}
        if progress and (i + 1) % 200 == 0:
            print(f"  {i + 1}/{len(names)} ({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    wall = time.perf_counter() - start
    counts = {cat: sum(cat in o["faults"] for o in ops.values()) for cat in CATEGORIES}
    row = ix.rows("SELECT root, pytorch_version FROM checkouts LIMIT 1")
    tree, version = (row[0]["root"], row[0]["pytorch_version"]) if row else (None, None)
    return {"db": str(db), "tree": tree, "version": version,
            "device": device, "build": [*(f"-D {d}" for d in defines), *(f"-U {u}" for u in undefines)], "sample": sample, "swept": len(names), "errors": errors, "wall_s": round(wall, 1),
            "counts": counts, "stopped": sum(bool(o["stopped"]) for o in ops.values()),
            "switch": sum(bool(o.get("switch")) for o in ops.values()), "faulty_ops": sum(any(c in o["faults"] for c in FAULTS) for o in ops.values()),
            "ops": ops}


def report(out: dict, first: int = 30) -> str:
    lines = [f"main-chain fault sweep: {out['db']} ({out['tree']}, PyTorch {out['version']}), device {out['device']}"
             + (f", build {' '.join(out['build'])}" if out.get("build") else ""),
             f"ops: {out['sample']} forward native functions; swept {out['swept']}, errored {len(out['errors'])}, "
             f"wall {out['wall_s']} s",
             "counts (ops): " + ", ".join(f"{c} {out['counts'][c]}" for c in CATEGORIES)
             + f"; ops with any fault {out['faulty_ops']} (vendor, backward_legit and other_overload are not faults)",
             f"stopped (not a fault): {out.get('stopped', 0)} main chains stop above a branch the op's default "
             "arguments or the build rule out, every way on to device code lying under one (Trace.ruled_out)",
             f"switch (not a fault): {out.get('switch', 0)} main chains end where the inputs leave open which kernel "
             "runs, a switch on a number of dimensions (rank.switch)"]
    for cat in CATEGORIES:
        hit = [(n, o["faults"][cat]) for n, o in out["ops"].items() if cat in o["faults"]]
        lines.append(f"\n{cat}: {len(hit)}")
        for name, f in hit[:first]:
            lines.append(f"  aten::{name}: {f['hop']} {f['at']} ({f['reason']})")
        if len(hit) > first:
            lines.append(f"  ... {len(hit) - first} more")
    for name, err in list(out["errors"].items())[:first]:
        lines.append(f"error aten::{name}: {err}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db", required=True)
    p.add_argument("--limit", type=int, default=0, help="sweep every k-th op, N in all (0: every op)")
    p.add_argument("--device", default="cuda", choices=sorted(BY_OPTION))
    p.add_argument("--json", metavar="OUT")
    p.add_argument("-D", "--define", action="append", default=[], help="trace for a build with this macro "
                   "(as `opindex trace -D`); repeatable")
    p.add_argument("-U", "--undefine", action="append", default=[], help="trace for a build without this macro "
                   "(as `opindex trace -U`: -U USE_MACA for the 2.4 fork's stock CUDA path); repeatable")
    args = p.parse_args(argv)
    out = sweep(args.db, args.limit, args.device, defines=args.define, undefines=args.undefine)
    print(report(out))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
