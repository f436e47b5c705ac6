// opindex sample: add.out is structured; add.Scalar is a plain composite kernel.
#include <ATen/native/BinaryOps.h>

namespace at::meta {

TORCH_META_FUNC2(add, Tensor)(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  build_borrowing_binary_op(maybe_get_output(), self, other);
}

} // namespace at::meta

namespace at::native {

DEFINE_DISPATCH(add_stub);

TORCH_IMPL_FUNC(add_out)(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& result) {
  add_stub(device_type(), *this, alpha);
}

Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return at::add(self, wrapped_scalar_tensor(other), alpha);
}

} // namespace at::native
