# opindex sample checkout: a miniature torch package written for opindex's tests (not PyTorch's code).
from typing import TYPE_CHECKING

from torch._C import *
from torch._C import _VariableFunctions
from torch._tensor import Tensor
from torch import nn as nn
from torch import _VF

if TYPE_CHECKING:
    # The real package binds every _VariableFunctions entry at import time; this is how type checkers see it.
    from torch._C._VariableFunctions import *

__all__ = ["Tensor", "typename"]


def typename(obj: object) -> str:
    if isinstance(obj, Tensor):
        return obj.type()
    return type(obj).__name__
