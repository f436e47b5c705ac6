"""The conditions code runs under: #if branches and if blocks on one name (extract/cpp_conditions.py), what they
mean for a device (pytorch/devices.platform_off) and for an op's default arguments (trace/conditions.py), and the
trace that uses both: another platform's calls are not walked, a branch the defaults do not take ranks last."""
import textwrap

import pytest

from opindex.api import Index, build
from opindex.extract.cpp import extract
from opindex.pytorch.devices import platform_off
from opindex.pytorch.call_expr import Tensor
from opindex.trace.conditions import DTYPE, MEMORY_FORMAT, OPTIONALS, SIZES, Constant, holds, schema_defaults, specialization_dtype
from opindex.trace.model import NOT_DEFAULT


def conditions(src: str, path: str = "aten/src/ATen/native/cuda/X.cu") -> list[tuple]:
    return [tuple(r[1:]) for r in extract(path, textwrap.dedent(src).encode(), "cuda").rows["conditions"]]


def test_each_branch_of_an_if_group_is_a_row_with_its_condition():
    rows = conditions("""\
        #ifndef ATEN_X_H
        #define ATEN_X_H
        namespace at::native {
        void f(const Tensor& self) {
        #ifdef __HIP_PLATFORM_HCC__
          hip_cat(self);
        #elif CUDA_VERSION >= 11000 && \\
              !defined(FOO)
          new_cat(self);
        #else
          old_cat(self);
        #endif
        }
        }
        #endif
        """)
    # the include guard (lines 1-14) is no condition; the #else reads as the negation of what came before
    assert [r for r in rows if r[2] == "#if"] == [
        (6, 6, "#if", "defined(__HIP_PLATFORM_HCC__)", ""),
        (9, 9, "#if", "CUDA_VERSION >= 11000 && !defined(FOO)", ""),
        (11, 11, "#if", "not (defined(__HIP_PLATFORM_HCC__) || CUDA_VERSION >= 11000 && !defined(FOO))", "")]


def test_if_blocks_on_one_name_are_rows_and_other_ifs_are_not():
    rows = conditions("""\
        namespace at::native {
        Tensor loss(const Tensor& self, double label_smoothing, const Tensor& weight) {
          if (self.sizes() == weight.sizes()) {
            return a(self);
          } else if (label_smoothing > 0.0) {
            return b(self);
          } else {
            return c(self);
          }
          if (!weight.defined()) d(self);
        }
        }
        """)
    assert [r for r in rows if r[2] == "if"] == [
        (5, 7, "if", "label_smoothing > 0.0", "at::native::loss"),
        (7, 9, "if", "not (label_smoothing > 0.0)", "at::native::loss"),
        (10, 10, "if", "!weight.defined()", "at::native::loss")]


def test_another_platforms_code_is_off_and_unknown_macros_are_not():
    assert platform_off("defined(__HIP_PLATFORM_HCC__)", "cuda")
    assert platform_off("defined(USE_ROCM) && CUDA_VERSION >= 11000", "cuda")
    assert platform_off("0", "cuda")
    assert not platform_off("not (defined(__HIP_PLATFORM_HCC__))", "cuda")
    assert not platform_off("defined(USE_ROCM) || !AT_CUDNN_ENABLED()", "cuda")  # either way on CUDA
    assert not platform_off("AT_CUDNN_ENABLED() && !defined(USE_ROCM)", "cuda")
    assert not platform_off("defined(USE_ROCM)", "all")


def test_a_condition_is_read_with_the_schemas_default_arguments():
    schema = ("cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, "
              "SymInt ignore_index=-100, float label_smoothing=0.0) -> Tensor")
    signature = ("(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight, int64_t reduction, "
                 "c10::SymInt ignore_index, double label_smoothing)")
    defaults = schema_defaults(schema, signature)
    assert defaults == {"weight": None, "reduction": Constant("Mean"), "ignore_index": -100.0, "label_smoothing": 0.0}
    assert holds("label_smoothing > 0.0", defaults) is False
    assert holds("not (label_smoothing > 0.0)", defaults) is True
    assert holds("weight.has_value()", defaults) is False
    assert holds("!weight.defined()", defaults) is True
    assert holds("ignore_index == -100", defaults) is True
    assert holds("reduction == 1", defaults) is None  # Mean is a constant: not compared with a number
    assert holds("p > 0.0", defaults) is None  # not a parameter with a default


def _argmax_with_branches(checkout):
    """argmax_out calls at::_softmax only when keepdim (default False), and at::relu only in a ROCm build."""
    path = checkout / "aten/src/ATen/native/ReduceOps.cpp"
    text = path.read_text()
    old = "  argmax_impl(self, dim, keepdim, result, argmax_stub);\n"
    assert old in text
    path.write_text(text.replace(old, "  if (keepdim) {\n    at::_softmax(self, 0, false);\n  }\n"
                                      "#ifdef USE_ROCM\n  at::relu(self);\n#endif\n" + old))
    return text[:text.index(old)].count("\n") + 1  # the line of the `if (keepdim)`


def test_a_test_of_a_tensors_sizes_is_a_row_and_a_traced_calls_sizes_decide_it():
    """scan_dim (ScanUtils.cuh:450): `if (self.numel() == self.size(dim))` then `else if (dim == ndim - 1)`; both
    are rows (they read sizes), and cumsum(torch.randn(1024, 1024), dim=1)'s tensor decides them: not the
    one-row CUB scan, the innermost-dim kernel. A name with no integer value, or a negative one, says nothing."""
    rows = conditions("""\
        namespace at::native {
        void scan_dim(const TensorBase& self, int64_t dim) {
          int ndim = self.dim();
          if (self.numel() == self.size(dim)) {
            a(self);
          } else if (dim == ndim - 1) {
            b(self);
          } else {
            c(self);
          }
          if (self.sizes() == other.sizes()) d(self);
        }
        }
        """)
    assert [r[:4] for r in rows if r[2] == "if"] == [
        (4, 6, "if", "self.numel() == self.size(dim)"), (6, 10, "if", "not (self.numel() == self.size(dim))"),
        (6, 8, "if", "dim == ndim - 1"), (8, 10, "if", "not (dim == ndim - 1)")]
    x = {"self": Tensor("float32", (1024, 1024), "torch.randn(1024, 1024)"), "dim": 1.0, "ndim": 2}
    assert holds("self.numel() == self.size(dim)", x) is False
    assert holds("dim == ndim - 1", x) is True
    assert holds("self.size(0) * self.size(1) >= 1048576", x) is True
    assert holds("not (self.numel() == self.size(dim))", x) is True
    assert holds("self.numel() == self.size(dim)", {**x, "dim": -1}) is False  # size(-1) wraps, as in C++
    assert holds("dim == ndim - 1", {**x, "dim": -1}) is None  # a negative dim the C++ may wrap first
    assert holds("self.numel() == self.size(dim)", {"dim": 1}) is None  # no tensor: a name trace
    assert holds("dim == ndim - 1", {"dim": 1}) is None


def test_a_bare_test_of_an_optional_parameter_asks_whether_it_has_a_value():
    """clamp_out's `else if (min)` of a `Scalar? min`: min=0.0 given is true (it has a value), min=None false; a
    plain bool or int parameter is tested by its value."""
    values = {"min": 0.0, "max": None, "train": False, OPTIONALS: frozenset({"min", "max"})}
    assert holds("min", values) is True
    assert holds("max", values) is False
    assert holds("min && max", values) is False
    assert holds("!min", values) is False
    assert holds("train", values) is False
    assert holds("min", {"min": 0.0}) is False  # not known to be optional: its value


def test_each_case_of_a_switch_is_a_row_testing_what_it_switches_on():
    # DilatedMaxPool2d.cu's shape: a switch on a local set from the input, labels sharing statements, a default,
    # and an #ifdef that splits `} else {` (the tree's case nodes go wrong there; the braces still balance)
    rows = conditions("""\
        namespace at::native {
        void pool(const Tensor& input_, int mode) {
          const auto memory_format = input_.suggest_memory_format();
          switch (memory_format) {
            case MemoryFormat::ChannelsLast: {
        #ifdef USE_MACA
              if (mode > 2) {
                nhwc_opt(input_);
              } else {
        #endif
                nhwc(input_);
        #ifdef USE_MACA
              }
        #endif
              break;
            }
            case MemoryFormat::Contiguous: {
              nchw(input_);  // "case X:" in a comment or string is no label
              break;
            }
            default: TORCH_CHECK(false, "Unsupported memory format");
          }
          switch (mode) {
            case 0:
            case 1: a(); break;
            default: b();
          }
        }
        }
        """)
    fmt = "input_.suggest_memory_format() == MemoryFormat::"
    assert [r for r in rows if r[2] == "switch"] == [
        (5, 16, "switch", f"{fmt}ChannelsLast", "at::native::pool"),
        (17, 20, "switch", f"{fmt}Contiguous", "at::native::pool"),
        (21, 21, "switch", f"not ({fmt}ChannelsLast || {fmt}Contiguous)", "at::native::pool"),
        (24, 25, "switch", "mode == 0 || mode == 1", "at::native::pool"),
        (26, 26, "switch", "not (mode == 0 || mode == 1)", "at::native::pool")]


def test_a_memory_format_test_is_read_as_a_contiguous_input():
    contiguous = {MEMORY_FORMAT: "Contiguous"}
    fmt = "input_.suggest_memory_format() == MemoryFormat::"
    assert holds(f"{fmt}ChannelsLast", contiguous) is False
    assert holds(f"{fmt}Contiguous", contiguous) is True
    assert holds(f"not ({fmt}ChannelsLast || {fmt}Contiguous)", contiguous) is False
    assert holds("self.suggest_memory_format() != at::MemoryFormat::ChannelsLast3d", contiguous) is True
    assert holds(f"{fmt}ChannelsLast", {}) is None  # no input stated: not decided
    assert holds("backend == ConvBackend::Cudnn", contiguous) is None  # chosen at run time: not decided


def test_a_branch_the_default_arguments_do_not_take_is_not_the_main_chain(sample_copy, tmp_path):
    line = _argmax_with_branches(sample_copy)
    db = tmp_path / "i.sqlite"
    build(str(sample_copy), db, jobs=1)
    with Index(db) as ix:
        t = ix.trace("torch.argmax", device="cuda")
        branch = [h for h in t.hops if h.kind == "calls_op" and h.line == line + 1]
        assert [h.name for h in branch] == ["at::_softmax"]
        assert branch[0].detail.endswith(f"[called when keepdim: {NOT_DEFAULT}]")
        # _softmax's __global__ outranks argmax's TensorIterator reduction on every other count; the default
        # arguments' path (the stub call) is the main chain
        chain = [h.name for h in t.main_chain()]
        assert "at::_softmax" not in chain and "argmax_stub" in chain, chain
        # the ROCm build's call is not walked on CUDA; on --device all it is
        assert not [h for h in t.hops if h.line == line + 4 and h.name == "at::relu"]
        every = ix.trace("torch.argmax", device="all")
        rocm = [h for h in every.hops if h.line == line + 4 and h.name == "at::relu"]
        assert rocm and rocm[0].detail.endswith("[called under #if defined(USE_ROCM)]")


def test_python_if_blocks_on_one_name_are_rows():
    from opindex.extract.python import extract as py_extract
    src = textwrap.dedent("""\
        def embedding(input, weight, padding_idx=None, max_norm=None, sparse=False):
            if padding_idx is not None:
                padding_idx = 1
            else:
                padding_idx = -1
            if max_norm is not None:
                _renorm(weight, input, max_norm)
            elif not sparse:
                pass
            x = 1 if sparse else 2
            return torch.embedding(weight, input)
        """).encode()
    rows = [tuple(r[1:]) for r in py_extract("torch/nn/f.py", src, "torch.nn.f").rows["conditions"]]
    assert rows == [(2, 3, "if", "padding_idx is not None", "torch.nn.f.embedding"),
                    (4, 5, "if", "not (padding_idx is not None)", "torch.nn.f.embedding"),
                    (6, 7, "if", "max_norm is not None", "torch.nn.f.embedding"),
                    (8, 9, "if", "not sparse", "torch.nn.f.embedding")]


def test_a_python_condition_is_read_with_the_defs_default_arguments():
    from opindex.trace.conditions import python_defaults
    defaults = python_defaults("( input: Tensor, padding_idx: Optional[int] = None, max_norm: Optional[float] = None, "
                               "size: Tuple[int, int] = (1, 2), sparse: bool = False, *, p=0.5)")
    assert defaults == {"padding_idx": None, "max_norm": None, "sparse": False, "p": 0.5}
    assert holds("max_norm is not None", defaults) is False
    assert holds("not (max_norm is not None)", defaults) is True
    assert holds("max_norm is None", defaults) is True
    assert holds("not sparse", defaults) is True
    assert holds("p > 0.0", defaults) is True


def test_a_global_setting_is_read_with_its_documented_default():
    rows = conditions("""\
        namespace at::native {
        void index_add_impl(const Tensor& self) {
          if (globalContext().deterministicAlgorithms()) {
            self.index_put_(indices, source, true);
            return;
          }
          launch(self);
        }
        }
        """)
    assert [r for r in rows if r[2] == "if"] == [
        (3, 6, "if", "globalContext().deterministicAlgorithms()", "at::native::index_add_impl"),
        # the block returns: the rest of the function runs only when the test is false
        (7, 8, "if", "not (globalContext().deterministicAlgorithms())", "at::native::index_add_impl")]
    assert holds("globalContext().deterministicAlgorithms()", {}) is False
    assert holds("!at::globalContext().userEnabledCuDNN()", {}) is False
    assert holds("not (globalContext().deterministicAlgorithms())", {}) is True
    assert holds("globalContext().benchmarkCuDNN()", {}) is None  # on under ROCm, off otherwise: not read


def test_an_enum_default_and_an_optional_tensor_borrowed_from_its_opt_parameter():
    # Loss.cpp:114 smooth_l1_loss_out: `if (reduction != Reduction::None)`, `if (reduction == Reduction::Mean)`
    # with `int reduction=Mean`; Loss.cpp:370 `if (pos_weight.defined())` where the C++ parameter is
    # pos_weight_opt and `Tensor? pos_weight=None` in the schema
    rows = conditions("""\
        namespace at::native {
        void f(const Tensor& input, int64_t reduction) {
          if (reduction == Reduction::Mean) {
            a(input);
          }
        }
        }
        """)
    assert [r for r in rows if r[2] == "if"] == [(3, 5, "if", "reduction == Reduction::Mean", "at::native::f")]
    d = schema_defaults("smooth_l1_loss(Tensor self, Tensor target, int reduction=Mean, float beta=1.0) -> Tensor",
                        "(const Tensor& input, const Tensor& target, int64_t reduction, double beta)")
    assert holds("reduction != Reduction::None", d) is True
    assert holds("reduction == at::Reduction::Sum", d) is False
    assert holds("reduction > Reduction::None", d) is None  # constants compare by name only
    d = schema_defaults("bce(Tensor self, Tensor? pos_weight=None) -> Tensor",
                        "(const Tensor& self, const std::optional<Tensor>& pos_weight_opt)")
    assert holds("pos_weight.defined()", d) is False


def test_python_string_isinstance_and_joined_tests(tmp_path):
    """torch.norm's dispatch on p (torch/functional.py): `elif p == "nuc":`, `if not isinstance(p, str):`, tests
    joined by `and`/`or` with parentheses, are rows when they test the def's parameters, read with the def's
    defaults (p="fro"). A block that returns on every path makes the rest of its block a `not (...)` row: the code
    after `if p == "fro" and (...): return` runs only when that test fails (torch.norm's matrix_norm call)."""
    from opindex.extract.python import extract as py_extract
    from opindex.trace.conditions import python_defaults
    src = textwrap.dedent("""\
        def norm(input, p: Optional[Union[float, str]] = "fro", dim=None, out=None, dtype=None):
            if dim is None and out is None and dtype is None and p is not None:
                if isinstance(p, str):
                    if p == "fro":
                        return _VF.frobenius_norm(input, dim=())
                if not isinstance(p, str):
                    return _VF.norm(input, p)
            if p == 'nuc' and dim is not None:
                return _VF.nuclear_norm(input, dim)
            if p == "fro" and (dim is None or len(dim) <= 2):
                if out is None:
                    return 1
                else:
                    return 2
            local = 3
            if local > 2 or dims[0]:
                return 4
            return torch.linalg.matrix_norm(input, p)
        """).encode()
    rows = [tuple(r[1:5]) for r in py_extract("torch/functional.py", src, "torch.functional").rows["conditions"]]
    fro = 'p == "fro" and (dim is None or len(dim) <= 2)'
    # `local > 2 or dims[0]` tests no parameter, and a subscript: no row
    assert rows == [(2, 7, "if", "dim is None and out is None and dtype is None and p is not None"),
                    (3, 5, "if", "isinstance(p, str)"), (4, 5, "if", 'p == "fro"'),
                    (6, 7, "if", "not isinstance(p, str)"),
                    (8, 9, "if", "p == 'nuc' and dim is not None"),
                    (10, 18, "if", "not (p == 'nuc' and dim is not None)"),
                    (10, 14, "if", fro), (15, 18, "if", f"not ({fro})"),
                    (11, 12, "if", "out is None"), (13, 14, "if", "not (out is None)")]
    defaults = python_defaults('(input, p: Optional[Union[float, str]] = "fro", dim=None, out=None, dtype=None)')
    assert defaults == {"p": "fro", "dim": None, "out": None, "dtype": None}
    assert [holds(cond, defaults) for _, _, _, cond in rows] == [
        True, True, True, False, False, True, True, False, True, False]
    assert holds("isinstance(dim, (int, torch.SymInt))", defaults) is False  # None is neither
    assert holds("p == 2.0", defaults) is None  # a string against a number: not said
    assert holds('p > "a"', defaults) is None  # strings compare by == and != only
    assert holds("x and p is not None", defaults) is None  # x has no default: the whole cannot be said
    assert holds("x or p is not None", defaults) is True  # one true test of an `or`
    assert holds("len(dim) <= 2", defaults) is None
    assert holds("p == 'fro'", {"p": Constant("fro")}) is None  # a C++ constant is no string


def test_an_enum_setting_is_read_with_its_documented_default():
    # torch.backends.cuda.preferred_blas_library() is cuBLAS unless TORCH_BLAS_PREFER_CUBLASLT=1
    blas = "at::globalContext().blasPreferredBackend() == BlasBackend::Cublaslt"
    assert holds(blas, {}) is False
    assert holds(f"not ({blas})", {}) is True
    assert holds("globalContext().blasPreferredBackend() != at::BlasBackend::Cublas", {}) is False
    assert holds("globalContext().blasPreferredBackend()", {}) is None  # an enum is no bool
    assert holds("globalContext().benchmarkCuDNN()", {}) is None  # no default the same in every build
    rows = conditions("""\
        namespace at::cuda::blas {
        void gemm_internal(int a) {
          if (at::globalContext().blasPreferredBackend() == BlasBackend::Cublaslt) {
            lt(a);
          }
        }
        }
        """)
    assert rows == [(3, 5, "if", "at::globalContext().blasPreferredBackend() == BlasBackend::Cublaslt",
                     "at::cuda::blas::gemm_internal")]


def test_a_count_of_elements_or_batches_is_read_as_the_general_case():
    general = {SIZES: "general"}
    assert holds("num_batches == 1", general) is False  # baddbmm's `if (num_batches == 1)` gemm special case
    assert holds("self.numel() == 0", general) is False
    assert holds("not (self.numel() == 0)", general) is True
    assert holds("result.numel() > 0", general) is True
    assert holds("inner_size == 1", general) is None  # softmax over the last dim: 1 is the general case
    assert holds("result.numel() == 1", general) is None  # a full reduction's result: the general case
    assert holds("n_dims == 2", general) is None
    assert holds("num_batches == 1", {}) is None


def test_the_dtype_an_explicit_specialization_is_written_for():
    assert specialization_dtype("(CUDABLAS_GEMM_ARGTYPES(float))") == "float32"
    assert specialization_dtype("(CUDABLAS_GEMM_ARGTYPES(double))") == "float64"
    assert specialization_dtype("(CUDABLAS_GEMM_ARGTYPES(c10::complex<float>))") == "complex64"
    assert specialization_dtype("(CUDABLAS_GEMM_ARGTYPES(at::Half))") == "float16"
    assert specialization_dtype("(CUDABLAS_GEMM_ARGTYPES(at::BFloat16))") == "bfloat16"
    assert specialization_dtype("(const float* a, double b)") is None  # two types: not one specialization's
    assert specialization_dtype("(CUDABLAS_GEMM_ARGTYPES(Dtype))") is None


def test_a_branch_marked_unlikely_is_not_the_default_path():
    # the fork's launch_vectorized_layer_norm_kernel: `if (maca_unlikely(disable_vectorized_layernorm_opt))` keeps
    # the stock kernel for a setting's rare value; its else block is the path the authors expect
    rows = conditions("""\
        namespace at::native {
        void launch(int M) {
          if (maca_unlikely(disable_opt)) {
            stock(M);
          } else {
            opt(M);
          }
          if (C10_LIKELY(M > 0) && other(M)) go(M);
        }
        }
        """)
    assert [r for r in rows if r[2] == "if"] == [
        (3, 5, "if", "maca_unlikely(disable_opt)", "at::native::launch"),
        (5, 7, "if", "not (maca_unlikely(disable_opt))", "at::native::launch"),
        (8, 8, "if", "C10_LIKELY(M > 0) && other(M)", "at::native::launch")]
    assert holds("maca_unlikely(disable_opt)", {}) is False
    assert holds("not (maca_unlikely(disable_opt))", {}) is True
    assert holds("C10_UNLIKELY(x > 3)", {}) is False and holds("C10_LIKELY(ok)", {}) is True
    assert holds("__builtin_expect(!!(x), 0)", {}) is False and holds("!__builtin_expect(x, 1)", {}) is False
    assert holds("C10_LIKELY(M > 0) && other(M)", {}) is None  # the hint says nothing of other(M)
    assert holds("C10_UNLIKELY(a) && other(M)", {}) is False  # unlikely and anything is unlikely


def test_a_local_flag_is_read_as_what_it_was_set_to():
    # CUDALoops.cuh's gpu_kernel_impl: `bool contiguous = iter.is_contiguous();` then `if (contiguous)`; a flag set
    # from a parameter's test reads as that test; a parameter itself is left as it is
    rows = conditions("""\
        namespace at::native {
        void impl(TensorIteratorBase& iter, bool train) {
          bool contiguous = iter.is_contiguous();
          bool dynamic_casting = needs_dynamic_casting<func_t>::check(iter);
          if (!dynamic_casting) {
            if (contiguous) {
              vec(iter);
            }
          }
          if (train) run(iter);
        }
        }
        """)
    assert [r for r in rows if r[2] == "if"] == [
        (5, 9, "if", "!(needs_dynamic_casting<func_t>::check(iter))", "at::native::impl"),
        (6, 8, "if", "iter.is_contiguous()", "at::native::impl"),
        (10, 10, "if", "train", "at::native::impl")]
    inputs = {MEMORY_FORMAT: "Contiguous", DTYPE: "float32"}
    assert holds("iter.is_contiguous()", inputs) is True
    assert holds("not (iter.is_contiguous())", inputs) is False
    assert holds("self.is_contiguous(at::MemoryFormat::ChannelsLast)", inputs) is False
    # every tensor of the call is of the input's dtype: TensorIterator needs no dynamic cast
    assert holds("!(needs_dynamic_casting<func_t>::check(iter))", inputs) is True
    assert holds("iter.is_contiguous()", {}) is None


def test_a_local_flag_reassigned_at_its_own_depth_reads_as_the_last_value():
    # 1.8's batch_norm: `bool use_cudnn = false;` then `use_cudnn = (... && weight.defined() ...);` at the same depth:
    # the test reads the assignment; addmm's `useLtInterface`, assigned inside an `if`, is its first value or the
    # assignment when the if's test holds; one assigned inside a loop is left as it is
    rows = conditions("""\
        namespace at::native {
        void bn(const Tensor& input, const Tensor& weight) {
          bool use_cudnn = false;
          use_cudnn = (input.is_cuda() && weight.defined());
          if (use_cudnn) {
            cudnn_bn(input);
          }
          if (use_cudnn && eps >= detail::getCUDAHooks().batchnormMinEpsilonCuDNN()) {
            cudnn_bn2(input);
          }
        }
        void mm(const Tensor& self, const Tensor& result) {
          bool useLt = false;
          if (&result != &self) {
            useLt = self.dim() == 1;
          }
          if (useLt) {
            lt(self);
          }
        }
        void loop(const Tensor& self) {
          bool found = false;
          for (int i = 0; i < 3; i++) {
            found = self.dim() == i;
          }
          if (found) {
            lt(self);
          }
        }
        }
        """)
    assert [r[1:3] + r[3:4] for r in rows if r[2] == "if" and r[3] in (
        "(input.is_cuda() && weight.defined())", "((input.is_cuda() && weight.defined())) && eps >= detail::getCUDAHooks().batchnormMinEpsilonCuDNN()",
        "(false) || ((&result != &self) && (self.dim() == 1))", "found")] == [
        (7, "if", "(input.is_cuda() && weight.defined())"),
        (10, "if", "((input.is_cuda() && weight.defined())) && eps >= detail::getCUDAHooks().batchnormMinEpsilonCuDNN()"),
        (19, "if", "(false) || ((&result != &self) && (self.dim() == 1))"), (28, "if", "found")]
    assert holds("(false) || ((&result != &self) && (self.dim() == 1))", {}) is None
    assert holds("(false) || ((!(true)) && (self.dim() == 1))", {}) is False


def test_a_parameter_compared_with_a_constant_of_its_file(tmp_path):
    """`mode == MODE_MAX` reads MODE_MAX from the file's `constexpr int MODE_MAX = 2;` (or a `#define`); a name
    defined twice with different values, or not at all, leaves the test unknown."""
    from opindex.trace.conditions import CONSTANTS, file_constants
    src = tmp_path / "aten/src/ATen/native/cuda"
    src.mkdir(parents=True)
    (src / "Bag.cu").write_text(textwrap.dedent("""\
        namespace {
        constexpr int MODE_SUM = 0;
        static constexpr int64_t MODE_MAX = 2;
        #define MODE_MEAN 1
        const int TWICE = 1;
        }
        void f() {
          const int TWICE = 3;
        }
        """))
    found = file_constants(str(tmp_path), "aten/src/ATen/native/cuda/Bag.cu")
    assert found == {"MODE_SUM": 0, "MODE_MAX": 2, "MODE_MEAN": 1}
    defaults = {"mode": 0, CONSTANTS: found}
    assert holds("mode == MODE_MAX", defaults) is False
    assert holds("mode == MODE_SUM", defaults) is True
    assert holds("not (mode == MODE_MAX)", defaults) is True
    assert holds("mode == TWICE", defaults) is None
    assert holds("mode == MODE_MAX", {"mode": 0}) is None  # no constants read: unknown
    assert file_constants(str(tmp_path), "missing.cu") == {}


def test_a_test_with_a_bare_name_among_its_conjuncts_is_a_condition_row():
    # GridSampler.cpp's grid_sampler: `if (cond_cudnn_grid_sampler(input, grid) && static_cast<...>(mode) == ... &&
    # align_corners)` is false whenever align_corners is (F.grid_sample's default); a test with no such conjunct,
    # or one joined by ||, stays out (nothing the walk can read decides it)
    rows = conditions("""\
        namespace at::native {
        Tensor grid_sampler(const Tensor& input, const Tensor& grid, int64_t mode, bool align_corners) {
          if (cond_cudnn(input, grid) && static_cast<Mode>(mode) == Mode::Bilinear &&
              align_corners) {
            return cudnn_grid_sampler(input, grid);
          }
          if (cond_cudnn(input, grid) && input.is_contiguous()) {
            return other(input);
          }
          if (cond_cudnn(input, grid) || align_corners) {
            return third(input);
          }
          return at::grid_sampler_2d(input, grid, mode, align_corners);
        }
        }
        """)
    test = "cond_cudnn(input, grid) && static_cast<Mode>(mode) == Mode::Bilinear && align_corners"
    assert [r for r in rows if r[2] == "if"] == [
        (3, 6, "if", test, "at::native::grid_sampler"),
        (7, 14, "if", f"not ({test})", "at::native::grid_sampler")]  # after its early return
    assert holds("cond_cudnn(input, grid) && static_cast<Mode>(mode) == Mode::Bilinear && align_corners",
                 {"align_corners": False}) is False


def test_a_dtype_test_joined_to_another_is_read_part_by_part():
    # TensorCompare.cpp:368 isreal: `if (c10::isIntegralType(self.scalar_type(), /*includeBool=*/true) ||
    # c10::isFloatingType(self.scalar_type()))` holds for float32 (its second part), not only for integers
    test = "c10::isIntegralType(self.scalar_type(), true) || c10::isFloatingType(self.scalar_type())"
    assert holds(test, {DTYPE: "float32"}) is True
    assert holds(f"not ({test})", {DTYPE: "float32"}) is False
    assert holds(test, {DTYPE: "complex64"}) is False


_USE_FAST = """\
#if !AT_CUDNN_ENABLED()
namespace at { namespace native {
bool _use_fast_argmax(const Tensor& self, const Tensor& other, int64_t dim) {
  return true;
}
}}
#else
namespace at { namespace native {
bool _use_fast_argmax(const Tensor& self, const Tensor& other, int64_t dim) {
  bool use = (dim == 0) && (other.device().type() == at::kCPU);
  return use;
}
}}
#endif
"""


def test_a_bool_op_a_test_calls_is_read_from_the_kernel_the_build_compiles(sample_copy, tmp_path):
    """`bool use = self.is_cuda() && at::_use_fast_argmax(self, self, 0); if (use)` (the conditions row holds the
    flag's test, as 2.4's ctc_loss_impl's use_cudnn): the op's CUDA kernel has two definitions, a
    `#if !AT_CUDNN_ENABLED()` placeholder returning true (:3) and the real one (:9), whose `other.device().type() ==
    at::kCPU` is false for a tensor of the trace (on cuda): the call is false, so the _softmax under it is not the
    default path, and the hop says why. Under `-D AT_CUDNN_ENABLED()=0` the placeholder answers: true."""
    line = _argmax_with_branches(sample_copy)
    reduce_ops = sample_copy / "aten/src/ATen/native/ReduceOps.cpp"
    reduce_ops.write_text(reduce_ops.read_text().replace(
        "  if (keepdim) {\n", "  bool use = self.is_cuda() && at::_use_fast_argmax(self, self, 0);\n  if (use) {\n"))
    yaml = sample_copy / "aten/src/ATen/native/native_functions.yaml"
    yaml.write_text(yaml.read_text() + "\n- func: _use_fast_argmax(Tensor self, Tensor other, int dim) -> bool\n"
                                       "  dispatch:\n    CUDA: _use_fast_argmax\n")
    (sample_copy / "aten/src/ATen/native/cudnn/FastArgmax.cpp").write_text(_USE_FAST)
    db = tmp_path / "i.sqlite"
    build(str(sample_copy), db, jobs=1)
    with Index(db) as ix:
        t = ix.trace("torch.argmax", device="cuda")
        branch = [h for h in t.hops if h.kind == "calls_op" and h.line == line + 2]
        assert [h.name for h in branch] == ["at::_softmax"]
        test = ("self.is_cuda() && at::_use_fast_argmax(self, self, 0) (= false: "
                "aten/src/ATen/native/cudnn/FastArgmax.cpp:9)")
        assert branch[0].detail.endswith(f"[called when {test}: {NOT_DEFAULT}]")
        assert [(c.text, c.line, c.assumed) for c in branch[0].conditions] == [(test, line + 1, False)]
        assert "at::_softmax" not in [h.name for h in t.main_chain()]
        placeholder = ix.trace("torch.argmax", device="cuda", defines=["AT_CUDNN_ENABLED()=0"])
        branch = [h for h in placeholder.hops if h.kind == "calls_op" and h.line == line + 2]
        assert [h.name for h in branch] == ["at::_softmax"] and branch[0].conditions == []


def test_a_call_s_arguments_are_bound_to_the_overload_they_fit():
    from opindex.trace.conditions import _UNKNOWN, _bind_parameters
    from opindex.trace.function_value import TensorArg, Typed
    cuda = TensorArg("cuda", "float32")
    sig = "(const Tensor& log_probs, const at::Tensor & targets, IntArrayRef lengths, int64_t BLANK)"
    # a tensor parameter the call says nothing of is a tensor of the trace; an undefined one stays None
    assert _bind_parameters(sig, [_UNKNOWN, None, Typed("IntArrayRef"), 0.0], cuda) == {
        "log_probs": cuda, "targets": None, "lengths": Typed("IntArrayRef"), "BLANK": 0.0}
    # a local Tensor (maybe moved to the CPU) is not made one of the trace: it keeps its type only
    assert _bind_parameters(sig, [Typed("Tensor"), _UNKNOWN, _UNKNOWN, _UNKNOWN], cuda)["log_probs"] == Typed("Tensor")
    # an IntArrayRef does not fit a Tensor overload's parameter; a count that differs does not fit either
    assert _bind_parameters("(const Tensor& a, const Tensor& lengths)", [_UNKNOWN, Typed("IntArrayRef")], cuda) is None
    assert _bind_parameters(sig, [_UNKNOWN], cuda) is None
    assert _bind_parameters("(const c10::optional<Tensor>& w)", [Typed("Tensor")], cuda) == {"w": Typed("Tensor")}


def test_a_tensor_is_never_compared_as_a_number_nor_renamed_into_a_number():
    """torch.gather(x, 1, idx): a helper `operator()(TensorIterator& iter, int64_t index_size, int64_t index_stride,
    int64_t numel, const func_t& f)` has as many parameters as gather.out's schema but is no renamed kernel (a
    Tensor argument is never an int64_t parameter); and a tensor value tested as a number says nothing."""
    from opindex.trace.call import _renames
    assert _renames("gather.out(Tensor self, int dim, Tensor index, *, bool sparse_grad=False, Tensor(a!) out) -> "
                    "Tensor(a!)", "(TensorIterator& iter, int64_t index_size, int64_t index_stride, int64_t numel, "
                    "const func_t& f)") == ()
    assert _renames("embedding_bag(Tensor weight, Tensor indices, int mode=0) -> Tensor",
                    "(const Tensor& weight, const Tensor& indices, int64_t mode_int)") == (("mode", "mode_int"),)
    index = Tensor("int64", (1024, 8), "torch.randint(0, 1024, (1024, 8))")
    assert holds("index_stride >= 32", {"index_stride": index}) is None
    assert holds("index_stride", {"index_stride": index}) is None


def test_an_elements_size_is_the_input_dtypes():
    """host_softmax's `if (dim_size <= 1024 && dim_size*sizeof(scalar_t) <= 4096)` (SoftMax.cu:719) is a row (it
    reads an element's size), and sizeof(scalar_t) is the input's dtype's: 1024 float32 elements fit, float64 ones
    do not; without dim_size it stays open."""
    rows = conditions("""\
        namespace at::native {
        void host_softmax(const Tensor& input, int64_t dim_size) {
          if (dim_size <= 1024 && dim_size*sizeof(scalar_t) <= 4096) {
            a(input);
          }
        }
        }
        """)
    assert [r[:4] for r in rows if r[2] == "if"] == [
        (3, 5, "if", "dim_size <= 1024 && dim_size*sizeof(scalar_t) <= 4096")]
    test = "dim_size <= 1024 && dim_size*sizeof(scalar_t) <= 4096"
    assert holds(test, {"dim_size": 1024, DTYPE: "float32"}) is True
    assert holds(test, {"dim_size": 1024, DTYPE: "float64"}) is False
    assert holds(test, {DTYPE: "float32"}) is None


def test_an_element_of_a_known_list_is_compared_as_its_number():
    """AdaptiveAveragePooling.cpp (2.4) :120 `!input.is_quantized() && output_size[0] == 1 && output_size[1] == 1
    && !input.is_xpu()`: with output_size [1, 1] on CUDA it holds (the mean path); with [7, 7] it does not. An
    index past the list's end, or a list not known, leaves it unknown."""
    from opindex.trace.conditions import DEVICE, holds
    test = "!input.is_quantized() && output_size[0] == 1 && output_size[1] == 1 && !input.is_xpu()"
    assert holds(test, {"output_size": [1, 1], DEVICE: "cuda"}) is True
    assert holds(test, {"output_size": [7, 7], DEVICE: "cuda"}) is False
    assert holds(f"not ({test})", {"output_size": [1, 1], DEVICE: "cuda"}) is False
    assert holds("output_size[2] == 1", {"output_size": [1, 1]}) is None
    assert holds("output_size[0] == 1", {}) is None


@pytest.mark.parametrize("test, cuda, cpu", [
    ("input.is_mkldnn()", False, False), ("!self.is_quantized()", True, True), ("self.is_sparse()", False, False),
    ("not (input.is_nested())", True, True), ("input.is_xpu()", False, False), ("self.is_cpu()", False, True),
    ("self.is_cuda()", True, False), ("input.is_mps()", False, False), ("self.device().is_cpu()", False, True),
    ("!iter.device().is_cpu()", True, False), ("self.device().is_cuda()", True, False)])
def test_a_traced_tensor_is_dense_and_of_the_traced_device(test, cuda, cpu):
    """A tensor torch.randn makes: strided layout, not quantized, of the traced device; so a test of another
    layout or device kind is false and one of the traced device's kind true. --device all says nothing."""
    from opindex.trace.conditions import DEVICE, holds
    assert (holds(test, {DEVICE: "cuda"}), holds(test, {DEVICE: "cpu"})) == (cuda, cpu)
    assert holds(test, {DEVICE: "all"}) is None


def test_an_or_of_flag_conjunctions_and_kind_tests_is_a_condition_row():
    """Dropout.cpp (2.4) :138 `if (input.is_nested() || (train && is_fused_kernel_acceptable(input, p)))`: every
    part can be read (a dense tensor is not nested; the flag train), so the test is kept, and its else; a part of
    no such kind (a call of arguments alone) keeps it out."""
    code = ("namespace at { namespace native {\n"
            "Tensor dropout(const Tensor& input, double p, bool train) {\n"
            "  if (input.is_nested() || (train && is_fused_kernel_acceptable(input, p))) {\n"
            "    return fused(input);\n"
            "  } else {\n"
            "    return input;\n"
            "  }\n"
            "  if (f(input, p) || (train && g(p))) {\n"
            "    return h(input);\n"
            "  }\n"
            "}\n}}\n")
    rows = [(r[1], r[3], r[4]) for r in extract("aten/src/ATen/native/D.cpp", code.encode(), "cpp").rows["conditions"]]
    test = "input.is_nested() || (train && is_fused_kernel_acceptable(input, p))"
    assert rows == [(3, "if", test), (5, "if", f"not ({test})")]
    from opindex.trace.conditions import DEVICE
    assert holds(test, {"train": False, DEVICE: "cuda"}) is False
    assert holds(test, {"train": True, DEVICE: "cuda"}) is None


def test_a_call_of_plain_names_written_as_the_test_is_a_condition_row():
    """Sort.cpp (2.4) :73 `if (should_use_small_sort(self, dim))`: kept with its else, for the trace to read the
    chooser's body; a call whose arguments are calls (`f(g(x))`) is not."""
    code = ("namespace at { namespace native {\n"
            "void sort_kernel(const Tensor& self, int64_t dim) {\n"
            "  if (should_use_small_sort(self, dim)) {\n"
            "    small(self);\n"
            "  } else {\n"
            "    big(self);\n"
            "  }\n"
            "  if (f(g(x))) {\n"
            "    g(self);\n"
            "  }\n"
            "}\n}}\n")
    rows = [(r[1], r[4]) for r in extract("aten/src/ATen/native/cuda/S.cpp", code.encode(), "cpp").rows["conditions"]]
    assert rows == [(3, "should_use_small_sort(self, dim)"), (5, "not (should_use_small_sort(self, dim))")]


def test_a_nan_check_is_false_for_a_number():
    """TensorCompare.cpp (2.4) :700 `if (min.get().toDouble() != min.get().toDouble() || max.get().toDouble() !=
    max.get().toDouble())`, clamp_out's NaN fill: a row (with its else), false for the values of the general case
    (numbers), so the NaN fill_ is not a clamp's way; `x == x` holds; other comparisons stay unread by this rule."""
    code = ("namespace at { namespace native {\n"
            "void clamp_out(const OptionalScalarRef min, const OptionalScalarRef max) {\n"
            "  if (min.get().toDouble() != min.get().toDouble() ||\n"
            "      max.get().toDouble() != max.get().toDouble()) {\n"
            "    at::fill_(result, NAN);\n"
            "  } else {\n"
            "    clamp_stub(min, max);\n"
            "  }\n"
            "  if (a.x() != b.y()) {\n"
            "    other();\n"
            "  }\n"
            "}\n}}\n")
    rows = [(r[1], r[4]) for r in extract("aten/src/ATen/native/C.cpp", code.encode(), "cpp").rows["conditions"]]
    test = "min.get().toDouble() != min.get().toDouble() || max.get().toDouble() != max.get().toDouble()"
    assert rows == [(3, test), (6, f"not ({test})")]
    assert holds(test, {}) is False and holds(f"not ({test})", {}) is True
    assert holds("x.item() == x.item()", {}) is True
    assert holds("a != b", {}) is None


def test_a_local_holding_an_element_count_is_not_zero(tmp_path):
    """AveragePool2d.cu (2.4) :286 `const auto count = safe_downcast<int32_t, int64_t>(output.numel());` then `if
    (count != 0)` (:293): an element count, of the general case not 0; a local from anything else stays unread."""
    from opindex.trace.conditions import count_locals, size_holds
    f = tmp_path / "a.cu"
    f.write_text("void k(const Tensor& output) {\n"
                 "  const auto count = safe_downcast<int32_t, int64_t>(output.numel());\n"
                 "  int64_t n = self.numel();\n"
                 "  int64_t m = self.size(0);\n"
                 "}\n")
    assert count_locals(str(tmp_path), "a.cu", 1, 5) == ("count", "n")
    assert size_holds("count != 0", ("count", "n")) is True
    assert size_holds("not (n > 0)", ("count", "n")) is False
    assert size_holds("m != 0", ("count", "n")) is None


def test_an_iterator_built_from_narrowed_halves_is_not_contiguous():
    """glu's meta function (PyTorch 2.4 GatedLinearUnit.cpp:22) builds its iterator from two `self.narrow(...)`
    halves: those operands are strided views, so the op's `iter.is_contiguous()` tests read false (true negated);
    a test of another tensor's contiguity, or a body that builds from the input itself, is not decided so."""
    from opindex.pytorch.views import strided_operands
    from opindex.trace.conditions import STRIDED, holds, strided_iterator_holds
    glu = """TORCH_META_FUNC(glu) (const Tensor& self, int64_t dim) {
  const int64_t selfSize = nIn / 2;
  Tensor firstHalf = self.narrow(wrap_dim, 0, selfSize);
  Tensor secondHalf = self.narrow(wrap_dim, selfSize, selfSize);
  build_borrowing_binary_op(maybe_get_output(), firstHalf, secondHalf);
}"""
    assert strided_operands(glu) == ["firstHalf", "secondHalf"]
    assert strided_operands("auto iter = TensorIteratorConfig().add_output(y).add_const_input(x.expand({2, 3}))"
                            ".build();") == ["x.expand({2, 3})"]
    assert strided_operands("Tensor h = self.narrow(0, 0, 2);\nbuild_borrowing_unary_op(maybe_get_output(), self);") \
        == []
    assert strided_operands("Tensor h = self.narrow(0, 0, 2);\nreturn h;") == []
    assert strided_iterator_holds("iter.is_contiguous()") is False
    assert strided_iterator_holds("not (iter.is_contiguous())") is True
    assert strided_iterator_holds("self.is_contiguous()") is None
    assert holds("iter.is_contiguous()", {STRIDED: True}) is False
    assert holds("iter.is_contiguous()", {STRIDED: False}) is not False


def test_a_body_s_views_are_found_with_the_depth_they_are_made_at():
    """constant_pad_nd (PyTorch 2.4 PadNd.cpp:29) narrows `c_output` inside a loop's `if (pad[pad_idx] > 0)` and
    then calls `c_output.copy_(c_input)` outside it: view_assignments finds each view a name is given (declared or
    assigned again, `_symint` views too) with its line and brace depth, deeper than the call's (depth_at), so the
    copy's operands may be views; a view made at the call's own depth always is one. Under MAYBE_STRIDED a test
    of the iterator's contiguity is left open."""
    from opindex.pytorch.views import depth_at, other_assignments, view_assignments
    from opindex.trace.conditions import MAYBE_STRIDED, STRIDED, holds
    body = """Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, const Scalar& value) {
    auto c_output = output;
    for (const auto i : c10::irange(l_diff, l_inp)) {
        if (pad[pad_idx] > 0) {
            c_output = c_output.narrow(i, pad[pad_idx], c_output.size(i) - pad[pad_idx]);
        }
    }
    auto input = self.expand_symint(shape);
    c_output.copy_(c_input);
    return output;
}"""
    assert view_assignments(body, 29) == {"c_output": [(33, 3)], "input": [(36, 1)]}
    assert depth_at(body, 37, 29) == 1
    assert view_assignments("auto y = x.contiguous();\nbool same = a == b;") == {}
    # the value a name gets is the view only where the statement ends in view calls
    chained = "auto y = x.transpose(1, 2).contiguous();\nauto z = x.narrow(0, 1, 2).t();\nz = z.contiguous();"
    assert view_assignments(chained) == {"z": [(2, 0)]}
    assert other_assignments(chained) == {"y": [1], "z": [3]}
    # not a view: an argument of another call (group_norm.cpp:194), a slice of a list of sizes
    assert view_assignments("const auto HxW = c10::multiply_integers(input_shape.slice(2));\n"
                            "auto rest = self.sizes().slice(1);\nauto w = (x.t());") == {"w": [(3, 0)]}
    assert holds("iter.is_contiguous()", {STRIDED: MAYBE_STRIDED}) is None
    assert holds("not (iter.is_contiguous())", {STRIDED: MAYBE_STRIDED}) is None


def test_operands_viewed_with_a_size_1_beside_a_full_size_broadcast():
    """group_norm_kernel.cu:629-635 (PyTorch 2.4): `.add_owned_output(Y.view({N * G, D * HxW}))`,
    `.add_owned_const_input(X.view({N * G, D * HxW}))`, `.add_owned_input(mean.view({N * G, 1}))` and rstd's: mean
    and rstd broadcast along the last dim (stride 0), so the iterator is not contiguous. Operands of one shape, or
    one whose shape is not written, say nothing."""
    from opindex.pytorch.views import broadcast_operands, strided_operands
    body = """auto iter = TensorIteratorConfig()
                    .resize_outputs(false)
                    .add_owned_output(Y.view({N * G, D * HxW}))
                    .add_owned_const_input(X.view({N * G, D * HxW}))
                    .add_owned_input(mean.view({N * G, 1}))
                    .add_owned_input(rstd.view({N * G, 1}))
                    .build();
    gpu_kernel(iter, f);"""
    assert broadcast_operands(body) == ["mean.view({N * G, 1})", "rstd.view({N * G, 1})"]
    assert strided_operands(body) == ["mean.view({N * G, 1})", "rstd.view({N * G, 1})"]
    same = "TensorIteratorConfig().add_output(y.view({n, 1})).add_input(x.view({n, 1})).build();"
    assert broadcast_operands(same) == []
    unwritten = "TensorIteratorConfig().add_output(y).add_input(m.view({n, 1})).build();"
    assert broadcast_operands(unwritten) == []


@pytest.mark.parametrize("test, value", [("!true", False), ("!false", True), ("!(false)", True),
                                         ("not (!true)", True), ("not (!false)", False)])
def test_a_negated_value_written_in_is_read(test, value):
    # `if (!getApplyGrid(state, totalElements, grid, curDevice)) return false;` (1.8's THCApply.cuh:361): the call's
    # value (true, read from its body) is written in, and the lines after the early return run under `not (!true)`
    assert holds(test, {}) is value


def test_a_type_test_reads_the_dispatched_scalar_type():
    """mem_eff_attention/kernels/cutlassF.h:286-302 (2.4): dispatch_cutlassF<DT>'s `if (std::is_same<DT, float>::value
    && 80 <= cc && cc < 100)`, DT bound to the scalar_t the call passes (`dispatch_cutlassF<scalar_t>(...)`,
    attention.cu:1294), the input's dtype's type; a number first is compared as written (`80 <= cc`)."""
    f32 = {DTYPE: "float32", "DT": Constant("scalar_t"), "cc": 90}
    assert holds("std::is_same<DT, float>::value && 80 <= cc && cc < 100", f32) is True
    assert holds("std::is_same<DT, cutlass::bfloat16_t>::value && 80 <= cc && cc < 100", f32) is False
    assert holds("std::is_same<DT, float>::value && 70 <= cc && cc < 75", f32) is False
    assert holds("not (std::is_same_v<scalar_t, int64_t>)", f32) is True  # RangeFactories.cu:235
    assert holds("std::is_same<DT, cutlass::half_t>::value", {**f32, DTYPE: "float16"}) is True
    assert holds("!std::is_same<DT, at::Half>::value", {**f32, DTYPE: "float16"}) is False
    assert holds("std::is_same<res_t, at::Half>::value", f32) is None  # a type the trace does not know
    assert holds("80 <= cc", {"cc": 90}) is True and holds("100 > cc", {"cc": 120}) is False
    assert holds("80 <= cc", {}) is None


def test_a_test_of_the_device_a_tensor_is_on_is_a_condition_row():
    """ReduceOps.cpp (2.4) :1356 `if (self.device().is_cpu())` (mean_out's sum-and-divide path) is kept with its
    else, so the device traced decides it (`self.device().is_cpu()` is false on CUDA)."""
    code = ("namespace at { namespace native {\n"
            "void mean_out(const Tensor& self, const Tensor& result) {\n"
            "  if (self.device().is_cpu()) {\n"
            "    sum_div(self, result);\n"
            "  } else {\n"
            "    mean_stub(self.device().type(), result);\n"
            "  }\n"
            "}\n}}\n")
    rows = [(r[1], r[4]) for r in extract("aten/src/ATen/native/R.cpp", code.encode(), "cpp").rows["conditions"]]
    assert rows == [(3, "self.device().is_cpu()"), (5, "not (self.device().is_cpu())")]


def test_a_local_holding_a_suggested_memory_format_reads_as_the_input_s(tmp_path):
    """upsample_nearest2d_out_cuda_template (UpSampleNearest2d.cu, 2.4) writes `const auto memory_format =
    input_.suggest_memory_format();` and then tests `memory_format == at::MemoryFormat::ChannelsLast && ...`:
    format_locals finds the local, which a trace reads as the input's format, Contiguous, as it reads
    `input_.suggest_memory_format()` itself."""
    from opindex.trace.conditions import format_locals
    (tmp_path / "k.cu").write_text("void f(const Tensor& input_) {\n"
                                   "  const auto memory_format = input_.suggest_memory_format();\n"
                                   "  at::MemoryFormat fmt = other.suggest_memory_format();\n"
                                   "  auto not_one = input_.suggest_memory_format() == x;\n}\n")
    assert format_locals(str(tmp_path), "k.cu", 1, 5) == ("memory_format", "fmt")
    assert format_locals(str(tmp_path), "k.cu", 1, 1) == ()



def test_an_optional_string_compared_and_the_input_dtype_s_integer_tests():
    """div_out_mode (BinaryOps.cpp:450, PyTorch 2.4): `if (!rounding_mode.has_value()) ... else if (*rounding_mode
    == "trunc") ... else if (*rounding_mode == "floor")`: each test is a row, and rounding_mode='floor' takes the
    last. div_floor_kernel_cuda (BinaryDivFloorKernel.cu:23-24): `const auto dtype = iter.common_dtype(); if (dtype
    == kByte)` is false for a float32 input, as the iterator's dtype is the input's; an index tensor's
    `indices.scalar_type() == kLong` is not read so."""
    rows = conditions("""\
        namespace at::native {
        void div_out_mode(const Tensor& self, std::optional<c10::string_view> rounding_mode) {
          if (!rounding_mode.has_value()) {
            div_true(self);
          } else if (*rounding_mode == "trunc") {
            div_trunc(self);
          } else if (*rounding_mode == "floor") {
            div_floor(self);
          }
        }
        }
        """)
    assert [r[:4] for r in rows if r[2] == "if"] == [
        (3, 5, "if", "!rounding_mode.has_value()"), (5, 9, "if", "not (!rounding_mode.has_value())"),
        (5, 7, "if", '*rounding_mode == "trunc"'), (7, 9, "if", 'not (*rounding_mode == "trunc")'),
        (7, 9, "if", '*rounding_mode == "floor"')]
    floor = {"rounding_mode": "floor", OPTIONALS: frozenset({"rounding_mode"})}
    assert [holds(r[3], floor) for r in rows if r[2] == "if"] == [False, True, False, True, True]
    assert holds("*flag", {"flag": False, OPTIONALS: frozenset({"flag"})}) is False  # (the value, not presence)
    assert [holds(t, {DTYPE: "float32"}) for t in ("dtype == kByte", "iter.common_dtype() != kLong",
                                                   "indices.scalar_type() == kLong")] == [False, True, None]
    assert holds("dtype == kLong", {DTYPE: "int64"}) is True
