"""opindex sample: ufunc codegen. For an entry with ufunc_inner_loop it writes the CPU and CUDA kernels
(ufunc_<name>_CPU / ufunc_<name>_CUDA) that call the inner loops in ATen/native/ufunc/<name>.h."""


def compute_ufunc_cuda(name: str) -> str:
    return f"TORCH_IMPL_FUNC(ufunc_{name}_CUDA)"


def compute_ufunc_cpu(name: str) -> str:
    return f"TORCH_IMPL_FUNC(ufunc_{name}_CPU)"
