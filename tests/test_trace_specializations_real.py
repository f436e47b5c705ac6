"""Template specializations and `#if`/`#else` twins on the main chain, on the PyTorch 2.4 tree (MetaX-MACA/mcPytorch):
the definition a call runs for the stated build and dtype (hops checked by reading the source, 2026-12-05)."""
from __future__ import annotations

REDUCE = "aten/src/ATen/native/cuda/ReduceSumProdKernel.cu"
REDUCE_CUH = "aten/src/ATen/native/cuda/Reduce.cuh"
SHAPE = "aten/src/ATen/native/cuda/Shape.cu"
SCATTER = "aten/src/ATen/native/cuda/ScatterGatherKernel.cu"
SCATTER_MACA = "aten/src/ATen/native/cuda/maca_kernels/ScatterGatherKernel_maca.cuh"


def _end(t):
    h = t.main_chain()[-1]
    return h.name, h.file, h.line


def _functor_hop(t):
    return next(h for h in t.main_chain() if h.name == "at::native::prod_functor::operator()")


def test_prod_of_float32_runs_the_primary_prod_functor_the_build_compiles(real_index):
    """prod_kernel_cuda's `prod_functor<scalar_t>{}(iter)` (ReduceSumProdKernel.cu:204) may reach the primary
    template's `#if AT_USE_JITERATOR() && !defined(_MSC_VER)` operator() (:88) and its `#else` twin (:98), and the
    operator()s of the explicit specializations prod_functor<bool> (:110) and prod_functor<c10::complex<at::Half>>
    (:124, :131). float32 has no specialization: the primary's. A stock build (AT_USE_JITERATOR() true,
    jit_macros.h:9) takes :88, jitted_gpu_reduce_kernel (:94, Reduce.cuh:1118), which launches the NVRTC kernel
    through launch_jitted_reduce_kernel (called at Reduce.cuh:1217); the fork's USE_MACA build (false, :7) :98,
    gpu_reduce_kernel -> reduce_kernel (Reduce.cuh:188)."""
    stock = real_index.trace("torch.prod", undefines=["USE_MACA"])
    assert (_functor_hop(stock).line, _functor_hop(stock).called_at) == (88, f"{REDUCE}:204")
    assert _end(stock) == ("launch_jitted_reduce_kernel", REDUCE_CUH, 1217)
    fork = real_index.trace("torch.prod")
    assert _functor_hop(fork).line == 98
    assert _end(fork) == ("__global__ at::native::reduce_kernel", REDUCE_CUH, 188)
    said = {h.line: sorted(c.text for c in h.conditions if c.assumed is False) for h in stock.hops
            if h.name == "at::native::prod_functor::operator()" and h.called_at == f"{REDUCE}:204"}
    assert said == {88: [], 98: ["not (AT_USE_JITERATOR() && !defined(_MSC_VER))"], 110: ["scalar_t is bool"],
                    124: ["scalar_t is complex32"],
                    131: ["not (AT_USE_JITERATOR() && !defined(_MSC_VER))", "scalar_t is complex32"]}


def test_prod_of_bool_runs_its_own_specialization(real_index):
    """The bool input of a stock build: prod_functor<bool>'s operator() (:110), not the primary template's (:88),
    which is marked as not taken."""
    t = real_index.trace("torch.prod", dtype="bool", undefines=["USE_MACA"])
    assert _functor_hop(t).line == 110
    primary = next(h for h in t.hops if h.name == "at::native::prod_functor::operator()" and h.line == 88
                   and h.called_at == f"{REDUCE}:204")
    assert [(c.text, c.assumed) for c in primary.conditions] == [("scalar_t is not bool", False)]


def test_prod_functor_specializations_keep_their_template_arguments(real_index):
    rows = real_index.rows(f"SELECT line, kind, template_args, template_parameters FROM symbols WHERE file = "
                           f"'{REDUCE}' AND name = 'prod_functor' ORDER BY line")
    assert [tuple(r.values()) for r in rows] == [(84, "struct", None, '["scalar_t", "acc_t", "out_t"]'),
                                                 (109, "struct", "<bool>", "[]"),
                                                 (120, "struct", "<c10::complex<at::Half>>", "[]")]
    linked = real_index.rows(f"SELECT def_line FROM functor_links WHERE file = '{REDUCE}' AND functor = "
                             f"'prod_functor' ORDER BY def_line")
    assert [r["def_line"] for r in linked] == [88, 98, 110, 124, 131]


def test_cat_on_a_stock_build_reaches_the_else_branch_of_its_brace_splitting_if(real_index):
    """structured_cat_out_cuda's `#ifdef USE_MACA` (Shape.cu:1736) and its `#else` (:1810) both open the block of an
    if/else-if chain the code after `#endif` closes; the `#else` side's `parallel_cat<scalar_t,
    CAT_ARRAY_BATCH_SIZE, 1>(...)` (:1825) is read in a reading of its own: a stock build's cat runs parallel_cat
    (:1569), which launches CatArrayBatchedCopy (:1662, defined :145)."""
    t = real_index.trace("torch.cat", undefines=["USE_MACA"])
    chain = [(h.name, h.line) for h in t.main_chain()]
    assert ("at::native::parallel_cat", 1569) in chain
    assert _end(t) == ("__global__ at::native::CatArrayBatchedCopy", SHAPE, 145)
    calls = real_index.rows(f"SELECT line, caller, template_args FROM calls WHERE file = '{SHAPE}' AND callee = "
                            f"'parallel_cat' ORDER BY line")
    assert [tuple(r.values()) for r in calls] == [
        (1825, "at::native::structured_cat_out_cuda", "<scalar_t,CAT_ARRAY_BATCH_SIZE,1>"),
        (1837, "at::native::structured_cat_out_cuda", "<scalar_t,CAT_ARRAY_BATCH_SIZE/2,CAT_ARRAY_BATCH_SIZE/2>")]


def test_scatter_add_is_not_the_assign_path(real_index):
    """scatter_add_cuda_kernel (ScatterGatherKernel.cu:690) passes reduce_add to cuda_scatter_gather_base_kernel's
    operator() (:360, `const ReduceAdd& f`), which passes f on to _cuda_scatter_gather_internal_kernel's operator()
    (:164, `const func_t& f`, called at :411). Its `typeid(f) == typeid(TensorAssign)` tests (:200, :225) are false:
    the fork's build may take _launch_scatter_kernel_dim2_opt (called at :220, kernel
    _scatter_elementwise_kernel_dim2_opt, ScatterGatherKernel_maca.cuh:117), never the `_assign` one of plain
    scatter; but that way's test pins a 2-D iterator's strides (`ndim == 2 && ... strides_[1][0] == 0 &&
    strides_[0][2] == 0`, :213), a special shape a name does not give, so the general way ranks first: the last
    else's _launch_scatter_gather_kernel (:335) -> _scatter_gather_elementwise_kernel (:95), as on a stock build."""
    fork = real_index.trace("torch.Tensor.scatter_add_")
    assert _end(fork) == ("__global__ at::native::_scatter_gather_elementwise_kernel", SCATTER, 95)
    internal = next(h for h in fork.main_chain() if h.name == "at::native::_cuda_scatter_gather_internal_kernel::"
                    "operator()")
    dim2 = next(h for h in fork.hops if h.parent == internal.id and h.name == "_launch_scatter_kernel_dim2_opt")
    assert dim2.id in next(c["others"] for c in fork.to_dict()["choices"] if not c["settled"]
                           and dim2.id in c["others"])
    assign = next(h for h in fork.hops if h.parent == internal.id and h.name == "_launch_scatter_kernel_dim2_opt_assign")
    assert any(c.line == 200 and c.assumed is False for c in assign.conditions)
    stock = real_index.trace("torch.Tensor.scatter_add_", undefines=["USE_MACA"])
    assert _end(stock) == ("__global__ at::native::_scatter_gather_elementwise_kernel", SCATTER, 95)
    # the call at :694 may reach three operator()s; reduce_add (`static ReduceAdd reduce_add;`, :45) picks :360's
    # `const ReduceAdd& f` over :418's `const TensorAssign& f` and :477's `const func_t& f`
    said = {h.line: [(c.text, c.assumed) for c in h.conditions] for h in fork.hops
            if h.name == "at::native::cuda_scatter_gather_base_kernel::operator()" and h.called_at == f"{SCATTER}:694"}
    assert said == {360: [], 418: [("reduce_add is TensorAssign", False)],
                    477: [("reduce_add is not ReduceAdd", False)]}


def test_gather_passes_is_scatter_like_false_down_the_template_chain(real_index):
    """gather_cuda_kernel (ScatterGatherKernel.cu:670) calls `cuda_scatter_gather_base_kernel</*is_scatter_like=*/
    false>()(...)` (:671); its operator() (:418) passes `<is_scatter_like, dtype, scalar_t>` on to
    _cuda_scatter_gather_internal_kernel's (:164, called at :469). There every `is_scatter_like && ...` branch is
    false: the pw_opt launcher (:279, under :225's test) is not gather's. A stock build, without the fork's
    dim2_opt kernel, takes the last else's _launch_scatter_gather_kernel (called at :335) ->
    _scatter_gather_elementwise_kernel (:95); so does the fork's build by name: its _gather_elementwise_kernel_dim2_opt
    (ScatterGatherKernel_maca.cuh:7, launched by _launch_gather_kernel_dim2_opt called at :195) is for a 2-D
    iterator of pinned strides (:190-193, `ndim == 2 && ... strides_[0][2] == 0 && strides_[1][2] == 8`), a
    special shape, ranked after the general way (still a hop of the trace)."""
    stock = real_index.trace("torch.gather", undefines=["USE_MACA"])
    assert [(h.line, h.called_at) for h in stock.main_chain()[-5:-2]] == [
        (418, f"{SCATTER}:671"), (164, f"{SCATTER}:469"), (135, f"{SCATTER}:335")]
    assert _end(stock) == ("__global__ at::native::_scatter_gather_elementwise_kernel", SCATTER, 95)
    pw = next(h for h in stock.hops if h.name == "at::native::_launch_scatter_gather_kernel_opt_pw"
              and h.called_at == f"{SCATTER}:279")
    assert [c.line for c in pw.conditions if c.assumed is False] == [225]
    fork = real_index.trace("torch.gather")
    assert _end(fork) == ("__global__ at::native::_scatter_gather_elementwise_kernel", SCATTER, 95)
    assert fork.main_chain()[-3].called_at == f"{SCATTER}:335"
    assert any(h.name == "_launch_gather_kernel_dim2_opt" and h.called_at == f"{SCATTER}:195" for h in fork.hops)
