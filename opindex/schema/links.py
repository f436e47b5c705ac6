"""Derived links: cross-layer edges computed once per build from the fact tables (opindex/indexer/link.py).

The trace and the SQL views read these same rows, so `opindex sql` and `opindex trace` give one answer. Every
row points at the fact it links (dispatch row, registration, launch, call site) and at the definition it chose
(symbols.id plus its qualified name, file and line, so a query needs no second join). NULL symbol_id: no
definition was found in this checkout by opindex's rules.
"""
from __future__ import annotations

from sqlalchemy import Boolean, Column, Index, Integer, String, Table, Text

from .core import metadata, checkout_fk


def _definition() -> list[Column]:
    return [Column("symbol_id", Integer, comment="symbols.id of the definition, NULL when none was found"),
            Column("definition", Text, comment="its qualified name"),
            Column("def_file", Text, comment="file of the definition"),
            Column("def_line", Integer, comment="line of the definition")]


op_kernel_links = Table(
    "op_kernel_links", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(),
    Column("dispatch_id", Integer, nullable=False, comment="native_dispatch.id"),
    Column("native_function_id", Integer, nullable=False, comment="native_functions.id"),
    Column("dispatch_key", String(64), nullable=False, comment="the row's dispatch key"),
    Column("kernel", Text, nullable=False, comment="the kernel name as written in the YAML"),
    *_definition(),
    Column("rank", Integer, nullable=False,
           comment="0 for the best candidate; a structured entry's TORCH_IMPL_FUNC, then an overload that fits the "
                   "schema (Dimname parameters only for Dimname schemas), then one that can take the schema's number "
                   "of arguments, then at::native, then the layer of the key "
                   "(cuda for CUDA), code before tests, placeholders and quantized/sparse last"),
    Column("chosen", Boolean, nullable=False,
           comment="1 for the definitions the kernel name denotes: the best candidate and its C++ overloads in "
                   "the same file (the trace walks these); 0 for other candidates"),
    Column("condition", Text,
           comment="for one of several chosen C++ overloads in one file: the #if condition around it as written "
                   "(an #else branch reads `not (X)`); stand-ins under a negated feature test (`#if "
                   "!AT_CUDNN_ENABLED()`) are not chosen when a sibling is not under one"),
    Index("ix_op_kernel_links_dispatch", "dispatch_id"),
    Index("ix_op_kernel_links_kernel", "kernel"),
    comment="native_dispatch row -> the C++ definition(s) of its kernel.",
)

registration_links = Table(
    "registration_links", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(),
    Column("registration_id", Integer, nullable=False, comment="dispatch_registrations.id"),
    Column("stub", Text, nullable=False, comment="the stub registered"),
    Column("device", String(16), nullable=False, comment="the registration's device"),
    Column("kernel", Text, nullable=False, comment="the registered function as written"),
    *_definition(),
    Index("ix_registration_links_registration", "registration_id"),
    Index("ix_registration_links_stub", "stub"),
    comment="REGISTER_*DISPATCH site -> the definition of the registered function (its own file first).",
)

launch_links = Table(
    "launch_links", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(),
    Column("launch_id", Integer, nullable=False, comment="kernel_launches.id (chevron and handed launches)"),
    Column("kernel", Text, nullable=False, comment="the launched name as written"),
    *_definition(),
    Index("ix_launch_links_launch", "launch_id"),
    Index("ix_launch_links_symbol", "symbol_id"),
    comment="<<<>>> launch -> the __global__ definition it launches (its own file first, the launching function's "
            "namespace next; an overload whose body only asserts false, an enable_if stand-in, last).",
)

call_links = Table(
    "call_links", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(),
    Column("file", Text, nullable=False, comment="the calling file"),
    Column("qualifier", Text, nullable=False, comment="the call's qualifier as written (at::cuda::blas, '')"),
    Column("callee", Text, nullable=False, comment="the called name"),
    *_definition(),
    Column("overloads", Integer, nullable=False,
           comment="how many definitions the call may reach (C++ overloads of one name in one file); above 1 the "
                   "call is ambiguous to opindex and every one is listed, never one picked"),
    Column("condition", Text,
           comment="when overloads > 1: the #if condition around this one as written; a stand-in under a negated "
                   "feature test (`#if !AT_CUDNN_ENABLED()`) is dropped when a sibling is not under one"),
    Column("template_args", Text,
           comment="NULL: the row holds for every call of that name in that file. Set: it holds only for the calls "
                   "written with exactly these template arguments (calls.template_args), which name explicit "
                   "specializations among the definitions (gemm_internal<float>(...) -> the gemm_internal<float> "
                   "specialization, not all six); such calls use these rows instead of the NULL ones"),
    Index("ix_call_links_site", "file", "callee"),
    comment="C++/CUDA call (by calling file, qualifier and name) -> the helper definition(s) it reaches: a written "
            "qualifier must end the definition's qualified name (cpublas::gemm never links to at::cuda::blas::gemm), "
            "or a parse error lost the definition's outer namespaces (its scope is empty or ends the qualifier); "
            "then the same file first; a name with more than 3 definitions elsewhere and none in the file is left "
            "unlinked (too common to guess) unless they all sit in one header the calling file #includes; else, "
            "from a header, the definitions in the files that #include it "
            "(each, marked: which one a build sees depends on the including file), else the same folder. A call "
            "that builds a functor object (`binary_internal::MulFunctor<opmath_t>()`: a struct or class whose "
            "operator() is __device__ code) links to the class by the same rule, besides its constructor. A "
            "__device__ function is linked for the calls of a file's device code only (a __global__ kernel or a "
            "__device__ function calling it: the trace shows it below the kernel); a host call never reaches one. "
            "Op calls (at::x, tensor.x()) are not here: they go through the dispatcher (native_functions).",
)

stub_arguments = Table(
    "stub_arguments", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(),
    Column("file", Text, nullable=False, comment="file of the call that passes the stub"),
    Column("line", Integer, nullable=False, comment="line of that call"),
    Column("helper", Text, nullable=False, comment="qualified name of the helper called"),
    Column("parameter", Text, nullable=False, comment="the stub as the helper names it (a parameter: stub)"),
    Column("stub", Text, nullable=False, comment="the declared stub passed at the call (argmax_stub)"),
    Index("ix_stub_arguments_site", "file", "line"),
    comment="A helper called with a dispatch stub as an argument (argmax_argmin_impl(..., argmax_stub)): which "
            "declared stub its stub parameter stands for, read from the call's text at build time.",
)

device_reach = Table(
    "device_reach", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(),
    Column("symbol_id", Integer, nullable=False, comment="symbols.id of a C++/CUDA definition"),
    Column("distance", Integer, nullable=False,
           comment="calls (through call_links) from this definition to one that itself launches a kernel (<<<>>> or "
                   "a TensorIterator launcher), calls a vendor library, calls a dispatch stub or calls an op through "
                   "the dispatcher (at::x, not an allocation or view op; x.op(...) on a Tensor parameter or a Tensor local, "
                   "`auto result = at::empty(...)`); 0 for that one"),
    Column("reaches", String(16), nullable=False,
           comment="what the nearest such definition does: launch, library, stub or op; legacy when it calls a "
                   "legacy function the build generates (1.4's legacy::cuda::_th_bmm: legacy_kernel_links); functor for a functor "
                   "class (its operator() is __device__ code: distance 0, and building one does not make a caller "
                   "reach device code)"),
    Index("ix_device_reach_symbol", "symbol_id"),
    comment="Definitions from which device code (or another op) is reachable through helper calls, and how far: "
            "the trace follows a helper through any number of levels when it is here, and never when it is not.",
)

receiver_types = Table(
    "receiver_types", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(),
    Column("file", Text, nullable=False, comment="file of the method call"),
    Column("line", Integer, nullable=False, comment="line of the method call"),
    Column("receiver", Text, nullable=False, comment="the receiver, a local variable's name"),
    Column("declared", Text, nullable=False,
           comment="its declared type as written (c10::Device), or for `auto x = e;` the text `auto = e`"),
    Index("ix_receiver_types_site", "file", "line"),
    comment="Local variables that receive a method call named like a Tensor-method op (src_device.index()): the "
            "declaration above the call in the same function, read at build time, so the trace can tell a "
            "c10::Device from a Tensor. Parameters are not here: their types are in symbols.signature.",
)

generated_launches = Table(
    "generated_launches", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(),
    Column("symbol_id", Integer, nullable=False, comment="symbols.id of the Python def (torchgen) that writes it"),
    Column("function", Text, nullable=False, comment="its qualified name (torchgen.dest.ufunc.compute_ufunc_cuda...)"),
    Column("file", Text, nullable=False, comment="the generator's file"),
    Column("line", Integer, nullable=False, comment="the line of the generated call in the generator's text"),
    Column("launcher", Text, nullable=False, comment="the TensorIterator launcher the generated code calls"),
    Index("ix_generated_launches_symbol", "symbol_id"),
    comment="Launcher calls that codegen writes into generated C++ (torchgen's ufunc codegen emits "
            "`gpu_kernel(iter, ufunctor)` for ufunc_add_CUDA): read from the generator's text at build time, so "
            "a trace can go from a generated kernel to the launch machinery.",
)

functor_links = Table(
    "functor_links", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(),
    Column("function_id", Integer, nullable=False,
           comment="symbols.id of the function that calls a method of its parameter (sortCommon)"),
    Column("parameter", Text, nullable=False,
           comment="that parameter (sorter), or template parameter (exponential_kernel)"),
    Column("method", Text, nullable=False,
           comment="the method it calls on it (sort); '' when it calls the parameter itself (func_32bit(...))"),
    Column("functor", Text, nullable=False,
           comment="the class of an object passed for it (SmallBitonicSort), or, for method '', the function "
                   "passed by name (raw_cudnn_convolution_forward_out_32bit), as written; an op's API name "
                   "(at::sigmoid_out) has no definition columns: the op is called"),
    Column("file", Text, nullable=False, comment="file of the call that passes it"),
    Column("line", Integer, nullable=False, comment="line of that call"),
    *_definition(),
    Index("ix_functor_links_function", "function_id"),
    comment="Functor objects passed to a function that calls their method (`sortCommon(SmallBitonicSort{}, ...)`, "
            "whose body does `sorter.sort<A>(...)`): the definition of the method each passed class brings "
            "(SmallBitonicSort::sort). Also functions passed by name to a function that calls that parameter "
            "(split_batch_dim_to_32bit_out(..., raw_cudnn_convolution_forward_out_32bit), whose body does "
            "`func_32bit(...)`): the passed function, linked as a call of its name from the passing file. And "
            "classes passed as template arguments for a template parameter the template calls "
            "(`exponential_impl_<ExponentialStub, Generator>(...)`, whose body does `exponential_kernel<RNG>()(...)`): "
            "the class's operator(), method ''. The trace "
            "shows them under the call, the one its own call site passes when it passes one; device_reach counts "
            "them.",
)

legacy_kernel_links = Table(
    "legacy_kernel_links", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(),
    Column("dispatch_id", Integer,
           comment="native_dispatch.id of a row naming the legacy function; NULL for one only C++ code calls "
                   "(bmm_cuda's `legacy::cuda::_th_bmm(self, mat2)`)"),
    Column("kernel", Text, nullable=False, comment="the kernel as written (legacy::cuda::_th_sort)"),
    Column("declaration", Text, nullable=False, comment="the declaration that generates it (_th_sort, _thnn_nll_loss)"),
    Column("decl_file", Text, nullable=False, comment="aten/src/ATen/Declarations.cwrap or aten/src/ATen/nn.yaml"),
    Column("decl_line", Integer, nullable=False, comment="the line of its name: in that file"),
    Column("cname", Text, nullable=False,
           comment="the TH/THC/THNN function it calls: the declaration's cname (sort), for nn.yaml's with the part "
                   "the generated function runs (ClassNLLCriterion_updateOutput for _forward; _updateGradInput and "
                   "_accGradParameters for _backward)"),
    *_definition(),
    Index("ix_legacy_kernel_links_kernel", "kernel"),
    comment="Legacy kernels generated at build time (PyTorch 1.4 and earlier: LegacyTHFunctionsCUDA.cpp and "
            "LegacyTHFunctionsCPU.cpp are written from Declarations.cwrap and nn.yaml, so `legacy::cuda::_th_sort` "
            "has no definition in the source): the declaration that generates each, and the generic TH/THC/THNN "
            "function it calls for that backend (THCTensor_(sort) in THC/generic/ for CUDA, THTensor_(sort) in "
            "TH/generic/ for CPU; THNN_(X) in THCUNN/ or THNN/). Read from those files' text at build time; only "
            "for the legacy functions (named by a dispatch row or called as legacy::cuda::x(...)) the source does not "
            "define.",
)

LINK_TABLES = ["op_kernel_links", "registration_links", "launch_links", "call_links", "stub_arguments",
               "device_reach", "receiver_types", "generated_launches", "functor_links", "legacy_kernel_links"]
