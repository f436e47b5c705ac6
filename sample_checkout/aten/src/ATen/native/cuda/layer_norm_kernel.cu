// opindex sample: hand-written CUDA kernels launched with <<<>>>.
#include <ATen/native/layer_norm.h>
#include <c10/cuda/CUDAException.h>

namespace at::native {
namespace {

constexpr int kThreads = 256;

template <typename T, typename T_ACC>
__global__ void RowwiseMomentsCUDAKernel(int64_t N, T_ACC eps, const T* X, T_ACC* mean, T_ACC* rstd) {
  const int64_t i = blockIdx.x;
  T_ACC m = 0;
  for (int64_t j = threadIdx.x; j < N; j += blockDim.x) {
    m += static_cast<T_ACC>(X[i * N + j]);
  }
  mean[i] = m / N;
}

template <typename T, typename T_ACC>
__global__ void LayerNormForwardCUDAKernel(int64_t N, const T* X, const T_ACC* mean, const T_ACC* rstd,
                                           const T* gamma, const T* beta, T* Y) {
  const int64_t i = blockIdx.x;
  for (int64_t j = threadIdx.x; j < N; j += blockDim.x) {
    Y[i * N + j] = (static_cast<T_ACC>(X[i * N + j]) - mean[i]) * rstd[i] * gamma[j] + beta[j];
  }
}

template <typename T, typename T_ACC>
void LayerNormKernelImplInternal(const Tensor& X, const Tensor& gamma, const Tensor& beta, int64_t M, int64_t N,
                                 T_ACC eps, Tensor* Y, Tensor* mean, Tensor* rstd) {
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  T_ACC* mean_data = mean->mutable_data_ptr<T_ACC>();
  T_ACC* rstd_data = rstd->mutable_data_ptr<T_ACC>();
  RowwiseMomentsCUDAKernel<T, T_ACC><<<M, kThreads, 0, stream>>>(
      N, eps, X.const_data_ptr<T>(), mean_data, rstd_data);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  LayerNormForwardCUDAKernel<T, T_ACC><<<M, kThreads, 0, stream>>>(
      N, X.const_data_ptr<T>(), mean_data, rstd_data, gamma.const_data_ptr<T>(), beta.const_data_ptr<T>(),
      Y->mutable_data_ptr<T>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

void LayerNormKernelImpl(const Tensor& X, const Tensor& gamma, const Tensor& beta, int64_t M, int64_t N,
                         double eps, Tensor* Y, Tensor* mean, Tensor* rstd) {
  AT_DISPATCH_FLOATING_TYPES_AND2(at::ScalarType::Half, at::ScalarType::BFloat16, X.scalar_type(),
                                  "LayerNormKernelImpl", [&]() {
    using acc_t = at::opmath_type<scalar_t>;
    LayerNormKernelImplInternal<scalar_t, acc_t>(X, gamma, beta, M, N, static_cast<acc_t>(eps), Y, mean, rstd);
  });
}

} // namespace

std::tuple<Tensor, Tensor, Tensor> layer_norm_cuda(const Tensor& input, IntArrayRef normalized_shape,
                                                   const std::optional<Tensor>& weight_opt,
                                                   const std::optional<Tensor>& bias_opt, double eps) {
  auto [M, N] = _check_layer_norm_inputs(input, normalized_shape, weight_opt, bias_opt);
  Tensor Y = at::native::empty_like(input);
  Tensor mean = at::empty({M}, input.options().dtype(at::kFloat));
  Tensor rstd = at::empty({M}, input.options().dtype(at::kFloat));
  LayerNormKernelImpl(input, *weight_opt, *bias_opt, M, N, eps, &Y, &mean, &rstd);
  return std::make_tuple(std::move(Y), std::move(mean), std::move(rstd));
}

template <typename T, typename T_ACC>
__global__ void LayerNormBackwardCUDAKernel(int64_t N, const T* dY, const T* X, const T_ACC* mean,
                                            const T_ACC* rstd, T* dX) {
  const int64_t i = blockIdx.x;
  for (int64_t j = threadIdx.x; j < N; j += blockDim.x) {
    dX[i * N + j] = static_cast<T_ACC>(dY[i * N + j]) * rstd[i];
  }
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_backward_cuda(const Tensor& dY, const Tensor& input,
                                                            IntArrayRef normalized_shape, const Tensor& mean,
                                                            const Tensor& rstd,
                                                            const std::optional<Tensor>& weight_opt,
                                                            const std::optional<Tensor>& bias_opt,
                                                            std::array<bool, 3> grad_input_mask) {
  Tensor dX = at::native::empty_like(input);
  Tensor dgamma = at::zeros_like(*weight_opt);  // a fill kernel runs before the op's own kernel
  const int64_t N = input.size(-1);
  const int64_t M = input.numel() / N;
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES(input.scalar_type(), "layer_norm_backward_cuda", [&]() {
    using acc_t = at::opmath_type<scalar_t>;
    LayerNormBackwardCUDAKernel<scalar_t, acc_t><<<M, kThreads, 0, stream>>>(
        N, dY.const_data_ptr<scalar_t>(), input.const_data_ptr<scalar_t>(), mean.const_data_ptr<acc_t>(),
        rstd.const_data_ptr<acc_t>(), dX.mutable_data_ptr<scalar_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return std::make_tuple(std::move(dX), std::move(dgamma), at::zeros_like(*bias_opt));
}

REGISTER_DISPATCH(LayerNormKernel, &LayerNormKernelImpl);

} // namespace at::native
