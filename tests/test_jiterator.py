"""The names of kernels the jiterator compiles at run time (pytorch/jiterator.py), read as PyTorch 2.4 writes them:
Reduce.cuh:821 (`"reduction_" + desc.name`), CUDAJitLoops.cuh:146 (`desc.name + "_vectorized" + vec_size`),
jit_utils.cpp jit_pwise_function (`kernel_name + "_kernel"`)."""
from __future__ import annotations

from opindex.pytorch import jiterator

LINES = ['#include <ATen/native/cuda/JitLoops.cuh>', 'CONSTEXPR_EXCEPT_WIN_CUDA char prod_name[] = "prod";',
         'constexpr char exp_name[] = "exp_kernel";']


def test_a_launcher_names_its_kernel_by_a_string_constant_of_its_file():
    assert jiterator.name_constant("<prod_name, scalar_t, out_t>", LINES) == ("prod", 2)
    assert jiterator.name_constant("< /*name=*/exp_name, /*return_dtype=*/scalar_t, /*arity=*/1>", LINES) == (
        "exp_kernel", 3)
    assert jiterator.name_constant("<sum_name, scalar_t>", LINES) is None  # defined elsewhere: not guessed
    assert jiterator.name_constant(None, LINES) is None


def test_the_kernel_names_the_jiterator_makes():
    assert jiterator.kernel_names("jitted_gpu_reduce_kernel", "prod") == {
        "launch_jitted_reduce_kernel": "reduction_prod_kernel"}
    assert jiterator.kernel_names("jitted_gpu_kernel", "exp_kernel") == {
        "launch_jitted_vectorized_kernel": "exp_kernel_vectorized<N>_kernel",
        "launch_jitted_unrolled_kernel": "exp_kernel_kernel"}
    assert jiterator.kernel_names("gpu_kernel", "x") == {}
    assert jiterator.matches("exp_kernel_vectorized<N>_kernel", "exp_kernel_vectorized2_kernel")
    assert not jiterator.matches("exp_kernel_vectorized<N>_kernel", "exp_kernel_vectorized_kernel")
    assert jiterator.name_parts("reduction_prod_kernel") == [("reduction", "prod"), ("pointwise", "reduction_prod")]
    assert jiterator.name_parts("exp_kernel_vectorized2_kernel") == [
        ("pointwise", "exp_kernel"), ("pointwise", "exp_kernel_vectorized2")]
    assert jiterator.name_parts("vectorized_elementwise") == []


def test_a_profiled_name_finds_the_launch_that_makes_it():
    launches = [{"kernel": "jitted_gpu_reduce_kernel", "template_args": "<prod_name, scalar_t, out_t>", "file": "R.cu",
                 "line": 94},
                {"kernel": "jitted_gpu_kernel", "template_args": "<exp_name, scalar_t, scalar_t, 1>", "file": "R.cu",
                 "line": 48},
                {"kernel": "jitted_gpu_kernel", "template_args": "<prod_name, scalar_t, scalar_t, 1>", "file": "R.cu",
                 "line": 60}]
    read = {"R.cu": LINES}.get
    assert jiterator.launches_of("reduction_prod_kernel", launches, read) == [(launches[0], 2)]
    assert jiterator.launches_of("exp_kernel_vectorized4_kernel", launches, read) == [(launches[1], 3)]
    assert jiterator.launches_of("prod_kernel", launches, read) == [(launches[2], 2)]  # pointwise, unrolled
    assert jiterator.launches_of("reduction_sum_kernel", launches, read) == []
