"""Which overload a call takes, on the real trees: a name trace calls an op with its tensors and default arguments,
C++ picks among same-named definitions by their parameters, a Python bridge's values pick the schema they fit, and
a device test of `self.device().is_cpu()` is read for the device traced (each file:line read in the source)."""
from __future__ import annotations

CUDA = "aten/src/ATen/native/cuda/"
YAML = "aten/src/ATen/native/native_functions.yaml"


def _chain(t) -> list[tuple[str, int]]:
    return [(h.file, h.line) for h in t.main_chain()]


def test_a_name_trace_takes_the_overload_its_tensors_alone_call(real_index):
    """torch.median binds median(Tensor self) (native_functions.yaml:3944) and median.dim(Tensor self, int dim, bool
    keepdim=False) (:3952): `torch.median(x)` gives no dim, so it is the first. CUDA: median_cuda (:3948) ->
    median_impl (cuda/Sorting.cpp:130), whose `self.flatten().sort()` (:140) sorts; a slice the inputs do not size
    ends at the small sort, bitonicSortKVInPlace (SortUtils.cuh:91, its `__global__` line 90)."""
    t = real_index.trace("torch.median", undefines=["USE_MACA"])
    chain = _chain(t)
    assert chain[1:5] == [(YAML, 3944), (YAML, 3948), (CUDA + "Sorting.cpp", 189), (CUDA + "Sorting.cpp", 130)]
    assert (CUDA + "Sorting.cpp", 140) in chain
    assert t.main_chain()[-1].name == "__global__ at::native::bitonicSortKVInPlace"
    dim = next(h for h in t.hops if h.name == "aten::median.dim" and h.parent == t.main_chain()[0].id)
    assert [(c.kind, c.text, c.assumed) for c in dim.conditions] == [
        ("overload", "a value for int dim (a name trace gives its tensors and default arguments only)", False)]
    choice = next(c for c in t.to_dict()["choices"] if c["hop"] == t.main_chain()[1].id)
    assert choice["settled"] is True


def test_a_dispatch_kernel_links_the_definition_of_the_schema_s_parameters(real_index):
    """max(Tensor self) (native_functions.yaml:9901) names the kernel `max` (:9905). at::native::max is defined
    twice: max(const Tensor& self, const Tensor& other) (BinaryOps.cpp:1497, max.other's) and max(const Tensor
    &self) (ReduceAllOps.cpp:47), which calls max_all_stub (:51)."""
    t = real_index.trace("torch.max", undefines=["USE_MACA"])
    chain = _chain(t)
    assert chain[1:5] == [(YAML, 9901), (YAML, 9905), ("aten/src/ATen/native/ReduceAllOps.cpp", 47),
                          ("aten/src/ATen/native/ReduceAllOps.cpp", 51)]
    assert ("aten/src/ATen/native/BinaryOps.cpp", 1497) not in chain


def test_a_device_test_through_device_is_read_for_the_device_traced(real_index):
    """mean_out (ReduceOps.cpp:1345) tests `if (self.device().is_cpu())` (:1356) before its sum and divide; on
    CUDA that is false, so the else's mean_stub (:1396) is the way, settled, not ranked."""
    t = real_index.trace("torch.mean(torch.randn(1024, 1024))", undefines=["USE_MACA"])
    chain = t.main_chain()
    stub = next(h for h in chain if h.name == "mean_stub")
    assert (stub.file, stub.line) == ("aten/src/ATen/native/ReduceOps.cpp", 1396)
    choice = next(c for c in t.to_dict()["choices"] if c["hop"] == stub.id)
    assert choice["settled"] is True
    cpu = [t.hops[i] for i in choice["others"]]
    assert any(c.text == "self.device().is_cpu()" and c.line == 1356 and c.assumed is False
               for h in cpu for c in h.conditions)


def test_a_bridge_s_values_pick_the_schema_they_fit(real_index):
    """F.embedding_bag calls torch.embedding_bag with nine values (functional.py:2454-2456): embedding_bag
    (native_functions.yaml:2330) takes eight, embedding_bag.padding_idx (:2336) nine. The values go to the second,
    whose `int mode` is 2 for mode='max' (EmbeddingBag.cu:404 `if (mode == MODE_MAX)`): the max kernel (:65)."""
    args = "torch.randint(0, 1000, (256,)), torch.randn(1000, 128), torch.arange(0, 256, 8)"
    t = real_index.trace(f"F.embedding_bag({args}, mode='max')", undefines=["USE_MACA"])
    chain = _chain(t)
    assert chain[2] == (YAML, 2336)
    assert chain[-1] == (CUDA + "EmbeddingBag.cu", 65)
    eight = next(h for h in t.hops if h.name == "aten::embedding_bag" and h.line == 2330)
    assert [(c.text, c.file, c.line, c.assumed) for c in eight.conditions if c.kind == "overload"] == [
        ("more than 8 positional arguments (the call gives 9)", "torch/nn/functional.py", 2454, False)]


def test_a_call_of_another_overload_of_its_own_name_is_walked(real_index_1_8):
    """1.8's sum(const Tensor &self, c10::optional<ScalarType> dtype) (ReduceOps.cpp:529) calls
    `at::native::sum(self, std::vector<int64_t>{}, false, dtype)` (:530): four arguments, the overload of
    (self, IntArrayRef dim, bool keepdim, dtype) at :532, not itself; that one's sum_out (:517) calls sum_stub
    (:524). A name trace takes sum(Tensor self, *, ScalarType? dtype=None) (native_functions.yaml:3642), since
    sum.dim_IntList (:3647) needs an `int[1] dim`."""
    t = real_index_1_8.trace("torch.sum")
    reduce = "aten/src/ATen/native/ReduceOps.cpp"
    assert _chain(t)[1:7] == [(YAML, 3642), (YAML, 3645), (reduce, 529), (reduce, 532), (reduce, 517),
                              (reduce, 524)]
    assert t.main_chain()[-1].name == "__global__ at::native::reduce_kernel"


def test_topk_s_sort_path_is_settled_by_the_cub_the_build_ships(real_index):
    """topk_out_cuda tests `if (should_use_sort(self, dim))` (TensorTopK.cpp:57); should_use_sort first returns false
    when `disable_sort_for_topk()` (:37), which returns CUB_SUPPORTS_SCAN_BY_KEY() (TensorTopK.cu:25-26), 1 for
    CUB_VERSION >= 101500 (cub_definitions.cuh:41-42). The upstream default build's CUB is CUDA 12.4's (200302),
    so the sort path is ruled out, whatever the sizes."""
    t = real_index.trace("torch.topk", undefines=["USE_MACA"])
    assert {"name": "CUB_VERSION", "value": "200302", "source": "upstream default (a current CUDA build)"} in t.build
    sort = next(h for h in t.hops if h.name == "at::native::topk_out_with_sort")
    assert [(c.file, c.line, c.assumed) for c in sort.conditions if "should_use_sort" in c.text] == [
        ("aten/src/ATen/native/cuda/TensorTopK.cpp", 57, False)]
    assert all(h.name != "at::native::topk_out_with_sort" for h in t.main_chain())


def test_of_ways_a_name_leaves_open_the_general_shape_ranks_first(real_index):
    """The fork's maca_parallel_cat (Shape.cu:1020) picks its kernel by the inputs' count, rank and alignment. A
    name says none of them: its special shapes (`dimension == 0 && batchCounter == 3 && nDims == 4`, :1211, for
    MACA_CatArrayBatchedCopyNoPartialWrite_3_4_0_0) rank after the no-partial-write kernel any shape takes
    (MACA_CatArrayBatchedCopyNoPartialWrite_any_any_any_0, :485), still marked ranked."""
    t = real_index.trace("torch.cat")
    end = t.main_chain()[-1]
    assert (end.name, end.file, end.line) == ("__global__ at::native::MACA_CatArrayBatchedCopyNoPartialWrite_any_any_any_0",
                                              CUDA + "Shape.cu", 485)
    launch = t.main_chain()[-2]
    choice = next(c for c in t.to_dict()["choices"] if c["hop"] == launch.id)
    assert choice["settled"] is False
    assert any(t.hops[i].name.startswith("MACA_CatArrayBatchedCopyNoPartialWrite_3_4_0_0") for i in choice["others"])


def test_a_helper_of_a_tensor_s_sizes_is_read_with_the_call_s_sizes(real_index):
    """sort_cuda_kernel tests `if (should_use_small_sort(self, dim))` (Sort.cpp:73); should_use_small_sort is `return
    self.size(dim) <= 4096;` (Sort.h:9-10). A 1024x1024 tensor sorted over dim 1 holds it: the in-place key/value
    sort (sortKeyValueInplace, Sort.cu:390) is the way, settled; its else's segmented sort is ruled out."""
    t = real_index.trace("torch.sort(torch.randn(1024, 1024), dim=1)", undefines=["USE_MACA"])
    inplace = next(h for h in t.main_chain() if h.name == "at::native::sortKeyValueInplace")
    assert (inplace.file, inplace.line) == (CUDA + "Sort.cu", 390)
    choice = next(c for c in t.to_dict()["choices"] if c["hop"] == inplace.id)
    assert choice["settled"] is True
    tests = {(k["text"], k["assumed"]) for o in choice["options"][1:] for k in o["conditions"]}
    assert ("not (should_use_small_sort(self, dim) (= true: aten/src/ATen/native/cuda/Sort.h:9))", False) in tests


def test_two_untuned_calls_of_the_session_of_21_08_read_hop_by_hop(real_index):
    """Read against the 2.4 source, stock build. `torch.max` of a float16 tensor: max(Tensor self)
    (native_functions.yaml:9901) -> ReduceAllOps.cpp:47 -> max_all_stub (:51) -> max_all_kernel_impl
    (cuda/ReduceOps.cpp:77) -> max_all_launch_kernel (ReduceMaxValuesKernel.cu:53, its AT_DISPATCH covers kHalf) ->
    max_values_kernel_cuda_impl (:28) -> reduce_kernel (Reduce.cuh:188). `F.gelu(x, approximate='tanh')`:
    GeluCUDAKernelImpl (ActivationGeluKernel.cu:21) takes `if (approximate == GeluType::Tanh)` (:22); the else's
    launch (:35) is ruled out."""
    half = real_index.trace("torch.max(torch.randn(128, 128, dtype=torch.float16))", undefines=["USE_MACA"])
    red = "aten/src/ATen/native/cuda/ReduceMaxValuesKernel.cu"
    assert [(h.file, h.line) for h in half.main_chain()[1:9]] == [
        (YAML, 9901), (YAML, 9905), ("aten/src/ATen/native/ReduceAllOps.cpp", 47),
        ("aten/src/ATen/native/ReduceAllOps.cpp", 51), (CUDA + "ReduceOps.cpp", 96), (CUDA + "ReduceOps.cpp", 77),
        (red, 53), (red, 28)]
    end = half.main_chain()[-1]
    assert (end.name, end.file, end.line) == ("__global__ at::native::reduce_kernel", CUDA + "Reduce.cuh", 188)
    gelu = real_index.trace("F.gelu(torch.randn(64, 1024), approximate='tanh')", undefines=["USE_MACA"])
    impl = next(h for h in gelu.main_chain() if h.name == "at::native::GeluCUDAKernelImpl")
    assert (impl.file, impl.line) == (CUDA + "ActivationGeluKernel.cu", 21)
    other = next(h for h in gelu.hops if h.parent == impl.id and h.line == 35)
    assert any(c.line == 33 and c.assumed is False for c in other.conditions)
    assert gelu.main_chain()[-1].name == "__global__ at::native::vectorized_elementwise_kernel"


def test_an_operator_s_tensor_operand_takes_the_tensor_overload(real_index):
    """isnan (TensorCompare.cpp:362) is `return self != self;` (:363), `self` a `const Tensor&`: C++ calls
    operator!=(const Tensor&, const Tensor&), ne.Tensor (native_functions.yaml:8797), never ne.Scalar (:8779), to
    which no Tensor converts. Its kernel, compare_eq_ne_kernel (CompareEQKernel.cu:32), launches
    opmath_symmetric_gpu_kernel_with_scalars_arity2 (:34; on the stock build its stand-in, Loops.cuh:306), where
    neither operand of two device tensors is a CPU scalar and `iter.ninputs() == 2` (:337) holds: gpu_kernel with
    the BinaryFunctor (:338), down to vectorized_elementwise_kernel (CUDALoops.cuh:63). __and__.Tensor's
    `at::bitwise_and(self, other)` (BinaryOps.cpp:1208) is bitwise_and.Tensor (:8263), not bitwise_and.Scalar."""
    t = real_index.trace("torch.isnan(torch.randn(1024))", undefines=["USE_MACA"])
    chain = [(h.name, h.file, h.line) for h in t.main_chain()]
    assert chain[3:6] == [("at::native::isnan", "aten/src/ATen/native/TensorCompare.cpp", 362),
                          ("operator!= on self", "aten/src/ATen/native/TensorCompare.cpp", 363),
                          ("aten::ne.Tensor", YAML, 8797)]
    at = chain.index(("at::native::compare_eq_ne_kernel", CUDA + "CompareEQKernel.cu", 32))
    assert chain[at + 1:at + 4] == [
        ("opmath_symmetric_gpu_kernel_with_scalars_arity2", CUDA + "CompareEQKernel.cu", 34),
        ("at::native::opmath_symmetric_gpu_kernel_with_scalars", CUDA + "Loops.cuh", 306),
        ("gpu_kernel", CUDA + "Loops.cuh", 338)]
    assert chain[-1] == ("__global__ at::native::vectorized_elementwise_kernel", CUDA + "CUDALoops.cuh", 63)
    assert not any(name.startswith("aten::ne.Scalar") for name, _, _ in chain)
    t = real_index.trace("aten::__and__.Tensor", undefines=["USE_MACA"])
    assert [(h.name, h.line) for h in t.main_chain()[3:5]] == [
        ("at::bitwise_and", 1208), ("aten::bitwise_and.Tensor", 8263)]


def test_a_kernel_s_method_call_of_another_overload_of_its_op_is_followed(real_index):
    """index_fill_.int_Tensor's kernel (TensorAdvancedIndexing.cpp:1481) is `return self.index_fill_(dim, index,
    source.item());` (:1484): a method call of its own op's name that a Scalar, `source.item()`, makes the overload
    index_fill_.int_Scalar (native_functions.yaml:8074), whose kernel (:1408) calls index_fill_stub (:1470), CUDA's
    index_fill_kernel (IndexKernel.cu:341). is_conj's kernel (TypeProperties.cpp:51) calls `self.is_conj()`, a
    method of TensorBase and no other overload: nothing is walked below it."""
    t = real_index.trace("aten::index_fill_.int_Tensor", undefines=["USE_MACA"])
    assert [(h.name, h.line) for h in t.main_chain()[2:10]] == [
        ("at::native::index_fill_", 1481), ("self.index_fill_", 1484), ("aten::index_fill_.int_Scalar", 8074),
        ("CUDA: index_fill_", 8079), ("at::native::index_fill_", 1408), ("index_fill_stub", 1470),
        ("CUDA: index_fill_kernel", 593), ("at::native::index_fill_kernel", 341)]
    t = real_index.trace("aten::is_conj", undefines=["USE_MACA"])
    assert [(h.name, h.line) for h in t.main_chain()] == [
        ("aten::is_conj", 3191), ("CompositeImplicitAutograd: is_conj", 3191), ("at::native::is_conj", 51)]
