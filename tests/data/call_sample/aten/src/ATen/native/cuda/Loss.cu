// opindex sample: a loss whose C++ picks its kernel by an argument. `reduction` arrives as the int the Python layer
// made of a string (torch/nn/_reduction.py get_enum); Reduction::None runs the per-element kernel, any other
// reduction the reducing one.
#include <ATen/core/Reduction.h>
#include <ATen/cuda/CUDAContext.h>

namespace at::native {

template <typename scalar_t>
__global__ void nll_loss_no_reduce_kernel(scalar_t* output, const scalar_t* input, const int64_t* target,
                                          int64_t batch_size, int64_t n_classes) {
  int64_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < batch_size) {
    output[i] = -input[i * n_classes + target[i]];
  }
}

template <typename scalar_t>
__global__ void nll_loss_reduce_kernel(scalar_t* output, const scalar_t* input, const int64_t* target,
                                       int64_t batch_size, int64_t n_classes) {
  scalar_t total = 0;
  for (int64_t i = threadIdx.x; i < batch_size; i += blockDim.x) {
    total -= input[i * n_classes + target[i]];
  }
  atomicAdd(output, total);
}

Tensor nll_loss_cuda(const Tensor& self, const Tensor& target, int64_t reduction) {
  const int64_t batch_size = self.size(0);
  const int64_t n_classes = self.size(1);
  Tensor output = self.new_empty({batch_size});
  if (reduction == Reduction::None) {
    nll_loss_no_reduce_kernel<float><<<(batch_size + 127) / 128, 128, 0, at::cuda::getCurrentCUDAStream()>>>(
        output.data_ptr<float>(), self.data_ptr<float>(), target.data_ptr<int64_t>(), batch_size, n_classes);
  } else {
    nll_loss_reduce_kernel<float><<<1, 128, 0, at::cuda::getCurrentCUDAStream()>>>(
        output.data_ptr<float>(), self.data_ptr<float>(), target.data_ptr<int64_t>(), batch_size, n_classes);
  }
  return output;
}

} // namespace at::native
