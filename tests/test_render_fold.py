"""Text traces fold the shared TensorIterator machinery under a launcher call to one line; --full and JSON keep it."""
from __future__ import annotations

from opindex.render.trace_view import TraceView
from opindex.trace.model import Hop


def trace() -> TraceView:
    hops = [
        Hop(0, None, "cpp", "registered_kernel", "at::native::exp_kernel_cuda", "k.cu", 38),
        Hop(1, 0, "cuda", "tensor_iterator", "gpu_kernel", "k.cu", 56, "tensor_iterator launch via gpu_kernel"),
        Hop(2, 1, "cpp", "launcher", "at::native::gpu_kernel", "Loops.cuh", 80),
        Hop(3, 2, "cuda", "tensor_iterator", "gpu_kernel_impl", "Loops.cuh", 99),
        Hop(4, 3, "cpp", "launcher", "at::native::gpu_kernel_impl", "CUDALoops.cuh", 383),
        Hop(5, 4, "cuda", "launch", "vectorized_elementwise_kernel<4><<<g, b>>>", "CUDALoops.cuh", 223),
        Hop(6, 5, "cuda", "global_kernel", "__global__ at::native::vectorized_elementwise_kernel", "CUDALoops.cuh", 63),
    ]
    return TraceView(query="torch.exp", direction="down", device="cuda", depth=1, hops=hops)


def test_machinery_is_folded_to_one_line():
    text = trace().to_text(context=0, tree=True)
    assert ("[cuda] TensorIterator launch: gpu_kernel -> gpu_kernel_impl -> __global__ vectorized_elementwise_kernel "
            "(5 hops folded)  k.cu:56") in text
    assert "CUDALoops.cuh:383" not in text
    assert "5 hops of shared TensorIterator launch machinery folded (--full shows them)" in text
    # the default text: the main chain stops at the launcher call, which stands for the machinery, and says so
    text = trace().to_text()
    assert ("  2  cuda         TensorIterator launch: gpu_kernel -> gpu_kernel_impl -> __global__ "
            "vectorized_elementwise_kernel (5 hops folded)  k.cu:56") in text
    assert "CUDALoops.cuh:383" not in text
    assert "Also in the tree: 5 hops of shared TensorIterator launch machinery (--full)" in text


def test_full_and_json_keep_every_hop():
    t = trace()
    assert "CUDALoops.cuh:383" in t.to_text(context=0, full=True)
    assert len(t.to_dict()["hops"]) == 7


def test_a_fold_names_the_kernels_of_a_launcher_shown_above():
    """The walk shows a definition once: a second launch that reaches gpu_kernel_impl ends in a "(shown above)" hop.
    Its folded line still names the __global__ kernels that definition reaches (relu's maximum_kernel_cuda on the
    2.4 tree, after the MACA arity-1 path showed CUDALoops.cuh's launch_vectorized_kernel first)."""
    first = trace().hops
    hops = first + [
        Hop(7, 0, "cuda", "tensor_iterator", "gpu_kernel", "k.cu", 70, "tensor_iterator launch via gpu_kernel"),
        Hop(8, 7, "cpp", "launcher", "at::native::gpu_kernel", "Loops.cuh", 80, "(shown above)", shown_above=True),
    ]
    t = TraceView(query="torch.exp", direction="down", device="cuda", depth=1, hops=hops)
    t.finish()  # as a walk ends: the repeat points at the hop it repeats
    assert t.hops[8].repeats == next(h.id for h in first if h.name == "at::native::gpu_kernel")
    text = t.to_text(context=0, tree=True)
    assert ("[cuda] TensorIterator launch: gpu_kernel -> __global__ vectorized_elementwise_kernel (1 hops folded)  "
            "k.cu:70") in text
