#pragma once
#include <ATen/native/DispatchStub.h>

namespace at::native {

using forward_fn = void (*)(const Tensor& X, const Tensor& gamma, const Tensor& beta, int64_t M, int64_t N,
                            double eps, Tensor* Y, Tensor* mean, Tensor* rstd);
using backward_fn = void (*)(const Tensor& dY, const Tensor& X, const Tensor& mean, const Tensor& rstd,
                             const Tensor& gamma, int64_t M, int64_t N, Tensor* dX, Tensor* dgamma, Tensor* dbeta);

// Stubs need not end in _stub: these two are called with a device as their first argument.
DECLARE_DISPATCH(forward_fn, LayerNormKernel);
DECLARE_DISPATCH(backward_fn, LayerNormBackwardKernel);

} // namespace at::native
