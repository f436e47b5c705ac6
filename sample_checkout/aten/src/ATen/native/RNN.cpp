// opindex sample: stubs made by a macro with token pasting, and the CompositeImplicitAutograd lstm kernel.
#include <ATen/native/RNN.h>

namespace at::native {

// One stub pair per RNN kind: no text in this file spells "lstm_cudnn_stub" out.
#define RNN_STUBS(NAME)                       \
  DEFINE_DISPATCH(NAME##_cudnn_stub);         \
  DEFINE_DISPATCH(NAME##_miopen_stub);        \
  REGISTER_NO_CPU_DISPATCH(NAME##_cudnn_stub); \
  REGISTER_NO_CPU_DISPATCH(NAME##_miopen_stub);

RNN_STUBS(lstm)
RNN_STUBS(gru)

static bool use_miopen(const Tensor& input, double dropout) {
  return input.is_cuda() && detail::getCUDAHooks().compiledWithMIOpen() && dropout == 0;
}

std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& _input, TensorList hx, TensorList _params, bool has_biases,
                                        int64_t num_layers, double dropout_p, bool train, bool bidirectional,
                                        bool batch_first) {
  if (at::cudnn_is_acceptable(_input)) {
    Tensor output, hy, cy;
    lstm_cudnn_stub(_input.device().type(), output, hy, cy, _input, hx, _params, has_biases, num_layers,
                    dropout_p, train, bidirectional, batch_first);
    return std::make_tuple(std::move(output), std::move(hy), std::move(cy));
  }
  if (use_miopen(_input, dropout_p)) {
    Tensor output, hy, cy;
    lstm_miopen_stub(_input.device().type(), output, hy, cy, _input, hx, _params, has_biases, num_layers,
                     dropout_p, train, bidirectional, batch_first);
    return std::make_tuple(std::move(output), std::move(hy), std::move(cy));
  }
  return _lstm_impl(_input, hx, _params, has_biases, num_layers, dropout_p, train, bidirectional, batch_first);
}

} // namespace at::native
