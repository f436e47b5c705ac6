#pragma once
#include <ATen/native/DispatchStub.h>

namespace at::native {

using forward_fn = void (*)(const Tensor& result, const Tensor& self);
DECLARE_DISPATCH(forward_fn, softmax_lastdim_kernel);

} // namespace at::native
