// opindex sample: a .cpp file under cuda/ that calls cuBLAS through at::cuda::blas.
#include <ATen/cuda/CUDABlas.h>

namespace at::native {
namespace {

void mm_out_cuda_impl(const Tensor& result, const Tensor& self, const Tensor& mat2) {
  const int64_t m = self.size(0), k = self.size(1), n = mat2.size(1);
  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), "mm_cuda", [&] {
    at::cuda::blas::gemm<scalar_t>(
        'n', 'n', n, m, k, scalar_t(1),
        mat2.const_data_ptr<scalar_t>(), n,
        self.const_data_ptr<scalar_t>(), k,
        scalar_t(0), result.mutable_data_ptr<scalar_t>(), n);
  });
}

} // namespace

TORCH_IMPL_FUNC(mm_out_cuda)(const Tensor& self, const Tensor& mat2, const Tensor& result) {
  mm_out_cuda_impl(result, self, mat2);
}

} // namespace at::native
