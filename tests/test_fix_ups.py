"""A fix-up kernel (pytorch/fix_ups.py) and the main chain's end beside one (trace/rank.py `_fix_up`)."""
from __future__ import annotations

from opindex.pytorch.fix_ups import data_test_line
from opindex.render.trace_view import TraceView
from opindex.trace.model import Hop

# randperm_handle_duplicate_keys_kernel as PyTorch 2.4 writes it (cuda/Randperm.cuh:11-38)
RANDPERM = """\
// See note [Algorithm of randperm]
template<typename T, typename scalar_t>
__global__ void fix_kernel(T *keys, scalar_t *data, T mask, int n, at::PhiloxCudaState philox_args) {
  int tid = threadIdx.x + blockDim.x * blockIdx.x;

  // find the beginning of islands
  if (tid >= n - 1) return;  // out of range
  if ((keys[tid] & mask) != (keys[tid + 1] & mask)) return;  // not in an island
  if (tid != 0 && (keys[tid] & mask) == (keys[tid - 1] & mask)) return;  // not the beginning of an island

  int island_size = 0;
  do { island_size++; }
  while ((tid + island_size < n) && (keys[tid + island_size] & mask) == (keys[tid] & mask));

  data += tid;
  for (int i = island_size - 1; i > 0; i--) {
    unsigned int r = i / 2;
    if (i != r) {
      scalar_t tmp = data[i];
      data[i] = data[r];
      data[r] = tmp;
    }
  }
}
"""


def test_a_kernel_that_returns_on_a_test_of_its_data_and_updates_in_place_is_a_fix_up():
    lines = RANDPERM.splitlines()
    # the first leading test that reads data (:8), not the index test before it (:7)
    assert data_test_line(lines, 3) == 8
    # a local read from a pointer parameter is data too
    local = RANDPERM.replace("if ((keys[tid] & mask) != (keys[tid + 1] & mask)) return;",
                             "auto key = keys[tid] & mask;\n  if (key != (keys[tid + 1] & mask)) return;")
    assert data_test_line(local.splitlines(), 3) == 9
    # `data[i] += x` reads what it updates
    added = RANDPERM.replace("scalar_t tmp = data[i];\n      data[i] = data[r];", "data[i] += data[r];")
    assert data_test_line(added.splitlines(), 3) == 8


def test_a_kernel_with_an_output_of_its_own_or_no_data_test_is_no_fix_up():
    lines = RANDPERM.splitlines()
    assert data_test_line(lines, 2) == 8  # (from its template line too)
    assert data_test_line(lines, 4) is None  # (a line of its body starts no kernel)
    # the test reads the thread's index only
    index_only = RANDPERM.replace("if ((keys[tid] & mask) != (keys[tid + 1] & mask)) return;", "")
    index_only = index_only.replace("if (tid != 0 && (keys[tid] & mask) == (keys[tid - 1] & mask)) return;", "")
    assert data_test_line(index_only.splitlines(), 3) is None
    # its first use of a buffer writes it (segment_reduce_backward_kernel: `if (segment_length == 0) return;`,
    # then grad_input_data[...] = ..., SegmentReduce.cu:186, :205): it fills an output, it fixes nothing
    fills = RANDPERM.replace("scalar_t tmp = data[i];\n      data[i] = data[r];\n      data[r] = tmp;",
                             "data[i] = keys[r];\n      data[r] = data[i] + 1;")
    assert data_test_line(fills.splitlines(), 3) is None
    # a data test after another statement is no early return of the leading ones
    late = RANDPERM.replace("  // find the beginning of islands\n", "  atomicAdd(&keys[0], 1);\n")
    assert data_test_line(late.splitlines(), 3) is None
    # a test in a comment is no test; a declaration is no definition
    commented = RANDPERM.replace("if ((keys[tid] & mask)", "// if ((keys[tid] & mask)").replace(
        "if (tid != 0 && (keys", "// if (tid != 0 && (keys")
    assert data_test_line(commented.splitlines(), 3) is None
    assert data_test_line(["__global__ void fix_kernel(int *keys, float *data, int n);"], 1) is None


def _sort_then_fix(tmp_path, kernel: str) -> TraceView:
    """randperm_out_cuda's shape: a body (op.cu:1) that radix-sorts (:3), then calls a helper (:4) whose launch
    runs the kernel (fix.cuh:3), both named like the op (randperm_handle_duplicate_keys): by names alone the
    kernel's path would rank first."""
    (tmp_path / "op.cu").write_text("void op_out(Tensor& result) {\n  auto keys = random_keys();\n"
                                    "  sort_pairs(keys, keys_out, range, data, n);\n"
                                    "  handle_duplicate_keys(keys_out, data, n);\n}\n")
    (tmp_path / "fix.cuh").write_text(kernel)
    hops = [
        Hop(0, None, "native", "entry", "aten::op", "n.yaml", 1),
        Hop(1, 0, "cpp", "function", "at::native::op_out", "op.cu", 1),
        Hop(2, 1, "library", "cub", "at::cuda::cub::sort_pairs", "op.cu", 3),
        Hop(3, 2, "library", "cub", "cub::DeviceRadixSort::SortPairs", "cub.cu", 46),
        Hop(4, 1, "cpp", "calls", "op_handle_duplicate_keys", "fix.cuh", 30, called_at="op.cu:4"),
        Hop(5, 4, "cuda", "launch", "op_fix_kernel<<<(n + 511) / 512, 512>>>", "fix.cuh", 31, kernel="op_fix_kernel"),
        Hop(6, 5, "cuda", "global_kernel", "__global__ op_fix_kernel", "fix.cuh", 3),
    ]
    return TraceView(query="torch.op", direction="down", device="cuda", depth=1, hops=hops, root=str(tmp_path))


def test_the_main_chain_ends_at_the_work_before_a_fix_up_and_names_it_after(tmp_path):
    t = _sort_then_fix(tmp_path, RANDPERM)
    assert [h.id for h in t.main_chain()] == [0, 1, 2, 3]
    c = t.to_dict()["choices"]
    assert c == [{"hop": 2, "ways": 1, "others": [], "settled": True, "file": "op.cu", "line": 1,
                  "options": [{"hop": 2, "end": 3, "conditions": []}],
                  "sequence": [{"hop": 4, "order": "after", "end": 6, "conditions": [], "fix_up": "fix.cuh:8"}]}]
    assert "then op_fix_kernel (a fix-up: writes where the data test at fix.cuh:8 holds) (in sequence, body at " \
        "op.cu:1)" in t.to_text()
    # a kernel that fills an output of its own is the op's work: its path, named like the op, ranks first
    (tmp_path / "fills").mkdir()  # (a checkout's files are read once per process: another checkout)
    t = _sort_then_fix(tmp_path / "fills", RANDPERM.replace("scalar_t tmp = data[i];\n      data[i] = data[r];",
                                                  "data[i] = keys[r];\n      data[r] = data[i];"))
    assert [h.id for h in t.main_chain()] == [0, 1, 4, 5, 6]
    assert t.to_dict()["choices"][0]["sequence"] == [
        {"hop": 2, "order": "before", "end": 3, "conditions": [], "fix_up": None}]
