# torch.Tensor (sample): the Python subclass of the C++ TensorBase. add_ has no Python def here: it is bound
# from native_functions.yaml (variants: method).
import torch
from torch import _C


class Tensor(torch._C.TensorBase):
    def __rsub__(self, other):
        return _C._VariableFunctions.rsub(self, other)

    def double_relu(self):
        return self.relu().relu()
