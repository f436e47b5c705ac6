// opindex sample: a structured kernel pair that calls a dispatch stub.
#include <ATen/native/TensorCompare.h>

namespace at::meta {

TORCH_META_FUNC(clamp_min)(const Tensor& self, const Scalar& min) {
  build_borrowing_unary_op(maybe_get_output(), self);
}

} // namespace at::meta

namespace at::native {

DEFINE_DISPATCH(clamp_min_scalar_stub);

TORCH_IMPL_FUNC(clamp_min_out)(const Tensor& self, const Scalar& min, const Tensor& result) {
  clamp_min_scalar_stub(device_type(), *this, min);
}

} // namespace at::native
