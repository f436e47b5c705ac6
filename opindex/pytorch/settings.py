"""The global settings of at::Context that kernels branch on, with the defaults PyTorch documents for them (a bool,
or an enum value written `Enum::Value`).

`if (globalContext().deterministicAlgorithms())` in index_add_cuda_impl takes the index_put_ path only after
torch.use_deterministic_algorithms(True); by default it launches its own kernels. The trace reads such a test like a
default argument (opindex/trace/conditions.py). Only settings whose default is the same in every build are here
(cudnn.benchmark is on under ROCm, so benchmarkCuDNN is not).
"""
from __future__ import annotations

CONTEXT_DEFAULTS = {
    "deterministicAlgorithms": False,  # torch.use_deterministic_algorithms
    "deterministicCuDNN": False,  # torch.backends.cudnn.deterministic
    "userEnabledCuDNN": True,  # torch.backends.cudnn.enabled
    "userEnabledMkldnn": True,  # torch.backends.mkldnn.enabled
    "userEnabledNNPACK": True,  # torch.backends.nnpack.enabled
    "deterministicFillUninitializedMemory": True,  # torch.utils.deterministic.fill_uninitialized_memory
    "allowTF32CuBLAS": False,  # torch.backends.cuda.matmul.allow_tf32
    "checkSparseTensorInvariants": False,  # torch.sparse.check_sparse_tensor_invariants
    "userEnabledFlashSDP": True,  # torch.backends.cuda.flash_sdp_enabled
    "userEnabledMemEfficientSDP": True,  # torch.backends.cuda.mem_efficient_sdp_enabled
    "userEnabledMathSDP": True,  # torch.backends.cuda.math_sdp_enabled
    # torch.backends.cuda.preferred_blas_library(): cuBLAS unless TORCH_BLAS_PREFER_CUBLASLT=1 (2.3 to 2.5; an enum
    # value, compared by its last name: `blasPreferredBackend() == BlasBackend::Cublaslt` is false)
    "blasPreferredBackend": "BlasBackend::Cublas",
}
