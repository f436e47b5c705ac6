"""MPS: Objective-C++ (.mm, and headers under mps/ and metal/) indexed as C++ (issue 13 item 9). Small inline sources,
exact rows; the objc rewrite keeps every byte's line."""
from __future__ import annotations

import textwrap

from opindex.indexer.discover import classify
from opindex.extract import extract
from opindex.extract.objc import prepare
from opindex.pytorch import devices

MM = "aten/src/ATen/native/mps/operations/Foo.mm"


def run(src: str, path: str = MM):
    return extract(path, textwrap.dedent(src).encode(), "cpp", None)


def test_mm_files_are_discovered_as_cpp_from_the_backend_table():
    assert devices.DIALECT_EXTENSIONS == (".mm",)
    assert classify("aten/src/ATen/native/mps/operations/Blas.mm") == ("cpp", "cpp")
    assert classify("aten/src/ATen/mps/MPSStream.mm") == ("cpp", "cpp")
    assert classify("torch/csrc/jit/backends/coreml/objc/PTMCoreMLBackend.mm") == ("cpp", "cpp")
    assert classify("aten/src/ATen/native/mps/operations/Foo.m") is None  # plain Objective-C: not C++
    assert devices.in_dialect("aten/src/ATen/native/mps/OperationUtils.h")  # included from .mm files only
    assert devices.in_dialect("aten/src/ATen/native/metal/MetalTensorImpl.h")
    assert not devices.in_dialect("aten/src/ATen/native/cpu/Loops.h")
    assert not devices.in_dialect("aten/src/ATen/native/mps/operations/Equal.cpp")  # a .cpp is C++


def test_the_rewrite_keeps_lengths_and_lines():
    src = textwrap.dedent("""\
        @autoreleasepool {
          auto out = [graph matrixMultiplicationWithPrimaryTensor:getT(self) secondaryTensor:other name:nil];
          auto g = [[MPSGraph alloc] init];
          NSDictionary* feeds = @{p.getMPSGraphTensor() : p.getMPSGraphTensorData(), };
          NSArray* a = @[ @1, @(x) ];
          NSString* s = @"abc[x y]";
          dispatch_sync(q, ^() {
            [enc dispatchThreads:MTLSizeMake(n, 1, 1)
                threadsPerThreadgroup:size];
          });
          auto f = [&](int i) { return v[i]; };
          int arr[n + 1];
          x = cond ? [a b] : c;
          if (ok) [axes addObject:[NSNumber numberWithInteger:d]];
          int r = (int)[[t shape] count];
          auto b = ^MPSGraphTensor*(MPSGraph* g, MPSGraphTensor* t) { return t; };
          auto m = R"METAL(kernel void k([[buffer(0)]] int* x) { [a b]; })METAL";
        }
        typedef MPSGraphTensor* (^UnaryOpBlock)(MPSGraph*, MPSGraphTensor*);
        @interface Foo : NSObject
        - (void)bar:(int)x;
        @end
        int y = a ^b(c);
        for (NSNumber* elem in shape) {}
        """).encode()
    out = prepare(src)
    assert len(out) == len(src) and out.count(b"\n") == src.count(b"\n")
    assert [line.rstrip() for line in out.decode().splitlines()] == [
        "                 {",
        "  auto out = graph. matrixMultiplicationWithPrimaryTensor(getT(self) ,               other ,    nil);",
        "  auto g = MPSGraph.alloc().init();",
        "  NSDictionary* feeds =  (p.getMPSGraphTensor() , p.getMPSGraphTensorData()  );",
        "  NSArray* a =  (  1,  (x) );",
        '  NSString* s =  "abc[x y]";',
        "  dispatch_sync(q, [](){",
        "    enc. dispatchThreads(MTLSizeMake(n, 1, 1)",
        "        ,                     size);",
        "  });",
        "  auto f = [&](int i) { return v[i]; };",
        "  int arr[n + 1];",
        "  x = cond ? a.b() : c;",
        "  if (ok) axes. addObject(NSNumber. numberWithInteger(d));",
        "  int r = (int)t.shape().count();",
        "  auto b = []              (MPSGraph* g, MPSGraphTensor* t) { return t; };",
        '  auto m = R"METAL(kernel void k([[buffer(0)]] int* x) { [a b]; })METAL";',
        "}",
        "typedef MPSGraphTensor* (*UnaryOpBlock)(MPSGraph*, MPSGraphTensor*);",
        "",
        "",
        "",
        "int y = a ^b(c);",
        "for (NSNumber* elem :  shape) {}",
    ]
    assert prepare(b"int x = a[i] + b[j + 1];") == b"int x = a[i] + b[j + 1];"


SOURCE = """\
    #include <ATen/native/mps/OperationUtils.h>
    namespace at::native {
    namespace mps {
    static Tensor& mm_out_mps_impl(const Tensor& self, const Tensor& other, Tensor& output) {
      @autoreleasepool {
        auto cachedGraph = LookUpOrCreateCachedGraph<CachedGraph>(key, [&](auto mpsGraph, auto newCachedGraph) {
          newCachedGraph->outputTensor_ = [mpsGraph matrixMultiplicationWithPrimaryTensor:a
                                                                           secondaryTensor:b
                                                                                      name:nil];
        });
        auto feeds = @{selfPlaceholder.getMPSGraphTensor() : selfPlaceholder.getMPSGraphTensorData()};
        runMPSGraph(getCurrentMPSStream(), cachedGraph->graph(), feeds, outputPlaceholder);
      }
      return output;
    }
    static void fill_kernel(const Tensor& self) {
      dispatch_sync(stream->queue(), ^() {
        @autoreleasepool {
          [computeEncoder setComputePipelineState:fillPSO];
          mtl_dispatch1DJob(computeEncoder, fillPSO, self.numel());
          [computeEncoder dispatchThreadgroups:groups threadsPerThreadgroup:size];
        }
      });
    }
    } // namespace mps
    TORCH_IMPL_FUNC(mm_out_mps)(const Tensor& self, const Tensor& mat2, const Tensor& result) {
      mps::mm_out_mps_impl(self, mat2, const_cast<Tensor&>(result));
    }
    static void where_kernel_mps(TensorIterator& iter) {
      @autoreleasepool {
        fill_kernel(iter.tensor(0));
      }
    }
    REGISTER_DISPATCH(where_kernel, &where_kernel_mps);
    } // namespace at::native
    """


def test_definitions_keep_their_scope_after_objective_c():
    rows = [(r[1], r[2], r[4], r[6]) for r in run(SOURCE).rows["symbols"]]
    assert rows == [
        (4, 15, "function", "at::native::mps::mm_out_mps_impl"),
        (16, 24, "function", "at::native::mps::fill_kernel"),
        (26, 28, "impl_func", "at::native::structured_mm_out_mps"),
        (29, 33, "function", "at::native::where_kernel_mps"),
    ]


def test_register_dispatch_in_an_mm_file_registers_mps():
    rows = run(SOURCE).rows["dispatch_registrations"]
    assert [(r[1], r[2], r[3], r[4], r[5]) for r in rows] == [
        (34, "where_kernel", "where_kernel_mps", "REGISTER_DISPATCH", "MPS")]


def test_the_calls_that_hand_work_to_mpsgraph_and_metal():
    rows = run(SOURCE).rows["library_calls"]
    assert [(r[1], r[2], r[3], r[4]) for r in rows] == [
        (12, "mpsgraph", "runMPSGraph", "at::native::mps::mm_out_mps_impl"),
        (21, "metal", "[computeEncoder dispatchThreadgroups:]", "at::native::mps::fill_kernel"),
    ]


def test_message_sends_are_method_calls_named_by_their_first_selector_part():
    calls = {(r[1], r[4], r[5], r[6]) for r in run(SOURCE).rows["calls"]}
    assert (7, "matrixMultiplicationWithPrimaryTensor", "mpsGraph", 1) in calls
    assert (19, "setComputePipelineState", "computeEncoder", 1) in calls
    assert (20, "mtl_dispatch1DJob", "", 0) in calls  # a C++ call inside a block: the block is read as a lambda
    assert (27, "mm_out_mps_impl", "mps", 0) in calls
    assert (31, "fill_kernel", "", 0) in calls
    callers = {r[4]: r[3] for r in run(SOURCE).rows["calls"]}
    assert callers["mtl_dispatch1DJob"] == "at::native::mps::fill_kernel"



def test_headers_under_mps_are_objective_c_and_cpp_files_are_not():
    header = run(SOURCE, "aten/src/ATen/native/mps/OperationUtils.h").rows["library_calls"]
    assert [(r[1], r[2]) for r in header] == [(12, "mpsgraph"), (21, "metal")]
    cpp = run(SOURCE, "aten/src/ATen/native/mps/operations/Equal.cpp").rows
    assert [(r[1], r[2]) for r in cpp["library_calls"]] == [(12, "mpsgraph")]  # runMPSGraph is a C++ call anyway
    assert "matrixMultiplicationWithPrimaryTensor" not in {r[4] for r in cpp["calls"]}  # no rewrite: no send read

# -- the PyTorch 2.4 tree (OPINDEX_REAL_CHECKOUT): each file:line below was read in the source --------------------
OPS = "aten/src/ATen/native/mps/operations"
UTILS_H = "aten/src/ATen/native/mps/OperationUtils.h"


def where(t) -> set[tuple[str, int]]:
    return {(h.file, h.line) for h in t.hops if not h.absent}


def off_platform(t) -> list[str]:
    """Hops in another platform's C++ (a wrong hop on --device mps)."""
    return [f"{h.file}:{h.line}" for h in t.hops if h.file and not h.absent and h.layer in ("cpp", "cuda", "library")
            and not devices.runs_on(h.file, "mps")]


def test_every_mps_register_dispatch_site_is_found(real_index):
    rows = real_index.rows("SELECT file, line, stub, kernel, device FROM dispatch_registrations "
                          "WHERE file LIKE '%/mps/%' ORDER BY file, line")
    assert [(r["file"].rsplit("/", 1)[1], r["line"], r["stub"], r["device"]) for r in rows] == [
        ("BinaryKernel.mm", 338, "fmax_stub", "MPS"), ("BinaryKernel.mm", 339, "fmin_stub", "MPS"),
        ("BinaryKernel.mm", 340, "copysign_stub", "MPS"), ("BinaryKernel.mm", 341, "nextafter_stub", "MPS"),
        ("CrossKernel.mm", 128, "cross_stub", "MPS"),
        ("HistogramKernel.mm", 376, "histogramdd_stub", "MPS"),
        ("HistogramKernel.mm", 377, "histogramdd_linear_stub", "MPS"),
        ("HistogramKernel.mm", 378, "histogram_select_outer_bin_edges_stub", "MPS"),
        ("Indexing.mm", 931, "index_stub", "MPS"), ("Indexing.mm", 932, "index_put_stub", "MPS"),
        ("TensorCompare.mm", 556, "where_kernel", "MPS"),
    ]


def test_mps_dispatch_rows_reach_their_definitions_in_mm_files(real_index):
    rows = real_index.rows("SELECT kernel, definition, def_file, def_line FROM op_kernel_links "
                          "WHERE dispatch_key = 'MPS' AND chosen AND kernel IN ('add_out_mps', 'mm_out_mps', "
                          "'relu_mps', 'softmax_mps_out') ORDER BY kernel")
    assert [(r["kernel"], r["definition"], r["def_file"], r["def_line"]) for r in rows] == [
        ("add_out_mps", "at::native::structured_add_out_mps", f"{OPS}/BinaryOps.mm", 429),
        ("mm_out_mps", "at::native::structured_mm_out_mps", f"{OPS}/LinearAlgebra.mm", 672),
        ("relu_mps", "at::native::relu_mps", f"{OPS}/Activation.mm", 48),
        ("softmax_mps_out", "at::native::structured_softmax_mps_out", f"{OPS}/SoftMax.mm", 39),
    ]
    unlinked = real_index.rows("SELECT count(*) AS n FROM op_kernel_links WHERE dispatch_key = 'MPS' "
                              "AND symbol_id IS NULL")
    assert unlinked[0]["n"] == 0


def test_mm_on_mps_reaches_mpsgraph_and_the_metal_fallback(real_index):
    t = real_index.trace("torch.mm", device="mps")
    assert {
        (f"{OPS}/LinearAlgebra.mm", 672),  # TORCH_IMPL_FUNC(mm_out_mps)
        (f"{OPS}/LinearAlgebra.mm", 130),  # mps::mm_out_mps_impl
        (f"{OPS}/LinearAlgebra.mm", 166),  # runMPSGraph(getCurrentMPSStream(), cachedGraph->graph(), ...)
        (f"{OPS}/LinearAlgebra.mm", 79),  # do_metal_mm: the naive Metal matmul for dims over 2**15
        (UTILS_H, 366),  # mtl_dispatch1DJob
        (UTILS_H, 372),  # [encoder dispatchThreads:size threadsPerThreadgroup:threadGroupSize]
    } <= where(t)
    assert off_platform(t) == []


def test_add_relu_softmax_on_mps(real_index):
    add = real_index.trace("torch.add", device="mps")
    assert {
        (f"{OPS}/BinaryOps.mm", 429),  # TORCH_IMPL_FUNC(add_out_mps)
        (f"{OPS}/BinaryOps.mm", 269),  # add_sub_lerp_template
        (f"{OPS}/BinaryOps.mm", 65),  # binaryOpTensor
        (f"{OPS}/BinaryOps.mm", 196),  # runMPSGraph(mpsStream, cachedGraph->graph(), feeds, outputPlaceholder)
    } <= where(add)
    relu = real_index.trace("F.relu", device="mps")
    assert {(f"{OPS}/Activation.mm", 48), (f"{OPS}/Activation.mm", 79)} <= where(relu)  # relu_mps, its runMPSGraph
    softmax = real_index.trace("F.softmax", device="mps")
    assert {(f"{OPS}/SoftMax.mm", 39), (f"{OPS}/SoftMax.mm", 127)} <= where(softmax)  # softmax_mps_out, runMPSGraph
    for t in (add, relu, softmax):
        assert off_platform(t) == []


def test_stubs_reach_their_mps_registrations(real_index):
    fmax = real_index.trace("torch.fmax", device="mps")
    assert {
        (f"{OPS}/BinaryKernel.mm", 338),  # REGISTER_DISPATCH(fmax_stub, &fmax_mps_kernel)
        (f"{OPS}/BinaryKernel.mm", 314),  # fmax_mps_kernel
        (f"{OPS}/BinaryKernel.mm", 257),  # binary_mps_impl
        (UTILS_H, 372),  # its mtl_dispatch1DJob(computeEncoder, binaryPSO, numThreads) dispatches
    } <= where(fmax)
    where_ = real_index.trace("torch.where", device="mps")
    assert {
        (f"{OPS}/TensorCompare.mm", 556),  # REGISTER_DISPATCH(where_kernel, &where_kernel_mps)
        (f"{OPS}/TensorCompare.mm", 375),  # where_kernel_mps
        (f"{OPS}/TensorCompare.mm", 456),  # runMPSGraph
    } <= where(where_)
    assert off_platform(fmax) == [] and off_platform(where_) == []
