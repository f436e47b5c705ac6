"""Facts shared by the C++, CUDA and Python layers: definitions and call sites."""
from __future__ import annotations

from sqlalchemy import Boolean, Column, Index, Integer, String, Table, Text

from .core import metadata, checkout_fk, file_line

symbols = Table(
    "symbols", metadata,
    Column("id", Integer, primary_key=True, comment="symbol id"),
    checkout_fk(),
    *file_line(),
    Column("end_line", Integer, nullable=False, comment="1-based last line of the definition"),
    Column("language", String(16), nullable=False, comment="python, cpp or cuda"),
    Column("kind", String(24), nullable=False,
           comment="C++/CUDA: function, method, global_kernel (__global__), device_function (__device__), "
                   "meta_func (TORCH_META_FUNC), precompute_meta_func, impl_func (TORCH_IMPL_FUNC), class, struct; "
                   "Python: class, function, method"),
    Column("name", Text, nullable=False,
           comment="the unqualified name; for TORCH_META_FUNC(x)/TORCH_IMPL_FUNC(x) it is x, the YAML kernel name; "
                   "for TORCH_META_FUNC2(x, o) it is x_o"),
    Column("qualified_name", Text, nullable=False,
           comment="C++: at::native::relu, at::native::structured_add_out (TORCH_IMPL_FUNC); "
                   "Python: dotted module path, torch.nn.modules.rnn.LSTM.forward"),
    Column("scope", Text, nullable=False, comment="enclosing namespaces/classes (C++ ::, Python .), '' at top level"),
    Column("signature", Text, comment="the parameter list as written, whitespace collapsed"),
    Column("is_template", Boolean, nullable=False, comment="C++ template definition"),
    Column("from_macro", Text, comment="the #define it was expanded from (same file), else NULL"),
    Column("template_args", Text,
           comment="C++: the template arguments of an explicit specialization, as written, whitespace collapsed "
                   "(`<float>` for `template <> void gemm<float>(...)`, `<bool>` for `template <> struct "
                   "prod_functor<bool> {...}`); NULL for any other definition"),
    Column("template_parameters", Text,
           comment="C++ template: the names of its template parameters in order, a JSON array (`[\"exponential_kernel\", "
                   "\"RNG\"]` for `template<template<typename> class exponential_kernel, typename RNG>`; '' for an "
                   "unnamed one; `[]` for an explicit specialization's `template <>` or when its head was not read); NULL for "
                   "any other definition"),
    Index("ix_symbols_name", "name"),
    Index("ix_symbols_qualified_name", "qualified_name"),
    comment="Definitions: C++/CUDA functions, methods, kernels, structured kernels, classes; Python classes and defs.",
)

calls = Table(
    "calls", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(),
    *file_line(),
    Column("language", String(16), nullable=False, comment="python, cpp or cuda"),
    Column("caller", Text, nullable=False,
           comment="qualified name of the enclosing function (symbols.qualified_name), '' at file level"),
    Column("callee", Text, nullable=False, comment="the called name, unqualified (clamp_min, linear)"),
    Column("qualifier", Text, nullable=False,
           comment="what stands before it as written: 'at', 'at::native', 'at::cuda::blas', 'F', 'torch._C._nn'; "
                   "for a method call the receiver text (self, input, iter); '' for a bare call"),
    Column("is_method", Boolean, nullable=False, comment="a method call (obj.f(...) / obj->f(...))"),
    Column("template_args", Text,
           comment="C++: the explicit template arguments of a call that is not a method call, as written, "
                   "whitespace collapsed (`<float>` for `gemm_internal<float>(...)`); NULL when none are written"),
    Column("arguments", Text,
           comment="C++: the call's arguments as written, split at top level, a JSON array of strings (comments "
                   "dropped, whitespace collapsed; one longer than 120 characters is cut and ends in '...'): "
                   "`[\"iter\", \"SmallBitonicSort{}\"]`; a Tensor operator's (callee `operator!=`, the receiver "
                   "its Tensor operand) holds the right operand where the receiver is the left one (`self != self`: "
                   "`[\"self\"]`; `x += y`: `[\"y\"]`), `[]` for a unary operator, NULL where the Tensor is the right "
                   "operand (`(1 - ls) * nllloss`); NULL for Python calls and for calls of a temporary object"),
    Column("receiver_type", Text,
           comment="C++ method call on a plainly named local variable (not a parameter, `self` or `this`): the type "
                   "its last declaration above the call in the same function declares, as written (c10::Device), "
                   "or for `auto x = e;` the text `auto = e`; else NULL"),
    Index("ix_calls_callee", "callee"),
    Index("ix_calls_caller", "caller"),
    comment="Call sites. In C++ only calls inside function bodies are recorded, and neither callees in ALL_CAPS "
            "(macros such as TORCH_CHECK) nor casts (static_cast<T>(x) and the other three: operators, not calls); "
            "Python calls at module level have caller ''. A receiver longer than 120 characters is cut and ends in "
            "'...'.",
)
