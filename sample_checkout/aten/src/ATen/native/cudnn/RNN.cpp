// opindex sample: the cuDNN RNN kernels. REGISTER_CUDA_DISPATCH from a .cpp file (cuDNN code is host code).
#include <ATen/native/RNN.h>
#include <ATen/cudnn/Handle.h>

namespace at::native {

std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor> _cudnn_rnn(
    const Tensor& input, TensorList weight, int64_t weight_stride0, const std::optional<Tensor>& weight_buf,
    const Tensor& hx, const std::optional<Tensor>& cx, int64_t mode, c10::SymInt hidden_size, int64_t num_layers,
    bool batch_first, double dropout, bool train, bool bidirectional) {
  auto handle = getCudnnHandle();
  cudnnTensorDescriptor_t x_desc;
  AT_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x_desc));
  AT_CUDNN_CHECK(cudnnSetTensorNdDescriptor(x_desc, CUDNN_DATA_FLOAT, 3, dims, strides));
  size_t workspace_size = 0;
  AT_CUDNN_CHECK(cudnnGetRNNWorkspaceSize(handle, rnn_desc, seq_length, &x_desc, &workspace_size));
  auto workspace = at::empty(workspace_size, input.options().dtype(kByte));
  AT_CUDNN_CHECK(cudnnRNNForward(handle, rnn_desc, fwd_mode, seq_lengths, x_desc, input.data_ptr(), y_desc,
                                 output.data_ptr(), h_desc, hx.data_ptr(), hy.data_ptr(), c_desc, cx_ptr, cy_ptr,
                                 weight_buf_size, w_ptr, workspace_size, workspace.data_ptr(), 0, nullptr));
  return std::make_tuple(output, hy, cy, reserve, weight_buf_out);
}

void lstm_cudnn(Tensor& output, Tensor& hy, Tensor& cy, const Tensor& input, TensorList hx, TensorList params,
                bool has_biases, int64_t num_layers, double dropout_p, bool train, bool bidirectional,
                bool batch_first) {
  auto result = at::_cudnn_rnn(input, params, 4, {}, hx[0], hx[1], CUDNN_LSTM, hx[0].size(2), num_layers,
                               batch_first, dropout_p, train, bidirectional);
  output = std::get<0>(result);
}

#define CUDNN_ONE_HIDDEN_RNN(NAME, MODE)                                                           \
  void NAME##_cudnn(Tensor& output, Tensor& hy, const Tensor& input, const Tensor& hx,             \
                    TensorList params, bool has_biases, int64_t num_layers, double dropout_p,      \
                    bool train, bool bidirectional, bool batch_first) {                             \
    auto result = at::_cudnn_rnn(input, params, 2, {}, hx, {}, MODE, hx.size(2), num_layers,        \
                                 batch_first, dropout_p, train, bidirectional);                     \
    output = std::get<0>(result);                                                                  \
  }                                                                                                \
  REGISTER_CUDA_DISPATCH(NAME##_cudnn_stub, &NAME##_cudnn);

CUDNN_ONE_HIDDEN_RNN(gru, CUDNN_GRU)

REGISTER_CUDA_DISPATCH(lstm_cudnn_stub, &lstm_cudnn);

#ifdef USE_ROCM
void lstm_miopen(Tensor& output, Tensor& hy, Tensor& cy, const Tensor& input, TensorList hx, TensorList params,
                 bool has_biases, int64_t num_layers, double dropout_p, bool train, bool bidirectional,
                 bool batch_first) {
  miopenHandle_t handle = getMiopenHandle();
  MIOPEN_CHECK(miopenRNNForwardTraining(handle, rnn_desc, seq_length, x_descs, input.data_ptr(), hx_desc,
                                        hx[0].data_ptr(), cx_desc, hx[1].data_ptr(), w_desc, params[0].data_ptr(),
                                        y_descs, output.data_ptr(), hy_desc, hy.data_ptr(), cy_desc,
                                        cy.data_ptr(), workspace, workspace_size, reserve, reserve_size));
}

REGISTER_HIP_DISPATCH(lstm_miopen_stub, &lstm_miopen);
#endif

} // namespace at::native
