// opindex sample: layer_norm (composite) -> native_layer_norm -> a stub per device.
#include <ATen/native/layer_norm.h>

namespace at::native {

std::tuple<Tensor, Tensor, Tensor> layer_norm_cpu(const Tensor& input, IntArrayRef normalized_shape,
                                                  const std::optional<Tensor>& weight_opt,
                                                  const std::optional<Tensor>& bias_opt, double eps) {
  auto [M, N] = _check_layer_norm_inputs(input, normalized_shape, weight_opt, bias_opt);
  Tensor Y = at::native::empty_like(input);
  Tensor mean = at::empty({M}, input.options());
  Tensor rstd = at::empty({M}, input.options());
  LayerNormKernel(kCPU, input, *weight_opt, *bias_opt, M, N, eps, &Y, &mean, &rstd);
  return std::make_tuple(std::move(Y), std::move(mean), std::move(rstd));
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_backward_cpu(const Tensor& dY, const Tensor& input,
                                                           IntArrayRef normalized_shape, const Tensor& mean,
                                                           const Tensor& rstd,
                                                           const std::optional<Tensor>& weight_opt,
                                                           const std::optional<Tensor>& bias_opt,
                                                           std::array<bool, 3> grad_input_mask) {
  auto [M, N] = _check_layer_norm_inputs(input, normalized_shape, weight_opt, bias_opt);
  Tensor dX = at::native::empty_like(input);
  Tensor dgamma = at::zeros_like(*weight_opt);
  Tensor dbeta = at::zeros_like(*bias_opt);
  LayerNormBackwardKernel(kCPU, dY, input, mean, rstd, *weight_opt, M, N, &dX, &dgamma, &dbeta);
  return std::make_tuple(std::move(dX), std::move(dgamma), std::move(dbeta));
}

Tensor layer_norm_symint(const Tensor& input, c10::SymIntArrayRef normalized_shape,
                         const std::optional<Tensor>& weight_opt, const std::optional<Tensor>& bias_opt,
                         double eps, bool cudnn_enable) {
  return std::get<0>(at::native_layer_norm_symint(input, normalized_shape, weight_opt, bias_opt, eps));
}

std::tuple<Tensor, Tensor, Tensor> math_native_layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                                                          const std::optional<Tensor>& weight_opt,
                                                          const std::optional<Tensor>& bias_opt, double eps) {
  auto outputs = at::native_batch_norm(input.reshape({1, input.numel() / normalized_shape.back(), -1}), {}, {}, {},
                                       {}, true, 0, eps);
  return std::make_tuple(std::get<0>(outputs).view(input.sizes()), std::get<1>(outputs), std::get<2>(outputs));
}

} // namespace at::native
