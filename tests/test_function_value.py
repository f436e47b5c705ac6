"""What a no-argument C++ function returns in the build traced (trace/function_value.py), read from its body."""
import textwrap

from opindex.trace.function_value import UNKNOWN, TensorArg, Typed, body_value, calls_in, rewrite_calls, substitute

CONV_UTILS = """\
inline bool cudnnv8_enabled_check_debug() {
#if defined(USE_MACA)
  return false;
#endif  //USE_MACA

  static bool cudnnv8_flag = c10::utils::check_env("TORCH_CUDNN_V8_API_DISABLED") != true;
  static bool cudnnv8_debug = c10::utils::check_env("TORCH_CUDNN_V8_API_DEBUG") == true;
  static uint8_t cudnnv8_debugcount = 0;
  if (cudnnv8_debug == 1 && cudnnv8_debugcount < 10) {
    TORCH_WARN("TORCH_CUDNN_V8_DEBUG ON, V8 ON: ", cudnnv8_flag);
    cudnnv8_debugcount++;
  }
  return cudnnv8_flag == 1;
}

static bool getDisableAddmmCudaLt() {
    static const char* env_value = std::getenv("ENABLE_ADDMM_CUDA_LT");
    if (env_value != nullptr && strcmp(env_value, "1") == 0) {
      return false;
    }
    return true;
}

bool depends(int x) {
  if (x > 2) {
    return true;
  }
  return false;
}
"""


def _value(tmp_path, first, last, macros):
    (tmp_path / "x.h").write_text(textwrap.dedent(CONV_UTILS))
    return body_value(str(tmp_path), "x.h", first, last,
                      lambda test: {"defined(USE_MACA)": macros.get("USE_MACA")}.get(test))


def test_a_build_condition_and_an_empty_environment_decide_what_a_function_returns(tmp_path):
    assert _value(tmp_path, 1, 14, {"USE_MACA": True}) is False  # the fork's build: `return false` first
    assert _value(tmp_path, 1, 14, {"USE_MACA": False}) is True  # TORCH_CUDNN_V8_API_DISABLED unset: v8 on
    assert _value(tmp_path, 1, 14, {}) is None  # the #if cannot be decided: unknown
    assert _value(tmp_path, 16, 22, {}) is True  # ENABLE_ADDMM_CUDA_LT unset: the Lt path disabled
    assert _value(tmp_path, 24, 29, {}) is None  # a test of a parameter decides: unknown
    assert body_value(str(tmp_path), "missing.h", 1, 5, lambda t: None) is None


def test_calls_in_a_condition_and_their_values_written_in():
    cond = "!(getDisableAddmmCudaLt()) && iter.is_contiguous() && at::native::cudnnv8_enabled_check_debug()"
    assert calls_in(cond) == ["getDisableAddmmCudaLt", "at::native::cudnnv8_enabled_check_debug"]
    assert calls_in("detail::getCUDAHooks().compiledWithCuDNN()") == []
    values = {"getDisableAddmmCudaLt": True}
    assert substitute(cond, values.get) == ("!(true) && iter.is_contiguous() && "
                                            "at::native::cudnnv8_enabled_check_debug()")


# 2.4's cudnn/LossCTC.cpp:83 _use_cudnn_ctc_loss, its test cut to the parts this module reads
USE_CUDNN = """\
bool _use_cudnn_ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
    IntArrayRef target_lengths, int64_t BLANK) {
  auto& ctx = at::globalContext();
  bool use_cudnn = ctx.userEnabledCuDNN() && (BLANK == 0) &&
      (log_probs.scalar_type() == at::kFloat) && (targets.scalar_type() == at::kInt) &&
      (log_probs.device().type() == at::kCUDA) &&
      (targets.device().type() == at::kCPU);
  if (use_cudnn) {
    int64_t max_input_length = log_probs.size(0);
    for (const auto input_length : input_lengths) {
      use_cudnn = use_cudnn && ((input_length == max_input_length) ? 1 : 0);
    }
  }
  return use_cudnn;
}

bool _use_cudnn_ctc_loss_tensor(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
    const Tensor& target_lengths, int64_t BLANK) {
  Tensor ilc = input_lengths.to(Device(at::kCPU), at::kLong).contiguous();
  IntArrayRef il(ilc.data_ptr<int64_t>(), ilc.numel());
  return at::_use_cudnn_ctc_loss(log_probs, targets, il, il, BLANK);
}

bool flags(bool x) {
  bool a = true;
  a = false;
  bool b = true;
  b &= x;
  bool c = true;
  if (x) {
    c = false;
  }
  bool d = false;
  d |= true;
  return a || c || (b && d);
}
"""


def _ctc(tmp_path, first, last, env, calls=None):
    (tmp_path / "ctc.cpp").write_text(USE_CUDNN)
    return body_value(str(tmp_path), "ctc.cpp", first, last, lambda test: None, env, calls)


def test_a_function_of_tensor_arguments_reads_their_device_and_dtype(tmp_path):
    cuda = TensorArg("cuda", "float32")
    # the traced device is cuda: `targets.device().type() == at::kCPU` is false, so use_cudnn is, whatever the
    # unknown parts (ctx.userEnabledCuDNN(), BLANK, kInt: a dtype SCALAR_TYPES does not name) say
    assert _ctc(tmp_path, 1, 15, {"log_probs": cuda, "targets": cuda}) is False
    # on the CPU test's side nothing else decides: unknown, and the `if (use_cudnn)` block that may run and assigns
    # use_cudnn leaves it unknown
    cpu = TensorArg("cpu", "float32")
    assert _ctc(tmp_path, 1, 15, {"log_probs": cuda, "targets": cpu, "BLANK": 0}) is None
    # float64 input: `log_probs.scalar_type() == at::kFloat` is false
    assert _ctc(tmp_path, 1, 15, {"log_probs": TensorArg(None, "float64"), "targets": cpu}) is False
    # --device all: where a tensor is is not said
    assert _ctc(tmp_path, 1, 15, {"log_probs": TensorArg(None, None), "targets": TensorArg(None, None)}) is None
    assert _ctc(tmp_path, 1, 15, {}) is None  # nothing known of the arguments


def test_a_call_in_a_body_is_read_by_the_callers_reader_with_its_arguments(tmp_path):
    cuda = TensorArg("cuda", "float32")
    asked = []

    def calls(name, args):
        asked.append((name, args))
        return False

    assert _ctc(tmp_path, 17, 22, {"log_probs": cuda, "targets": cuda}, calls) is False
    # the local `IntArrayRef il(...)` is Typed: its type tells the IntArrayRef overload from the Tensor one
    assert asked == [("at::_use_cudnn_ctc_loss", [cuda, cuda, Typed("IntArrayRef"), Typed("IntArrayRef"),
                                                 UNKNOWN])]
    assert _ctc(tmp_path, 17, 22, {"log_probs": cuda, "targets": cuda}) is None  # no reader: unknown


def test_locals_assigned_at_the_top_level_and_in_blocks_that_may_not_run(tmp_path):
    # a = false (reassigned): false; c: set false only `if (x)`, x unknown: unknown; b &= x: unknown; d |= true: true
    assert _ctc(tmp_path, 24, 36, {}) is None
    assert _ctc(tmp_path, 24, 36, {"x": True}) is True  # b = true && true, d = true
    assert _ctc(tmp_path, 24, 36, {"x": False}) is True  # c stays true


def test_a_bool_call_in_a_test_is_written_as_its_value():
    test = "(log_probs.device().type() == at::kCUDA) && at::_use_cudnn_ctc_loss( log_probs, targets, BLANK)"
    asked = []

    def value_of(name, args):
        asked.append((name, args))
        return (False, "cudnn/LossCTC.cpp:83") if name == "at::_use_cudnn_ctc_loss" else None

    never = lambda part: False  # noqa: E731
    assert rewrite_calls(test, value_of, never) == (
        "(log_probs.device().type() == at::kCUDA) && false",
        "(log_probs.device().type() == at::kCUDA) && at::_use_cudnn_ctc_loss( log_probs, targets, BLANK) "
        "(= false: cudnn/LossCTC.cpp:83)")
    assert asked == [("at::_use_cudnn_ctc_loss", ["log_probs", "targets", "BLANK"])]
    # an else block's test, a negated call, a call inside an || and one that does not say (kept)
    assert rewrite_calls("not (!at::_use_cudnn_ctc_loss(a) || other(b))", value_of, never)[0] == \
        "not (!false || other(b))"
    assert rewrite_calls("other(b) && x", value_of, never) is None  # no call's value known
    assert rewrite_calls("f(a, g(b))", lambda name, args: (True, "f.cpp:1"), never)[0] == "true"
    # a part the conditions already read (a dtype test, a hint) is theirs; and so is a whole test they decide
    assert rewrite_calls("at::isComplexType(t) && f(a)", lambda n, a: (True, "x:1"),
                         lambda part: part == "at::isComplexType(t)") == ("at::isComplexType(t) && true",
                                                                               "at::isComplexType(t) && f(a) (= true: x:1)")
    assert rewrite_calls("f(a)", lambda n, a: (True, "x:1"), lambda part: True) is None
    assert rewrite_calls("iter.can_use_32bit_indexing() && x.f(a)", value_of, never) is None  # methods: not calls


def test_a_function_a_macro_writes_is_read_from_the_macros_body(tmp_path):
    """The fork's Context.cpp writes 139 getters with `DEFINE_MACA_ENV_API_NE(get_maca_x, "PYTORCH_X")`: the
    macro's body with the invocation's arguments, read with an empty environment (the variable unset): _NE is
    false, _E true; an invocation that does not split reads unknown."""
    from opindex.trace.function_value import expansion_value
    (tmp_path / "Context.cpp").write_text(
        'DEFINE_MACA_ENV_API_NE(get_maca_disable_cat, "PYTORCH_DISABLE_CAT")\n'
        'DEFINE_MACA_ENV_API_E(get_maca_enable_opt, "PYTORCH_DISABLE_OPT")\n'
        'DEFINE_MACA_ENV_API_NE(broken\n')
    ne = {"name": "DEFINE_MACA_ENV_API_NE", "parameters": "(api_name, env_name)",
          "body": "bool api_name() { static char const* temp = std::getenv(env_name); return temp != nullptr; }"}
    e = {**ne, "name": "DEFINE_MACA_ENV_API_E", "body": ne["body"].replace("!=", "==")}
    holds = lambda test: None  # noqa: E731
    assert expansion_value(str(tmp_path), "Context.cpp", 1, ne, holds) is False
    assert expansion_value(str(tmp_path), "Context.cpp", 2, e, holds) is True
    assert expansion_value(str(tmp_path), "Context.cpp", 3, ne, holds) is None


def test_a_branch_hint_around_a_known_value_is_that_value():
    from opindex.trace.conditions import holds
    assert holds("maca_likely(false)", {}) is False  # a getter read as false inside the hint
    assert holds("maca_likely(x)", {}) is True  # unknown inside: the hint says the expected way
    assert holds("C10_UNLIKELY(true)", {}) is True


def test_an_if_of_one_statement_without_braces_returns_when_its_test_holds(tmp_path):
    """`if (disable_sort_for_topk()) return false;` (TensorTopK.cpp:37 in 2.4): a test that holds returns there, a
    false one goes on to the next statement, and so does one the inputs leave open (1.8's getApplyGrid, THCApply.cuh:181
    `if (curDevice == -1) return false;`, a sentinel check, is read as returning true)."""
    (tmp_path / "y.h").write_text("bool use(bool off, bool big) {\n  if (off) return false;\n  if (big)\n"
                                  "    return true;\n  return false;\n}\n")
    read = lambda env: body_value(str(tmp_path), "y.h", 1, 6, lambda t: None, env)  # noqa: E731
    assert read({"off": True, "big": True}) is False
    assert read({"off": False, "big": True}) is True
    assert read({"off": False, "big": False}) is False
    assert read({"big": True}) is True
    # (the limit of that reading: with both open, the last return is the value; a braced block's open return
    # would make it unknown)
    assert read({}) is False


def test_a_config_macro_a_body_returns_is_the_build_s_value(tmp_path):
    """`bool disable_sort_for_topk() { return CUB_SUPPORTS_SCAN_BY_KEY(); }` (TensorTopK.cu:25 in 2.4): the macro's
    value where the build defines it (cub_definitions.cuh: 1 for CUB_VERSION >= 101500), unknown where not."""
    (tmp_path / "t.cu").write_text("bool disable_sort_for_topk() {\n  return CUB_SUPPORTS_SCAN_BY_KEY();\n}\n")
    held = {"CUB_SUPPORTS_SCAN_BY_KEY()": True}
    assert body_value(str(tmp_path), "t.cu", 1, 3, held.get) is True
    assert body_value(str(tmp_path), "t.cu", 1, 3, lambda test: None) is None


def test_a_function_of_a_tensor_s_sizes_is_read_with_the_sizes_a_call_gives(tmp_path):
    """should_use_sort (TensorTopK.cpp:36 in 2.4) with CUB's scan-by-key off: `int64_t slice_size =
    self.size(dim);`, `int64_t num_slices = self.numel() / slice_size;`, `return num_slices <= 10 && slice_size >=
    100000;` read with a 4x200000 tensor (true), a 64x1000 one (false), and unknown sizes (unknown)."""
    (tmp_path / "s.cpp").write_text(textwrap.dedent("""\
        bool should_use_sort(const Tensor& self, int64_t dim) {
          if (disable_sort_for_topk()) return false;
          if (self.dim() == 0) return false;
          int64_t slice_size = self.size(dim);
          if (slice_size == 0) return false;
          int64_t num_slices = self.numel() / slice_size;
          return num_slices <= 10 && slice_size >= 100000;
        }
        """))
    held = {"disable_sort_for_topk()": False}.get
    calls = lambda name, args: False if name == "disable_sort_for_topk" else None  # noqa: E731
    read = lambda sizes: body_value(str(tmp_path), "s.cpp", 1, 8, held,  # noqa: E731
                                    {"self": TensorArg("cuda", "float32", sizes), "dim": -1}, calls)
    assert read((4, 200000)) is True
    assert read((64, 1000)) is False
    assert read(None) is None


SELECT = """\
struct ConvParams {
  bool is_depthwise(const at::Tensor& input, const at::Tensor& weight) const  {
    return input.is_cuda() &&
           !transposed &&
           (input.ndimension() == 4 || input.ndimension() == 5) &&
           at::symint::size<T>(input, 1) == groups &&
           groups > 1 && // no point if there is only a single group
           at::symint::size<T>(weight, 0) % at::symint::size<T>(input, 1) == 0;
  }
  bool use_cudnn_depthwise(const at::Tensor& input, const at::Tensor& weight) const  {
    if (input.suggest_memory_format() != at::MemoryFormat::Contiguous) {
      return true;
    }
    if (detail::getCUDAHooks().supportsDepthwiseConvolutionWithCuDNN()) {
      bool kernel_cond = (input.scalar_type() == kHalf && weight.scalar_type() == kHalf);
      if (kernel_cond) {
        return check(input);
      } else {
        return false;
      }
    } else {
      return false;
    }
  }
};

ConvBackend select(const Tensor& input, const Tensor& weight, const ConvParams<T>& params) {
  if (params.is_depthwise(input, weight)) {
    if (params.use_cudnn_depthwise(input, weight)) {
      return ConvBackend::Cudnn;
    } else if (detail::getCUDAHooks().compiledWithMIOpen()) {
      return ConvBackend::MiopenDepthwise;
    } else {
      if (input.ndimension() == 4) {
        return ConvBackend::CudaDepthwise2d;
      } else if (input.ndimension() == 5) {
        return ConvBackend::CudaDepthwise3d;
      }
    }
  } else if (params.use_cudnn(input, weight)) {
    return ConvBackend::Cudnn;
  }
  return ConvBackend::Slow2d;
}
"""


def test_a_chooser_reads_an_object_s_fields_its_methods_and_the_build_s_hooks(tmp_path):
    """_select_conv_backend (Convolution.cpp:1207, PyTorch 2.4) in small: ConvParams' methods read its fields
    (`groups`, `transposed`) and the tensors' sizes (`at::symint::size<T>(input, 1)`, `%`); an open test whose
    ways return one value is that value (use_cudnn_depthwise is false for float32, whether or not the GPU supports
    cuDNN's depthwise kernels); a hook of the build's CUDA is read through the caller's reader; an else-if chain
    is read in order."""
    from opindex.trace.function_value import Const, Struct
    (tmp_path / "c.cpp").write_text(SELECT)
    bodies = {"ConvParams::is_depthwise": (2, 9), "ConvParams::use_cudnn_depthwise": (10, 24)}
    asked = []

    def calls(name, args, this=None):
        asked.append(name)
        if name == "CUDAHooks::compiledWithMIOpen":
            return False  # AT_ROCM_ENABLED() in a CUDA build
        if name in bodies:
            env = {"input": args[0], "weight": args[1], **dict(this.fields)}
            return body_value(str(tmp_path), "c.cpp", *bodies[name], lambda t: None, env, calls)
        return None

    def backend(groups, sizes, weight, transposed=False, dtype="float32"):
        params = Struct("ConvParams", (("groups", groups),) + ((("transposed", transposed),)
                                                               if transposed is not None else ()))
        env = {"input": TensorArg("cuda", dtype, sizes), "weight": TensorArg("cuda", dtype, weight),
               "params": params}
        return body_value(str(tmp_path), "c.cpp", 27, 44, lambda t: None, env, calls)

    assert backend(32, (8, 32, 56, 56), (32, 1, 3, 3)) == Const("CudaDepthwise2d")
    assert "CUDAHooks::supportsDepthwiseConvolutionWithCuDNN" in asked  # (unknown: both ways return false)
    assert backend(32, (8, 32, 8, 56, 56), (32, 1, 3, 3, 3)) == Const("CudaDepthwise3d")
    assert backend(32, (8, 32, 56, 56), (32, 1, 3, 3), transposed=True) is None  # then use_cudnn: unknown here
    assert backend(32, (8, 32, 56, 56), (32, 1, 3, 3), transposed=None) is None  # transposed not known
    assert backend(32, (8, 32, 56, 56), (32, 1, 3, 3), dtype="float16") is None  # check(input): unknown
    assert backend(1, (8, 32, 56, 56), (64, 32, 3, 3)) is None  # groups=1: not depthwise, use_cudnn unknown


def test_locals_a_body_sets_before_a_call_whatever_the_inputs():
    """_convolution (Convolution.cpp:1521) before `_select_conv_backend(input, weight, ..., params)`: `auto input =
    input_r;`, the fields of `ConvParams<int64_t> params`, and `input = view4d(input)` under `if (k == 3 && ...)`,
    false for a 4-D weight; a local set under a test the values leave open is unknown after it."""
    from opindex.trace.function_value import Struct, settle_locals
    body = """auto input = input_r;
  auto weight = weight_r;
  auto k = weight.ndimension();
  ConvParams<int64_t> params;
  params.groups = groups_;
  params.transposed = transposed_;
  if (k == 3 && !input.is_mkldnn()) {
    input = view4d(input);
  }
  if (unknown_flag) {
    params.benchmark = true;
  }
  Tensor output;
  at::Tensor result;
"""
    x, w = TensorArg("cuda", "float32", (8, 32, 56, 56)), TensorArg("cuda", "float32", (32, 1, 3, 3))
    env = settle_locals(body, {"input_r": x, "weight_r": w, "groups_": 32.0, "transposed_": False})
    assert (env["input"], env["k"]) == (x, 4)
    assert env["params"] is None  # (assigned under an open test: unknown after it)
    env = settle_locals(body.replace("unknown_flag", "false"), {"input_r": x, "weight_r": w, "groups_": 32.0,
                                                                 "transposed_": False})
    assert env["params"] == Struct("ConvParams", (("groups", 32), ("transposed", False)))
    assert "output" not in env and "result" not in env  # (a Tensor is a value, not an object of fields)


def test_a_local_computed_with_c_math_and_the_locals_other_statements_may_set():
    """randperm_out_cuda (Randperm.cu:82-89, PyTorch 2.4): `int bits = std::min(64, static_cast<int>(std::ceil(
    std::log2(nd - (6 * nd * nd + 1) / log_threshold_12))));` is 23 for n = 1024, 32 for 30000 and 36 for 100000
    (`bits <= 32` picks int32 or int64 keys); a local stepped in a loop (flip's `n++`, TensorTransformations.cpp:48)
    or whose address a call takes (THC_pointwiseApply1's `cudaGetDevice(&curDevice)`, 1.4) is unknown after it; a
    top-level `k++` steps a known int."""
    from opindex.trace.function_value import _eval, settle_locals
    body = """const double log_threshold_12 = std::log(0.9) * 12;
  double nd = static_cast<double>(n);
  int bits = std::min(64,
    static_cast<int>(std::ceil(std::log2(nd - (6 * nd * nd + 1) / log_threshold_12))));
"""
    assert [settle_locals(body, {"n": n})["bits"] for n in (1024, 30000, 100000)] == [23, 32, 36]
    assert settle_locals(body, {"n": None})["bits"] is None  # (n unknown: so is bits)
    assert [_eval(e, {}) for e in ("7 / 2", "7.0 / 2", "std::floor(2.5)", "static_cast<int>(2.9)", "1e-3 < 0.01",
                                   "std::max(2, 5) * 2", "std::log(0)")] == [3, 3.5, 2.0, 2, True, 10, None]
    env = settle_locals("""int n = 0;
  for (const auto i : c10::irange(total_dims)) {
    if (flip_dims_b[i] && self.size(i) > 1) {
      n++;
    }
  }
  int curDevice = -1;
  cudaGetDevice(&curDevice);
  int k = 3;
  k++;
  --k;
  --k;
  double delta = 2.5;
""", {})
    assert (env["n"], env["curDevice"], env["k"], env["delta"]) == (None, None, 2, 2.5)
    y = TensorArg("cuda", "float32", (64, 100))  # (trapezoid's `y.sym_size(dim) == 0`, Integration.cpp:124)
    assert [_eval(e, {"y": y, "dim": -1}) for e in ("y.sym_size(dim) == 0", "y.sym_numel() > 6000")] == [False, True]


def test_a_range_loop_whose_bounds_are_known_is_run_to_value_what_it_sets():
    """constant_pad_nd (PadNd.cpp:33-59, PyTorch 2.4): `bool all_pads_non_positive = true;` then `for (const auto i :
    c10::irange(l_diff, l_inp))` over the padded dims, reading `pad[pad_idx]` and `pad[pad_idx + 1]`: false once a
    pad is positive, true for zero or negative pads. A loop whose bounds are not known, that runs more than
    MAX_LOOP times or leaves early (break) sets what it assigns to unknown; its variable is not left behind."""
    from opindex.trace.function_value import MAX_LOOP, _eval, settle_locals
    body = """auto l_inp = self.dim();
    auto l_pad = pad.size() / 2;
    auto l_diff = l_inp - l_pad;
    bool all_pads_non_positive = true;
    for (const auto i : c10::irange(l_diff, l_inp)) {
        auto pad_idx = 2 * (l_inp - i - 1);
        if (pad[pad_idx] < 0) {
            c_input = c_input.narrow(i, -pad[pad_idx], c_input.size(i) + pad[pad_idx]);
        } else if (pad[pad_idx] != 0) {
            all_pads_non_positive = false;
        }
        if (pad[pad_idx + 1] < 0) {
            c_input = c_input.narrow(i, 0, c_input.size(i) + pad[pad_idx + 1]);
        } else if (pad[pad_idx + 1] != 0) {
            all_pads_non_positive = false;
        }
    }
"""
    x = TensorArg("cuda", "float32", (8, 16, 32, 32))
    got = {tuple(pad): settle_locals(body, {"self": x, "pad": pad}) for pad in ([1, 1, 1, 1], [0, 0, 0, 0],
                                                                             [-1, 0, 0, -2], [0, 0, 0, 3])}
    assert {k: v["all_pads_non_positive"] for k, v in got.items()} == {
        (1, 1, 1, 1): False, (0, 0, 0, 0): True, (-1, 0, 0, -2): True, (0, 0, 0, 3): False}
    assert "i" not in got[(1, 1, 1, 1)] and got[(1, 1, 1, 1)]["l_diff"] == 2
    assert settle_locals(body, {"self": TensorArg("cuda", "float32", None), "pad": [1, 1]})[
        "all_pads_non_positive"] is None  # (the input's rank unknown: so are the bounds)
    loop = "int n = 0;\nfor (const auto i : c10::irange(%s)) {\n  n++;%s\n}\n"
    assert settle_locals(loop % ("4", ""), {})["n"] == 4
    assert settle_locals(loop % ("2, size.size()", ""), {"size": [3, 3, 3, 3]})["n"] == 2
    assert settle_locals(loop % (str(MAX_LOOP + 1), ""), {})["n"] is None
    assert settle_locals(loop % ("4", "\n  if (n > 1) break;"), {})["n"] is None
    assert [_eval(e, {"pad": (1, 2)}) for e in ("pad[1]", "pad[2]", "pad[1 - 1] + pad[1]", "pad.size()")] == \
        [2, None, 3, 2]


def test_a_tensor_s_kind_and_its_views_are_read_for_a_tensor_of_the_trace():
    """_convolution (Convolution.cpp:1565) `if (k == 3 && !input.is_mkldnn() && !input.is_xpu())` for a 1-d
    convolution's 3-d weight, then `weight = view4d(weight);`, whose body (:33) returns `tensor.unsqueeze(2)`: a
    tensor of the trace is dense (not MKL-DNN, sparse, quantized, ...), and its sizes after unsqueeze/squeeze are
    known; a helper returning such a tensor gives it back (read through the caller's reader)."""
    from opindex.trace.function_value import CALLS, _eval, settle_statements, top_statements
    x = TensorArg("cuda", "float32", (16, 1, 3))
    assert [_eval(e, {"w": x}) for e in ("w.is_mkldnn()", "w.is_sparse()", "w.unsqueeze(2)", "w.unsqueeze(-1)",
                                         "w.squeeze(1)", "w.contiguous()", "u.is_mkldnn()")] == [
        False, False, TensorArg("cuda", "float32", (16, 1, 1, 3)), TensorArg("cuda", "float32", (16, 1, 3, 1)),
        TensorArg("cuda", "float32", (16, 3)), x, None]
    lines = ["Tensor f(const Tensor& weight_r) {", "  auto weight = weight_r;", "  auto k = weight.ndimension();",
             "  if (k == 3 && !weight.is_mkldnn()) {", "    weight = view4d(weight);", "  }",
             "  auto kernel_size = weight.sizes().slice(2);", "}"]
    top = top_statements(lines, 1, lambda c: None)
    assert [(s.start, s.end) for s in top] == [(2, 2), (3, 3), (4, 6), (7, 7)]
    view4d = lambda name, args, this=None: TensorArg("cuda", "float32", args[0].sizes[:2] + (1,) + args[0].sizes[2:])
    env = settle_statements(top[:3], {"weight_r": x, CALLS: view4d})
    assert env["weight"] == TensorArg("cuda", "float32", (16, 1, 1, 3))
    assert settle_statements(top[:3], {"weight_r": x})["weight"] is None  # (view4d not read: unknown)
