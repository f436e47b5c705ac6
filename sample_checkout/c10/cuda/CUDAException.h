#pragma once
// opindex sample: the launch check every <<<>>> site is followed by.

#define C10_CUDA_CHECK(EXPR)                                 \
  do {                                                      \
    const cudaError_t __err = EXPR;                         \
    c10::cuda::c10_cuda_check_implementation(__err, __FILE__, __LINE__); \
  } while (0)

#define C10_CUDA_KERNEL_LAUNCH_CHECK() C10_CUDA_CHECK(cudaGetLastError())
