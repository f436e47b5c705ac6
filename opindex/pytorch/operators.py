"""C++ operators on Tensors and the ops they call: ATen's TensorOperators.h defines `a * b` as `a.mul(b)`, `-a` as
`a.neg()`, `a == b` as `a.eq(b)`, `~a` as `a.bitwise_not()`, `a += b` as `a.add_(b)`. A composite kernel written
with them (cross_entropy's label smoothing: `(1 - label_smoothing) * nllloss + ret * ...`) calls those ops; the
index records each such expression on a Tensor as a call of the operator (extract/cpp_operators.py) and the trace
walks it as the op (trace/walk/)."""
from __future__ import annotations

# callee as the index records it -> the Tensor method (op) it calls
TENSOR_OPERATORS = {  # those extract/cpp_operators.py records (not <, >, <=, >=, %: rare on Tensors in kernels)
    "operator+": "add", "operator-": "sub", "operator*": "mul", "operator/": "div",
    "operator==": "eq", "operator!=": "ne", "operator&": "bitwise_and", "operator|": "bitwise_or",
    "operator^": "bitwise_xor",
    "operator+=": "add_", "operator-=": "sub_", "operator*=": "mul_", "operator/=": "div_",
    "operator&=": "bitwise_and_", "operator|=": "bitwise_or_", "operator^=": "bitwise_xor_",
    "unary operator-": "neg", "unary operator~": "bitwise_not",
}

# Tensor methods whose result is not a Tensor: `x.size(0) * 2` is arithmetic on integers
NON_TENSOR_RESULTS = frozenset({
    "size", "sym_size", "sizes", "sym_sizes", "stride", "strides", "dim", "ndimension", "numel", "sym_numel",
    "item", "scalar_type", "dtype", "options", "device", "layout", "defined", "data_ptr", "const_data_ptr",
    "mutable_data_ptr", "nbytes", "element_size", "itemsize", "get_device", "storage_offset", "use_count",
    "suggest_memory_format", "is_contiguous", "is_cuda", "is_cpu", "is_sparse", "is_complex", "is_floating_point",
    "requires_grad", "is_same", "equal", "has_storage", "key_set", "value", "has_value", "value_or", "toDouble",
    "to_double", "toFloat", "toLong", "expect_int", "qscheme", "input_dtype", "common_dtype", "data",
    "is_quantized", "is_meta", "is_mps", "is_nested", "is_neg", "is_conj", "sym_stride", "ndim", "ntensors",
    "sym_storage_offset", "q_zero_point", "q_scale", "q_per_channel_axis", "nnz", "_nnz", "sparse_dim", "dense_dim",
})
