#include <ATen/native/TensorCompare.h>
#include <ATen/native/cpu/Loops.h>

namespace at::native {
namespace {

void clamp_min_scalar_kernel_impl(TensorIteratorBase& iter, Scalar min_) {
  AT_DISPATCH_ALL_TYPES_AND2(kBFloat16, kHalf, iter.common_dtype(), "clamp_min_scalar_cpu", [&]() {
    const auto min = min_.to<scalar_t>();
    cpu_kernel(iter, [=](scalar_t a) -> scalar_t { return std::max(a, min); });
  });
}

} // namespace

REGISTER_DISPATCH(clamp_min_scalar_stub, &clamp_min_scalar_kernel_impl);

} // namespace at::native
