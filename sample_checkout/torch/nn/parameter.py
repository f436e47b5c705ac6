import torch


class Parameter(torch.Tensor):
    def __new__(cls, data=None, requires_grad=True):
        return torch.Tensor._make_subclass(cls, data, requires_grad)
