#include <ATen/native/TensorCompare.h>
#include <ATen/native/cuda/Loops.cuh>

namespace at::native {
namespace {

void clamp_min_scalar_kernel_impl(TensorIteratorBase& iter, Scalar min) {
  AT_DISPATCH_ALL_TYPES_AND2(kHalf, kBFloat16, iter.common_dtype(), "clamp_min_scalar_cuda", [&]() {
    auto lower = min.to<scalar_t>();
    gpu_kernel(iter, [=] GPU_LAMBDA(scalar_t v) -> scalar_t { return v < lower ? lower : v; });
  });
}

} // namespace

REGISTER_DISPATCH(clamp_min_scalar_stub, &clamp_min_scalar_kernel_impl);

} // namespace at::native
