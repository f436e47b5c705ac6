"""Ops that are never the algorithm a question is about: allocation, shape queries, views.

PLUMBING_OPS is the list the link step, the SQL views and the trace read. The schema can say one part of it, the
views: a result annotated as an alias of an input it does not write (`view(Tensor(a) self, SymInt[] size) ->
Tensor(a)`, `split(...) -> Tensor(a)[]`); plumbing_ops(con) adds those from the index's native_functions, once per
index. It is not read by a walk yet: on the 2.4 tree it adds 52 ops (conj, mT, real, imag, view_as_real, _neg_view,
... and resolve_conj, pin_memory, coalesce, _autocast_to_*, which return their input or a copy) and changes 47 of
382 expert traces, each to be judged first. The rest stays named, as the schema cannot say it:
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

import functools
import re

PLUMBING_OPS = {"empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full",
                "full_like", "scalar_tensor", "tensor", "arange", "size", "sym_size", "dim", "stride", "numel",
                "is_contiguous", "contiguous", "item", "is_floating_point", "is_complex", "to", "type_as",
                "_local_scalar_dense", "resize_", "copy_", "fill_", "zero_", "detach",
                # views and reshapes: metadata only, no kernel of their own
                "view", "reshape", "_reshape_alias", "slice", "select", "squeeze", "unsqueeze", "expand", "narrow",
                "permute", "transpose", "t", "as_strided", "flatten", "unflatten", "movedim", "split", "chunk",
                "alias", "view_as", "expand_as", "reshape_as", "unbind", "diagonal", "clone", "set_",
                "is_same_size", "sizes", "strides", "options", "is_nonzero", "equal"}

# a result that aliases an input without writing it: `-> Tensor(a)`, `-> Tensor(a)[]`, `-> (Tensor(a) primal, ...)`
_VIEW_RESULT = re.compile(r"->\s*\(?\s*Tensor\([a-z]\)")


def schema_views(rows) -> frozenset[str]:
    """The op names with an overload whose schema returns an alias of an input it does not write, from (name,
    schema) rows of native_functions."""
    return frozenset(name for name, schema in rows if _VIEW_RESULT.search(schema or ""))


@functools.lru_cache(maxsize=8)  # once per index: a connection is asked many times over a walk
def plumbing_ops(con) -> frozenset[str]:
    """PLUMBING_OPS and the views the index's schemas declare."""
    return frozenset(PLUMBING_OPS) | schema_views(con.execute("SELECT name, schema FROM native_functions"))


# The plumbing ops that write data on the device (a fill or copy kernel runs): when they are all a kernel does on
# the device (select_backward: zeros, then copy_), the trace follows them in full; besides other device work
# (nll_loss_backward's grad_input.zero_()), by their default path (trace/walk/sites.py write_call). `contiguous` copies
# only when the tensor is not contiguous, and says so; reshape and to, which copy only when a view or the same
# dtype cannot do, are left out: nearly every kernel calls them, mostly for nothing.
WRITING_PLUMBING = frozenset({"zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "fill_", "zero_",
                              "copy_", "clone", "contiguous"})
CONDITIONAL_WRITES = {"contiguous": "copies only when the tensor is not contiguous"}
