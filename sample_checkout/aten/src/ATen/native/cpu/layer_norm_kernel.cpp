#include <ATen/native/layer_norm.h>

namespace at::native {
namespace {

template <typename T>
void LayerNormKernelImplInternal(const Tensor& X, const Tensor& gamma, const Tensor& beta, int64_t M, int64_t N,
                                 T eps, Tensor* Y, Tensor* mean, Tensor* rstd) {
  at::parallel_for(0, M, 1, [&](int64_t start, int64_t end) {
    for (const auto i : c10::irange(start, end)) {
      RowwiseMoments(X.const_data_ptr<T>() + i * N, N);
    }
  });
}

void LayerNormKernelImpl(const Tensor& X, const Tensor& gamma, const Tensor& beta, int64_t M, int64_t N,
                         double eps, Tensor* Y, Tensor* mean, Tensor* rstd) {
  AT_DISPATCH_FLOATING_TYPES_AND2(at::ScalarType::Half, at::ScalarType::BFloat16, X.scalar_type(),
                                  "LayerNormKernelImpl", [&]() {
    LayerNormKernelImplInternal<scalar_t>(X, gamma, beta, M, N, eps, Y, mean, rstd);
  });
}

} // namespace

REGISTER_DISPATCH(LayerNormKernel, &LayerNormKernelImpl);

} // namespace at::native
