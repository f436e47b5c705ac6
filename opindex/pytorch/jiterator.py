"""The name a jitted kernel runs under: the jiterator compiles it with NVRTC at run time, so no `__global__` of that
name is in the source. A launcher call names it by its first template argument, a string constant of the op's
file (`jitted_gpu_reduce_kernel<prod_name, ...>` with `char prod_name[] = "prod";`, ReduceSumProdKernel.cu:82), and
the jiterator writes the kernel's name around it:

- a reduction: `"reduction_" + name` (Reduce.cuh:821), then `+ "_kernel"` (jit_utils.cpp jit_pwise_function): the
  profiler's `reduction_prod_kernel`;
- an elementwise kernel: `name + "_vectorized" + vec_size` where the operands are contiguous and aligned, else
  `name` (CUDAJitLoops.cuh:146), then `+ "_kernel"`: `exp_kernel_vectorized2_kernel` for complex64 exp (the vector
  size is the run's: 4, 2 or 1 by the operands' alignment), `exp_kernel_kernel` unrolled.
"""
from __future__ import annotations

import re

# launcher -> how the jiterator names its kernel ("reduction": Reduce.cuh; "pointwise": CUDAJitLoops.cuh)
JITTED_LAUNCHERS = {"jitted_gpu_reduce_kernel": "reduction", "jitted_gpu_kernel": "pointwise",
                    "opmath_jitted_gpu_kernel_with_scalars": "pointwise"}
# the machinery's launch functions each form runs through (Reduce.cuh, CUDAJitLoops.cuh)
VECTORIZED, UNROLLED, REDUCE = "launch_jitted_vectorized_kernel", "launch_jitted_unrolled_kernel", \
    "launch_jitted_reduce_kernel"
_FIRST_ARGUMENT = re.compile(r"^\s*<\s*(?:/\*.*?\*/\s*)?([A-Za-z_]\w*)")


def name_constant(template_args: str | None, lines: list[str] | None) -> tuple[str, int] | None:
    """(the string, its line) of the `char NAME[] = "...";` the launcher call's first template argument names, in
    the call's file; None when the call names none or the file does not define it."""
    m = _FIRST_ARGUMENT.match(template_args or "")
    if m is None or not lines:
        return None
    constant = re.compile(r"\bchar\s+" + re.escape(m.group(1)) + r'\s*\[\s*\]\s*=\s*"([^"\\]*)"')
    for i, line in enumerate(lines, 1):
        found = constant.search(line)
        if found is not None:
            return found.group(1), i
    return None


def kernel_names(launcher: str, name: str) -> dict[str, str]:
    """{machinery launch function: the kernel it launches} for a jitted launcher whose name constant is `name`; the
    vectorized form's vector size is the run's (`<N>`)."""
    form = JITTED_LAUNCHERS.get(launcher)
    if form == "reduction":
        return {REDUCE: f"reduction_{name}_kernel"}
    if form == "pointwise":
        return {VECTORIZED: f"{name}_vectorized<N>_kernel", UNROLLED: f"{name}_kernel"}
    return {}


def matches(pattern: str, ran: str) -> bool:
    """A name kernel_names gives against a kernel a profiler shows (`<N>` any vector size)."""
    return re.fullmatch(re.escape(pattern).replace(re.escape("<N>"), r"\d+"), ran) is not None


_FORMS = (("reduction", re.compile(r"reduction_(\w+)_kernel")), ("pointwise", re.compile(r"(\w+)_vectorized\d+_kernel")),
          ("pointwise", re.compile(r"(\w+)_kernel")))


def name_parts(kernel: str) -> list[tuple[str, str]]:
    """[(form, the name constant's string)] a kernel name a profiler shows may be jitted from, most specific first:
    `reduction_prod_kernel` -> reduction "prod" (or pointwise "reduction_prod"), `exp_kernel_vectorized2_kernel`
    -> pointwise "exp_kernel"."""
    return [(form, m.group(1)) for form, pattern in _FORMS if (m := pattern.fullmatch(kernel))]


def launches_of(kernel: str, launches: list[dict], read_lines) -> list[tuple[dict, int]]:
    """[(launch row, the line of its name constant)] of the jitted launches (kernel_launches rows of a launcher in
    JITTED_LAUNCHERS) whose kernel is `kernel`; `read_lines(file)` gives a checkout file's lines (None: absent)."""
    wanted = name_parts(kernel)
    out = []
    for launch in launches:
        form = JITTED_LAUNCHERS.get(launch["kernel"])
        if form is None or not any(form == f for f, _ in wanted):
            continue
        found = name_constant(launch.get("template_args"), read_lines(launch["file"]))
        if found is not None and (form, found[0]) in wanted:
            out.append((launch, found[1]))
    return out
