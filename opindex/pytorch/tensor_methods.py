"""What a Tensor method call returns, when it is not a Tensor: one list of the metadata accessors, and the
non-Tensor results built on it.

Read by the extractor (extract/cpp_operators.py: `x.size(0) * 2` is arithmetic on integers, not a Tensor operator),
by receivers.py (`options.device().index()` is no Tensor method call) and by the link step (`input.sym_numel()`
runs no kernel). Named here rather than read from native_functions.yaml's return types: most are TensorBase's C++
accessors the YAML never declares (sizes, options, dtype, data_ptr ...), and the extractor runs per file, before the
index holds the YAML.
"""
from __future__ import annotations

# Tensor/TensorIterator accessors whose results are not Tensors (Device, TensorOptions, IntArrayRef, ScalarType ...)
# and that answer from the tensor's metadata: no kernel runs.
METADATA_ACCESSORS = frozenset({
    "device", "options", "sizes", "strides", "sym_sizes", "sym_strides", "dtype", "scalar_type", "layout",
    "storage", "key_set", "suggest_memory_format", "device_type", "type", "shape", "common_dtype", "input_dtype",
    "dims", "get_device", "data_ptr", "const_data_ptr", "mutable_data_ptr", "itemsize", "element_size",
    "nbytes", "numel", "dim", "ndimension", "size", "stride", "begin", "end",
})

# Methods whose result is not a Tensor: the accessors above, and these. They are kept out of METADATA_ACCESSORS, as
# a receiver `x.m()` of one may still be a Tensor, or one may run a kernel: optional<Tensor>'s value()/value_or()
# and Tensor::data() return Tensors; item() and equal() run kernels (_local_scalar_dense, equal's own).
NON_TENSOR_RESULTS = METADATA_ACCESSORS | frozenset({
    "sym_size", "sym_numel", "item", "defined", "is_contiguous", "is_cuda", "is_cpu", "is_sparse", "is_complex",
    "is_floating_point", "requires_grad", "is_same", "equal", "has_storage", "value", "has_value", "value_or",
    "toDouble", "to_double", "toFloat", "toLong", "expect_int", "qscheme", "data", "is_quantized", "is_meta", "is_mps",
    "is_nested", "is_neg", "is_conj", "sym_stride", "ndim", "ntensors", "sym_storage_offset", "q_zero_point",
    "q_scale", "q_per_channel_axis", "nnz", "_nnz", "sparse_dim", "dense_dim", "storage_offset", "use_count",
})
