"""Ops that are never the algorithm a question is about: allocation, shape queries, views.

PLUMBING_OPS is the list the link step, the SQL views and the trace read. It is named, not derived from the
schema, because the schema cannot say it:
- views: `-> Tensor(a)` says a result may alias an input, not that the op is only a view: resolve_conj,
  pin_memory, coalesce and _autocast_to_* return their input or a copy, and conj, mT, _neg_view are lazy views
  whose math runs later. Derived from the 2.4 schemas, the list gained 52 such ops and 47 of 382 expert traces
  changed (2026-12-04), so the annotation is not used;
- factories: `empty` has no Tensor input and `empty_like` one, but so have randn, randperm, linspace and eye, whose
  kernels compute; which factory only allocates (and fills) is not in the schema;
- queries with a non-Tensor result: the schema says `-> int`/`-> bool` for size and is_nonzero, but as well for
  the deciders a trace shows (_fused_sdp_choice, cudnn_is_acceptable, _use_cudnn_ctc_loss), and sizes, strides,
  options, dim, numel are TensorBase's C++ accessors no schema declares;
- writes and conversions (copy_, fill_, zero_, resize_, set_, clone, type_as, to): kernels that move data;
- views the older schemas do not annotate (1.4's `reshape(Tensor self, int[] shape) -> Tensor`, `contiguous`,
  `flatten`; `_reshape_alias` is no 1.4/1.8 op), and those every schema does, for the readers without an index
  (schema/views.py's SQL, the link step before its walk).
"""
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
