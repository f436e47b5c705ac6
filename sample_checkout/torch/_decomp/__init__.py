# torch._decomp (sample): a registry of Python decompositions keyed by aten overloads.
decomposition_table = {}


def register_decomposition(aten_op, registry=None):
    def decorate(fn):
        ops = aten_op if isinstance(aten_op, (list, tuple)) else [aten_op]
        for op in ops:
            (decomposition_table if registry is None else registry)[op] = fn
        return fn
    return decorate
