#pragma once
#include <ATen/native/DispatchStub.h>

namespace at::native {

using clamp_min_scalar_fn = void (*)(TensorIteratorBase&, Scalar min);
DECLARE_DISPATCH(clamp_min_scalar_fn, clamp_min_scalar_stub);

} // namespace at::native
