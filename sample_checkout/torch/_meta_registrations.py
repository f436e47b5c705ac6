import torch
from torch._decomp import register_decomposition

aten = torch.ops.aten
meta_table = {}


def register_meta(op):
    def wrapper(fn):
        meta_table[op] = fn
        return fn
    return wrapper


@register_meta([aten.mm.default, aten.mm.out])
def meta_mm(a, b):
    return a.new_empty((a.shape[0], b.shape[1]))
