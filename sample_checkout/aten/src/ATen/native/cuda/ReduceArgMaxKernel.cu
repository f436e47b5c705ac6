// opindex sample: the CUDA kernel reaches gpu_reduce_kernel through a temporary functor's operator().
#include <ATen/native/ReduceOps.h>
#include <ATen/native/cuda/Reduce.cuh>

namespace at::native {

template <typename scalar_t>
struct argmax_functor {
  void operator()(TensorIterator& iter) {
    gpu_reduce_kernel<scalar_t, int64_t>(iter, ArgMaxOps<scalar_t>{}, thrust::pair<scalar_t, int64_t>(0, 0));
  }
};

void argmax_kernel_cuda(TensorIterator& iter) {
  AT_DISPATCH_FLOATING_TYPES(iter.dtype(1), "argmax_cuda", [&]() {
    argmax_functor<scalar_t>{}(iter);
  });
}

REGISTER_DISPATCH(argmax_stub, &argmax_kernel_cuda);

} // namespace at::native
