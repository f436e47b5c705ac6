"""The link step (opindex/indexer/link.py): exact links on the sample, and SQL and trace agreeing on the sample and
on a real tree (both read the same link tables)."""
from __future__ import annotations

import random

import pytest

from agreement import disagreements
from conftest import SAMPLE_ENTRIES


def test_op_kernel_link_prefers_the_structured_impl(ix):
    # argmax_out names both TORCH_IMPL_FUNC(argmax_out) and a plain overload: the structured entry denotes the first
    rows = ix.rows("SELECT dispatch_key, definition, def_file, def_line, chosen FROM op_kernel_links k "
                   "JOIN native_functions n ON n.id = k.native_function_id WHERE n.full_name = 'argmax.out' "
                   "ORDER BY dispatch_key, rank")
    chosen = [(r["dispatch_key"], r["definition"], r["def_file"], r["def_line"]) for r in rows if r["chosen"]]
    assert chosen == [("CPU", "at::native::structured_argmax_out", "aten/src/ATen/native/ReduceOps.cpp", 14),
                      ("CUDA", "at::native::structured_argmax_out", "aten/src/ATen/native/ReduceOps.cpp", 14)]
    assert ix.rows("SELECT definition, line FROM op_kernels WHERE function = 'argmax.out'") == [
        {"definition": "at::native::structured_argmax_out", "line": 14}] * 2


def test_stub_argument_is_read_from_the_call(ix):
    assert ix.rows("SELECT file, line, helper, parameter, stub FROM stub_arguments") == [
        {"file": "aten/src/ATen/native/ReduceOps.cpp", "line": 15, "helper": "at::native::argmax_impl",
         "parameter": "stub", "stub": "argmax_stub"}]


def test_call_links_keep_every_overload_and_respect_the_qualifier(ix):
    rows = ix.rows("SELECT file, qualifier, definition, def_line, overloads FROM call_links WHERE callee = 'gemm' "
                   "ORDER BY file, def_line")
    # both gemm<float> and gemm<double> specialisations: the call cannot be told apart, so both, marked
    assert [(r["file"], r["qualifier"], r["def_line"], r["overloads"]) for r in rows] == [
        ("aten/src/ATen/native/cuda/Blas.cpp", "at::cuda::blas", 7, 2),
        ("aten/src/ATen/native/cuda/Blas.cpp", "at::cuda::blas", 15, 2)]
    # cpublas::gemm in LinearAlgebra.cpp has no definition in the sample: it is not linked to at::cuda::blas::gemm
    assert not ix.rows("SELECT * FROM call_links WHERE qualifier = 'cpublas'")


def test_device_code_links_to_device_functions_and_host_code_does_not(ix, sample_copy, tmp_path):
    # SoftMax.cu:13, in the __global__ cunn_SoftMaxForward: ilpReduce<MaxFloat, ...>(input, classes) -> the
    # __device__ ilpReduce (:63)
    assert ix.rows("SELECT file, callee, definition, def_line FROM call_links WHERE callee = 'ilpReduce'") == [
        {"file": "aten/src/ATen/native/cuda/SoftMax.cu", "callee": "ilpReduce",
         "definition": "at::native::ilpReduce", "def_line": 63}]
    # a host function of that file calling the name reaches no __device__ function: its call has no link
    from opindex.api import Index, build
    cu = sample_copy / "aten/src/ATen/native/cuda/SoftMax.cu"
    cu.write_text(cu.read_text() + "\nnamespace at::native {\nvoid host_side(const float* x) { ilpReduce(x, 4); }\n}\n")
    build(str(sample_copy), tmp_path / "i.sqlite", jobs=1)
    with Index(tmp_path / "i.sqlite") as other:
        assert {r["caller"] for r in other.rows("SELECT caller FROM calls WHERE callee = 'ilpReduce'")} == {
            "at::native::cunn_SoftMaxForward", "at::native::host_side"}
        assert len(other.rows("SELECT * FROM call_links WHERE callee = 'ilpReduce'")) == 1  # the kernel's call
        t = other.trace("F.softmax", device="cuda")
        calls = [h for h in t.hops if h.kind == "device_call"]
        assert [(h.name, h.line, h.called_at) for h in calls] == [
            ("__device__ at::native::ilpReduce", 63, "aten/src/ATen/native/cuda/SoftMax.cu:13")]
        assert t.hops[calls[0].parent].name == "__global__ at::native::cunn_SoftMaxForward"
        assert calls[0] not in t.ends() and t.main_chain()[-1].name == "__global__ at::native::cunn_SoftMaxForward"


def test_registration_and_launch_links(ix):
    regs = ix.rows("SELECT device, definition, file, line FROM stub_kernels WHERE stub = 'add_stub' ORDER BY device")
    assert regs == [
        {"device": "CPU", "definition": "at::native::add_kernel",
         "file": "aten/src/ATen/native/cpu/BinaryOpsKernel.cpp", "line": 8},
        {"device": "CUDA", "definition": "at::native::add_kernel_cuda",
         "file": "aten/src/ATen/native/cuda/BinaryAddKernel.cu", "line": 16}]
    assert ix.rows("SELECT kernel, definition, defined_line, file, line FROM kernel_launch_sites "
                   "WHERE kernel = 'cunn_SoftMaxForward'") == [
        {"kernel": "cunn_SoftMaxForward", "definition": "at::native::cunn_SoftMaxForward", "defined_line": 9,
         "file": "aten/src/ATen/native/cuda/SoftMax.cu", "line": 38}]


def test_sql_and_trace_agree_on_every_sample_op(ix):
    names = [r["full_name"] for r in ix.rows("SELECT full_name FROM native_functions ORDER BY id")]
    assert len(names) == SAMPLE_ENTRIES
    assert disagreements(ix, names) == []


@pytest.mark.slow  # 18 s on 2 cores: 200 traces
def test_sql_and_trace_agree_on_200_real_ops(real_index):
    names = [r["full_name"] for r in real_index.rows("SELECT full_name FROM native_functions ORDER BY id")]
    sample = random.Random(12).sample(names, 200)
    assert disagreements(real_index, sample) == []


def test_incremental_links_equal_a_cold_build(sample_copy, tmp_path):
    """Only C++ changed: call_links and receiver_types are redone for the touched sites, the rest kept; the result
    is the cold build's (a removed specialisation drops out of another file's call links)."""
    import sqlite3

    from opindex.api import build
    from opindex.sqlite_ddl import LINK_TABLES
    db = tmp_path / "inc.sqlite"
    build(str(sample_copy), db, jobs=1)
    blas = sample_copy / "aten/src/ATen/cuda/CUDABlas.cpp"
    text = blas.read_text()
    start = text.index("template <>\nvoid gemm<double>")
    end = text.index("}\n", text.index("cublasDgemm", start)) + 2
    blas.write_text(text[:start] + text[end:])  # gemm<double> is gone
    caller = sample_copy / "aten/src/ATen/native/cuda/Blas.cpp"
    caller.write_text(caller.read_text() + "\nnamespace at::native {\nvoid extra_caller() {\n"
                      "  at::cuda::blas::gemm<float>('n', 'n', 1, 1, 1, 1.f, nullptr, 1, nullptr, 1, 0.f, nullptr, 1);"
                      "\n}\n}\n")
    report = build(str(sample_copy), db, jobs=1)
    assert report.parsed == 2
    cold = tmp_path / "cold.sqlite"
    build(str(sample_copy), cold, jobs=1)

    def links(path):
        con = sqlite3.connect(path)
        # ids differ between the two builds: compare without them
        out = {t: sorted(tuple(v for k, v in zip([d[0] for d in con.execute(f"SELECT * FROM {t}").description], r)
                               if k not in ("id", "symbol_id", "dispatch_id", "registration_id", "launch_id",
                                            "native_function_id", "function_id"))
                         for r in con.execute(f"SELECT * FROM {t}")) for t in LINK_TABLES}
        con.close()
        return out

    inc, fresh = links(db), links(cold)
    assert inc == fresh
    # (checkout_id, file, qualifier, callee, definition, def_file, def_line, overloads, condition)
    gemm = [r for r in fresh["call_links"] if r[3] == "gemm"]
    assert {(r[1], r[6], r[7]) for r in gemm} == {("aten/src/ATen/native/cuda/Blas.cpp", 7, 1)}  # gemm<float> only


def test_legacy_th_names_resolve_to_their_generic_definition():
    """THCudaDoubleTensor_sort is THC/generic's THCTensor_(sort); THNN_CudaSpatialConvolutionMM_updateOutput is
    THNN_(SpatialConvolutionMM_updateOutput): read off the index's own TH_CONCAT #defines, CUDA types to CReal."""
    import sqlite3

    from opindex.indexer.definitions import Generic
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE macros (name TEXT, parameters TEXT, body TEXT)")
    con.executemany("INSERT INTO macros VALUES (?, ?, ?)", [
        ("THCTensor_", "(NAME)", "TH_CONCAT_4(TH,CReal,Tensor_,NAME)"),
        ("THTensor_", "(NAME)", "TH_CONCAT_4(TH,Real,Tensor_,NAME)"),
        ("THNN_", "(NAME)", "TH_CONCAT_3(THNN_, CReal, NAME)"),
        ("THCTypeIdx_", "(T)", "TH_CONCAT_2(THCTypeIdx,T)")])  # no type part: not a generic form
    g = Generic(con)
    assert g.names("THCudaDoubleTensor_sort") == ["THCTensor_sort", "THTensor_sort"]
    assert g.names("THFloatTensor_sort") == ["THTensor_sort", "THCTensor_sort"]
    assert g.names("THNN_CudaSpatialConvolutionMM_updateOutput")[0] == "THNN_SpatialConvolutionMM_updateOutput"
    assert g.names("cudaMemcpy") == []


def test_a_functor_passed_to_a_function_that_calls_its_method(sample_copy, tmp_path):
    """sortCommon(SmallBitonicSort{}, ...) with `sorter.template sort<A>(...)` in sortCommon: functor_links ties the
    call's parameter to SmallBitonicSort::sort, and device_reach counts what it launches for sortCommon."""
    import sqlite3

    from opindex.api import build
    (sample_copy / "aten/src/ATen/native/cuda/FunctorSort.cu").write_text(
        "namespace at::native {\n"
        "__global__ void bitonic_kernel(int n) {}\n"
        "struct SmallBitonicSort {\n"
        "  template <int A> void sort(int n) { bitonic_kernel<<<1, 32>>>(n); }\n"
        "};\n"
        "template <typename Sorter> void sortCommon(Sorter sorter, int n) {\n"
        "  sorter.template sort<2>(n);\n"
        "}\n"
        "void sortKeyValueInplace(int n) {\n"
        "  sortCommon(SmallBitonicSort{}, n);\n"
        "}\n"
        "}\n")
    db = tmp_path / "f.sqlite"
    build(str(sample_copy), db, jobs=1)
    con = sqlite3.connect(db)
    assert con.execute("SELECT s.qualified_name, f.parameter, f.method, f.functor, f.line, f.definition, f.def_line "
                       "FROM functor_links f JOIN symbols s ON s.id = f.function_id").fetchall() == [
        ("at::native::sortCommon", "sorter", "sort", "SmallBitonicSort", 10, "at::native::SmallBitonicSort::sort", 4)]
    reach = dict(con.execute("SELECT s.name, r.distance FROM device_reach r JOIN symbols s ON s.id = r.symbol_id "
                             "WHERE s.file LIKE '%FunctorSort.cu'"))
    assert reach == {"sort": 0, "sortCommon": 1, "sortKeyValueInplace": 2}


def test_a_launch_links_the_kernel_of_its_own_namespace(sample_copy, tmp_path):
    """Two __global__ k in one file: at::native::k and ::k. A launch from at::native::f runs at::native::k; one from
    a global-namespace function runs ::k (source order would pick the first for both)."""
    import sqlite3

    from opindex.api import build
    (sample_copy / "aten/src/ATen/native/cuda/TwoKernels.cu").write_text(
        "namespace at { namespace native {\n"
        "__global__ void k(int n) {}\n"
        "void f(int n) { k<<<1, 32>>>(n); }\n"
        "}}\n"
        "__global__ void k(int n) {}\n"
        "void g(int n) { k<<<1, 32>>>(n); }\n")
    db = tmp_path / "k.sqlite"
    build(str(sample_copy), db, jobs=1)
    con = sqlite3.connect(db)
    assert con.execute("SELECT l.caller, k.definition, k.def_line FROM launch_links k JOIN kernel_launches l ON "
                       "l.id = k.launch_id WHERE l.file LIKE '%TwoKernels.cu' ORDER BY l.line").fetchall() == [
        ("at::native::f", "at::native::k", 2), ("g", "k", 5)]


def test_a_header_call_reaches_the_definitions_of_the_files_that_include_it(sample_copy, tmp_path):
    """A header that calls a name it does not define is read inside the files that #include it (this fork's
    maca_kernels/CUDALoops_maca_arity3.cuh calls launch_vectorized_kernel, defined by CUDALoops.cuh and by
    CUDALoops_copy.cuh, which both include it): the call reaches the definitions of those files, both marked, not the
    one nearest by folder (inner/launch.cuh, which does not include it)."""
    import sqlite3

    from opindex.api import build
    cuda = sample_copy / "aten/src/ATen/native/cuda"
    (cuda / "inner").mkdir()
    (cuda / "inner/arity.cuh").write_text(
        "namespace at { namespace native {\n"
        "template <typename F> void impl(F f) { launch(f); }\n"
        "}}\n")
    (cuda / "inner/launch.cuh").write_text(  # same folder, never includes arity.cuh
        "namespace at { namespace native {\n"
        "template <typename F> void launch(F f) { f(); }\n"
        "}}\n")
    for name in ("Outer.cuh", "OuterCopy.cuh"):
        (cuda / name).write_text(
            "namespace at { namespace native {\n"
            "template <typename F> void launch(F f) { f(); }\n"
            "}}\n"
            + ('#include "inner/arity.cuh"\n' if name == "Outer.cuh" else
               "#include <ATen/native/cuda/inner/arity.cuh>\n"))
    db = tmp_path / "inc.sqlite"
    build(str(sample_copy), db, jobs=1)
    con = sqlite3.connect(db)
    assert con.execute("SELECT def_file, def_line, overloads FROM call_links WHERE file LIKE '%inner/arity.cuh' AND "
                       "callee = 'launch' ORDER BY def_file").fetchall() == [
        ("aten/src/ATen/native/cuda/Outer.cuh", 2, 2), ("aten/src/ATen/native/cuda/OuterCopy.cuh", 2, 2)]


def test_a_call_written_with_template_arguments_reaches_the_specialization_they_name(sample_copy, tmp_path):
    """`template <> void gemm<float>(...) { gemm_internal<float>(...); }` (CUDABlas.cpp in 2.4): the call reaches the
    gemm_internal<float> specialization, not its siblings; a call naming none of them (`gemm_internal<T>`, inside
    the primary template) reaches every one, as an untemplated call does. SQL (call_targets) and trace agree."""
    import sqlite3

    from opindex.api import Index, build
    (sample_copy / "aten/src/ATen/cuda/Spec.cpp").write_text(
        "namespace at { namespace cuda {\n"                                       # 1
        "template <typename T> void inner(T x) { bad(x); }\n"                     # 2
        "template <> void inner<float>(float x) { cublasSgemm(x); }\n"            # 3
        "template <> void inner<c10::complex<double> >(double x) { cublasZgemm(x); }\n"  # 4
        "template <typename T> void outer(T x) { inner<T>(x); }\n"                # 5
        "template <> void outer<float>(float x) { inner<float>(x); }\n"           # 6
        "template <> void outer<double>(double x) { inner<c10::complex<double>>(x); inner(x); }\n"  # 7
        "}}\n")
    db = tmp_path / "spec.sqlite"
    build(str(sample_copy), db, jobs=1)
    con = sqlite3.connect(db)
    got = con.execute("SELECT line, callee, template_args FROM calls WHERE file LIKE '%/Spec.cpp' AND callee = "
                      "'inner' ORDER BY line, id").fetchall()
    assert got == [(5, "inner", "<T>"), (6, "inner", "<float>"), (7, "inner", "<c10::complex<double>>"),
                   (7, "inner", None)]
    assert con.execute("SELECT line, template_args FROM symbols WHERE file LIKE '%/Spec.cpp' AND name = 'inner' "
                       "ORDER BY line").fetchall() == [(2, None), (3, "<float>"), (4, "<c10::complex<double>>")]
    view = con.execute("SELECT line, def_line, overloads FROM call_targets WHERE file LIKE '%/Spec.cpp' AND "
                       "callee = 'inner' ORDER BY line, def_line").fetchall()
    assert view == [(5, 2, 3), (5, 3, 3), (5, 4, 3), (6, 3, 1), (7, 2, 3), (7, 3, 3), (7, 4, 1), (7, 4, 3)]
    with Index(db) as ix:
        t = ix.trace("at::cuda::outer")
    below = {h.parent: [] for h in t.hops}
    for h in t.hops:
        below.setdefault(h.parent, []).append(h)
    by_line = {h.line: h for h in t.hops if h.file and h.file.endswith("Spec.cpp") and h.name == "at::cuda::outer"}
    assert sorted(by_line) == [5, 6, 7]
    assert [(h.name, h.line) for h in below[by_line[6].id]] == [("at::cuda::inner", 3)]


def test_each_gemm_specialization_reaches_its_own_internal_gemm(real_index):
    """CUDABlas.cpp (2.4) writes gemm<T> for six T, each calling gemm_internal<T>(CUDABLAS_GEMM_ARGS(T)), which calls
    gemm_internal_cublas<T> or gemm_internal_cublaslt<T>. gemm<float> (:1125) calls gemm_internal<float> at :1131
    (defined :1008), which calls gemm_internal_cublas<float> at :1014 (defined :808, cublasSgemm at :816) and the
    primary template gemm_internal_cublaslt (:784) at :1011; gemm<double> (:1114) calls gemm_internal<double> (:992)
    at :1120. Before, each call reached all six specializations."""
    rows = real_index.rows(
        "SELECT line, def_line, overloads FROM call_targets WHERE file = 'aten/src/ATen/cuda/CUDABlas.cpp' AND line "
        "IN (1011, 1014, 1120, 1131) ORDER BY line, def_line")
    assert [tuple(r.values()) for r in rows] == [(1011, 784, 1), (1014, 808, 1), (1120, 992, 1), (1131, 1008, 1)]
    t = real_index.trace("mm")
    gemm_float = next(h for h in t.hops if h.file == "aten/src/ATen/cuda/CUDABlas.cpp" and h.line == 1125)
    below = [h for h in t.hops if h.parent == gemm_float.id]
    assert [(h.name, h.line) for h in below] == [("at::cuda::blas::gemm_internal", 1008)]
    internal = sorted((h.name, h.line) for h in t.hops if h.parent == below[0].id)
    assert internal == [("at::cuda::blas::gemm_internal_cublas", 808), ("at::cuda::blas::gemm_internal_cublaslt", 784)]
    cublas = next(h for h in t.hops if h.parent == below[0].id and h.line == 808)
    assert ("cublasSgemm", 816) in [(h.name, h.line) for h in t.hops if h.parent == cublas.id]


def test_a_function_passed_for_a_parameter_the_callee_calls_is_linked(sample_copy, tmp_path):
    """Conv_v7.cpp (2.4): raw_cudnn_convolution_forward_out_v7 calls split_batch_dim_to_32bit_out(...,
    raw_cudnn_convolution_forward_out_32bit), whose body calls its parameter `func_32bit(...)`. The passed function
    is linked (functor_links, method ''), device_reach counts it, and a trace through the forward caller shows the
    forward worker only. A name that is the passing function's own parameter is not a function's name."""
    import sqlite3

    from opindex.api import Index, build
    (sample_copy / "aten/src/ATen/native/cudnn/Split.cpp").write_text(
        "namespace at { namespace native {\n"                                                # 1
        "void worker(const Tensor& x) { cudnnConvolutionForward(x); }\n"                      # 2
        "void back_worker(const Tensor& x) { cudnnConvolutionBackwardData(x); }\n"            # 3
        "template <typename func_t>\n"                                                       # 4
        "static void split(const Tensor& x, func_t func_32bit) { func_32bit(x); }\n"          # 5
        "void fwd(const Tensor& x) {\n"                                                      # 6
        "  split(x,\n"                                                                       # 7
        "        worker);\n"                                                                  # 8
        "}\n"                                                                                 # 9
        "void bwd(const Tensor& x) { split(x, back_worker); }\n"                              # 10
        "template <typename func_t>\n"                                                       # 11
        "void passes_on(const Tensor& x, func_t worker) { split(x, worker); }\n"             # 12
        "}}\n")
    db = tmp_path / "split.sqlite"
    build(str(sample_copy), db, jobs=1)
    con = sqlite3.connect(db)
    assert con.execute("SELECT parameter, method, functor, line, definition, def_line FROM functor_links WHERE file "
                       "LIKE '%/Split.cpp' ORDER BY line").fetchall() == [
        ("func_32bit", "", "worker", 7, "at::native::worker", 2),
        ("func_32bit", "", "back_worker", 10, "at::native::back_worker", 3)]
    assert con.execute("SELECT s.name, r.distance FROM device_reach r JOIN symbols s ON s.id = r.symbol_id WHERE "
                       "s.file LIKE '%/Split.cpp' ORDER BY s.line").fetchall() == [
        ("worker", 0), ("back_worker", 0), ("split", 1), ("fwd", 2), ("bwd", 2), ("passes_on", 2)]
    with Index(db) as ix:
        t = ix.trace("at::native::fwd")
    split = next(h for h in t.hops if h.name == "at::native::split")
    assert [(h.name, h.line) for h in t.hops if h.parent == split.id] == [("at::native::worker", 2)]
    assert "[func_32bit(...): worker passed at aten/src/ATen/native/cudnn/Split.cpp:7]" in \
        next(h for h in t.hops if h.parent == split.id).detail


def test_conv2d_reaches_the_cudnn_v7_worker_through_the_function_it_passes(real_index):
    """Conv_v8.cpp:1172 raw_cudnn_convolution_forward_out calls raw_cudnn_convolution_forward_out_v7 (Conv_v7.cpp:780)
    when v8 is off; it calls split_batch_dim_to_32bit_out (:606) at :791 passing
    raw_cudnn_convolution_forward_out_32bit (:697), which :625 calls as func_32bit; that worker calls
    cudnnConvolutionForward at :759. Only the forward worker is shown under the forward path."""
    t = real_index.trace("F.conv2d")
    v7 = next(h for h in t.hops if h.file == "aten/src/ATen/native/cudnn/Conv_v7.cpp" and h.line == 780)
    [split] = [h for h in t.hops if h.parent == v7.id]
    assert (split.name, split.line) == ("at::native::split_batch_dim_to_32bit_out", 606)
    [worker] = [h for h in t.hops if h.parent == split.id]
    assert (worker.name, worker.line) == ("at::native::raw_cudnn_convolution_forward_out_32bit", 697)
    assert ("cudnnConvolutionForward", 759) in [(h.name, h.line) for h in t.hops if h.parent == worker.id]


def test_a_feature_off_side_is_the_stand_in_however_its_condition_is_written():
    """MHA.cpp (2.4) defines run_cudnn_SDP_fprop twice: under `#if defined(USE_ROCM) || !AT_CUDNN_ENABLED() ||
    (defined(CUDNN_VERSION) && CUDNN_VERSION < 8900)` a stand-in that raises (:11), under its `#else` the real one
    (:512). A disjunction with a `!X` term holds when the feature is off; its #else is the feature-on side."""
    from opindex.indexer.definitions import _negated
    off = "defined(USE_ROCM) || !AT_CUDNN_ENABLED() || (defined(CUDNN_VERSION) && CUDNN_VERSION < 8900)"
    assert [_negated(c) for c in ("!AT_CUDNN_ENABLED()", "not (defined(USE_MACA))", off, f"not ({off})",
                                  "not (CUDA_VERSION >= 11000)", "defined(USE_ROCM)", "a || (b || !c)", None)] == [
        True, True, True, False, False, False, False, False]


def test_the_cudnn_attention_kernel_calls_the_real_mha(real_index):
    """attention.cu:768 `run_cudnn_SDP_fprop(...)` may reach MHA.cpp:11 (a stand-in that raises, under `#if
    defined(USE_ROCM) || !AT_CUDNN_ENABLED() || ...`) or :512 (its #else, cuDNN on): both are linked with their
    conditions, and a current CUDA build (cuDNN on) walks :512 only; likewise run_cudnn_SDP_bprop, :32 and :597."""
    off = "defined(USE_ROCM) || !AT_CUDNN_ENABLED() || (defined(CUDNN_VERSION) && CUDNN_VERSION < 8900)"
    rows = real_index.rows(
        "SELECT DISTINCT callee, def_line, condition FROM call_targets WHERE callee IN ('run_cudnn_SDP_fprop', "
        "'run_cudnn_SDP_bprop') ORDER BY callee, def_line")
    assert [tuple(r.values()) for r in rows] == [
        ("run_cudnn_SDP_bprop", 32, off), ("run_cudnn_SDP_bprop", 597, f"not ({off})"),
        ("run_cudnn_SDP_fprop", 11, off), ("run_cudnn_SDP_fprop", 512, f"not ({off})")]
    t = real_index.trace("F.scaled_dot_product_attention")
    assert [h.line for h in t.hops if h.name == "at::native::run_cudnn_SDP_fprop"] == [512]


def test_a_call_through_a_dispatch_key_namespace_is_an_op_call(sample_copy, tmp_path):
    """`at::cuda::sort(self, ...)` (TensorTopK.cpp:29 in 2.4) is torchgen's per-key API: the op's CUDA kernel,
    called directly. device_reach counts it as an op call, and the trace follows it into the op."""
    import sqlite3

    from opindex.api import Index, build
    (sample_copy / "aten/src/ATen/native/cuda/Direct.cpp").write_text(
        "namespace at { namespace native {\n"
        "void direct(const Tensor& x) { at::cuda::relu(x); }\n"
        "void not_an_op(const Tensor& x) { at::cuda::no_such_op(x); }\n"
        "}}\n")
    db = tmp_path / "direct.sqlite"
    build(str(sample_copy), db, jobs=1)
    con = sqlite3.connect(db)
    assert con.execute("SELECT s.name, r.distance, r.reaches FROM symbols s LEFT JOIN device_reach r ON "
                       "r.symbol_id = s.id WHERE s.file LIKE '%/Direct.cpp' ORDER BY s.line").fetchall() == [
        ("direct", 0, "op"), ("not_an_op", None, None)]
    with Index(db) as ix:
        t = ix.trace("at::native::direct")
    call = next(h for h in t.hops if h.name == "at::cuda::relu")
    assert (call.kind, call.line) == ("calls_op", 2)
    assert [h.name for h in t.hops if h.parent == call.id][:1] == ["aten::relu"]


def test_topk_s_sort_fallback_reaches_sort_through_at_cuda(real_index):
    """TensorTopK.cpp:57 `if (should_use_sort(self, dim))` -> topk_out_with_sort (:23), whose
    `at::cuda::sort(self, /* stable= */false, dim, largest)` at :29 calls sort's CUDA kernel: its four arguments are
    those of sort.stable (native_functions.yaml:10019; aten::sort at :10012 takes three), which the trace follows."""
    t = real_index.trace("torch.topk")
    fallback = next(h for h in t.hops if h.name == "at::native::topk_out_with_sort")
    assert (fallback.file, fallback.line) == ("aten/src/ATen/native/cuda/TensorTopK.cpp", 23)
    call = next(h for h in t.hops if h.parent == fallback.id and h.name == "at::cuda::sort")
    assert (call.kind, call.line) == ("calls_op", 29)
    below = [(h.name, h.line) for h in t.hops if h.parent == call.id]
    assert ("aten::sort.stable", 10019) in below and ("aten::sort", 10012) not in below


def test_a_maca_header_call_reaches_the_launcher_of_its_includers(real_index):
    """CUDALoops_maca_arity3.cuh:642 `launch_vectorized_kernel(numel, f, data)`: CUDALoops.cuh defines it at :174 (its
    #ifdef USE_MACA branch) and :247 (its #else: the stock launcher, which `-U USE_MACA` walks) and
    CUDALoops_copy.cuh at :162; both include the header (CUDALoops.cuh:446, CUDALoops_copy.cuh:4744)."""
    rows = real_index.rows(
        "SELECT def_file, def_line, overloads, condition FROM call_links WHERE file = "
        "'aten/src/ATen/native/cuda/maca_kernels/CUDALoops_maca_arity3.cuh' AND callee = 'launch_vectorized_kernel' "
        "ORDER BY def_file, def_line")
    assert [tuple(r.values()) for r in rows] == [
        ("aten/src/ATen/native/cuda/CUDALoops.cuh", 174, 3, "defined(USE_MACA)"),
        ("aten/src/ATen/native/cuda/CUDALoops.cuh", 247, 3, "not (defined(USE_MACA))"),
        ("aten/src/ATen/native/cuda/maca_kernels/CUDALoops_copy.cuh", 162, 3, None)]


def test_the_overloads_a_dispatch_row_denotes_follow_the_schema():
    from opindex.indexer.link import by_parameters

    def fn(sig):  # a Symbols row: id, name, qualified_name, kind, file, line, scope, layer, signature
        return (1, "fill_", "at::native::fill_", "function", "aten/src/ATen/native/Fill.cpp", 47, "at::native",
                "cpp", sig)
    scalar, tensor = fn("(Tensor& self, const Scalar& value)"), fn("(Tensor& self, const Tensor& value)")
    assert by_parameters([scalar, tensor], "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)") == [scalar]
    assert by_parameters([scalar, tensor], "fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)") == [tensor]
    # a number is not a Tensor (linalg_pinv(Tensor, float rcond) vs linalg_pinv(Tensor, Tensor rcond))
    num, ten = fn("(const Tensor& input, double rcond, bool hermitian)"), \
        fn("(const Tensor& input, const Tensor& rcond, bool hermitian)")
    assert by_parameters([num, ten], "linalg_pinv.rcond_tensor(Tensor self, Tensor rcond, bool hermitian=False) "
                                     "-> Tensor") == [ten]
    # the arity tells `where(condition)` from `where(condition, self, other)`
    one, three = fn("(const Tensor& condition)"), fn("(const Tensor& condition, const Tensor& self, const Tensor& o)")
    assert by_parameters([one, three], "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor") == [three]
    # nothing fits (an out first, as older code writes it): all of them stay
    a, b = fn("(Tensor& out, const Tensor& self)"), fn("(Tensor& out, const Scalar& self)")
    assert by_parameters([a, b], "f.out(Scalar self, *, Tensor(a!) out) -> Tensor(a!)") == [a, b]


def _template_parameters(text: str, line: int) -> list[str]:
    """symbols.template_parameters, as extraction reads them, of the definition on `line` of a C++ text."""
    from opindex.extract.source_text import template_parameters
    lines = text.splitlines()
    got = lines[max(1, line - 11) - 1:max(1, line - 11) - 1 + min(line, 12)]
    return template_parameters(got)


def test_template_parameters_are_read_from_the_outermost_template_head():
    text = ("// =====\n\ntemplate<template<typename> class exponential_kernel, typename RNG>\n"
            "Tensor& exponential_impl_(Tensor& self) {\n  exponential_kernel<RNG>()(iter);\n}\n"
            "template <typename T, int N = 4, typename F = std::plus<T>>\nvoid f(T x) {}\nvoid g() {}\n")
    assert _template_parameters(text, 4) == ["exponential_kernel", "RNG"]
    assert _template_parameters(text, 8) == ["T", "N", "F"]
    assert _template_parameters(text, 2) == []
    assert _template_parameters(text, 9) == []  # g follows f's template head, and is not a template


def test_template_parameters_are_a_fact_of_the_template():
    import json

    from opindex.extract import extract
    facts = extract("D.h", b"template<template<typename> class exponential_kernel, typename RNG>\n"
                           b"Tensor& exponential_impl_(Tensor& self) {\n  return self;\n}\nvoid g() {}\n", "cpp", None)
    got = {s.name: s.template_parameters for s in facts.records("symbols")}
    assert json.loads(got["exponential_impl_"]) == ["exponential_kernel", "RNG"] and got["g"] is None


def test_legacy_declarations_are_read_from_declarations_cwrap_and_nn_yaml(tmp_path):
    from opindex.indexer.legacy import declarations
    aten = tmp_path / "aten/src/ATen"
    aten.mkdir(parents=True)
    (aten / "Declarations.cwrap").write_text(
        "[[\n  name: _th_sort\n  cname: sort\n  variants:\n    - function\n]]\n"
        "[[\n  name: _th_mm\n  variants: function\n  options:\n    - cname: addmm\n      arguments:\n"
        "        - THTensor* self\n]]\n[[\n  name: [not, a, name]\n]]\n")
    (aten / "nn.yaml").write_text("# comment\n- name: _thnn_nll_loss(Tensor self, LongTensor target)\n"
                                  "  cname: ClassNLLCriterion\n  buffers: [total_weight]\n")
    assert declarations(str(tmp_path)) == {
        "_th_sort": ("aten/src/ATen/Declarations.cwrap", 2, ["sort"]),
        "_th_mm": ("aten/src/ATen/Declarations.cwrap", 8, ["addmm"]),
        "_thnn_nll_loss": ("aten/src/ATen/nn.yaml", 2, ["ClassNLLCriterion"])}


def test_a_template_template_parameter_with_defaults_over_many_lines_is_one_parameter():
    # 1.8 ReduceSumProdKernel.cu:57-64: reduce_dispatch's head takes eight lines
    text = ("// ok.\ntemplate <\n    template <\n        typename scalar_t,\n        typename acc_t = scalar_t,\n"
            "        typename out_t = scalar_t>\n    typename OpFunctor,\n    typename GeneralDispatcher>\n"
            "static void reduce_dispatch(TensorIterator& iter, GeneralDispatcher op) {\n"
            "  return OpFunctor<at::Half, float>{}(iter);\n}\n")
    assert _template_parameters(text, 9) == ["OpFunctor", "GeneralDispatcher"]


def test_incremental_device_reach_reads_the_links_a_cold_build_walks(sample_copy, tmp_path):
    """A bare call of an op's name in namespace at (`argmax(x)`: C++ finds at::argmax) that call_links also ties to a
    functor class of that name (`struct argmax` with a __device__ operator()) is an op call for device_reach: the
    class is not a helper the call runs. An incremental build reads call_links back and must walk the same links (it
    dropped these rows: the PyTorch 2.4 tree's ReduceUtils.h `_max` calls `maximum`, 8154 rows cold, 8102 after a
    rebuild)."""
    import sqlite3

    from opindex.api import build
    functors = sample_copy / "aten/src/ATen/native/cuda/ArgFunctors.cuh"
    functors.write_text("namespace at::native {\ntemplate <typename T> struct argmax {\n"
                        "  __device__ T operator()(T a, T b) const { return a > b ? a : b; }\n};\n"
                        "inline Tensor host_argmax(const Tensor& a) { return argmax(a); }\n}\n")
    db = tmp_path / "inc.sqlite"
    build(str(sample_copy), db, jobs=1)
    other = sample_copy / "aten/src/ATen/native/cuda/Blas.cpp"
    other.write_text(other.read_text() + "\n// touched\n")
    assert build(str(sample_copy), db, jobs=1).parsed == 1
    cold = tmp_path / "cold.sqlite"
    build(str(sample_copy), cold, jobs=1)

    def reach(path):
        con = sqlite3.connect(path)
        try:
            return sorted(con.execute("SELECT s.qualified_name, s.line, d.distance, d.reaches FROM device_reach d "
                                      "JOIN symbols s ON s.id = d.symbol_id WHERE s.file LIKE '%ArgFunctors.cuh'"))
        finally:
            con.close()

    # the class is device code itself (distance 0, `functor`); host_argmax calls the op argmax
    assert reach(cold) == [("at::native::argmax", 2, 0, "functor"), ("at::native::host_argmax", 5, 0, "op")]
    assert reach(db) == reach(cold)


def test_overloads_in_a_header_the_calling_file_includes_are_linked(sample_copy, tmp_path):
    """A bare call of a name with more than three definitions is a common name, left unlinked, unless they all sit
    in one header the calling file #includes itself (2.4's ReduceOps.cpp calling make_reduction, four overloads in
    ReduceOpsUtils.h); a file that does not include it still gets no link."""
    import sqlite3

    from opindex.api import build
    native = sample_copy / "aten/src/ATen/native"
    overloads = "".join(f"inline int64_t shape_util({', '.join(['int64_t'] * (i + 1))}) {{ return {i}; }}\n"
                        for i in range(2))
    # two in at::native (lines 2-3), two in at::meta (lines 6-7), as ReduceOpsUtils.h has them
    (native / "ShapeUtils.h").write_text(f"namespace at::native {{\n{overloads}}}\n"
                                         f"namespace at::meta {{\n{overloads}}}\n")
    (native / "UsesShape.cpp").write_text('#include <ATen/native/ShapeUtils.h>\nnamespace at::native {\n'
                                          'int64_t uses_shape(int64_t n) { return shape_util(n); }\n}\n')
    (native / "NoInclude.cpp").write_text('namespace at::native {\n'
                                          'int64_t no_include(int64_t n) { return shape_util(n); }\n}\n')
    build(str(sample_copy), tmp_path / "s.sqlite", jobs=1)
    con = sqlite3.connect(tmp_path / "s.sqlite")
    try:
        rows = con.execute("SELECT file, def_file, def_line, overloads FROM call_links WHERE callee = 'shape_util' "
                           "ORDER BY file, def_line").fetchall()
    finally:
        con.close()
    # the overloads of the first definition's name, at::native's (each call may reach either: both, marked 2)
    assert rows == [("aten/src/ATen/native/UsesShape.cpp", "aten/src/ATen/native/ShapeUtils.h", line, 2)
                    for line in (2, 3)]


def test_generated_launches_follow_an_edit_of_torchgen(sample_copy, tmp_path):
    # torchgen/dest/ufunc.py:8 writes `gpu_kernel(iter, CUDAFunctor_mul<scalar_t>())` into ufunc_mul_CUDA; the link
    # is read from torchgen's Python, so a rebuild where only that file changed must read it again
    from opindex.api import Index, build
    db = tmp_path / "i.sqlite"
    build(str(sample_copy), db, jobs=1)
    query = "SELECT function, file, line, launcher FROM generated_launches"
    with Index(db) as ix:
        assert ix.rows(query) == [{"function": "torchgen.dest.ufunc.compute_ufunc_cuda",
                                   "file": "torchgen/dest/ufunc.py", "line": 8, "launcher": "gpu_kernel"}]
    gen = sample_copy / "torchgen/dest/ufunc.py"
    gen.write_text(gen.read_text().replace("    # the CUDA kernel", "    # (two lines)\n    # the CUDA kernel"))
    report = build(str(sample_copy), db, jobs=1)
    assert report.reused > 0  # an incremental rebuild
    with Index(db) as ix:
        assert [r["line"] for r in ix.rows(query)] == [9]
        assert ix.rows("SELECT count(*) AS n FROM generated_launches g JOIN symbols s ON s.id = g.symbol_id "
                       "AND s.qualified_name = g.function")[0]["n"] == 1  # the def's id after the rebuild


def test_a_ufunc_op_runs_the_kernel_generated_for_the_device(ix):
    # mul.out has ufunc_inner_loop (Generic: mul) and no CUDA kernel in the source: torchgen writes ufunc_mul_CUDA,
    # which hands the functor to gpu_kernel (torchgen/dest/ufunc.py:8). That is the op's path on CUDA; the Generic
    # inner loop is the math that functor runs, a branch beside it
    t = ix.trace("torch.mul", device="cuda")
    chain = [(h.layer, h.name, h.file, h.line) for h in t.main_chain()]
    assert chain[2:] == [
        ("native", "aten::mul.out", "aten/src/ATen/native/native_functions.yaml", 61),
        ("dispatch", "CUDA: ufunc_mul_CUDA", "aten/src/ATen/native/native_functions.yaml", 61),
        ("codegen", "ufunc_mul_CUDA is generated by torchgen's ufunc codegen (torchgen/dest/ufunc.py) from the "
                    "ufunc_inner_loop entries above", None, None),
        ("codegen", "torchgen.dest.ufunc.compute_ufunc_cuda", "torchgen/dest/ufunc.py", 5),
        ("cuda", "gpu_kernel", "torchgen/dest/ufunc.py", 8)]
    loops = [(h.name, h.file, h.line) for h in t.hops if h.kind == "ufunc_inner_loop"]
    assert loops == [("Generic: at::native::ufunc::mul", "aten/src/ATen/native/ufunc/mul.h", 7),
                     ("ScalarOnly: at::native::ufunc::mul", "aten/src/ATen/native/ufunc/mul.h", 7)]


def test_the_link_step_opens_no_checkout_file(sample_copy, tmp_path, monkeypatch):
    """Links come from facts alone: with the checkout moved away and every open of a path under it refused, the link
    step derives the very rows the build derived (call arguments, #includes, template parameters, receiver types and
    torchgen's launcher calls are facts since schema 0008)."""
    import builtins
    import io
    import os
    import sqlite3

    from opindex.api import build
    from opindex.indexer import link
    from opindex.sqlite_ddl import LINK_TABLES
    db = tmp_path / "moved.sqlite"
    build(str(sample_copy), db, jobs=1)

    def rows(con):
        return {t: sorted(map(repr, con.execute(f"SELECT * FROM {t}"))) for t in LINK_TABLES}

    con = sqlite3.connect(db, isolation_level=None)
    built = rows(con)
    # the kinds the text once gave, as far as the sample has them
    assert built["stub_arguments"] and built["receiver_types"] and built["generated_launches"] and built["call_links"]
    root = str(sample_copy)
    os.rename(sample_copy, tmp_path / "elsewhere")
    opened = []
    real_open, real_io_open, real_os_open = builtins.open, io.open, os.open

    def refuse(real):
        def guarded(path, *args, **kwargs):
            if isinstance(path, (str, bytes, os.PathLike)) and os.fsdecode(path).startswith(root):
                opened.append(os.fsdecode(path))
                raise OSError(f"the link step opened {path}")
            return real(path, *args, **kwargs)
        return guarded

    monkeypatch.setattr(builtins, "open", refuse(real_open))
    monkeypatch.setattr(io, "open", refuse(real_io_open))
    monkeypatch.setattr(os, "open", refuse(real_os_open))
    con.execute("BEGIN")
    link.derive(con, root)
    con.execute("COMMIT")
    monkeypatch.undo()
    assert opened == []
    assert rows(con) == built
    con.close()


def test_an_op_method_on_a_tensor_local_reaches_device_code():
    """device_reach counts `result.normal_(0, 1, generator)` (PyTorch 2.4 TensorFactories.cpp:1042) as an op call:
    its receiver is a local made by `auto result = at::empty(size, options)` (calls.receiver_type), so randn's
    kernel leads on to normal_'s; a local of another make (`auto ctx = at::globalContext()`) is not a Tensor."""
    from opindex.indexer.callgraph import tensor_local
    made = {"empty", "normal_", "zeros"}
    assert tensor_local("auto = at::empty(size, options)", made)
    assert tensor_local("Tensor", made) and tensor_local("const at::Tensor", made)
    assert not tensor_local("auto = at::globalContext()", made)
    assert not tensor_local("std::vector<Tensor>", made) and not tensor_local("c10::List<at::Tensor>", made)
