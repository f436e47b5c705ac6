"""How a walk writes a C++ call, a bridge or a definition into a hop's name and detail."""
from __future__ import annotations

from ...pytorch.operators import TENSOR_OPERATORS


def op_call_text(call: dict) -> str:
    if call["is_method"] and call["callee"] in TENSOR_OPERATORS:  # `operator* on nllloss`
        receiver = call["qualifier"] if len(call["qualifier"]) <= 30 else "(...)"
        return f"{call['callee']} on {receiver}"
    if call["is_method"]:
        receiver = call["qualifier"] if len(call["qualifier"]) <= 30 else "(...)"
        return f"{receiver}.{call['callee']}"
    # a bare call in namespace at (`_adaptive_avg_pool2d_symint(...)`) is written without a qualifier
    return f"{call['qualifier']}::{call['callee']}" if call["qualifier"] else call["callee"]


def dotted(call: dict) -> str:
    return f"{call['qualifier']}.{call['callee']}" if call["qualifier"] else call["callee"]


def bridge_detail(b: dict) -> str:
    names = {"VF": "_VF bridge into the dispatcher", "variable_functions": "torch._C._VariableFunctions binding",
             "c_namespace": f"torch._C.{b.get('namespace', '')} binding", "torch_ops": "torch.ops.aten operator",
             "torch": "torch.* function bound from native_functions.yaml",
             "tensor_method": "Tensor method bound from native_functions.yaml"}
    return names.get(b["kind"], b["kind"])


def cpp_detail(d: dict) -> str:
    head = {"impl_func": "TORCH_IMPL_FUNC", "meta_func": "TORCH_META_FUNC", "global_kernel": "__global__",
            "precompute_meta_func": "TORCH_PRECOMPUTE_META_FUNC"}.get(d["kind"], d["kind"])
    macro = f", expanded from {d['from_macro']}" if d.get("from_macro") else ""
    return f"{head} {d['name']}{d.get('signature') or ''}{macro}"
