"""opindex.extract.cpp on small inline sources: exact tuples (in the order of the row types, opindex.records)."""
from __future__ import annotations

import textwrap

from opindex.extract.cpp import extract
from opindex.extract.cpp_macros import Macro, arguments, substitute
from opindex.extract.cpp_names import device_from_path, library
from opindex.records import FACT_ROWS, SymbolRow


def run(src: str, path: str = "aten/src/ATen/native/X.cpp", language: str = "cpp"):
    return extract(path, textwrap.dedent(src).encode(), language)


def test_tuples_follow_fact_columns():
    facts = run("""
        namespace at::native {
        DECLARE_DISPATCH(fn, a_stub);
        void f(const Tensor& t) { a_stub(kCPU, t); cudnnCreate(&h); }
        }
        """)
    for table, rows in facts.rows.items():
        for row in rows:
            assert len(row) == len(FACT_ROWS[table]._fields), table


def test_definitions_qualified_names_kinds():
    facts = run("""
        namespace at { namespace native {
        Tensor relu(const Tensor& self) { return at::clamp_min(self, 0); }
        Tensor& relu_(Tensor& self) { return self; }
        void Foo::bar() const {}
        struct Acc { int get() const { return 1; } };
        template <typename T> T twice(T x) { return x + x; }
        Tensor declared_only(const Tensor& self);
        }}
        """)
    rows = [(r[1], r[4], r[5], r[6], r[7], r[9]) for r in facts.rows["symbols"]]
    assert rows == [
        (3, "function", "relu", "at::native::relu", "at::native", False),
        (4, "function", "relu_", "at::native::relu_", "at::native", False),
        (5, "method", "bar", "at::native::Foo::bar", "at::native::Foo", False),
        (6, "struct", "Acc", "at::native::Acc", "at::native", False),
        (6, "method", "get", "at::native::Acc::get", "at::native::Acc", False),
        (7, "function", "twice", "at::native::twice", "at::native", True),
    ]
    assert facts.rows["symbols"][0][8] == "(const Tensor& self)"


def test_structured_kernels_use_the_yaml_name():
    facts = run("""
        namespace at::meta {
        TORCH_META_FUNC(mm)(const Tensor& self, const Tensor& mat2) { check(self); }
        TORCH_META_FUNC2(add, Tensor)(const Tensor& self, const Tensor& other, const Scalar& alpha) {}
        TORCH_PRECOMPUTE_META_FUNC(max_pool2d)(const Tensor& input) { return precompute(); }
        }
        namespace at::native {
        TORCH_IMPL_FUNC(add_out)(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& r) {}
        }
        """)
    rows = [(r[1], r[4], r[5], r[6]) for r in facts.rows["symbols"]]
    assert rows == [
        (3, "meta_func", "mm", "at::meta::structured_mm"),
        (4, "meta_func", "add_Tensor", "at::meta::structured_add_Tensor"),
        (5, "precompute_meta_func", "max_pool2d", "at::meta::structured_max_pool2d"),
        (8, "impl_func", "add_out", "at::native::structured_add_out"),
    ]
    assert [r[1:] for r in facts.rows["calls"]] == [
        (3, "cpp", "at::meta::structured_mm", "check", "", False, None, '["self"]', None),
        (5, "cpp", "at::meta::structured_max_pool2d", "precompute", "", False, None, '[]', None)]


def test_cuda_kernels_and_launches():
    facts = run("""
        template <typename T>
        C10_LAUNCH_BOUNDS_1(128)
        __global__ void k(T* x, int n) { x[0] = helper(n); }
        __device__ float helper(int n) { return n; }
        __global__ void declared(int);
        void launch(cudaStream_t s) {
          k<float><<<grid, 128, 0, s>>>(ptr, n);
          C10_CUDA_KERNEL_LAUNCH_CHECK();
          gpu_kernel(iter, [] GPU_LAMBDA (float a) { return a; });
          thrust::sort(policy, b, e);
          thrust::make_zip_iterator(b, e);
          cub::DeviceRadixSort::SortPairs(tmp, bytes, k_in, k_out, v_in, v_out, n);
        }
        """, "aten/src/ATen/native/cuda/K.cu", "cuda")
    assert [(r[1], r[4], r[5], r[9]) for r in facts.rows["symbols"]] == [
        (4, "global_kernel", "k", True), (5, "device_function", "helper", False), (7, "function", "launch", False)]
    assert facts.rows["kernel_launches"] == [
        ("aten/src/ATen/native/cuda/K.cu", 8, "k", "chevron", "<float>", "grid, 128, 0, s", "launch", None),
        ("aten/src/ATen/native/cuda/K.cu", 10, "gpu_kernel", "tensor_iterator", None, None, "launch", None),
        ("aten/src/ATen/native/cuda/K.cu", 11, "sort", "thrust", None, None, "launch", None),
        ("aten/src/ATen/native/cuda/K.cu", 13, "SortPairs", "cub", None, None, "launch", None),
    ]
    # thrust::make_zip_iterator is a helper type of Thrust, not work done by it: not a library call
    assert [r[2:4] for r in facts.rows["library_calls"]] == [
        ("thrust", "thrust::sort"), ("cub", "cub::DeviceRadixSort::SortPairs")]


def test_a_kernel_whose_launch_bounds_sit_in_an_if_between_global_and_its_name():
    # DepthwiseConv2d.cu:141-145 and TensorFactories.cu:242-245 (2.4): the `#if` that guards the decorator splits
    # the declaration; the kernel is still a __global__, and a `#if` that holds code is kept.
    facts = run("""
        template <int kSize, typename scalar_t>
        __global__ void
        #if !defined(USE_ROCM)
        C10_LAUNCH_BOUNDS_1(at::cuda::detail::CUDA_NUM_THREADS)
        #endif
        conv_depthwise2d_forward_kernel(const scalar_t* input, int n) {}
        template <typename scalar_t>
        __global__
        #if defined(USE_ROCM)
        C10_LAUNCH_BOUNDS_2(512, 4)
        #else
        C10_LAUNCH_BOUNDS_1(512)
        #endif
        void tril_indices_kernel(scalar_t* tensor) {}
        #if defined(USE_ROCM)
        void rocm_only(int n) {}
        #endif
        """, "aten/src/ATen/native/cuda/DepthwiseConv2d.cu", "cuda")
    assert [(r[1], r[4], r[5]) for r in facts.rows["symbols"]] == [
        (3, "global_kernel", "conv_depthwise2d_forward_kernel"), (9, "global_kernel", "tril_indices_kernel"),
        (17, "function", "rocm_only")]


def test_a_test_of_a_template_type_argument_is_a_condition_row():
    # mem_eff_attention/kernels/cutlassF.h:286 (2.4): which dtype's and architecture's kernels dispatch_cutlassF hands
    # on; `if constexpr` too (RangeFactories.cu:235)
    facts = run("""
        template <typename DT, typename T>
        void dispatch_cutlassF(T cb, int cc = 0) {
            if (std::is_same<DT, cutlass::bfloat16_t>::value && 80 <= cc && cc < 100) {
                dispatch_cutlassF_bf16_sm80(cb, cc);
            }
            if constexpr (std::is_same_v<DT, float>) {
                dispatch_cutlassF_f32_sm80(cb, cc);
            } else {
                other(cb);
            }
        }
        """, "aten/src/ATen/native/transformers/cuda/mem_eff_attention/kernels/cutlassF.h", "cuda")
    assert [r[1:5] for r in facts.rows["conditions"]] == [
        (4, 6, "if", "std::is_same<DT, cutlass::bfloat16_t>::value && 80 <= cc && cc < 100"),
        (7, 9, "if", "std::is_same_v<DT, float>"), (9, 11, "if", "not (std::is_same_v<DT, float>)")]


def test_stub_declarations_registrations_and_defines():
    facts = run("""
        #define REGISTER_DISPATCH(name, fn) REGISTER_ARCH_DISPATCH(name, CPU_CAPABILITY, fn)
        namespace at::native {
        DECLARE_DISPATCH(void(*)(TensorIterator&, const Scalar&), fill_stub);
        DEFINE_DISPATCH(fill_stub);
        // REGISTER_DISPATCH(fill_stub, &commented_out);
        REGISTER_DISPATCH(fill_stub, &fill_kernel);
        REGISTER_ARCH_DISPATCH(fill_stub, DEFAULT, &fill_kernel)
        REGISTER_AVX2_DISPATCH(fill_stub, &fill_kernel);
        ALSO_REGISTER_SVE256_DISPATCH(fill_stub, &fill_kernel);
        REGISTER_NO_CPU_DISPATCH(other_stub);
        REGISTER_XPU_DISPATCH(fill_stub, &at::native::xpu::fill_kernel);
        const char* s = "REGISTER_DISPATCH(fake_stub, &fake)";
        }
        """, "aten/src/ATen/native/cpu/FillKernel.cpp")
    path = "aten/src/ATen/native/cpu/FillKernel.cpp"
    assert facts.rows["dispatch_stubs"] == [
        (path, 4, "fill_stub", "declare", "void(*)(TensorIterator&, const Scalar&)", None),
        (path, 5, "fill_stub", "define", None, None)]
    assert facts.rows["dispatch_registrations"] == [
        (path, 7, "fill_stub", "fill_kernel", "REGISTER_DISPATCH", "CPU", None, None),
        (path, 8, "fill_stub", "fill_kernel", "REGISTER_ARCH_DISPATCH", "CPU", "DEFAULT", None),
        (path, 9, "fill_stub", "fill_kernel", "REGISTER_AVX2_DISPATCH", "CPU", "AVX2", None),
        (path, 10, "fill_stub", "fill_kernel", "ALSO_REGISTER_SVE256_DISPATCH", "CPU", "SVE256", None),
        (path, 11, "other_stub", None, "REGISTER_NO_CPU_DISPATCH", "CPU", None, None),
        (path, 12, "fill_stub", "at::native::xpu::fill_kernel", "REGISTER_XPU_DISPATCH", "XPU", None, None)]
    assert facts.rows["macros"] == [
        (path, 2, "REGISTER_DISPATCH", "(name, fn)", "REGISTER_ARCH_DISPATCH(name, CPU_CAPABILITY, fn)")]


def test_stub_calls_rule():
    facts = run("""
        DECLARE_DISPATCH(fn, LayerNormKernel);
        void f(TensorIterator& iter, const Tensor& x) {
          add_stub(iter.device_type(), iter, alpha);
          LayerNormKernel(kCPU, x);
          lstm_cudnn_stub(x.device().type(), x);
          norm_helper(at::kCUDA, x);
          Device d(kCUDA);
          x.copy_stub(kCPU);
          compute(x, kCPU);
          auto t = static_cast<int>(x.device().type());
          helper<float>(iter.device_type(), x);
        }
        """)
    assert [r[1:] for r in facts.rows["stub_calls"]] == [
        (4, "add_stub", "iter.device_type()", "f", None),
        (5, "LayerNormKernel", "kCPU", "f", None),
        (6, "lstm_cudnn_stub", "x.device().type()", "f", None),
        (7, "norm_helper", "at::kCUDA", "f", None),
        (12, "helper", "iter.device_type()", "f", None)]
    # a cast is an operator, not a call (nor a stub call because its operand is a device)
    assert "static_cast" not in {r[4] for r in facts.rows["calls"]}
    assert ("helper", "") in {(r[4], r[5]) for r in facts.rows["calls"]}


def test_calls_qualifier_receiver_and_macros_skipped():
    facts = run("""
        Tensor linear(const Tensor& input, const Tensor& weight) {
          TORCH_CHECK(input.dim() > 0, "no");
          auto out = at::mm(input, weight.t());
          out.add_(bias);
          at::cuda::blas::gemm<float>('n', 'n', m, n, k);
          return at::native::empty_like(out);
        }
        """)
    assert [r[3:8] for r in facts.rows["calls"]] == [
        ("linear", "dim", "input", True, None),
        ("linear", "mm", "at", False, None),
        ("linear", "t", "weight", True, None),
        ("linear", "add_", "out", True, None),
        ("linear", "gemm", "at::cuda::blas", False, "<float>"),  # the template arguments as written
        ("linear", "empty_like", "at::native", False, None)]
    assert [r[2:4] for r in facts.rows["library_calls"]] == [("cublas", "at::cuda::blas::gemm")]


def test_type_dispatches():
    facts = run("""
        void k(TensorIterator& iter) {
          AT_DISPATCH_FLOATING_TYPES(iter.dtype(), "k_cpu", [&] { run<scalar_t>(); });
          AT_DISPATCH_ALL_TYPES_AND2(kHalf, kBFloat16, iter.dtype(), "k2_cpu", [&] {});
          AT_DISPATCH_V2(iter.dtype(), "k3", AT_WRAP([&] {}), AT_EXPAND(AT_ALL_TYPES), kHalf);
          AT_DISPATCH_SWITCH(iter.dtype(), name, AT_DISPATCH_CASE_FLOATING_TYPES(fn));
        }
        """)
    assert [r[1:] for r in facts.rows["type_dispatches"]] == [
        (3, "AT_DISPATCH_FLOATING_TYPES", "FLOATING_TYPES", "k_cpu", "k", None),
        (4, "AT_DISPATCH_ALL_TYPES_AND2", "ALL_TYPES_AND2", "k2_cpu", "k", None),
        (5, "AT_DISPATCH_V2", "AT_EXPAND(AT_ALL_TYPES), kHalf", "k3", "k", None),
        (6, "AT_DISPATCH_SWITCH", "SWITCH", None, "k", None)]


def test_token_pasting_macros_expand_at_each_invocation():
    facts = run("""
        namespace at::native {
        #define ONE_HIDDEN_RNN(NAME, MODE)                    \\
          DEFINE_DISPATCH(NAME##_cudnn_stub);                 \\
          REGISTER_NO_CPU_DISPATCH(NAME##_cudnn_stub);        \\
          void NAME##_cudnn(Tensor& out, const Tensor& in) {  \\
            out = _cudnn_impl(in, MODE);                      \\
          }
        ONE_HIDDEN_RNN(gru, CUDNN_GRU)
        ONE_HIDDEN_RNN(rnn_tanh, CUDNN_RNN_TANH)
        void after() {}
        }
        """)
    path = "aten/src/ATen/native/X.cpp"
    assert facts.rows["dispatch_stubs"] == [
        (path, 9, "gru_cudnn_stub", "define", None, "ONE_HIDDEN_RNN"),
        (path, 10, "rnn_tanh_cudnn_stub", "define", None, "ONE_HIDDEN_RNN")]
    assert [r[2] for r in facts.rows["dispatch_registrations"]] == ["gru_cudnn_stub", "rnn_tanh_cudnn_stub"]
    assert [(r[1], r[6], r[10]) for r in facts.rows["symbols"]] == [
        (11, "at::native::after", None),
        (9, "at::native::gru_cudnn", "ONE_HIDDEN_RNN"),
        (10, "at::native::rnn_tanh_cudnn", "ONE_HIDDEN_RNN")]
    assert [r[1:5] for r in facts.rows["calls"] if r[4] == "_cudnn_impl"] == [
        (9, "cpp", "at::native::gru_cudnn", "_cudnn_impl"), (10, "cpp", "at::native::rnn_tanh_cudnn", "_cudnn_impl")]


def test_nested_macro_generated_structured_kernels():
    facts = run("""
        namespace at::meta {
        #define CREATE_UNARY_META(func) \\
          TORCH_META_FUNC(func)(const Tensor& self) { build_unary_op(self); }
        #define CREATE_TWO(a, b) CREATE_UNARY_META(a) CREATE_UNARY_META(b)
        CREATE_TWO(sin, cos)
        }
        """)
    assert [(r[1], r[4], r[5], r[10]) for r in facts.rows["symbols"]] == [
        (6, "meta_func", "sin", "CREATE_TWO"), (6, "meta_func", "cos", "CREATE_TWO")]


def test_error_regions_do_not_hide_later_facts():
    facts = run("""
        namespace at::native {
        VEC_LOOP_BEGIN(sign, scalar_t) a < 0 ? -1 : (a > 0) VEC_LOOP_END(sign)
        static void sgn_kernel(TensorIteratorBase& iter) { cpu_kernel(iter, [](double a) { return a; }); }
        REGISTER_DISPATCH(sgn_stub, &sgn_kernel);
        }
        """, "aten/src/ATen/native/cpu/S.cpp")
    assert facts.parse_errors > 0
    assert [r[6] for r in facts.rows["symbols"]] == ["at::native::sgn_kernel"]
    assert [r[1:6] for r in facts.rows["dispatch_registrations"]] == [
        (5, "sgn_stub", "sgn_kernel", "REGISTER_DISPATCH", "CPU")]


def test_bad_input_never_raises():
    for data in (b"", b"\x00\xff\xfe garbage {{{", b"#define X(a, b) a##b\nX(", b"REGISTER_DISPATCH(",
                 b"AT_DISPATCH_V2(", "void f() { k<<<1, 2>>>(); }".encode() * 3):
        facts = extract("aten/src/ATen/native/cuda/Bad.cu", data, "cuda")
        assert isinstance(facts.parse_errors, int)


def test_device_from_path_rule():
    assert device_from_path("aten/src/ATen/native/cpu/BinaryOpsKernel.cpp") == "CPU"
    assert device_from_path("aten/src/ATen/native/cuda/Blas.cpp") == "CUDA"
    assert device_from_path("aten/src/ATen/native/Foo.cu") == "CUDA"
    assert device_from_path("aten/src/ATen/native/cudnn/RNN.cpp") == "CUDA"
    assert device_from_path("aten/src/ATen/native/miopen/RNN_miopen.cpp") == "CUDA"
    assert device_from_path("aten/src/ATen/native/mps/operations/Add.cpp") == "MPS"
    assert device_from_path("aten/src/ATen/native/quantized/cpu/kernels/QuantizedOpKernels.cpp") == "CPU"
    assert device_from_path("aten/src/ATen/native/sparse/cuda/SparseCsr.cpp") == "CUDA"
    assert device_from_path("aten/src/ATen/native/mkldnn/xpu/Conv.cpp") == "XPU"


def test_library_classification():
    assert library("cudnnRNNForward", "") == "cudnn"
    assert library("cudnn_convolution", "at") is None  # PyTorch's own op, not cuDNN
    assert library("cublasLtMatmul", "") == "cublas"
    assert library("gemm", "at::cuda::blas") == "cublas"
    assert library("getrf", "at::cuda::solver") == "cusolver"
    assert library("cusparseSpMM", "") == "cusparse"
    assert library("cufftExecC2C", "") == "cufft"
    assert library("reorder", "ideep") == "mkldnn"
    assert library("cblas_sgemm", "") == "blas"
    assert library("mkl_somatcopy", "") == "mkl"
    assert library("miopenConvolutionForward", "") == "miopen"
    assert library("mkldnn_matmul", "") is None


def test_macro_arguments_and_substitution():
    data = b'M(a, f(b, c), "x,)", \'(\' /* , */)'
    args, end = arguments(data, 1)
    assert args == ["a", "f(b, c)", '"x,)"', "'('"] and end == len(data)
    macro = Macro("M", ("NAME", "MODE"), True, "DEFINE_DISPATCH(NAME##_cudnn_stub); f(#MODE, NAME ## x)", 0)
    assert substitute(macro, ["lstm", "CUDNN_LSTM"]) == 'DEFINE_DISPATCH(lstm_cudnn_stub); f("CUDNN_LSTM", lstmx)'


def test_a_define_lost_in_an_error_node_is_still_expanded():
    # the grammar turns this #define into an ERROR node (the comment inside a continued condition, the blank
    # continued line); its lines still say what it is: two kernels per invocation
    src = b"""namespace at::native {
#define FOREACH_OP(NAME, OP)                             \\
  std::vector<Tensor> foreach_##NAME##_cuda(            \\
      TensorList input, const Scalar& scalar) {          \\
    if (!can_use({input}, scalar) ||                     \\
        has_int(input, /* includeBool */ true)) {        \\
      return at::native::foreach_##NAME##_slow(input);   \\
    }                                                    \\
    return apply<OP>(input, scalar);                     \\
  }                                                      \\
                                                         \\
  void foreach_##NAME##_cuda_(TensorList input) {        \\
    apply_<OP>(input);                                   \\
  }

FOREACH_OP(addcdiv, std::divides);
}
"""
    from opindex.extract import cpp
    f = cpp.extract("x/Foreach.cu", src, "cuda")
    defs = [(r[1], r[5], r.from_macro) for r in map(SymbolRow._make, f.rows["symbols"]) if "foreach_" in r[5]]
    assert defs == [(16, "foreach_addcdiv_cuda", "FOREACH_OP"), (16, "foreach_addcdiv_cuda_", "FOREACH_OP")]


def test_a_call_of_a_local_object_is_its_operator_not_a_function_of_that_name():
    src = b"""namespace at::cuda::blas {
template <typename DType>
void gemm_tunable(int p) {
  static tunable::GemmTunableOp<DType, tunable::BlasOp::T> gemm{};
  gemm(&p);
}
int other(int a) {
  gemm(1, 2);
  if (a && helper(a)) return helper(a);
  auto y = a * scale(a);
  return other(a - 1);
}
}"""
    from opindex.extract import cpp
    calls = [(r[1], r[4], r[5], r[6]) for r in cpp.extract("x/CUDABlas.cpp", src, "cpp").rows["calls"]]
    assert calls == [(5, "operator()", "gemm", 1), (8, "gemm", "", 0), (9, "helper", "", 0), (9, "helper", "", 0),
                     (10, "scale", "", 0), (11, "other", "", 0)]


def test_function_local_macros_are_the_functions_code():
    """A #define written inside a function body stamps out that function's calls and launches (TensorTopK.cu's
    RUN_K/RUN_T, Indexing.cu's SMALL_INDEX): its invocations there are expanded, whatever the body holds, and a
    /* comment */ on a continuation line does not end the directive (it closed the function early)."""
    facts = run("""
        void launch_k(int n) {
        #define RUN_K(T, LAUNCH)      \\
          /* a note */                \\
          LAUNCH<T>(n);
        #define SMALL(T)              \\
          small_kernel<T><<<1, 32>>>(n);
          if (n > 4) {
            RUN_K(int, mb::launch);
          } else {
            SMALL(float);
          }
        }
        void after() { other(); }
        """, "aten/src/ATen/native/cuda/K.cu", "cuda")
    calls = [(r[1], r[3], r[5], r[4]) for r in facts.rows["calls"]]
    assert (9, "launch_k", "mb", "launch") in calls
    assert (14, "after", "", "other") in calls
    assert [(r[1], r[2], r[3], r[4], r[6], r[7]) for r in facts.rows["kernel_launches"]] == [
        (11, "small_kernel", "chevron", "<float>", "launch_k", "SMALL")]
    assert [r[1] for r in facts.rows["symbols"] if r[5] == "launch_k"] == [2]


def test_a_kernel_passed_by_name_is_handed_to_its_launcher():
    """cutlassF.h: `cb(AttentionKernel<...>(), fmha_cutlassF_...)`; the callback does `kernel_fn<<<...>>>(p)`."""
    facts = run("""
        __global__ void __launch_bounds__(128, 2) fmha_k(int p);
        template <typename T> void dispatch_k(T cb, int cc) {
          cb(Kernel<float>(), fmha_k);
          cb(Kernel<float>(), other_value);
        }
        """, "aten/src/ATen/native/transformers/cuda/K.h", "cuda")
    assert [(r.line, r.kernel, r.kind, r.caller) for r in facts.rows["kernel_launches"]] == [
        (4, "fmha_k", "handed", "dispatch_k")]


def test_a_launch_of_a_local_variable_launches_the_kernel_it_holds():
    """flash_fwd_launch_template.h: `auto kernel = &flash_fwd_kernel<...>; kernel<<<grid, ...>>>(params);`"""
    facts = run("""
        template <typename T> void run_flash_fwd(P& params) {
          auto kernel = &flash_fwd_kernel<T, true>;
          kernel<<<grid, 128, 0, stream>>>(params);
        }
        """, "aten/src/ATen/native/transformers/cuda/flash_attn/L.h", "cuda")
    assert [(r.line, r.kernel, r.kind, r.caller) for r in facts.rows["kernel_launches"]] == [
        (4, "flash_fwd_kernel", "chevron", "run_flash_fwd")]


def test_legacy_generic_names_and_a_dangling_else_group():
    """THC/generic: `void THCTensor_(sort)(...)` defines THCTensor_sort (the link step ties THCudaTensor_sort to it);
    `#if OLD ... } else` + `#endif` + `{ ... }` is read as the block every build runs (Indexing.cu)."""
    facts = run("""
        #define THCTensor_(NAME) TH_CONCAT_4(TH,CReal,Tensor_,NAME)
        void THCTensor_(sort)(THCState* state, THCTensor* t) {
          THCTensor_(sortKeyValueInplace)(state, t);
        }
        void put(int n) {
        #if OLD_CUDA
          if (n < 5) {
            thrust_path(n);
          } else
        #endif
          {
            cub_path(n);
          }
        }
        """, "aten/src/THC/generic/THCTensorSort.cu", "cuda")
    assert [(r[1], r[5]) for r in facts.rows["symbols"]] == [(3, "THCTensor_sort"), (6, "put")]
    calls = [(r[1], r[3], r[4]) for r in facts.rows["calls"]]
    assert (4, "THCTensor_sort", "THCTensor_sortKeyValueInplace") in calls and (13, "put", "cub_path") in calls
    assert facts.parse_errors == 0
    assert [(r.name, r.parameters) for r in facts.rows["macros"]] == [("THCTensor_", "(NAME)")]


def test_operators_on_tensors_are_calls_of_their_ops():
    # LossNLL.cpp's label smoothing, cut down: each operator with a Tensor operand is a call whose receiver is that
    # operand (pytorch/operators.py maps the operator to the op); arithmetic on numbers and sizes is not
    facts = run("""
        namespace at::native {
        Tensor smooth(const Tensor& self, const Tensor& target, const Tensor& weight, double ls, int64_t n) {
          auto input = at::log_softmax(self, 1);
          auto nllloss = at::nll_loss_nd(input, target);
          Tensor weight_ = weight.view({1, -1});
          auto smooth_loss = -(input * weight_).sum(1);
          auto ignore_mask = target == n;
          auto true_mask = ~ignore_mask;
          int64_t rows = self.size(0) * n + 1;
          double scale = ls / n;
          smooth_loss *= scale;
          return (1 - ls) * nllloss + smooth_loss.sum() / true_mask.sum();
        }
        }
        """)
    # the arguments: the right operand where the receiver is the left one (as `x.mul(y)` has), none of a unary
    # operator, unknown (null) where the Tensor is the right operand (`(1 - ls) * nllloss`)
    ops = [(r[1], r[4], r[5], r[8]) for r in facts.rows["calls"] if r[4].startswith(("operator", "unary operator"))]
    assert sorted(ops) == sorted([
        (7, "unary operator-", "(input * weight_).sum(1)", "[]"), (7, "operator*", "input", '["weight_"]'),
        (8, "operator==", "target", '["n"]'),
        (9, "unary operator~", "ignore_mask", "[]"),
        (12, "operator*=", "smooth_loss", '["scale"]'),
        (13, "operator+", "(1 - ls) * nllloss", '["smooth_loss.sum() / true_mask.sum()"]'),
        (13, "operator*", "nllloss", None),
        (13, "operator/", "smooth_loss.sum()", '["true_mask.sum()"]')])
    assert all(r[6] == 1 and r[3] == "at::native::smooth" for r in facts.rows["calls"]
               if r[4].startswith(("operator", "unary operator")))


def test_no_operator_calls_without_a_tensor():
    facts = run("""
        namespace at::native {
        __global__ void k(float* out, const float* in, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) out[i] = -in[i] * 2.0f; }
        int64_t size_of(const Tensor& t) { return t.size(0) * t.size(1) + t.numel() / 2; }
        }
        """)
    assert [r for r in facts.rows["calls"] if r[4].startswith(("operator", "unary operator"))] == []


def test_a_row_of_the_as_written_reading_takes_the_chosen_reading_s_caller():
    """cpp._in_function: a caller that lost its namespaces (`f` for at::native::f) is named as the function the
    chosen-side reading found on that line; another function's name, or a line outside any, stays as it is."""
    from opindex.extract.cpp import _function_spans, _in_function
    symbols = [("a.cu", 10, 30, "cuda", "function", "f", "at::native::f", "at::native", None, 0, None),
               ("a.cu", 40, 50, "cuda", "function", "g", "at::native::g", "at::native", None, 0, None),
               ("a.cu", 12, 14, "cuda", "class", "S", "at::native::S", "at::native", None, 0, None)]
    spans = _function_spans(symbols)
    assert _in_function(("a.cu", 20, "cuda", "f", "k", "", 0), 3, spans) == ("a.cu", 20, "cuda", "at::native::f",
                                                                             "k", "", 0)
    assert _in_function(("a.cu", 20, "cuda", "h", "k", "", 0), 3, spans) == ("a.cu", 20, "cuda", "h", "k", "", 0)
    assert _in_function(("a.cu", 35, "cuda", "f", "k", "", 0), 3, spans) == ("a.cu", 35, "cuda", "f", "k", "", 0)
    assert _in_function(("a.cu", 45, "cuda", "", "k", "", 0), 3, spans) == ("a.cu", 45, "cuda", "", "k", "", 0)


def test_a_choice_written_in_a_macro_is_found_at_the_macro_s_use():
    """TensorTopK.cu (2.4) defines RUN_MB inside launch_gather_topk_kernel: `if (should_use_multiblock(...))
    {...}`; its expansions at :897 and :899 are where the choice is made (one row per line, however many times the
    macros nest there)."""
    facts = run("""
        namespace at::native {
        void launch(int n) {
        #define RUN_MB(D)                      \\
          if (should_use_multiblock(n, D)) {   \\
            mb_launch(n);                      \\
          } else {                             \\
            sb_launch(n);                      \\
          }
          RUN_MB(1);
          RUN_MB(2);
        }
        }
        """, path="aten/src/ATen/native/cuda/TopK.cu", language="cuda")
    assert [(r.line, r.callee, r.test, r.caller) for r in facts.records("backend_choices")] == [
        (10, "should_use_multiblock", "if", "at::native::launch"),
        (11, "should_use_multiblock", "if", "at::native::launch")]


def test_backend_choices_are_calls_whose_result_the_function_branches_on():
    """`ConvBackend backend = _select_conv_backend(...)` then `switch (backend)` (Convolution.cpp:1577/1586 in 2.4);
    `BatchNormBackend backend = ...` then `backend == BatchNormBackend::Cudnn` (Normalization.cpp:584/586); `auto`
    with any constant (attention.cu:831/832); a call in an `if (...)` condition (Dropout.cpp:138), a method call on a
    plainly named object there too (1.4's `else if (params.use_cudnn(input))`). Not: a comparison with another
    type's constant, a test before the call, a test in another function, a method call assigned to a variable, a
    call in the body of an if written on the condition's line."""
    facts = run("""
        namespace at::native {
        Tensor conv(const Tensor& x) {
          ConvBackend backend = _select_conv_backend(x);
          switch (backend) {
            case ConvBackend::Cudnn: return at::cudnn_convolution(x);
          }
        }
        void bn(const Tensor& x) {
          BatchNormBackend backend = sel::_select_batch_norm_backend(x);
          if (backend == BatchNormBackend::Cudnn) {}
        }
        int64_t sdp(const Tensor& q) {
          auto backend = select_sdp_backend(q);
          if (backend == sdp::SDPBackend::error) {}
          return 0;
        }
        void no(const Tensor& x) {
          Kind kind = pick(x);
          if (kind == ScalarType::Float) {}
          Mode mode = x.mode();
          switch (mode) {}
          if (late == Late::A) {}
          Late late = late_pick(x);
        }
        void other(const Tensor& x) { Far far = far_pick(x); }
        void other2() { switch (far) {} }
        Tensor dropout(const Tensor& x, double p, bool train) {
          if (x.is_nested() || (train && is_fused_kernel_acceptable(x, p))) {}
          if (train) body_call(x);
        }
        }
        """)
    assert [(r.line, r.caller, r.callee, r.qualifier, r.variable, r.declared, r.tested_line, r.test)
            for r in facts.records("backend_choices")] == [
        (4, "at::native::conv", "_select_conv_backend", "", "backend", "ConvBackend", 5, "switch"),
        (10, "at::native::bn", "_select_batch_norm_backend", "sel", "backend", "BatchNormBackend", 11, "compare"),
        (14, "at::native::sdp", "select_sdp_backend", "", "backend", "auto", 15, "compare"),
        (29, "at::native::dropout", "is_nested", "x", "", "", 29, "if"),
        (29, "at::native::dropout", "is_fused_kernel_acceptable", "", "", "", 29, "if")]


def test_library_function_handed_to_a_macro_is_a_library_call():
    # cub.cuh's CUB_WRAPPER(func, ...) calls func(nullptr, temp_storage_bytes, ...): the name it is handed is the
    # library call at that line; a macro handed a condition, or a name that is no library's, is not one
    facts = run("""
        namespace at::cuda::cub {
        template <typename I, typename O>
        void inclusive_scan(I input, O output, int64_t n) {
          CUB_WRAPPER(NO_ROCM(at_cuda_detail)::cub::DeviceScan::InclusiveScan,
              input, output, n, at::cuda::getCurrentCUDAStream());
          TORCH_CHECK(n > 0, "empty");
          OTHER_WRAPPER(at::native::helper, input);
        }
        }
        """, path="aten/src/ATen/cuda/cub.cuh", language="cuda")
    assert [tuple(r[1:]) for r in facts.rows["library_calls"]] == [
        (5, "cub", "cub::DeviceScan::InclusiveScan", "at::cuda::cub::inclusive_scan", None)]


def test_a_call_of_a_temporary_object_is_its_class_operator():
    # UniqueCub.cu:321 `return UniqueCub<scalar_t>{}(*self_c, ...)`: the qualified call UniqueCub::operator()
    facts = run("""
        namespace at::native::internal {
        template <typename scalar_t>
        auto unique_cuda_template(const Tensor& self) {
          auto self_c = self.expect_contiguous();
          return UniqueCub<scalar_t>{}(*self_c, false);
        }
        void g(TensorIterator& iter) { detail::sum_functor<float>{}(iter); }
        void gather(const Tensor& self) { cuda_scatter_gather_base_kernel<>()(self, 0, "gather_out_cuda"); }
        void h(int x) { make_op(x)(x); }
        }
        """, path="aten/src/ATen/native/cuda/UniqueCub.cu", language="cuda")
    assert [r[1:7] for r in facts.rows["calls"] if r[4] == "operator()"] == [
        (6, "cuda", "at::native::internal::unique_cuda_template", "operator()", "UniqueCub", 0),
        (8, "cuda", "at::native::internal::g", "operator()", "detail::sum_functor", 0),
        # a temporary made by () is one too; f(x)(y) calls what f returns
        (9, "cuda", "at::native::internal::gather", "operator()", "cuda_scatter_gather_base_kernel", 0)]


def test_a_local_object_of_a_class_template_built_with_arguments_is_a_constructor_call():
    # 1.8's BinaryAddSubKernel.cu: `AddFunctor<scalar_t> f(alpha_scalar.to<scalar_t>());` then
    # gpu_kernel_with_scalars(iter, f): the functor class is built there
    facts = run("""
        namespace at { namespace native {
        void add_kernel_cuda(TensorIteratorBase& iter, Scalar alpha_scalar) {
          AddFunctor<scalar_t> f(alpha_scalar.to<scalar_t>());
          gpu_kernel_with_scalars(iter, f);
          std::vector<int64_t> sizes(3);
          int n = 4;
        }
        }}
        """, path="aten/src/ATen/native/cuda/BinaryAddSubKernel.cu", language="cuda")
    assert [r[1:] for r in facts.rows["calls"] if r[4] in ("AddFunctor", "vector")] == [
        (4, "cuda", "at::native::add_kernel_cuda", "AddFunctor", "", 0, "<scalar_t>", '["alpha_scalar.to<scalar_t>()"]',
         None)]


def test_a_directive_inside_an_argument_list_keeps_its_first_branch():
    # 1.4 THC/generic/THCTensorSort.cu:219: `thrust::copy(` then `#if CUDA_VERSION >= 7000 ...` / the policy argument
    # / `#endif` inside the call; the function around it was lost in an ERROR node
    facts = run("""\
        void sortViaThrust(int n) {
          thrust::copy(
        #if CUDA_VERSION >= 7000 || defined __HIP_PLATFORM_HCC__
            thrust::cuda::par(alloc).on(stream),
        #else
            thrust::seq,
        #endif
            first, first + n, out);
        }
        void after() { helper(); }
        """, path="aten/src/THC/generic/THCTensorSort.cu", language="cuda")
    assert facts.parse_errors == 0
    assert [(r[1], r[6]) for r in facts.rows["symbols"]] == [(1, "sortViaThrust"), (10, "after")]
    assert [(r.line, r.function) for r in facts.rows["library_calls"]] == [(2, "thrust::copy")]


def test_a_macro_defined_again_expands_with_the_definition_before_its_use():
    # 1.4 THC/generic/THCTensorIndex.cu: each function #defines its own LARGE_INDEX (parameters continued over two
    # lines) and #undefs it; a use expands with the definition above it, even where the grammar lost one of them in
    # an ERROR node (`unsigned int` as a macro argument) and it was read from the text
    facts = run("""\
        void indexFill(int n) {
        #define LARGE_INDEX(TENSOR_TYPE, TYPE, \\
                            DST_DIM, IDX_DIM)  \\
          indexFillLargeIndex<TENSOR_TYPE, TYPE, DST_DIM, IDX_DIM><<<grid, block, 0, stream>>>(n);
          LARGE_INDEX(scalar_t, unsigned int, 1, -2);
        #undef LARGE_INDEX
        }
        void indexSelect(int n) {
        #define LARGE_INDEX(TENSOR_TYPE, TYPE,  \\
                            DST_DIM, IDX_DIM)   \\
          indexSelectLargeIndex<TENSOR_TYPE, TYPE, DST_DIM, IDX_DIM><<<grid, block, 0, stream>>>(n);
          LARGE_INDEX(scalar_t, unsigned int, 1, -2);
        #undef LARGE_INDEX
        }
        """, path="aten/src/THC/generic/THCTensorIndex.cu", language="cuda")
    assert [(r.line, r.kernel, r.caller) for r in facts.rows["kernel_launches"]] == [
        (5, "indexFillLargeIndex", "indexFill"), (12, "indexSelectLargeIndex", "indexSelect")]
    assert [(r.line, r.parameters) for r in facts.rows["macros"]] == [
        (2, "(TENSOR_TYPE, TYPE, DST_DIM, IDX_DIM)"), (9, "(TENSOR_TYPE, TYPE, DST_DIM, IDX_DIM)")]


def test_a_call_the_grammar_reads_as_a_definition_is_a_call():
    # cuda/ReduceMomentKernel.cu:20: `gpu_reduce_kernel<scalar_t, out_t, 2>(iter, ops, typename ops_t::acc_t{});`
    # parses as a definition (no return type, `{}` its body) inside std_var_kernel_impl: it is a TensorIterator launch
    facts = run("""\
        namespace at::native {
        template <typename scalar_t, typename out_t=scalar_t>
        void std_var_kernel_impl(TensorIterator& iter, double correction, bool take_sqrt) {
          ops_t ops(static_cast<accscalar_t>(correction), take_sqrt);
          gpu_reduce_kernel<scalar_t, out_t, 2>(iter, ops, typename ops_t::acc_t{});
        }
        }
        """, path="aten/src/ATen/native/cuda/ReduceMomentKernel.cu", language="cuda")
    assert [r[6] for r in facts.rows["symbols"]] == ["at::native::std_var_kernel_impl"]
    assert [(r.line, r.kernel, r.kind, r.caller) for r in facts.rows["kernel_launches"]] == [
        (5, "gpu_reduce_kernel", "tensor_iterator", "at::native::std_var_kernel_impl")]


def test_the_as_written_reading_is_parsed_incrementally_from_the_first():
    """A file whose #if groups split braces is read twice (extract/cpp.py): the second text differs from the first
    only on the blanked lines, and is parsed from the first reading's tree (only those stretches again). Here the
    incremental tree is the fresh parse's; texts of another length are parsed fresh."""
    from opindex.extract.cpp import _engine, _reparse
    parser = _engine()[0]
    first = b"namespace at {\n#if A\nvoid f(int a) {\n#else\n                \n#endif\n  g(a);\n}\n}\n"
    second = b"namespace at {\n#if A\nvoid f(int a) {\n#else\nvoid f(long a) {\n#endif\n  g(a);\n}\n}\n"
    assert len(first) == len(second)
    old = (first, parser.parse(first))
    assert str(_reparse(parser, second, old).root_node) == str(parser.parse(second).root_node)
    assert str(_reparse(parser, second + b"\n", old).root_node) == str(parser.parse(second + b"\n").root_node)
    assert str(_reparse(parser, first, old).root_node) == str(old[1].root_node)  # nothing differs
