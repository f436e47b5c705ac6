"""MPS: Objective-C++ (.mm, and headers under mps/ and metal/) indexed as C++ (issue 13 item 9). Small inline sources,
exact rows; the objc rewrite keeps every byte's line."""
from __future__ import annotations

import textwrap

from opindex.build.discover import classify
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
