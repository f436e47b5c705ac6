// opindex sample: softmax.int (composite) -> _softmax (structured) -> softmax_cpu_out -> a stub.
#include <ATen/native/SoftMax.h>

namespace at::meta {

TORCH_META_FUNC(_softmax)(const Tensor& input, const int64_t dim, const bool half_to_float) {
  int64_t dim_ = maybe_wrap_dim(dim, input.dim());
  set_output_raw_strided(0, input.sizes(), {}, input.options());
}

} // namespace at::meta

namespace at::native {

DEFINE_DISPATCH(softmax_lastdim_kernel);

TORCH_IMPL_FUNC(softmax_cpu_out)(const Tensor& input, const int64_t dim, const bool half_to_float,
                                 const Tensor& output) {
  softmax_lastdim_kernel(kCPU, output, input.contiguous());
}

Tensor softmax(const Tensor& input_, const int64_t dim, std::optional<ScalarType> dtype) {
  auto result = [&]() {
    NoNamesGuard guard;
    return at::_softmax(input_, dim, false);
  }();
  namedinference::propagate_names(result, input_);
  return result;
}

} // namespace at::native
