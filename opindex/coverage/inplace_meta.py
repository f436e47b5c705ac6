"""The Meta kernel torchgen writes for an in-place op that has no kernel of its own for Meta (RegisterMeta.cpp): one
that only checks its self is a meta tensor and returns it.

torchgen/dest/register_dispatch_key.py, RegisterDispatchKey.gen_unstructured: for the Meta backend index, a function
with no Meta kernel gets one (`inplace_meta`) when its schema is in-place (SchemaKind.inplace: the name ends in `_`,
or a dunder `__iadd__`-like name), it has no composite kernel (`not f.has_composite_kernel`: no
CompositeImplicitAutograd, CompositeExplicitAutograd or CompositeExplicitAutogradNonFunctional row, and no
`dispatch:` at all, which is CompositeImplicitAutograd), it returns one value (`len(f.func.returns) == 1`: in-place
ops on tensor lists return nothing) and it is not manual_kernel_registration. A structured group's functions take
the structured path instead (gen_structured: their Meta kernel comes from the meta function). The rule is in
torchgen since PyTorch 1.9 (tools/codegen then); 1.8's register_dispatch_key.py has none.
"""
from __future__ import annotations

import re

from ..pytorch.dispatch_keys import EXPLICIT, EXPLICIT_NON_FUNCTIONAL, IMPLICIT

SINCE = (1, 9)
VIA = "inplace meta"
# torchgen/model.py AUGMENTED_ASSIGNMENT_NAMES: __iadd__ ... __ior__ are in-place
_AUGMENTED = ("add", "sub", "mul", "div", "mod", "pow", "lshift", "rshift", "and", "xor", "or")
_COMPOSITE_KEYS = (IMPLICIT, EXPLICIT, EXPLICIT_NON_FUNCTIONAL, "Math", "DefaultBackend")
_VERSION = re.compile(r"(\d+)\.(\d+)")


def applies(version: str | None) -> bool:
    """Whether the checkout's torchgen has the rule (an unknown version: yes, today's torchgen has it)."""
    m = _VERSION.match(version or "")
    return m is None or (int(m.group(1)), int(m.group(2))) >= SINCE


def is_inplace(name: str) -> bool:
    """BaseOperatorName.parse's `inplace`, of an op's name without its overload."""
    m = re.fullmatch(r"__([^_]+)__", name)
    if m:
        return any(m.group(1) == f"i{n}" for n in _AUGMENTED)
    return name.endswith("_")


def returns(schema: str) -> int:
    """How many values a schema returns: `-> Tensor(a!)` 1, `-> ()` 0, `-> (Tensor(a!), Tensor(b!))` 2 (the last
    `->` is the schema's: an argument's `Tensor(a -> *)` comes before it)."""
    text = schema.rpartition("->")[2].strip()
    if not text.startswith("("):
        return 1 if text else 0
    depth, count = 0, 1
    for ch in text[1:-1]:
        depth += (ch == "(") - (ch == ")")
        count += ch == "," and depth == 0
    return count if text[1:-1].strip() else 0


def gets_one(entry: dict, own_keys, base: str, schema: str) -> bool:
    """Whether torchgen writes the in-place Meta kernel for this native_functions entry, given the keys its
    dispatch rows name (`implicit` rows included: an entry with no dispatch is CompositeImplicitAutograd)."""
    if entry["structured"] or entry["structured_delegate"] or "Meta" in own_keys:
        return False
    if any(k in _COMPOSITE_KEYS for k in own_keys):
        return False
    return is_inplace(base) and returns(schema) == 1
