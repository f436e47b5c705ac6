#include <ATen/native/SoftMax.h>

namespace at::native {
namespace {

void softmax_lastdim_kernel_impl(const Tensor& result, const Tensor& self) {
  AT_DISPATCH_FLOATING_TYPES_AND2(at::ScalarType::BFloat16, at::ScalarType::Half, self.scalar_type(),
                                  "softmax_lastdim_kernel_impl",
                                  [&] { vec_host_softmax_lastdim<scalar_t>::apply(result, self); });
}

} // namespace

// The vectorised softmax gains from AVX512, so it opts in to that capability too.
ALSO_REGISTER_AVX512_DISPATCH(softmax_lastdim_kernel, &softmax_lastdim_kernel_impl);

} // namespace at::native
