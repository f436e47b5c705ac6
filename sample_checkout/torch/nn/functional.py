# torch.nn.functional (sample): validation and routing; the computation is delegated to C++.
import torch
from torch import _VF, Tensor
from torch._C import _add_docstr
from torch.overrides import handle_torch_function, has_torch_function_unary

aten = torch.ops.aten

linear = _add_docstr(torch._C._nn.linear, "linear(input, weight, bias=None) -> Tensor")


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    if has_torch_function_unary(input):
        return handle_torch_function(relu, (input,), input, inplace=inplace)
    if inplace:
        return torch.relu_(input)
    return torch.relu(input)


def layer_norm(input: Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    return torch.layer_norm(input, normalized_shape, weight, bias, eps)


def softmax(input: Tensor, dim=None, dtype=None) -> Tensor:
    if dtype is None:
        return input.softmax(dim)
    return input.softmax(dim, dtype=dtype)


def matmul_2d(a: Tensor, b: Tensor) -> Tensor:
    return torch.ops.aten.mm.default(a, b)


def add_scaled(a: Tensor, b: Tensor) -> Tensor:
    return aten.add.Tensor(a, b, alpha=2)


def cross_entropy(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    # composed from several ops, none of which is cross_entropy itself
    logp = torch.log_softmax(input, 1)
    picked = logp.gather(1, target.unsqueeze(1))
    if reduction.startswith("m"):
        return -picked.mean()
    return -picked.sum()


def gelu_tanh(input: Tensor) -> Tensor:
    # composed in Python: several ops, no single bridge does the work
    inner = torch.tanh(input * 0.7978845608 * (1.0 + 0.044715 * input * input))
    return torch.mul(input, torch.add(inner, 1.0)) * 0.5
