"""What a no-argument C++ function returns in the build traced (trace/function_value.py), read from its body."""
import textwrap

from opindex.trace.function_value import body_value, calls_in, substitute

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
