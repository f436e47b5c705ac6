// opindex sample: relu is written in terms of another op, so the trace crosses back into the YAML layer.
#include <ATen/native/Activation.h>

namespace at::native {

DEFINE_DISPATCH(threshold_stub);

Tensor relu(const Tensor& self) {
  TORCH_CHECK(self.scalar_type() != at::kBool, "Boolean inputs not supported for relu");
  return at::clamp_min(self, 0);
}

Tensor& relu_(Tensor& self) {
  return at::clamp_min_(self, 0);
}

Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
  Tensor grad_input = at::empty_like(self);
  auto iter = TensorIterator::borrowing_binary_op(grad_input, self, grad_output);
  threshold_stub(iter.device_type(), iter, threshold, 0);
  return grad_input;
}

} // namespace at::native
