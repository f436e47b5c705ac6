// opindex sample: a reduction stub handed to a helper as an argument (as ATen's argmax/argmin do).
#pragma once
#include <ATen/native/DispatchStub.h>

namespace at::native {

using reduce_fn = void (*)(TensorIterator&);
DECLARE_DISPATCH(reduce_fn, argmax_stub);

} // namespace at::native
