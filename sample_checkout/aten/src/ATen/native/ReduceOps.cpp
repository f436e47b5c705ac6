// opindex sample: TORCH_IMPL_FUNC(argmax_out) shares its name with a plain overload; the helper receives the stub.
#include <ATen/native/ReduceOps.h>

namespace at::native {

DEFINE_DISPATCH(argmax_stub);

template <class Stub>
void argmax_impl(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& result, Stub& stub) {
  auto iter = make_reduction(self, result, dim, keepdim);
  stub(iter.device_type(), iter);
}

TORCH_IMPL_FUNC(argmax_out)(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& result) {
  argmax_impl(self, dim, keepdim, result, argmax_stub);
}

Tensor& argmax_out(const Tensor& self, Dimname dim, bool keepdim, Tensor& result) {
  TORCH_CHECK(false, "argmax with a named dimension is not supported");
  return result;
}

} // namespace at::native
