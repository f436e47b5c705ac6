#include <ATen/native/BinaryOps.h>
#include <ATen/native/cuda/Loops.cuh>

namespace at::native {

template <typename T>
struct AddFunctor {
  AddFunctor(T alpha) : alpha_(alpha) {}
  __device__ __forceinline__ T operator()(T a, T b) const {
    return a + alpha_ * b;
  }
 private:
  T alpha_;
};

void add_kernel_cuda(TensorIteratorBase& iter, const Scalar& alpha_scalar) {
  AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND2(kHalf, kBFloat16, iter.common_dtype(), "add_cuda", [&]() {
    using opmath_t = at::opmath_type<scalar_t>;
    opmath_gpu_kernel_with_scalars<scalar_t>(iter, AddFunctor<opmath_t>(alpha_scalar.to<opmath_t>()));
  });
}

REGISTER_DISPATCH(add_stub, &add_kernel_cuda);

} // namespace at::native
