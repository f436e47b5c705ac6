// opindex sample: an unexpanded macro the grammar cannot parse (an ERROR node), then facts that must survive it.
#include <ATen/native/Activation.h>

namespace at::native {
namespace {

VEC_KERNEL_PROLOGUE(threshold, scalar_t) -> Vectorized<scalar_t> VEC_KERNEL_EPILOGUE(threshold)

void threshold_kernel(TensorIteratorBase& iter, const Scalar& threshold_scalar, const Scalar& value_scalar) {
  AT_DISPATCH_ALL_TYPES_AND2(kBFloat16, kHalf, iter.dtype(), "threshold_cpu", [&] {
    const auto threshold = threshold_scalar.to<scalar_t>();
    const auto value = value_scalar.to<scalar_t>();
    cpu_kernel(iter, [&](scalar_t x, scalar_t other) -> scalar_t { return x <= threshold ? value : other; });
  });
}

} // namespace

REGISTER_DISPATCH(threshold_stub, &threshold_kernel);

} // namespace at::native
