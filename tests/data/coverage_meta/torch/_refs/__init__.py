# opindex test checkout: references of aten ops
import torch
from torch._decomp import register_decomposition

aten = torch._ops.ops.aten

__all__ = ["clone", "unsqueeze"]


@register_decomposition(aten.clone)
def clone(a, *, memory_format=None):
    return a


@register_decomposition(aten.unsqueeze)
def unsqueeze(a, dim):
    return a


@register_decomposition(aten.fill_)
def fill_(a, value):
    return a


def _make_elementwise_binary_reference(type_promotion_kind):
    def inner(prim):
        return prim
    return inner
