// opindex sample: the CUDA kernel of fill_stub, a TensorIterator launch of a functor.
#include <ATen/native/Fill.h>
#include <ATen/native/cuda/Loops.cuh>

namespace at::native {

template <typename scalar_t>
struct FillFunctor {
  FillFunctor(scalar_t v) : value(v) {}
  __device__ __forceinline__ scalar_t operator()() const { return value; }
 private:
  scalar_t value;
};

void fill_kernel_cuda(TensorIterator& iter, const Scalar& value) {
  AT_DISPATCH_ALL_TYPES_AND2(kHalf, kBFloat16, iter.dtype(), "fill_cuda", [&]() {
    gpu_kernel(iter, FillFunctor<scalar_t>(value.to<scalar_t>()));
  });
}

REGISTER_DISPATCH(fill_stub, &fill_kernel_cuda);

} // namespace at::native
