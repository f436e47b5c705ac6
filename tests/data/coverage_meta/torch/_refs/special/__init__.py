# opindex test checkout: a reference the factory registers for the op its module names (special_zeta)
from torch._refs import _make_elementwise_binary_reference

__all__ = ["zeta"]


@_make_elementwise_binary_reference(
    type_promotion_kind=None,
)
def zeta(a, b):
    return a
