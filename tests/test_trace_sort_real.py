"""torch.sort's in-place sorters on the real 2.4 tree, read as the build and the call's sizes decide them (each
file:line read in the source): sortKeyValueInplace (Sort.cu:390) passes a sorter to sortCommon by the slice's
size, and `#if HAS_WARP_MERGE_SORT()` (:402) leaves the warp merge sort out of a CUDA 12 build."""
from __future__ import annotations

CU = "aten/src/ATen/native/cuda/Sort.cu"
UTILS = "aten/src/ATen/native/cuda/SortUtils.cuh"


def _chain(t) -> list[tuple[str, int]]:
    return [(h.file, h.line) for h in t.main_chain()]


def test_a_macro_whose_body_is_a_test_is_read_as_the_build_settles_it(real_index):
    """`#define HAS_WARP_MERGE_SORT() (CUDA_VERSION >= 110600)` (SortUtils.cuh:13) compares CUDA 12.4's 12040
    with 110600: false on the default build (torch 2.11's CUDA libraries hold no warpMergeSortKVInPlace either),
    true where the build states CUDA_VERSION 110600."""
    t = real_index.trace("torch.sort(torch.randn(64, 100), dim=1)", undefines=["USE_MACA"])
    warp = next(h for h in t.hops if h.name == "at::native::WarpMergeSort::sort")
    assert [(c.text, c.line, c.assumed) for c in warp.conditions if c.kind == "#if"] == [
        ("HAS_WARP_MERGE_SORT()", 403, False)]  # (an #if condition is placed at the first line it covers)
    on = real_index.trace("torch.sort(torch.randn(64, 100), dim=1)", undefines=["USE_MACA"],
                          defines=["CUDA_VERSION=110600"])
    assert on.main_chain()[-1].name == "__global__ at::native::warpMergeSortKVInPlace"
    assert (on.main_chain()[-1].file, on.main_chain()[-1].line) == (UTILS, 165)


def test_the_slice_size_of_the_call_picks_the_sorter(real_index):
    """sort(Tensor self, int dim=-1, bool descending=False) (not sort.stable: its `bool? stable` has no default,
    and Python's parser asks for it) calls at::sort(self, false, dim, descending). The meta function gives
    `values` self's sizes (Sorting.cpp:84), sort_cuda_kernel passes it to sortKeyValueInplace as `key`, and
    `sort_size = key.size(dim)` (Sort.cu:396) picks the sorter passed to sortCommon: 20 elements take
    SmallBitonicSort (`!stable && sort_size <= 32`, :399; Sort.cu:49 -> bitonicSortKVInPlace, SortUtils.cuh:90);
    100 the final else (:406, the `sort_size <= 128` way not built) and MediumRadixSort (Sort.cu:187 ->
    radixSortKVInPlace, SortUtils.cuh:251), each settled, not ranked. Torch 2.11 ran the same kernels for these
    three calls on an H100 (2026-12-06)."""
    small = real_index.trace("torch.sort(torch.randn(64, 20), dim=1)", undefines=["USE_MACA"])
    assert ("aten/src/ATen/native/Sorting.cpp", 966) in _chain(small)  # at::native::sort, the overload's kernel
    assert _chain(small)[-3:] == [(CU, 49), (CU, 93), (UTILS, 90)]
    medium = real_index.trace("torch.sort(torch.randn(64, 100), dim=1, descending=True)", undefines=["USE_MACA"])
    assert _chain(medium)[-5:-2] == [(CU, 308), (CU, 187), (CU, 279)]
    assert _chain(medium)[-1] == (UTILS, 251)
    # stable=True binds sort.stable itself: its stub kernel takes `const TensorBase& self_base` and makes `self`
    # with TOTENSOR (Sort.cpp:41-50), which still reads the call's sizes; a stable sort of 20 is no bitonic one
    stable = real_index.trace("torch.sort(torch.randn(64, 20), dim=1, stable=True)", undefines=["USE_MACA"])
    assert _chain(stable)[-4:-2] == [(CU, 187), (CU, 279)] and _chain(stable)[-1] == (UTILS, 251)
    for t in (small, medium, stable):  # from sortKeyValueInplace down, every choice is settled
        chain = [h.id for h in t.main_chain()]
        below = set(chain[_chain(t).index((CU, 390)):])
        found = [c for c in t.to_dict()["choices"] if c["hop"] in below]
        assert found and all(c["settled"] for c in found)


def test_a_cpp_op_call_takes_the_overload_of_its_arguments_one_for_one(real_index):
    """argsort(self, dim, descending) calls `at::sort(self, dim, descending)` (Sorting.cpp:984): C++ picks
    sort(Tensor self, int dim, bool descending) (native_functions.yaml:10012), which takes the three arguments one
    for one, not sort.stable (:10019), which would take `dim` for its `bool? stable` by a conversion; sort's kernel
    (Sorting.cpp:966) calls the other overload of its own op, at::sort(self, false, dim, descending) (:970), which
    does not use up --depth. A 20-element slice then sorts with the bitonic sort (SortUtils.cuh:90)."""
    yaml = "aten/src/ATen/native/native_functions.yaml"
    t = real_index.trace("torch.argsort(torch.randn(64, 20), dim=1)", undefines=["USE_MACA"])
    chain = _chain(t)
    assert chain[3:10] == [("aten/src/ATen/native/Sorting.cpp", 983), ("aten/src/ATen/native/Sorting.cpp", 984),
                           (yaml, 10012), (yaml, 10016), ("aten/src/ATen/native/Sorting.cpp", 966),
                           ("aten/src/ATen/native/Sorting.cpp", 970), (yaml, 10019)]
    assert chain[-1] == (UTILS, 90)
    call = t.main_chain()[4]
    below = [h.name for h in t.hops if h.parent == call.id]  # the two overloads taking three arguments first;
    assert below[1:] == ["aten::sort", "aten::sort.dimname"]  # the cap (2) then leaves sort.stable out, and says so
    assert below[0].startswith("2 more overloads the call may reach not followed")


def test_a_factory_call_follows_its_kernel_into_the_overload_it_calls(real_index):
    """torch.randn(1024, 1024) binds randn(SymInt[] size, *, ScalarType? dtype=None, ...) (native_functions.yaml
    :4709; randn.generator's `Generator? generator` has no default, so Python's parser does not pick it). Its
    kernel (TensorFactories.cpp:1025) calls `native::randn(size, nullopt, dtype, ...)` (:1030), the six-parameter
    overload (:1033), whose `result.normal_(0, 1, generator)` (:1042, result made by at::empty) reaches
    normal_'s kernel and distribution_elementwise_grid_stride_kernel (DistributionTemplates.h:81), the kernel
    torch 2.11 ran."""
    yaml = "aten/src/ATen/native/native_functions.yaml"
    factories = "aten/src/ATen/native/TensorFactories.cpp"
    t = real_index.trace("torch.randn(1024, 1024)", undefines=["USE_MACA"])
    assert _chain(t)[1:6] == [(yaml, 4709), (yaml, 4712), (factories, 1025), (factories, 1033), (factories, 1042)]
    assert _chain(t)[-1] == ("aten/src/ATen/native/cuda/DistributionTemplates.h", 81)
