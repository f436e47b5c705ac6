"""The C++/CUDA layer of sample_checkout: exact rows for each pattern (checked against the sources by eye)."""
from __future__ import annotations

N = "aten/src/ATen/native/"


def q(ix, sql, **p):
    return [tuple(r.values()) for r in ix.rows(sql, p)]


def test_registration_macro_family_is_readable_from_dispatchstub_h(ix):
    names = q(ix, "SELECT DISTINCT name FROM macros WHERE file = :f AND name LIKE '%REGISTER%DISPATCH' ORDER BY name",
              f=N + "DispatchStub.h")
    assert [n for (n,) in names] == [
        "ALSO_REGISTER_AVX512_DISPATCH", "REGISTER_ALL_CPU_DISPATCH", "REGISTER_ARCH_DISPATCH",
        "REGISTER_AVX2_DISPATCH", "REGISTER_AVX512_DISPATCH", "REGISTER_CUDA_DISPATCH", "REGISTER_DISPATCH",
        "REGISTER_HIP_DISPATCH", "REGISTER_MPS_DISPATCH", "REGISTER_NO_CPU_DISPATCH"]
    # two #defines of REGISTER_DISPATCH (one per compiler), bodies with continuations joined
    assert q(ix, "SELECT line, body FROM macros WHERE name = 'REGISTER_DISPATCH' ORDER BY line") == [
        (46, "REGISTER_CUDA_DISPATCH(name, fn)"), (48, "REGISTER_ARCH_DISPATCH(name, CPU_CAPABILITY, fn)")]
    assert q(ix, "SELECT parameters, body FROM macros WHERE name = 'REGISTER_NO_CPU_DISPATCH'") == [
        ("(name)", "REGISTER_ALL_CPU_DISPATCH(name, nullptr)")]
    # the #define lines are not registrations
    assert q(ix, "SELECT count(*) FROM dispatch_registrations WHERE file = :f", f=N + "DispatchStub.h") == [(0,)]


def test_dispatch_stubs(ix):
    assert q(ix, "SELECT count(*) FROM dispatch_stubs") == [(22,)]  # fill_stub: Fill.h declare, Fill.cpp define
    assert q(ix, "SELECT file, line, action FROM dispatch_stubs WHERE stub = 'argmax_stub' ORDER BY file") == [
        (N + "ReduceOps.cpp", 6, "define"), (N + "ReduceOps.h", 8, "declare")]
    assert q(ix, "SELECT file, line, action, fn_type, from_macro FROM dispatch_stubs WHERE stub = 'add_stub' "
                 "ORDER BY file") == [(N + "BinaryOps.cpp", 14, "define", None, None),
                                      (N + "BinaryOps.h", 7, "declare", "structured_binary_fn_alpha", None)]
    assert q(ix, "SELECT file, line, fn_type FROM dispatch_stubs WHERE stub = 'LayerNormKernel'") == [
        (N + "layer_norm.h", 12, "forward_fn")]


def test_token_pasted_stubs_from_the_rnn_macro(ix):
    # RNN_STUBS(lstm) on line 13 and RNN_STUBS(gru) on line 14: no text spells these stub names out
    assert q(ix, "SELECT line, stub, action FROM dispatch_stubs WHERE from_macro = 'RNN_STUBS' ORDER BY line, stub") == [
        (13, "lstm_cudnn_stub", "define"), (13, "lstm_miopen_stub", "define"),
        (14, "gru_cudnn_stub", "define"), (14, "gru_miopen_stub", "define")]
    assert q(ix, "SELECT line, stub, kernel, macro, device FROM dispatch_registrations WHERE from_macro = 'RNN_STUBS' "
                 "ORDER BY line, stub") == [
        (13, "lstm_cudnn_stub", None, "REGISTER_NO_CPU_DISPATCH", "CPU"),
        (13, "lstm_miopen_stub", None, "REGISTER_NO_CPU_DISPATCH", "CPU"),
        (14, "gru_cudnn_stub", None, "REGISTER_NO_CPU_DISPATCH", "CPU"),
        (14, "gru_miopen_stub", None, "REGISTER_NO_CPU_DISPATCH", "CPU")]


def test_registrations_and_devices(ix):
    assert q(ix, "SELECT count(*) FROM dispatch_registrations") == [(19,)]  # 2 of ufunc codegen (mul_stub)
    assert q(ix, "SELECT file, line, kernel, device FROM dispatch_registrations WHERE stub = 'argmax_stub'") == [
        (N + "cuda/ReduceArgMaxKernel.cu", 20, "argmax_kernel_cuda", "CUDA")]
    rows = q(ix, "SELECT file, line, kernel, macro, device, cpu_capability FROM dispatch_registrations "
                 "WHERE stub IN ('add_stub', 'clamp_min_scalar_stub', 'LayerNormKernel', 'softmax_lastdim_kernel') "
                 "ORDER BY file")
    assert rows == [
        (N + "cpu/BinaryOpsKernel.cpp", 21, "add_kernel", "REGISTER_DISPATCH", "CPU", None),
        (N + "cpu/SoftMaxKernel.cpp", 15, "softmax_lastdim_kernel_impl", "ALSO_REGISTER_AVX512_DISPATCH", "CPU",
         "AVX512"),
        (N + "cpu/TensorCompareKernel.cpp", 16, "clamp_min_scalar_kernel_impl", "REGISTER_DISPATCH", "CPU", None),
        (N + "cpu/layer_norm_kernel.cpp", 26, "LayerNormKernelImpl", "REGISTER_DISPATCH", "CPU", None),
        (N + "cuda/BinaryAddKernel.cu", 23, "add_kernel_cuda", "REGISTER_DISPATCH", "CUDA", None),
        (N + "cuda/TensorCompare.cu", 16, "clamp_min_scalar_kernel_impl", "REGISTER_DISPATCH", "CUDA", None),
        (N + "cuda/layer_norm_kernel.cu", 96, "LayerNormKernelImpl", "REGISTER_DISPATCH", "CUDA", None)]
    rows = q(ix, "SELECT line, stub, kernel, macro, device, from_macro FROM dispatch_registrations WHERE file = :f "
                 "ORDER BY line", f=N + "cudnn/RNN.cpp")
    assert rows == [(42, "gru_cudnn_stub", "gru_cudnn", "REGISTER_CUDA_DISPATCH", "CUDA", "CUDNN_ONE_HIDDEN_RNN"),
                    (44, "lstm_cudnn_stub", "lstm_cudnn", "REGISTER_CUDA_DISPATCH", "CUDA", None),
                    (57, "lstm_miopen_stub", "lstm_miopen", "REGISTER_HIP_DISPATCH", "HIP", None)]


def test_structured_kernels_are_found_by_yaml_name(ix):
    rows = q(ix, "SELECT name, kind, qualified_name, file, line FROM symbols WHERE kind LIKE '%func' ORDER BY name")
    assert rows == [
        ("_softmax", "meta_func", "at::meta::structured__softmax", N + "SoftMax.cpp", 6),
        ("add_Tensor", "meta_func", "at::meta::structured_add_Tensor", N + "BinaryOps.cpp", 6),
        ("add_out", "impl_func", "at::native::structured_add_out", N + "BinaryOps.cpp", 16),
        ("argmax_out", "impl_func", "at::native::structured_argmax_out", N + "ReduceOps.cpp", 14),
        ("clamp_min", "meta_func", "at::meta::structured_clamp_min", N + "TensorCompare.cpp", 6),
        ("clamp_min_out", "impl_func", "at::native::structured_clamp_min_out", N + "TensorCompare.cpp", 16),
        ("mm", "meta_func", "at::meta::structured_mm", N + "LinearAlgebra.cpp", 4),
        ("mm_out_cpu", "impl_func", "at::native::structured_mm_out_cpu", N + "LinearAlgebra.cpp", 22),
        ("mm_out_cuda", "impl_func", "at::native::structured_mm_out_cuda", N + "cuda/Blas.cpp", 20),
        ("softmax_cpu_out", "impl_func", "at::native::structured_softmax_cpu_out", N + "SoftMax.cpp", 17),
        ("softmax_cuda_out", "impl_func", "at::native::structured_softmax_cuda_out", N + "cuda/SoftMax.cu", 47)]


def test_every_yaml_kernel_but_the_absent_ones_has_a_definition(ix):
    # ufunc_* kernels are generated from ufunc_inner_loop by codegen: no source defines them
    missing = q(ix, "SELECT DISTINCT d.kernel FROM native_dispatch d WHERE d.kernel NOT IN "
                    "(SELECT name FROM symbols WHERE language IN ('cpp', 'cuda')) AND d.kernel NOT LIKE 'ufunc%' "
                    "ORDER BY d.kernel")
    assert missing == [("relu_mps",), ("softmax_mps_out",)]  # deliberately absent


def test_definitions(ix):
    rows = q(ix, "SELECT name, kind, qualified_name, is_template, line FROM symbols WHERE file = :f ORDER BY line",
             f=N + "cuda/layer_norm_kernel.cu")
    assert rows == [
        ("RowwiseMomentsCUDAKernel", "global_kernel", "at::native::RowwiseMomentsCUDAKernel", 1, 11),
        ("LayerNormForwardCUDAKernel", "global_kernel", "at::native::LayerNormForwardCUDAKernel", 1, 21),
        ("LayerNormKernelImplInternal", "function", "at::native::LayerNormKernelImplInternal", 1, 30),
        ("LayerNormKernelImpl", "function", "at::native::LayerNormKernelImpl", 0, 44),
        ("layer_norm_cuda", "function", "at::native::layer_norm_cuda", 0, 55),
        ("LayerNormBackwardCUDAKernel", "global_kernel", "at::native::LayerNormBackwardCUDAKernel", 1, 67),
        ("layer_norm_backward_cuda", "function", "at::native::layer_norm_backward_cuda", 0, 75)]
    assert q(ix, "SELECT qualified_name, kind, is_template, line FROM symbols WHERE name = 'gemm' ORDER BY line") == [
        ("at::cuda::blas::gemm", "function", 1, 7), ("at::cuda::blas::gemm", "function", 1, 15)]
    assert q(ix, "SELECT kind, signature, line FROM symbols WHERE qualified_name = 'at::native::ufunc::mul' "
                 "ORDER BY line") == [("device_function", "(T self, T other)", 7, ),
                                      ("function", "(Vectorized<T> self, Vectorized<T> other)", 12)]
    assert q(ix, "SELECT kind, qualified_name FROM symbols WHERE file = :f ORDER BY line, kind",
             f=N + "cuda/BinaryAddKernel.cu") == [
        ("struct", "at::native::AddFunctor"), ("method", "at::native::AddFunctor::AddFunctor"),
        ("device_function", "at::native::AddFunctor::operator()"), ("function", "at::native::add_kernel_cuda")]
    assert q(ix, "SELECT qualified_name, from_macro, line FROM symbols WHERE name = 'gru_cudnn'") == [
        ("at::native::gru_cudnn", "CUDNN_ONE_HIDDEN_RNN", 42)]


def test_cpp_calls_back_into_the_yaml_layer(ix):
    assert q(ix, "SELECT caller, qualifier, line FROM calls WHERE callee = 'clamp_min' AND language = 'cpp'") == [
        ("at::native::relu", "at", 10)]
    assert q(ix, "SELECT callee, qualifier, is_method FROM calls WHERE caller = 'at::native::linear' ORDER BY line, "
                 "callee") == [("mm", "at", 0), ("t", "weight", 1), ("defined", "bias_opt", 1),
                               ("has_value", "bias_opt", 1), ("add_", "output", 1)]
    assert q(ix, "SELECT qualifier, callee FROM calls WHERE caller = 'at::native::layer_norm_symint' "
                 "ORDER BY callee") == [("std", "get"), ("at", "native_layer_norm_symint")]
    assert q(ix, "SELECT caller FROM calls WHERE callee = '_cudnn_rnn' ORDER BY line") == [
        ("at::native::lstm_cudnn",), ("at::native::gru_cudnn",)]
    assert q(ix, "SELECT count(*) FROM calls WHERE callee LIKE 'TORCH_%' OR callee LIKE 'AT_%'") == [(0,)]


def test_stub_calls(ix):
    rows = q(ix, "SELECT stub, device_arg, caller, file, line FROM stub_calls ORDER BY file, line")
    assert rows == [
        ("threshold_stub", "iter.device_type()", "at::native::threshold_backward", N + "Activation.cpp", 20),
        ("add_stub", "device_type()", "at::native::structured_add_out", N + "BinaryOps.cpp", 17),
        ("fill_stub", "iter.device_type()", "at::native::zero_", N + "Fill.cpp", 11),
        ("lstm_cudnn_stub", "_input.device().type()", "at::native::lstm", N + "RNN.cpp", 25),
        ("lstm_miopen_stub", "_input.device().type()", "at::native::lstm", N + "RNN.cpp", 31),
        ("stub", "iter.device_type()", "at::native::argmax_impl", N + "ReduceOps.cpp", 11),
        ("softmax_lastdim_kernel", "kCPU", "at::native::structured_softmax_cpu_out", N + "SoftMax.cpp", 19),
        ("clamp_min_scalar_stub", "device_type()", "at::native::structured_clamp_min_out", N + "TensorCompare.cpp",
         17),
        ("LayerNormKernel", "kCPU", "at::native::layer_norm_cpu", N + "layer_norm.cpp", 13),
        ("LayerNormBackwardKernel", "kCPU", "at::native::layer_norm_backward_cpu", N + "layer_norm.cpp", 27)]
    # every stub call names a declared stub (the join the trace uses), but for a helper's stub parameter:
    # the trace reads which stub the helper was handed from the line that called it
    assert q(ix, "SELECT stub, caller FROM stub_calls WHERE stub NOT IN (SELECT stub FROM dispatch_stubs "
                 "WHERE action = 'declare')") == [("stub", "at::native::argmax_impl")]


def test_kernel_launches(ix):
    rows = q(ix, "SELECT file, line, kernel, kind, template_args, config, caller FROM kernel_launches "
                 "ORDER BY file, line")
    assert rows == [
        (N + "cuda/BinaryAddKernel.cu", 19, "opmath_gpu_kernel_with_scalars", "tensor_iterator", "<scalar_t>", None,
         "at::native::add_kernel_cuda"),
        (N + "cuda/FillKernel.cu", 17, "gpu_kernel", "tensor_iterator", None, None, "at::native::fill_kernel_cuda"),
        (N + "cuda/ReduceArgMaxKernel.cu", 10, "gpu_reduce_kernel", "tensor_iterator", "<scalar_t, int64_t>", None,
         "at::native::argmax_functor::operator()"),
        (N + "cuda/SoftMax.cu", 38, "cunn_SoftMaxForward", "chevron", "<ILP, scalar_t, accscalar_t>",
         "grid, block, smem, stream", "at::native::host_softmax"),
        (N + "cuda/TensorCompare.cu", 10, "gpu_kernel", "tensor_iterator", None, None,
         "at::native::clamp_min_scalar_kernel_impl"),
        (N + "cuda/layer_norm_kernel.cu", 35, "RowwiseMomentsCUDAKernel", "chevron", "<T, T_ACC>",
         "M, kThreads, 0, stream", "at::native::LayerNormKernelImplInternal"),
        (N + "cuda/layer_norm_kernel.cu", 38, "LayerNormForwardCUDAKernel", "chevron", "<T, T_ACC>",
         "M, kThreads, 0, stream", "at::native::LayerNormKernelImplInternal"),
        (N + "cuda/layer_norm_kernel.cu", 88, "LayerNormBackwardCUDAKernel", "chevron", "<scalar_t, acc_t>",
         "M, kThreads, 0, stream", "at::native::layer_norm_backward_cuda")]
    # each <<<>>> kernel is a __global__ definition of the index
    assert q(ix, "SELECT count(*) FROM kernel_launches k WHERE kind = 'chevron' AND NOT EXISTS "
                 "(SELECT 1 FROM symbols s WHERE s.name = k.kernel AND s.kind = 'global_kernel')") == [(0,)]


def test_library_calls(ix):
    rows = q(ix, "SELECT library, function, caller, line FROM library_calls ORDER BY file, line")
    assert rows == [
        ("cublas", "cublasSgemm", "at::cuda::blas::gemm", 10),
        ("cublas", "cublasDgemm", "at::cuda::blas::gemm", 18),
        ("cublas", "at::cuda::blas::gemm", "at::native::mm_out_cuda_impl", 10),
        ("cudnn", "cudnnCreateTensorDescriptor", "at::native::_cudnn_rnn", 13),
        ("cudnn", "cudnnSetTensorNdDescriptor", "at::native::_cudnn_rnn", 14),
        ("cudnn", "cudnnGetRNNWorkspaceSize", "at::native::_cudnn_rnn", 16),
        ("cudnn", "cudnnRNNForward", "at::native::_cudnn_rnn", 18),
        ("miopen", "miopenRNNForwardTraining", "at::native::lstm_miopen", 51)]


def test_type_dispatches(ix):
    assert q(ix, "SELECT count(*) FROM type_dispatches") == [(14,)]  # + FillKernel.cu, layer_norm_backward_cuda
    rows = q(ix, "SELECT macro, dtypes, name, caller, line FROM type_dispatches WHERE file IN (:a, :b) ORDER BY file",
             a=N + "cpu/BinaryOpsKernel.cpp", b=N + "cuda/Blas.cpp")
    assert rows == [("AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND2", "ALL_TYPES_AND_COMPLEX_AND2", "add_cpu",
                     "at::native::add_kernel", 9),
                    ("AT_DISPATCH_FLOATING_TYPES", "FLOATING_TYPES", "mm_cuda", "at::native::mm_out_cuda_impl", 9)]


def test_facts_after_an_error_node_survive(ix):
    f = N + "cpu/ActivationKernel.cpp"
    assert q(ix, "SELECT parse_errors FROM files WHERE path = :f", f=f) == [(1,)]
    assert q(ix, "SELECT name, line FROM symbols WHERE file = :f", f=f) == [("threshold_kernel", 9)]
    assert q(ix, "SELECT stub, kernel, device, line FROM dispatch_registrations WHERE file = :f", f=f) == [
        ("threshold_stub", "threshold_kernel", "CPU", 19)]


def test_comments_and_strings_are_not_sites(ix):
    # cpu/BinaryOpsKernel.cpp line 1 mentions REGISTER_DISPATCH in a comment
    assert q(ix, "SELECT line FROM dispatch_registrations WHERE file = :f", f=N + "cpu/BinaryOpsKernel.cpp") == [(21,)]
