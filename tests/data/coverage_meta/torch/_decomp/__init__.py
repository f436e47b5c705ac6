# opindex test checkout: the decomposition table
global_decomposition_table = {"meta": {}, "post_autograd": {}, "pre_autograd": {}}


def register_decomposition(op):
    def wrapper(fn):
        global_decomposition_table["post_autograd"][op] = fn
        return fn
    return wrapper
