#pragma once
#include <ATen/native/DispatchStub.h>

namespace at::native {

using threshold_fn = void (*)(TensorIteratorBase&, const Scalar&, const Scalar&);
DECLARE_DISPATCH(threshold_fn, threshold_stub);

} // namespace at::native
