"""C++ (ATen) and CUDA facts: dispatch stubs, registrations, GPU launches, library calls."""
from __future__ import annotations

from sqlalchemy import Column, Index, Integer, String, Table, Text

from .core import metadata, checkout_fk, file_line


def _caller() -> Column:
    return Column("caller", Text, nullable=False,
                  comment="qualified name of the enclosing function, '' at file level")


def _from_macro(also: str = "") -> Column:
    return Column("from_macro", Text, comment=f"the #define it was expanded from (same file){also}, else NULL")


macros = Table(
    "macros", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(), *file_line(),
    Column("name", Text, nullable=False, comment="macro name"),
    Column("parameters", Text, comment="parameter list of a function-like macro, else NULL"),
    Column("body", Text, nullable=False, comment="replacement text, continuation lines joined"),
    Index("ix_macros_name", "name"),
    comment="#define directives (C++/CUDA): the REGISTER_*DISPATCH family is read from here.",
)

dispatch_stubs = Table(
    "dispatch_stubs", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(), *file_line(),
    Column("stub", Text, nullable=False, comment="stub name (add_stub)"),
    Column("action", String(8), nullable=False, comment="declare (DECLARE_DISPATCH) or define (DEFINE_DISPATCH)"),
    Column("fn_type", Text, comment="the function-pointer type of DECLARE_DISPATCH, else NULL"),
    _from_macro(),
    Index("ix_dispatch_stubs_stub", "stub"),
    comment="DECLARE_DISPATCH(fn_type, stub) and DEFINE_DISPATCH(stub) sites.",
)

dispatch_registrations = Table(
    "dispatch_registrations", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(), *file_line(),
    Column("stub", Text, nullable=False, comment="stub name, bare as dispatch_stubs and stub_calls hold it (a "
                                                 "namespace written in the macro is dropped: "
                                                 "REGISTER_DISPATCH(cpublas::gemm_stub, ...) is gemm_stub)"),
    Column("kernel", Text, comment="registered function as written, & removed (add_kernel); NULL for "
                                   "REGISTER_NO_CPU_DISPATCH"),
    Column("macro", Text, nullable=False, comment="REGISTER_DISPATCH, REGISTER_CUDA_DISPATCH, ..."),
    Column("device", String(16), nullable=False,
           comment="CPU, CUDA, HIP, MPS, XPU, PrivateUse1; a plain REGISTER_DISPATCH takes it from where the file "
                   "is compiled (native/cpu/** CPU; .cu, cuda/, cudnn/, miopen/ CUDA; mps/ MPS ...)"),
    Column("cpu_capability", Text, comment="AVX2, AVX512, VSX, ZVECTOR, SVE256, ... for per-ISA forms, else NULL"),
    _from_macro("; `ufunc_inner_loop` for the REGISTER_DISPATCH(<op>_stub, &<op>_kernel) torchgen's ufunc codegen "
                "writes for such an entry, CPU and CUDA (file and line: the entry's ufunc_inner_loop:)"),
    Index("ix_dispatch_registrations_stub", "stub"),
    Index("ix_dispatch_registrations_kernel", "kernel"),
    comment="REGISTER_*DISPATCH sites: which function a stub runs on a device.",
)

stub_calls = Table(
    "stub_calls", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(), *file_line(),
    Column("stub", Text, nullable=False, comment="stub name (add_stub)"),
    Column("device_arg", Text, comment="the first argument as written (iter.device_type(), kCUDA)"),
    _caller(),
    _from_macro(),
    Index("ix_stub_calls_stub", "stub"),
    Index("ix_stub_calls_caller", "caller"),
    comment="Calls that may be of a dispatch stub: a callee named *_stub, or a bare call whose first argument names "
            "a device (stub(device, ...)). It is a stub call when the stub is declared (DECLARE_DISPATCH) or is a "
            "parameter of the calling function (opindex/pytorch/stubs.py); the link step and the trace skip the "
            "others (`Device(kCUDA, current_device())` builds a Device).",
)

kernel_launches = Table(
    "kernel_launches", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(), *file_line(),
    Column("kernel", Text, nullable=False,
           comment="the __global__ kernel launched with <<<>>>; for launcher calls the launcher (gpu_kernel)"),
    Column("kind", String(16), nullable=False,
           comment="chevron (k<<<...>>>), handed (a __global__ passed by name to a call that launches it), "
                   "tensor_iterator (gpu_kernel & friends), cub, thrust"),
    Column("template_args", Text, comment="template arguments as written (<scalar_t>), else NULL"),
    Column("config", Text, comment="launch configuration inside <<< >>> as written, else NULL"),
    _caller(),
    _from_macro(),
    Index("ix_kernel_launches_kernel", "kernel"),
    Index("ix_kernel_launches_caller", "caller"),
    comment="GPU launches: <<<>>> sites, TensorIterator launchers, cub::/thrust:: algorithms.",
)

backend_choices = Table(
    "backend_choices", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(), *file_line(),
    Column("callee", Text, nullable=False, comment="the function called for the choice (_select_conv_backend)"),
    Column("qualifier", Text, nullable=False, comment="its qualifier as written, '' for a bare call"),
    Column("variable", Text, nullable=False, comment="the variable its result initializes (backend); '' for if"),
    Column("declared", Text, nullable=False, comment="that variable's type as written (ConvBackend); '' for if"),
    Column("tested_line", Integer, nullable=False,
           comment="the first line after the call that branches on it; for if, the call's own line"),
    Column("test", String(16), nullable=False,
           comment="switch (`switch (backend)`), compare (`backend == ConvBackend::Cudnn`, the constant of "
                   "the variable's declared type) or if (the call is in an `if (...)` condition on its line: "
                   "`if (train && is_fused_kernel_acceptable(input, p))`)"),
    _caller(),
    Index("ix_backend_choices_caller", "caller"),
    comment="Calls that choose a path: `ConvBackend backend = _select_conv_backend(...);` whose result the same "
            "function then branches on (a switch on the variable, or a comparison with a constant of its type, or "
            "of any type when it is declared `auto`), and calls in an `if (...)` condition (methods only on a "
            "plainly named object: `params.use_cudnn(input)`). "
            "The chooser runs no device code itself; the trace shows it where the choice is made.",
)

conditions = Table(
    "conditions", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(), *file_line(),
    Column("end_line", Integer, nullable=False, comment="the last line the condition holds for"),
    Column("kind", String(8), nullable=False,
           comment="#if (one branch of a preprocessor group: `#if`, `#ifdef`, `#ifndef`, `#elif` or `#else` up to "
                   "the group's next directive; include guards are left out), if (the block of an `if` on one "
                   "name a default argument can decide, or on a global setting, or a dtype, or a branch hint "
                   "(C10_UNLIKELY(x)), or a C++ test joining a bare name by && to anything (`... && align_corners`), or "
                   "a C++ test that reads a tensor's sizes or an element's size or compares a name with arithmetic of "
                   "names (`self.numel() == self.size(dim)`, `dim_size*sizeof(scalar_t) <= 4096`, `dim == ndim - "
                   "1`: a traced call's tensors and dtype decide it), or "
                   "its else block, or `not (...)` over the rest of the enclosing block after a then-block that "
                   "ends in a return or throw; C++ and Python) "
                   "or #error (one line that cannot compile: an `#error` directive or `static_assert(0/false, ...)`"
                   "; the #if branch around it is never built), or switch (one case of a C++ `switch`, from its "
                   "label to the next label with statements of its own)"),
    Column("condition", Text, nullable=False,
           comment="as written, continuation lines joined: `CUDNN_VERSION >= 7400`; `#ifdef X` reads "
                   "`defined(X)`, `#ifndef X` `!defined(X)`, an #else `not (A || B)` of the branches before it; "
                   "for if: `label_smoothing > 0.0`, `weight.defined()`, `!train`, `max_norm is not None`, "
                   "`globalContext().deterministicAlgorithms()`, an optional's value against a string "
                   "`*rounding_mode == \"trunc\"`, an else block `not (...)`; for switch: `E == X` "
                   "(`E == X || E == Y` for labels sharing statements, `not (...)` of the others for default; a "
                   "switch on a local `auto E = init;` tests init: `input_.suggest_memory_format() == "
                   "MemoryFormat::ChannelsLast`); for #error: the line as written"),
    _caller(),
    Index("ix_conditions_file", "file"),
    comment=("Conditions code runs under: each branch of every #if group of the C++/CUDA sources (USE_ROCM, "
             "CUDA_VERSION, AT_CUDNN_ENABLED(), `#if 0`), and the blocks of tests on one name that a default "
             "argument can decide: `if (x OP literal)`, `if (x.has_value())`, `if (x.defined())`, `if (x)` in C++ "
             "functions; in Python defs any one-line test of the def's parameters made of names, literals, "
             "comparisons, and/or/not, isinstance() and len() (`if x is not None:`, `elif p == \"nuc\":`), and "
             "`not (test)` over the rest of a block after a test whose block returns on every path. The trace skips "
             "code "
             "another platform's build compiles (`#ifdef __HIP_PLATFORM_HCC__` on --device cuda), shows the #if on "
             "a hop, and ranks a branch that the op's default arguments do not take (`label_smoothing > 0.0` with "
             "label_smoothing=0.0; F.embedding's `max_norm is not None`) after the default one."),
)

includes = Table(
    "includes", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(), *file_line(),
    Column("path", Text, nullable=False, comment="the included path as written between <> or \"\" (ATen/ATen.h)"),
    Index("ix_includes_file", "file"),
    comment="#include lines of the C++/CUDA sources, any line that starts with one (inside #if branches and block "
            "comments too): the link step reads a header's calls in the files that include it.",
)

library_calls = Table(
    "library_calls", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(), *file_line(),
    Column("library", String(16), nullable=False,
           comment="cudnn, cublas, cufft, cusolver, cusparse, cub, thrust, mkldnn, mkl, miopen, blas; mpsgraph "
                   "and metal (Apple's frameworks, from Objective-C++)"),
    Column("function", Text, nullable=False, comment="the called name as written (cudnnRNNForward, "
                                                     "at::cuda::blas::gemm, runMPSGraph; an Objective-C message "
                                                     "send as [receiver selector:])"),
    _caller(),
    _from_macro(),
    Index("ix_library_calls_caller", "caller"),
    comment="Calls into vendor libraries, classified.",
)

type_dispatches = Table(
    "type_dispatches", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(), *file_line(),
    Column("macro", Text, nullable=False, comment="AT_DISPATCH_FLOATING_TYPES_AND2, ..."),
    Column("dtypes", Text, nullable=False, comment="the dtype family: the macro name after AT_DISPATCH_"),
    Column("name", Text, comment="the name string argument (\"my_op_cuda\"), unquoted, else NULL"),
    _caller(),
    _from_macro(),
    Index("ix_type_dispatches_caller", "caller"),
    comment="AT_DISPATCH_* sites.",
)
