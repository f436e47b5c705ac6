// opindex sample: the cuBLAS wrappers; each specialisation calls the typed cuBLAS entry point.
#include <ATen/cuda/CUDABlas.h>

namespace at::cuda::blas {

template <>
void gemm<float>(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cublasHandle_t handle = at::cuda::getCurrentCUDABlasHandle();
  TORCH_CUDABLAS_CHECK(cublasSgemm(handle, _cublasOpFromChar(transa), _cublasOpFromChar(transb), m, n, k,
                                   &alpha, a, lda, b, ldb, &beta, c, ldc));
}

template <>
void gemm<double>(char transa, char transb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                  int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cublasHandle_t handle = at::cuda::getCurrentCUDABlasHandle();
  TORCH_CUDABLAS_CHECK(cublasDgemm(handle, _cublasOpFromChar(transa), _cublasOpFromChar(transb), m, n, k,
                                   &alpha, a, lda, b, ldb, &beta, c, ldc));
}

} // namespace at::cuda::blas
