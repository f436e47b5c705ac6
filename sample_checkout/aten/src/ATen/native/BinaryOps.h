#pragma once
#include <ATen/native/DispatchStub.h>

namespace at::native {

using structured_binary_fn_alpha = void (*)(TensorIteratorBase&, const Scalar& alpha);
DECLARE_DISPATCH(structured_binary_fn_alpha, add_stub);

} // namespace at::native
