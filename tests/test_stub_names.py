"""Stub names agree across tables, and codegen registrations count (issue 29, item 4): a stub registered with its
namespace (REGISTER_DISPATCH(cpublas::gemm_stub, ...)) is found by its bare name, as dispatch_stubs holds it; the
REGISTER_DISPATCH torchgen's ufunc codegen writes for a ufunc_inner_loop entry is a registration (CPU and CUDA)."""
from __future__ import annotations

from opindex.api import Index, build


def test_a_stub_registered_with_its_namespace_is_found_by_its_bare_name(sample_copy, tmp_path):
    cpu = sample_copy / "aten" / "src" / "ATen" / "native" / "cpu"
    (sample_copy / "aten" / "src" / "ATen" / "native" / "CPUBlas.h").write_text(
        "namespace at::native::cpublas {\nDECLARE_DISPATCH(gemm_fn, gemm_stub);\n}\n")
    (cpu / "BlasKernel.cpp").write_text(
        "namespace at::native {\nnamespace cpublas {\nvoid cpublas_gemm_impl(int m) {}\n}\n"
        "REGISTER_DISPATCH(cpublas::gemm_stub, &cpublas::cpublas_gemm_impl);\n}\n")
    db = tmp_path / "i.sqlite"
    build(str(sample_copy), db, jobs=1)
    with Index(db) as ix:
        assert ix.rows("SELECT s.stub, k.device, k.kernel, k.registered_in, k.registered_line FROM dispatch_stubs s "
                       "JOIN stub_kernels k ON k.stub = s.stub WHERE s.stub = 'gemm_stub'") == [
            {"stub": "gemm_stub", "device": "CPU", "kernel": "cpublas_gemm_impl",
             "registered_in": "aten/src/ATen/native/cpu/BlasKernel.cpp", "registered_line": 5}]
        assert [(r.device, r.kernel) for r in ix.stub("gemm_stub").registrations] == [
            ("CPU", "cpublas::cpublas_gemm_impl")]


def test_ufunc_codegen_registrations_count(ix):
    # sample native_functions.yaml:64 is mul.out's `ufunc_inner_loop:`; torchgen writes
    # REGISTER_DISPATCH(mul_stub, &mul_kernel) into UfuncCPUKernel_mul.cpp and UfuncCUDA_mul.cu
    assert ix.rows("SELECT stub, device, kernel, macro, from_macro, file, line FROM dispatch_registrations "
                   "WHERE from_macro = 'ufunc_inner_loop' ORDER BY device") == [
        {"stub": "mul_stub", "device": device, "kernel": "mul_kernel", "macro": "REGISTER_DISPATCH",
         "from_macro": "ufunc_inner_loop", "file": "aten/src/ATen/native/native_functions.yaml", "line": 64}
        for device in ("CPU", "CUDA")]


def test_2_4_stub_names_agree_and_add_stub_is_registered(real_index):
    # cpu/BlasKernel.cpp:493 `REGISTER_DISPATCH(cpublas::gemm_stub, &cpublas::cpublas_gemm_impl);`
    assert real_index.rows("SELECT k.stub, k.device, k.registered_in, k.registered_line FROM stub_kernels k JOIN "
                           "dispatch_stubs s ON s.stub = k.stub AND s.action = 'declare' WHERE k.stub = 'gemm_stub'") \
        == [{"stub": "gemm_stub", "device": "CPU", "registered_in": "aten/src/ATen/native/cpu/BlasKernel.cpp",
             "registered_line": 493}]
    assert real_index.rows("SELECT count(*) AS n FROM dispatch_registrations WHERE stub LIKE '%::%'") == [{"n": 0}]
    # native_functions.yaml:574 is add.out's `ufunc_inner_loop:` (the one such entry of 2.4)
    assert [(r["device"], r["kernel"], r["line"]) for r in real_index.rows(
        "SELECT device, kernel, line FROM dispatch_registrations WHERE stub = 'add_stub' ORDER BY device")] == [
        ("CPU", "add_kernel", 574), ("CUDA", "add_kernel", 574)]
    # sub_stub is declared (BinaryOps.h:59) and defined (BinaryOps.cpp:379) but nothing registers it: sub runs
    # add_stub with -alpha, and torchgen writes no ufunc code for sub
    assert real_index.rows("SELECT count(*) AS n FROM dispatch_registrations WHERE stub = 'sub_stub'") == [{"n": 0}]
