"""opindex sample: ufunc codegen. For an entry with ufunc_inner_loop it writes the CPU and CUDA kernels
(ufunc_<name>_CPU / ufunc_<name>_CUDA) that call the inner loops in ATen/native/ufunc/<name>.h."""


def compute_ufunc_cuda(name: str) -> str:
    # the CUDA kernel hands the op's functor (which calls the Generic inner loop) to the TensorIterator launcher
    return f"""TORCH_IMPL_FUNC(ufunc_{name}_CUDA)(const Tensor& self, const Tensor& other, const Tensor& out) {{
  gpu_kernel(iter, CUDAFunctor_{name}<scalar_t>());
}}"""


def compute_ufunc_cpu(name: str) -> str:
    return f"TORCH_IMPL_FUNC(ufunc_{name}_CPU)"
