
from . import _reduction as _Reduction  # noqa: E402 (appended to the sample's file)


def nll_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    return torch._C._nn.nll_loss(input, target, _Reduction.get_enum(reduction))


def normalize_rows(input: Tensor, mode: str = "softmax") -> Tensor:
    # picks an op by a string argument and the input's rank
    if input.dim() == 2 and mode == "argmax":
        return torch.argmax(input, 1)
    return input.softmax(1)
