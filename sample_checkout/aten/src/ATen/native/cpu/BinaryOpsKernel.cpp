// Compiled once per CPU capability (DEFAULT, AVX2, AVX512): REGISTER_DISPATCH means CPU here.
#include <ATen/native/BinaryOps.h>
#include <ATen/native/cpu/Loops.h>

namespace at::native {
namespace {

void add_kernel(TensorIteratorBase& iter, const Scalar& alpha_scalar) {
  AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND2(kBFloat16, kHalf, iter.dtype(), "add_cpu", [&]() {
    auto alpha = alpha_scalar.to<scalar_t>();
    auto alpha_vec = Vectorized<scalar_t>(alpha);
    cpu_kernel_vec(
        iter,
        [=](scalar_t a, scalar_t b) -> scalar_t { return a + alpha * b; },
        [=](Vectorized<scalar_t> a, Vectorized<scalar_t> b) { return vec::fmadd(b, alpha_vec, a); });
  });
}

} // namespace

REGISTER_DISPATCH(add_stub, &add_kernel);

} // namespace at::native
