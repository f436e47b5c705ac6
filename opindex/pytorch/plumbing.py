"""Ops that are never the algorithm a question is about: allocation, shape queries, views."""
from __future__ import annotations

PLUMBING_OPS = {"empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full",
                "full_like", "scalar_tensor", "tensor", "arange", "size", "sym_size", "dim", "stride", "numel",
                "is_contiguous", "contiguous", "item", "is_floating_point", "is_complex", "to", "type_as",
                "_local_scalar_dense", "resize_", "copy_", "fill_", "zero_", "detach",
                # views and reshapes: metadata only, no kernel of their own
                "view", "reshape", "_reshape_alias", "slice", "select", "squeeze", "unsqueeze", "expand", "narrow",
                "permute", "transpose", "t", "as_strided", "flatten", "unflatten", "movedim", "split", "chunk",
                "alias", "view_as", "expand_as", "reshape_as", "unbind", "diagonal", "clone", "set_",
                "is_same_size", "sizes", "strides", "options", "is_nonzero", "equal"}


# The plumbing ops that write data on the device (a fill or copy kernel runs): when they are all a kernel does on
# the device (select_backward: zeros, then copy_), the trace follows them in full; besides other device work
# (nll_loss_backward's grad_input.zero_()), by their default path (trace/walk/sites.py write_call). `contiguous` copies
# only when the tensor is not contiguous, and says so; reshape and to, which copy only when a view or the same
# dtype cannot do, are left out: nearly every kernel calls them, mostly for nothing.
WRITING_PLUMBING = frozenset({"zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "fill_", "zero_",
                              "copy_", "clone", "contiguous"})
CONDITIONAL_WRITES = {"contiguous": "copies only when the tensor is not contiguous"}
