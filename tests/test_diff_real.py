"""`opindex diff` between the PyTorch 1.8 and 2.4 trees, hop by hop: each op's two main chains (CUDA) as aligned steps,
(status, role, A's hop, A's file:line, B's hop where it differs, B's file:line). Every location below was read in both
trees (tests/real_trees.py finds them): e.g. layer_norm's CUDA kernel is LayerNormForwardCUDAKernel at
layer_norm_kernel.cu:52 in 1.8, launched at :282; in 2.4 launch_vectorized_layer_norm_kernel (:759), a hop 1.8 does
not have, launches the stock vectorized_layer_norm_kernel (:316) at :782 only under `if (maca_unlikely(...))`, and
on this fork's own build (USE_MACA, which the checkout requires) its vectorized_layer_norm_kernel_opt_wave1 at :807
(maca_kernels/layer_norm_kernel_opt.cuh:452); relu calls at::threshold (Activation.cpp:165)
in 1.8 and at::clamp_min (:506) in 2.4; nn.LSTM's cuDNN call is cudnnRNNForwardTraining (cudnn/RNN.cpp:1007) in 1.8
and cudnnRNNForward (:1596) in 2.4. The registry counts are the ones benchmarks/registry_diff.py computes from the
YAML with pyyaml alone. On 2.4 the fork's unary ops run vectorized_elementwise_kernel_unary_opt at CUDALoops.cuh:129,
the overload its enable_if takes for float, Half and BFloat16 (the one at :121 only does `assert(0)`)."""
from __future__ import annotations

import pytest

Y = "aten/src/ATen/native/native_functions.yaml"

CHAINS = {
    'layer_norm': [
        ('same', 'entry', 'aten::layer_norm', f'{Y}:2150', None, f'{Y}:3256'),
        ('changed', 'dispatch row', 'CompositeImplicitAutograd: layer_norm', f'{Y}:2150', 'CompositeImplicitAutograd: layer_norm_symint', f'{Y}:3258'),
        ('changed', 'C++', 'at::native::layer_norm', 'aten/src/ATen/native/layer_norm.cpp:93', 'at::native::layer_norm_symint', 'aten/src/ATen/native/layer_norm.cpp:187'),
        ('changed', 'op call', 'at::native_layer_norm', 'aten/src/ATen/native/layer_norm.cpp:101', 'at::native_layer_norm_symint', 'aten/src/ATen/native/layer_norm.cpp:198'),
        ('same', 'entry', 'aten::native_layer_norm', f'{Y}:2153', None, f'{Y}:3260'),
        ('same', 'dispatch row', 'CUDA: layer_norm_cuda', f'{Y}:2157', None, f'{Y}:3263'),
        ('same', 'C++', 'at::native::layer_norm_cuda', 'aten/src/ATen/native/cuda/layer_norm_kernel.cu:425', None, 'aten/src/ATen/native/cuda/layer_norm_kernel.cu:1575'),
        ('same', 'C++', 'at::native::LayerNormKernelImpl', 'aten/src/ATen/native/cuda/layer_norm_kernel.cu:287', None, 'aten/src/ATen/native/cuda/layer_norm_kernel.cu:901'),
        ('same', 'C++', 'at::native::LayerNormKernelImplInternal', 'aten/src/ATen/native/cuda/layer_norm_kernel.cu:258', None, 'aten/src/ATen/native/cuda/layer_norm_kernel.cu:855'),
        ('added', 'C++', None, None, 'at::native::launch_vectorized_layer_norm_kernel', 'aten/src/ATen/native/cuda/layer_norm_kernel.cu:759'),
        # the fork's own build (USE_MACA): `if (maca_unlikely(disable_vectorized_layernorm_opt))` (:776) keeps the
        # stock vectorized_layer_norm_kernel (:782, __global__ :316) for a rare setting; its else launches the fork's
        ('changed', 'launch', 'LayerNormForwardCUDAKernel<T><<<M, kCUDANumThreads, 0, cuda_stream>>>', 'aten/src/ATen/native/cuda/layer_norm_kernel.cu:282', 'vectorized_layer_norm_kernel_opt_wave1<<<blocks, thread1, 0, stream>>>', 'aten/src/ATen/native/cuda/layer_norm_kernel.cu:807'),
        ('changed', 'device code', '__global__ at::native::LayerNormForwardCUDAKernel', 'aten/src/ATen/native/cuda/layer_norm_kernel.cu:52', '__global__ at::native::layernorm::vectorized_layer_norm_kernel_opt_wave1', 'aten/src/ATen/native/cuda/maca_kernels/layer_norm_kernel_opt.cuh:452'),
    ],
    'F.softmax': [
        # softmax's default path calls at::_softmax in the else branch (SoftMax.cpp:250 / :459); the first call
        # (:247 / :456) runs only for Half input with dtype=Float. host_softmax's `dim_size <= 1024` choice stays
        # the ranking's: the persistent softmax_warp_forward, which the H200 ran for softmax(64, 1024)
        ('same', 'python', 'torch.nn.functional.softmax', 'torch/nn/functional.py:1553', None, 'torch/nn/functional.py:1858'),
        ('same', 'bridge', 'input.softmax', 'torch/nn/functional.py:1583', None, 'torch/nn/functional.py:1888'),
        ('same', 'entry', 'aten::softmax.int', f'{Y}:3503', None, f'{Y}:5487'),
        ('same', 'dispatch row', 'CompositeImplicitAutograd: softmax', f'{Y}:3503', None, f'{Y}:5487'),
        ('same', 'C++', 'at::native::softmax', 'aten/src/ATen/native/SoftMax.cpp:243', None, 'aten/src/ATen/native/SoftMax.cpp:452'),
        ('same', 'op call', 'at::_softmax', 'aten/src/ATen/native/SoftMax.cpp:250', None, 'aten/src/ATen/native/SoftMax.cpp:459'),
        ('same', 'entry', 'aten::_softmax', f'{Y}:3509', None, f'{Y}:5498'),
        ('added', 'delegate', None, None, 'aten::_softmax.out', f'{Y}:5505'),
        ('changed', 'dispatch row', 'CUDA: softmax_cuda', f'{Y}:3512', 'CUDA: softmax_cuda_out', f'{Y}:5509'),
        ('changed', 'C++', 'at::native::softmax_cuda', 'aten/src/ATen/native/cuda/SoftMax.cu:876', 'at::native::structured_softmax_cuda_out', 'aten/src/ATen/native/cuda/SoftMax.cu:1188'),
        ('same', 'C++', 'at::native::host_softmax', 'aten/src/ATen/native/cuda/SoftMax.cu:686', None, 'aten/src/ATen/native/cuda/SoftMax.cu:678'),
        ('same', 'C++', 'dispatch_softmax_forward', 'aten/src/ATen/native/cuda/PersistentSoftmax.cuh:237', None, 'aten/src/ATen/native/cuda/PersistentSoftmax.cuh:450'),
        ('changed', 'launch', 'softmax_warp_forward<input_t, output_t, acc_t, 0, is_log_softmax><<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>', 'aten/src/ATen/native/cuda/PersistentSoftmax.cuh:268', 'softmax_warp_forward_opt2_nd<input_t, output_t, acc_t, 7, 2, is_log_softmax><<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>', 'aten/src/ATen/native/cuda/PersistentSoftmax.cuh:503'),
        ('changed', 'device code', '__global__ softmax_warp_forward', 'aten/src/ATen/native/cuda/PersistentSoftmax.cuh:65', '__global__ softmax_warp_forward_opt2_nd', 'aten/src/ATen/native/cuda/maca_kernels/PersistentSoftmax_maca.cuh:74'),
    ],
    'nn.LSTM': [
        ('same', 'python', 'torch.nn.modules.rnn.LSTM', 'torch/nn/modules/rnn.py:465', None, 'torch/nn/modules/rnn.py:636'),
        ('same', 'python', 'torch.nn.modules.rnn.LSTM.forward', 'torch/nn/modules/rnn.py:631', None, 'torch/nn/modules/rnn.py:856'),
        ('same', 'bridge', '_VF.lstm', 'torch/nn/modules/rnn.py:661', None, 'torch/nn/modules/rnn.py:917'),
        ('same', 'entry', 'aten::lstm.input', f'{Y}:4870', None, f'{Y}:7783'),
        ('same', 'dispatch row', 'CompositeImplicitAutograd: lstm', f'{Y}:4870', None, f'{Y}:7783'),
        ('same', 'C++', 'at::native::lstm', 'aten/src/ATen/native/RNN.cpp:1433', None, 'aten/src/ATen/native/RNN.cpp:1424'),
        ('same', 'stub', 'lstm_cudnn_stub', 'aten/src/ATen/native/RNN.cpp:1440', None, 'aten/src/ATen/native/RNN.cpp:1431'),
        ('same', 'registration', 'CUDA: lstm_cudnn', 'aten/src/ATen/native/cudnn/RNN.cpp:1594', None, 'aten/src/ATen/native/cudnn/RNN.cpp:2763'),
        ('same', 'C++', 'at::native::lstm_cudnn', 'aten/src/ATen/native/cudnn/RNN.cpp:1572', None, 'aten/src/ATen/native/cudnn/RNN.cpp:2705'),
        # lstm_cudnn's `_cudnn_impl(input, std::make_tuple(hx[0], hx[1]), params, ...)` (1.8 :1576, 2.4 :2718): the
        # overload without _batch_sizes, whose TensorList params it passes (`params` is its own TensorList)
        ('same', 'C++', 'at::native::_cudnn_impl', 'aten/src/ATen/native/cudnn/RNN.cpp:1517', None, 'aten/src/ATen/native/cudnn/RNN.cpp:2587'),
        ('changed', 'op call', 'at::_cudnn_rnn', 'aten/src/ATen/native/cudnn/RNN.cpp:1539', 'at::_cudnn_rnn_symint', 'aten/src/ATen/native/cudnn/RNN.cpp:2623'),
        ('same', 'entry', 'aten::_cudnn_rnn', f'{Y}:138', None, f'{Y}:247'),
        ('same', 'dispatch row', 'CUDA: _cudnn_rnn', f'{Y}:141', None, f'{Y}:252'),
        ('same', 'C++', 'at::native::_cudnn_rnn', 'aten/src/ATen/native/cudnn/RNN.cpp:902', None, 'aten/src/ATen/native/cudnn/RNN.cpp:1395'),
        ('changed', 'library call', 'cudnnRNNForwardTraining', 'aten/src/ATen/native/cudnn/RNN.cpp:1007', 'cudnnRNNForward', 'aten/src/ATen/native/cudnn/RNN.cpp:1596'),
    ],
    'F.gelu': [
        ('same', 'python', 'torch.nn.functional.gelu', 'torch/nn/functional.py:1447', None, 'torch/nn/functional.py:1751'),
        ('same', 'bridge', 'torch._C._nn.gelu', 'torch/nn/functional.py:1459', None, 'torch/nn/functional.py:1751'),
        ('same', 'entry', 'aten::gelu', f'{Y}:3283', None, f'{Y}:5049'),
        ('added', 'delegate', None, None, 'aten::gelu.out', f'{Y}:5031'),
        ('changed', 'dispatch row', 'CUDA: gelu_cuda', f'{Y}:3287', 'CUDA: gelu_out_cuda', f'{Y}:5038'),
        ('changed', 'C++', 'at::native::gelu_cuda', 'aten/src/ATen/native/cuda/Activation.cu:501', 'at::native::structured_gelu_out_cuda', 'aten/src/ATen/native/cuda/Activation.cpp:96'),
        ('moved', 'C++', 'at::native::GeluCUDAKernelImpl', 'aten/src/ATen/native/cuda/Activation.cu:348', None, 'aten/src/ATen/native/cuda/ActivationGeluKernel.cu:21'),
        ('changed', 'launcher call', 'gpu_kernel', 'aten/src/ATen/native/cuda/Activation.cu:351', 'gpu_kernel_maca_arity1', 'aten/src/ATen/native/cuda/ActivationGeluKernel.cu:24'),
        ('changed', 'launcher', 'at::native::gpu_kernel', 'aten/src/ATen/native/cuda/Loops.cuh:91', 'at::native::gpu_kernel_maca_arity1', 'aten/src/ATen/native/cuda/Loops.cuh:104'),
        ('changed', 'launcher call', 'gpu_kernel_impl', 'aten/src/ATen/native/cuda/Loops.cuh:110', 'gpu_kernel_impl_maca_arity1', 'aten/src/ATen/native/cuda/Loops.cuh:123'),
        ('changed', 'launcher', 'at::native::gpu_kernel_impl', 'aten/src/ATen/native/cuda/CUDALoops.cuh:136', 'gpu_kernel_impl_maca_arity1', 'aten/src/ATen/native/cuda/maca_kernels/CUDALoops_maca_arity1.cuh:677'),
        ('changed', 'launcher call', 'launch_vectorized_kernel', 'aten/src/ATen/native/cuda/CUDALoops.cuh:157', 'launch_vectorized_kernel_arity1', 'aten/src/ATen/native/cuda/maca_kernels/CUDALoops_maca_arity1.cuh:707'),
        ('changed', 'launcher', 'at::native::launch_vectorized_kernel', 'aten/src/ATen/native/cuda/CUDALoops.cuh:94', 'launch_vectorized_kernel_arity1', 'aten/src/ATen/native/cuda/maca_kernels/CUDALoops_maca_arity1.cuh:25'),
        ('changed', 'launch', 'vectorized_elementwise_kernel<4, func_t, array_t><<<grid, num_threads, 0, stream>>>', 'aten/src/ATen/native/cuda/CUDALoops.cuh:103', 'vectorized_elementwise_kernel_unary_opt<block_size, 8, res_t, arg0, func_t, array_t, narity><<<grid, block_size, 0, stream>>>', 'aten/src/ATen/native/cuda/maca_kernels/CUDALoops_maca_arity1.cuh:52'),
        ('changed', 'device code', '__global__ at::native::vectorized_elementwise_kernel', 'aten/src/ATen/native/cuda/CUDALoops.cuh:64', '__global__ at::native::vectorized_elementwise_kernel_unary_opt', 'aten/src/ATen/native/cuda/CUDALoops.cuh:129'),
    ],
    'torch.tanh': [
        ('same', 'python', 'torch.tanh', f'{Y}:3787', None, f'{Y}:5968'),
        ('same', 'entry', 'aten::tanh', f'{Y}:3787', None, f'{Y}:5968'),
        ('added', 'delegate', None, None, 'aten::tanh.out', f'{Y}:5991'),
        ('changed', 'dispatch row', 'CUDA: tanh', f'{Y}:3790', 'CUDA: tanh_out', f'{Y}:5996'),
        ('changed', 'C++', 'at::native::tanh', 'aten/src/ATen/native/UnaryOps.cpp:467', 'at::native::structured_tanh_out', 'aten/src/ATen/native/UnaryOps.cpp:361'),
        ('removed', 'C++', 'at::native::unary_op_impl_float', 'aten/src/ATen/native/UnaryOps.cpp:49', None, None),
        ('same', 'stub', 'tanh_stub', 'aten/src/ATen/native/UnaryOps.cpp:52', None, 'aten/src/ATen/native/UnaryOps.cpp:361'),
        ('moved', 'registration', 'CUDA: tanh_kernel_cuda', 'aten/src/ATen/native/cuda/UnaryGeometricKernels.cu:119', None, 'aten/src/ATen/native/cuda/UnaryGeometricTanhKernel.cu:56'),
        ('moved', 'C++', 'at::native::tanh_kernel_cuda', 'aten/src/ATen/native/cuda/UnaryGeometricKernels.cu:69', None, 'aten/src/ATen/native/cuda/UnaryGeometricTanhKernel.cu:19'),
        ('changed', 'launcher call', 'gpu_kernel', 'aten/src/ATen/native/cuda/UnaryGeometricKernels.cu:71', 'gpu_kernel_maca_arity1', 'aten/src/ATen/native/cuda/UnaryGeometricTanhKernel.cu:49'),
        ('changed', 'launcher', 'at::native::gpu_kernel', 'aten/src/ATen/native/cuda/Loops.cuh:91', 'at::native::gpu_kernel_maca_arity1', 'aten/src/ATen/native/cuda/Loops.cuh:104'),
        ('changed', 'launcher call', 'gpu_kernel_impl', 'aten/src/ATen/native/cuda/Loops.cuh:110', 'gpu_kernel_impl_maca_arity1', 'aten/src/ATen/native/cuda/Loops.cuh:123'),
        ('changed', 'launcher', 'at::native::gpu_kernel_impl', 'aten/src/ATen/native/cuda/CUDALoops.cuh:136', 'gpu_kernel_impl_maca_arity1', 'aten/src/ATen/native/cuda/maca_kernels/CUDALoops_maca_arity1.cuh:677'),
        ('changed', 'launcher call', 'launch_vectorized_kernel', 'aten/src/ATen/native/cuda/CUDALoops.cuh:157', 'launch_vectorized_kernel_arity1', 'aten/src/ATen/native/cuda/maca_kernels/CUDALoops_maca_arity1.cuh:707'),
        ('changed', 'launcher', 'at::native::launch_vectorized_kernel', 'aten/src/ATen/native/cuda/CUDALoops.cuh:94', 'launch_vectorized_kernel_arity1', 'aten/src/ATen/native/cuda/maca_kernels/CUDALoops_maca_arity1.cuh:25'),
        ('changed', 'launch', 'vectorized_elementwise_kernel<4, func_t, array_t><<<grid, num_threads, 0, stream>>>', 'aten/src/ATen/native/cuda/CUDALoops.cuh:103', 'vectorized_elementwise_kernel_unary_opt<block_size, 8, res_t, arg0, func_t, array_t, narity><<<grid, block_size, 0, stream>>>', 'aten/src/ATen/native/cuda/maca_kernels/CUDALoops_maca_arity1.cuh:52'),
        ('changed', 'device code', '__global__ at::native::vectorized_elementwise_kernel', 'aten/src/ATen/native/cuda/CUDALoops.cuh:64', '__global__ at::native::vectorized_elementwise_kernel_unary_opt', 'aten/src/ATen/native/cuda/CUDALoops.cuh:129'),
    ],
    'F.embedding': [
        ('same', 'python', 'torch.nn.functional.embedding', 'torch/nn/functional.py:1828', None, 'torch/nn/functional.py:2157'),
        ('same', 'bridge', 'torch.embedding', 'torch/nn/functional.py:1916', None, 'torch/nn/functional.py:2267'),
        ('same', 'entry', 'aten::embedding', f'{Y}:1506', None, f'{Y}:2280'),
        ('changed', 'dispatch row', 'DefaultBackend: embedding', f'{Y}:1508', 'CompositeExplicitAutograd: embedding_symint', f'{Y}:2282'),
        ('changed', 'C++', 'at::native::embedding', 'aten/src/ATen/native/Embedding.cpp:14', 'at::native::embedding_symint', 'aten/src/ATen/native/Embedding.cpp:37'),
        ('same', 'op call', 'weight.index_select', 'aten/src/ATen/native/Embedding.cpp:22', None, 'aten/src/ATen/native/Embedding.cpp:45'),
        ('same', 'entry', 'aten::index_select', f'{Y}:5764', None, f'{Y}:9143'),
        ('same', 'dispatch row', 'CUDA: index_select_cuda', f'{Y}:5768', None, f'{Y}:9148'),
        ('same', 'C++', 'at::native::index_select_cuda', 'aten/src/ATen/native/cuda/Indexing.cu:845', None, 'aten/src/ATen/native/cuda/Indexing.cu:2094'),
        ('same', 'C++', 'at::native::index_select_out_cuda', 'aten/src/ATen/native/cuda/Indexing.cu:822', None, 'aten/src/ATen/native/cuda/Indexing.cu:2054'),
        ('same', 'C++', 'at::native::index_select_out_cuda_impl', 'aten/src/ATen/native/cuda/Indexing.cu:694', None, 'aten/src/ATen/native/cuda/Indexing.cu:1801'),
        # the fork's build: `if (maca_unlikely(enable_indexing_with_assert))` keeps the assert kernel for
        # PYTORCH_ENABLE_INDEXING_ASSERT; the else launches the fork's kernel without the assert. A name says no rank:
        # of `outInfo.dims == 1 && selfInfo.dims == 1 && indContig` (1.8 :771, 2.4 :1919), the 2-D and 3-D twins and
        # the else, the general `<-1, -1, -1>` launch (1.8 :778, 2.4 :1941) ranks before the ones for a special shape
        ('changed', 'launch', 'indexSelectSmallIndex<scalar_t, index_t, unsigned int, -1, -1, -1><<<smallIndexGrid, smallIndexBlock, 0, stream>>>', 'aten/src/ATen/native/cuda/Indexing.cu:778', 'indexSelectSmallIndexWithoutAssert<<<smallIndexGrid, smallIndexBlock, 0, stream>>>', 'aten/src/ATen/native/cuda/Indexing.cu:1941'),
        ('changed', 'device code', '__global__ at::native::indexSelectSmallIndex', 'aten/src/ATen/native/cuda/Indexing.cu:594', '__global__ at::native::index::indexSelectSmallIndexWithoutAssert', 'aten/src/ATen/native/cuda/maca_kernels/indexing_opt.cuh:278'),
    ],
    # torch.sum(x) is sum(Tensor self, ...) in both (sum.dim_IntList needs a dim: `int[1] dim` in 1.8, `int[1]? dim`
    # without a default in 2.4); 1.8's CUDA kernel calls its (self, dim, keepdim, dtype) overload directly
    # (ReduceOps.cpp:530), 2.4's composite one goes back through the dispatcher: at::sum(self, IntArrayRef{}, ...)
    # (:1221), the op sum.dim_IntList
    'torch.sum': [
        ('same', 'python', 'torch.sum', f'{Y}:3642', None, f'{Y}:5724'),
        ('same', 'entry', 'aten::sum', f'{Y}:3642', None, f'{Y}:5724'),
        ('changed', 'dispatch row', 'CUDA: sum', f'{Y}:3645', 'CompositeExplicitAutograd: sum', f'{Y}:5728'),
        ('same', 'C++', 'at::native::sum', 'aten/src/ATen/native/ReduceOps.cpp:529', None,
         'aten/src/ATen/native/ReduceOps.cpp:1220'),
        ('removed', 'C++', 'at::native::sum', 'aten/src/ATen/native/ReduceOps.cpp:532', None, None),
        ('added', 'op call', None, None, 'at::sum', 'aten/src/ATen/native/ReduceOps.cpp:1221'),
        ('added', 'entry', None, None, 'aten::sum.dim_IntList', f'{Y}:5733'),
        ('added', 'delegate', None, None, 'aten::sum.IntList_out', f'{Y}:5748'),
        ('added', 'dispatch row', None, None, 'CUDA: sum_out', f'{Y}:5752'),
        ('changed', 'C++', 'at::native::sum_out', 'aten/src/ATen/native/ReduceOps.cpp:517', 'at::native::structured_sum_out', 'aten/src/ATen/native/ReduceOps.cpp:1194'),
        ('same', 'stub', 'sum_stub', 'aten/src/ATen/native/ReduceOps.cpp:524', None, 'aten/src/ATen/native/ReduceOps.cpp:1215'),
        ('same', 'registration', 'CUDA: sum_kernel_cuda', 'aten/src/ATen/native/cuda/ReduceSumProdKernel.cu:110', None, 'aten/src/ATen/native/cuda/ReduceSumProdKernel.cu:211'),
        ('same', 'C++', 'at::native::sum_kernel_cuda', 'aten/src/ATen/native/cuda/ReduceSumProdKernel.cu:79', None, 'aten/src/ATen/native/cuda/ReduceSumProdKernel.cu:173'),
        ('same', 'C++', 'at::native::sum_functor::operator()', 'aten/src/ATen/native/cuda/ReduceSumProdKernel.cu:12', None, 'aten/src/ATen/native/cuda/ReduceSumProdKernel.cu:15'),
        ('same', 'launcher call', 'gpu_reduce_kernel', 'aten/src/ATen/native/cuda/ReduceSumProdKernel.cu:13', None, 'aten/src/ATen/native/cuda/ReduceSumProdKernel.cu:16'),
        ('same', 'launcher', 'at::native::gpu_reduce_kernel', 'aten/src/ATen/native/cuda/Reduce.cuh:894', None, 'aten/src/ATen/native/cuda/Reduce.cuh:1005'),
        ('same', 'launcher call', 'launch_reduce_kernel', 'aten/src/ATen/native/cuda/Reduce.cuh:1108', None, 'aten/src/ATen/native/cuda/Reduce.cuh:1112'),
        ('same', 'launcher', 'at::native::launch_reduce_kernel', 'aten/src/ATen/native/cuda/Reduce.cuh:810', None, 'aten/src/ATen/native/cuda/Reduce.cuh:778'),
        ('same', 'launch', 'reduce_kernel<max_threads / 4, 4, R><<<grid, block, shared_memory, stream>>>', 'aten/src/ATen/native/cuda/Reduce.cuh:819', None, 'aten/src/ATen/native/cuda/Reduce.cuh:785'),
        ('same', 'device code', '__global__ at::native::reduce_kernel', 'aten/src/ATen/native/cuda/Reduce.cuh:208', None, 'aten/src/ATen/native/cuda/Reduce.cuh:188'),
    ],
    'torch.argmax': [
        ('same', 'python', 'torch.argmax', f'{Y}:486', None, f'{Y}:810'),
        ('same', 'entry', 'aten::argmax', f'{Y}:486', None, f'{Y}:810'),
        ('added', 'delegate', None, None, 'aten::argmax.out', f'{Y}:816'),
        ('changed', 'dispatch row', 'CUDA: argmax', f'{Y}:489', 'CUDA: argmax_out', f'{Y}:819'),
        ('changed', 'C++', 'at::native::argmax', 'aten/src/ATen/native/ReduceOps.cpp:1053', 'at::native::structured_argmax_out', 'aten/src/ATen/native/ReduceOps.cpp:1738'),
        ('changed', 'C++', 'at::native::argmax_out', 'aten/src/ATen/native/ReduceOps.cpp:1025', 'at::native::argmax_argmin_impl', 'aten/src/ATen/native/ReduceOps.cpp:1704'),
        ('same', 'stub', 'argmax_stub', 'aten/src/ATen/native/ReduceOps.cpp:1049', None, 'aten/src/ATen/native/ReduceOps.cpp:1734'),
        ('moved', 'registration', 'CUDA: argmax_kernel_cuda', 'aten/src/ATen/native/cuda/ReduceMinMaxKernel.cu:173', None, 'aten/src/ATen/native/cuda/ReduceArgMaxKernel.cu:44'),
        ('moved', 'C++', 'at::native::argmax_kernel_cuda', 'aten/src/ATen/native/cuda/ReduceMinMaxKernel.cu:72', None, 'aten/src/ATen/native/cuda/ReduceArgMaxKernel.cu:29'),
        ('moved', 'C++', 'at::native::argmax_kernel_cuda_impl', 'aten/src/ATen/native/cuda/ReduceMinMaxKernel.cu:57', None, 'aten/src/ATen/native/cuda/ReduceArgMaxKernel.cu:21'),
        ('moved', 'launcher call', 'gpu_reduce_kernel', 'aten/src/ATen/native/cuda/ReduceMinMaxKernel.cu:58', None, 'aten/src/ATen/native/cuda/ReduceArgMaxKernel.cu:22'),
        ('same', 'launcher', 'at::native::gpu_reduce_kernel', 'aten/src/ATen/native/cuda/Reduce.cuh:894', None, 'aten/src/ATen/native/cuda/Reduce.cuh:1005'),
        ('same', 'launcher call', 'launch_reduce_kernel', 'aten/src/ATen/native/cuda/Reduce.cuh:1108', None, 'aten/src/ATen/native/cuda/Reduce.cuh:1112'),
        ('same', 'launcher', 'at::native::launch_reduce_kernel', 'aten/src/ATen/native/cuda/Reduce.cuh:810', None, 'aten/src/ATen/native/cuda/Reduce.cuh:778'),
        ('same', 'launch', 'reduce_kernel<max_threads / 4, 4, R><<<grid, block, shared_memory, stream>>>', 'aten/src/ATen/native/cuda/Reduce.cuh:819', None, 'aten/src/ATen/native/cuda/Reduce.cuh:785'),
        ('same', 'device code', '__global__ at::native::reduce_kernel', 'aten/src/ATen/native/cuda/Reduce.cuh:208', None, 'aten/src/ATen/native/cuda/Reduce.cuh:188'),
    ],
    'F.log_softmax': [
        ('same', 'python', 'torch.nn.functional.log_softmax', 'torch/nn/functional.py:1651', None, 'torch/nn/functional.py:1956'),
        ('same', 'bridge', 'input.log_softmax', 'torch/nn/functional.py:1672', None, 'torch/nn/functional.py:1977'),
        ('same', 'entry', 'aten::log_softmax.int', f'{Y}:2383', None, f'{Y}:3664'),
        ('same', 'dispatch row', 'CompositeImplicitAutograd: log_softmax', f'{Y}:2383', None, f'{Y}:3664'),
        ('same', 'C++', 'at::native::log_softmax', 'aten/src/ATen/native/SoftMax.cpp:266', None, 'aten/src/ATen/native/SoftMax.cpp:517'),
        ('same', 'op call', 'at::_log_softmax', 'aten/src/ATen/native/SoftMax.cpp:273', None, 'aten/src/ATen/native/SoftMax.cpp:524'),
        ('same', 'entry', 'aten::_log_softmax', f'{Y}:2389', None, f'{Y}:3675'),
        ('added', 'delegate', None, None, 'aten::_log_softmax.out', f'{Y}:3679'),
        ('changed', 'dispatch row', 'CUDA: log_softmax_cuda', f'{Y}:2392', 'CUDA: log_softmax_cuda_out', f'{Y}:3683'),
        ('changed', 'C++', 'at::native::log_softmax_cuda', 'aten/src/ATen/native/cuda/SoftMax.cu:863', 'at::native::structured_log_softmax_cuda_out', 'aten/src/ATen/native/cuda/SoftMax.cu:1164'),
        ('same', 'C++', 'at::native::host_softmax', 'aten/src/ATen/native/cuda/SoftMax.cu:686', None, 'aten/src/ATen/native/cuda/SoftMax.cu:678'),
        ('same', 'C++', 'dispatch_softmax_forward', 'aten/src/ATen/native/cuda/PersistentSoftmax.cuh:237', None, 'aten/src/ATen/native/cuda/PersistentSoftmax.cuh:450'),
        ('changed', 'launch', 'softmax_warp_forward<input_t, output_t, acc_t, 0, is_log_softmax><<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>', 'aten/src/ATen/native/cuda/PersistentSoftmax.cuh:268', 'softmax_warp_forward_opt2_nd<input_t, output_t, acc_t, 7, 2, is_log_softmax><<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>', 'aten/src/ATen/native/cuda/PersistentSoftmax.cuh:503'),
        ('changed', 'device code', '__global__ softmax_warp_forward', 'aten/src/ATen/native/cuda/PersistentSoftmax.cuh:65', '__global__ softmax_warp_forward_opt2_nd', 'aten/src/ATen/native/cuda/maca_kernels/PersistentSoftmax_maca.cuh:74'),
    ],
    'relu': [
        ('same', 'entry', 'aten::relu', f'{Y}:3257', None, f'{Y}:4979'),
        ('same', 'dispatch row', 'CUDA: relu', f'{Y}:3260', None, f'{Y}:4983'),
        ('same', 'C++', 'at::native::relu', 'aten/src/ATen/native/Activation.cpp:164', None, 'aten/src/ATen/native/Activation.cpp:504'),
        ('changed', 'op call', 'at::threshold', 'aten/src/ATen/native/Activation.cpp:165', 'at::clamp_min', 'aten/src/ATen/native/Activation.cpp:506'),
        ('changed', 'entry', 'aten::threshold', f'{Y}:3813', 'aten::clamp_min', f'{Y}:1567'),
        ('added', 'delegate', None, None, 'aten::clamp_min.out', f'{Y}:1589'),
        ('changed', 'dispatch row', 'CUDA: threshold_cuda', f'{Y}:3817', 'CUDA: clamp_min_out', f'{Y}:1594'),
        ('changed', 'C++', 'at::native::threshold_cuda', 'aten/src/ATen/native/cuda/Activation.cu:538', 'at::native::structured_clamp_min_out', 'aten/src/ATen/native/TensorCompare.cpp:742'),
        ('removed', 'C++', 'at::native::threshold_out_cuda', 'aten/src/ATen/native/cuda/Activation.cu:517', None, None),
        ('added', 'stub', None, None, 'clamp_min_scalar_stub', 'aten/src/ATen/native/TensorCompare.cpp:747'),
        ('added', 'registration', None, None, 'CUDA: clamp_min_scalar_kernel_impl', 'aten/src/ATen/native/cuda/TensorCompare.cu:101'),
        ('changed', 'C++', 'at::native::threshold_kernel', 'aten/src/ATen/native/cuda/Activation.cu:314', 'at::native::clamp_min_scalar_kernel_impl', 'aten/src/ATen/native/cuda/TensorCompare.cu:85'),
        ('changed', 'C++', 'at::native::threshold_kernel_impl', 'aten/src/ATen/native/cuda/Activation.cu:308', 'at::native::launch_clamp_scalar', 'aten/src/ATen/native/cuda/TensorCompare.cu:59'),
        ('changed', 'launcher call', 'gpu_kernel_with_scalars', 'aten/src/ATen/native/cuda/Activation.cu:309', 'gpu_kernel_maca_arity1', 'aten/src/ATen/native/cuda/TensorCompare.cu:65'),
        ('changed', 'launcher', 'at::native::gpu_kernel_with_scalars', 'aten/src/ATen/native/cuda/Loops.cuh:144', 'at::native::gpu_kernel_maca_arity1', 'aten/src/ATen/native/cuda/Loops.cuh:104'),
        ('changed', 'launcher call', 'gpu_kernel', 'aten/src/ATen/native/cuda/Loops.cuh:163', 'gpu_kernel_impl_maca_arity1', 'aten/src/ATen/native/cuda/Loops.cuh:123'),
        ('changed', 'launcher', 'at::native::gpu_kernel', 'aten/src/ATen/native/cuda/Loops.cuh:91', 'gpu_kernel_impl_maca_arity1', 'aten/src/ATen/native/cuda/maca_kernels/CUDALoops_maca_arity1.cuh:677'),
        ('changed', 'launcher call', 'gpu_kernel_impl', 'aten/src/ATen/native/cuda/Loops.cuh:110', 'launch_vectorized_kernel_arity1', 'aten/src/ATen/native/cuda/maca_kernels/CUDALoops_maca_arity1.cuh:707'),
        ('changed', 'launcher', 'at::native::gpu_kernel_impl', 'aten/src/ATen/native/cuda/CUDALoops.cuh:136', 'launch_vectorized_kernel_arity1', 'aten/src/ATen/native/cuda/maca_kernels/CUDALoops_maca_arity1.cuh:25'),
        ('removed', 'launcher call', 'launch_vectorized_kernel', 'aten/src/ATen/native/cuda/CUDALoops.cuh:157', None, None),
        ('removed', 'launcher', 'at::native::launch_vectorized_kernel', 'aten/src/ATen/native/cuda/CUDALoops.cuh:94', None, None),
        ('changed', 'launch', 'vectorized_elementwise_kernel<4, func_t, array_t><<<grid, num_threads, 0, stream>>>', 'aten/src/ATen/native/cuda/CUDALoops.cuh:103', 'vectorized_elementwise_kernel_unary_opt<block_size, 8, res_t, arg0, func_t, array_t, narity><<<grid, block_size, 0, stream>>>', 'aten/src/ATen/native/cuda/maca_kernels/CUDALoops_maca_arity1.cuh:52'),
        ('changed', 'device code', '__global__ at::native::vectorized_elementwise_kernel', 'aten/src/ATen/native/cuda/CUDALoops.cuh:64', '__global__ at::native::vectorized_elementwise_kernel_unary_opt', 'aten/src/ATen/native/cuda/CUDALoops.cuh:129'),
    ],
    # 2.4: the fork's maca_parallel_cat picks a kernel by the inputs' count, rank and alignment (Shape.cu:1020,
    # all run-time tests): the chain's end there is a ranked choice (JSON choices), not a reading of the inputs
    'torch.cat': [
        ('same', 'python', 'torch.cat', f'{Y}:908', None, f'{Y}:1374'),
        ('same', 'entry', 'aten::cat', f'{Y}:908', None, f'{Y}:1374'),
        ('removed', 'dispatch row', 'DefaultBackend: cat', f'{Y}:910', None, None),
        ('removed', 'C++', 'at::native::cat', 'aten/src/ATen/native/TensorShape.cpp:418', None, None),
        ('removed', 'op call', 'at::_cat', 'aten/src/ATen/native/TensorShape.cpp:430', None, None),
        ('removed', 'entry', 'aten::_cat', f'{Y}:6670', None, None),
        ('added', 'delegate', None, None, 'aten::cat.out', f'{Y}:1382'),
        ('changed', 'dispatch row', 'CUDA: cat_cuda', f'{Y}:6673', 'CUDA: cat_out_cuda', f'{Y}:1388'),
        ('changed', 'C++', 'at::native::cat_cuda', 'aten/src/ATen/native/cuda/Shape.cu:428', 'at::native::structured_cat_out_cuda', 'aten/src/ATen/native/cuda/Shape.cu:1679'),
        ('changed', 'C++', 'at::native::cat_out_cuda', 'aten/src/ATen/native/cuda/Shape.cu:454', 'at::native::maca_parallel_cat', 'aten/src/ATen/native/cuda/Shape.cu:1020'),
        ('removed', 'C++', 'at::native::parallel_cat', 'aten/src/ATen/native/cuda/Shape.cu:318', None, None),
        # (its special shapes, `dimension == 0 && batchCounter == 3 && nDims == 4` at :1211 among them, rank after
        # the general no-partial-write kernel any shape takes)
        ('changed', 'launch', 'CatArrayBatchedCopy<scalar_t, unsigned int, 1, batch_size, stride_size><<<catGrid, applyBlock, 0, stream.stream()>>>', 'aten/src/ATen/native/cuda/Shape.cu:411', 'MACA_CatArrayBatchedCopyNoPartialWrite_any_any_any_0<scalar_t, unsigned int, 1, vec4, batch_size, stride_size><<<catGrid, applyBlock, 0, stream.stream()>>>', 'aten/src/ATen/native/cuda/Shape.cu:1279'),
        ('changed', 'device code', '__global__ at::native::CatArrayBatchedCopy', 'aten/src/ATen/native/cuda/Shape.cu:139', '__global__ at::native::MACA_CatArrayBatchedCopyNoPartialWrite_any_any_any_0', 'aten/src/ATen/native/cuda/Shape.cu:485'),
    ],
}


@pytest.fixture(scope="module")
def chains(real_index_1_8, real_index):
    d = real_index_1_8.diff(real_index, list(CHAINS))
    return {c["query"]: c for c in d.op_chains}


def steps(chain) -> list[tuple]:
    def at(h):
        return f"{h['file']}:{h['line']}" if h and h["file"] else None
    return [(s["status"], s["role"], s["a"] and s["a"]["name"], at(s["a"]),
             s["b"]["name"] if s["b"] and s["status"] not in ("same", "moved") else None, at(s["b"]))
            for s in chain["steps"]]


@pytest.mark.parametrize("name", list(CHAINS))
def test_main_chains_of_1_8_and_2_4_hop_by_hop(chains, name):
    assert steps(chains[name]) == CHAINS[name]


def test_layer_norm_registry_and_backward_changes(chains):
    c = chains["layer_norm"]
    assert c["ops"]["changed"]["layer_norm"]["dispatch"] == {
        "gained": [], "lost": [], "kernels": {"CompositeImplicitAutograd": {"a": "layer_norm", "b": "layer_norm_symint"}}}
    assert c["ops"]["changed"]["native_layer_norm"]["composite"] == {"a": "CompositeImplicitAutograd",
                                                                     "b": "CompositeExplicitAutograd"}
    assert c["ops"]["changed"]["native_layer_norm"]["schema"]["arguments"]["changed"] == [
        {"name": "normalized_shape", "a": "int[] normalized_shape", "b": "SymInt[] normalized_shape"}]
    backward = c["derivatives"]["changed"]["native_layer_norm"]
    assert (backward["a"], backward["b"]) == ("tools/autograd/derivatives.yaml:815", "tools/autograd/derivatives.yaml:1224")
    assert list(backward["formulas"]["changed"]) == ["input, weight, bias"]
    assert backward["formulas"]["changed"]["input, weight, bias"]["b"].startswith(
        "grad.defined() ? native_layer_norm_backward_symint(grad, input, normalized_shape, result1, result2")
    assert c["device_code"]["a"]["name"] == "__global__ at::native::LayerNormForwardCUDAKernel"
    assert c["device_code"]["b"]["name"] == "__global__ at::native::layernorm::vectorized_layer_norm_kernel_opt_wave1"


def test_whole_registry_diff_counts_of_1_8_and_2_4(real_index_1_8, real_index):
    d = real_index_1_8.diff(real_index)
    assert [len(d.ops[k]) for k in ("added", "removed", "renamed", "changed")] == [838, 114, 7, 1141]
    assert [len(d.derivatives[k]) for k in ("added", "removed", "changed")] == [244, 95, 348]
    assert {"from": "_cat", "to": "concat"}.items() <= next(r for r in d.ops["renamed"] if r["from"] == "_cat").items()
    # EmbeddingBag.cu:35 (1.8) split into _max (:65) and _sum_mean (:115) in 2.4; the bodies and the launching
    # function (_embedding_bag_cuda) pair it with _sum_mean
    renamed = {r["from"]: r for r in d.code["kernels"]["renamed"]}
    r = renamed["at::native::EmbeddingBag_updateOutputKernel"]
    assert (r["to"], r["a"], r["b"], r["launched_by"]) == (
        "at::native::EmbeddingBag_updateOutputKernel_sum_mean", "aten/src/ATen/native/cuda/EmbeddingBag.cu:35",
        "aten/src/ATen/native/cuda/EmbeddingBag.cu:115", ["at::native::_embedding_bag_cuda"])


def test_fork_report_of_the_maca_fork(real_index):
    r = real_index.fork_report(["layer_norm"])
    assert r.macros == [{"name": "USE_MACA",
                         "source": "required by aten/src/ATen/Context.h:534 (static_assert(0))"}]
    assert r.folders == [{"folder": "aten/src/ATen/native/cuda/maca_kernels", "files": 34}]
    kernels = {(s["name"], s["line"]) for s in r.sites["fork"]["kernel"]}
    assert ("at::native::layernorm::vectorized_layer_norm_kernel_opt", 435) in kernels
    launches = {(s["name"], s["file"], s["line"]) for s in r.sites["fork"]["launch"]}
    assert ("vectorized_layer_norm_kernel_opt", "aten/src/ATen/native/cuda/layer_norm_kernel.cu", 846) in launches
    assert ("aten/src/ATen/native/cuda/layer_norm_kernel.cu", 787, "defined(USE_MACA)") in {
        (b["file"], b["line"], b["condition"]) for b in r.branches["fork"]}


def test_fork_report_of_the_fpga_fork_with_its_macros_named(real_index_1_4):
    """The 1.4 FPGA fork (Belkharym/pytorch-fpga) requires no macro: named, its #ifdef C10_USE_FPGA branches
    (c10/opencl/OpenCLFunctions.cpp:85, the .xclbin binaries) and its opencl/ folders with their registrations."""
    r = real_index_1_4.fork_report(macros=["C10_USE_FPGA", "USE_OPENCL"])
    assert ("c10/opencl/OpenCLFunctions.cpp", 86, 86) in {(b["file"], b["line"], b["end_line"])
                                                         for b in r.branches["fork"]}
    assert ("c10/opencl/OpenCLFunctions.cpp", 247, "!defined(C10_USE_FPGA)") in {
        (b["file"], b["line"], b["condition"]) for b in r.branches["upstream"]}
    assert [f["folder"] for f in r.folders] == ["aten/src/ATen/native/opencl", "aten/src/ATen/opencl", "c10/opencl",
                                                "torch/csrc/opencl"]
    regs = {(s["name"], s["file"], s["line"]) for s in r.sites["fork"]["registration"]}
    assert ("add_stub -> add_kernel_opencl (OPENCL)", "aten/src/ATen/native/opencl/BinaryOpsKernel.cpp", 181) in regs
    assert len(regs) == 16
