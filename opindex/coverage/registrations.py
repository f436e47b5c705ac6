"""Manual registrations read from the index's facts: each `m.def` / `m.impl` / `m.fallback` call inside a
TORCH_LIBRARY, TORCH_LIBRARY_FRAGMENT or TORCH_LIBRARY_IMPL block, with the block's namespace and dispatch key.

The build keeps a block as a definition named after its macro, with the macro's arguments as its parameter list
(`(aten, CPU, m)`), and the calls in its body with their arguments as written; this module reads those texts. The
dispatcher records the block's own line for every registration in it (the static registrar the macro defines sits
there), so a registration carries both lines: the call's and the block's.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

from ..pytorch.dispatch_keys import CATCH_ALL, canonical

# the op name at the start of the first string literal: the calls table cuts a long argument (ending it in ...), so
# a schema's closing quote may be gone; its name, before the "(", is not
_NAME = re.compile(r'"\s*([\w:.]+)')
_DISPATCH_KEY = re.compile(r"\bdispatch\s*\(\s*(?:c10::|at::)?(?:DispatchKey::|k)(\w+)")
_FALLTHROUGH = "makeFallthrough"


@dataclass(frozen=True)
class Block:
    macro: str  # TORCH_LIBRARY, TORCH_LIBRARY_FRAGMENT or TORCH_LIBRARY_IMPL
    namespace: str  # aten, quantized, _ (a fallback block)
    key: str | None  # the TORCH_LIBRARY_IMPL key (CPU); None for TORCH_LIBRARY(_FRAGMENT)
    variable: str  # the torch::Library the body names (m)
    file: str
    line: int
    end_line: int


@dataclass(frozen=True)
class LibraryCall:
    method: str  # def, impl or fallback
    op: str | None  # namespace::name.overload ('' overload: namespace::name); None for a fallback
    key: str | None  # the key it registers to (None: m.def without a kernel)
    kernel: str  # the kernel argument as written ('' for none)
    fallthrough: bool  # torch::CppFunction::makeFallthrough()
    schema: str | None  # m.def's schema as written
    file: str
    line: int  # the call's line
    block_line: int  # the block's line: the dispatcher's `registered at file:line`


def blocks(rows: list[dict]) -> list[Block]:
    out = []
    for r in rows:
        args = [a.strip() for a in (r["signature"] or "").strip("()").split(",")]
        if r["macro"] == "TORCH_LIBRARY_IMPL" and len(args) == 3:
            out.append(Block(r["macro"], args[0], canonical(args[1]), args[2], r["file"], r["line"], r["end_line"]))
        elif r["macro"] != "TORCH_LIBRARY_IMPL" and len(args) == 2:
            out.append(Block(r["macro"], args[0], None, args[1], r["file"], r["line"], r["end_line"]))
    return out


def library_calls(block_rows: list[dict], call_rows: list[dict]) -> tuple[list[LibraryCall], list[Block]]:
    """The registrations of every block: calls on the block's library variable within its lines."""
    found = blocks(block_rows)
    by_file: dict[str, list[Block]] = {}
    for b in found:
        by_file.setdefault(b.file, []).append(b)
    out = []
    for c in call_rows:
        # blocks never nest; several share a line when one macro expands to a block per key
        # (c10d/Ops.cpp: REGISTER_C10D_OP(allreduce_) -> TORCH_LIBRARY_IMPL(c10d, CPU/CUDA/PrivateUse1, m))
        here = [b for b in by_file.get(c["file"], ()) if b.line <= c["line"] <= b.end_line
                and c["qualifier"] == b.variable]
        for b in here:
            call = _read(b, c)
            if call is not None:
                out.append(_pasted(call, b, here) if len(here) > 1 else call)
    return out, found


def _pasted(call: LibraryCall, block: Block, siblings: list[Block]) -> LibraryCall:
    """The kernel of a block one macro expands per key: the call's text is one expansion's (allreduce_PrivateUse1
    from `FUNC##DEV`), so a sibling's key pasted at its end is this block's key."""
    for other in siblings:
        if other.key and block.key and other.key != block.key and call.kernel.endswith(other.key):
            return replace(call, kernel=call.kernel[:-len(other.key)] + block.key)
    return call


def _read(b: Block, c: dict) -> LibraryCall | None:
    try:
        args = json.loads(c["arguments"] or "[]")
    except ValueError:
        return None
    if c["callee"] == "fallback":
        kernel = args[0] if args else ""
        return LibraryCall("fallback", None, b.key, kernel, _FALLTHROUGH in kernel, None, c["file"], c["line"],
                           b.line)
    if not args:
        return None
    text = _NAME.search(args[0])
    if text is None:
        return None
    name = text.group(1)
    op = name if "::" in name else f"{b.namespace}::{name}"
    kernel = args[1] if len(args) > 1 and not args[1].lstrip().startswith("{") else ""  # {tags} is no kernel
    chosen = _DISPATCH_KEY.search(kernel)
    if c["callee"] == "def":
        # m.def(schema, fn): a kernel without a key registers as a catch-all, which the dispatcher files under CIA
        key = (canonical(chosen.group(1)) if chosen else CATCH_ALL) if kernel else None
        written = args[0][args[0].index('"') + 1:].rstrip('")').removesuffix("...")
        return LibraryCall("def", op, key, kernel, False, written, c["file"], c["line"], b.line)
    key = canonical(chosen.group(1)) if chosen else (b.key or CATCH_ALL)
    return LibraryCall("impl", op, key, kernel, _FALLTHROUGH in kernel, None, c["file"], c["line"], b.line)


def kernel_name(kernel: str) -> str:
    """The function a kernel argument names: TORCH_FN(qadd<false>) -> qadd<false>; &foo -> foo; a lambda stays
    `[](...)`."""
    text = kernel.strip()
    m = re.match(r"^(?:torch::)?dispatch\s*\([^,]+,\s*(.*)\)$", text, re.S)  # torch::dispatch(key, fn)
    if m:
        text = m.group(1).strip()
    m = re.match(r"^(?:TORCH_FN|TORCH_FN_TYPE)\s*\((.*)\)$", text, re.S)
    if m:
        text = m.group(1).strip()
    m = re.search(r"makeFromBoxedFunction\s*<\s*&?\s*([\w:]+)", text)
    if m:
        return m.group(1)
    if text.startswith("["):
        return "[](...)"
    return text.lstrip("&").strip()
