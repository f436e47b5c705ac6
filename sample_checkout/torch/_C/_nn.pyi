# Stubs of torch._C._nn (sample): the python_module: nn entries.
from torch import Tensor

def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor: ...
