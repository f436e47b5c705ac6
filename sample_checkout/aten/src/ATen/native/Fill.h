#pragma once
#include <ATen/native/DispatchStub.h>

namespace at::native {

using fill_fn = void (*)(TensorIterator&, const Scalar&);
DECLARE_DISPATCH(fill_fn, fill_stub);

} // namespace at::native
