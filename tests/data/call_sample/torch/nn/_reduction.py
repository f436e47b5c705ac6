# torch.nn._reduction (sample): the reduction strings of the loss functions, as the ints C++ takes
# (at::Reduction::None, Mean, Sum).


def get_enum(reduction: str) -> int:
    if reduction == "none":
        ret = 0
    elif reduction == "mean":
        ret = 1
    elif reduction == "sum":
        ret = 2
    else:
        ret = -1
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return ret
