"""native_functions.yaml and derivatives.yaml, one row per entry, dispatch row and formula."""
from __future__ import annotations

from sqlalchemy import Boolean, Column, ForeignKey, Index, Integer, Table, Text

from .core import metadata, checkout_fk, file_line

native_functions = Table(
    "native_functions", metadata,
    Column("id", Integer, primary_key=True, comment="entry id"),
    checkout_fk(),
    Column("name", Text, nullable=False, comment="operator base name, with a trailing _ for in-place (add_)"),
    Column("overload", Text, nullable=False, comment="overload name ('' for the default overload): out, Tensor"),
    Column("full_name", Text, nullable=False, comment="name.overload, or name when overload is '' (add.out)"),
    Column("schema", Text, nullable=False, comment="the func: text as written"),
    Column("variants", Text, nullable=False, comment="'function', 'method' or 'function, method' (default function)"),
    Column("structured", Boolean, nullable=False, comment="structured: True"),
    Column("structured_delegate", Text, comment="the .out entry holding the kernels (add.out), else NULL"),
    Column("structured_inherits", Text, comment="structured_inherits: base class, else NULL"),
    Column("python_module", Text, comment="python_module: (nn, fft, linalg, special, nested, sparse), else NULL"),
    Column("tags", Text, comment="tags, comma-separated, else NULL"),
    Column("autogen", Text, comment="autogen: generated variants, comma-separated, else NULL"),
    Column("category_override", Text, comment="category_override:, else NULL"),
    Column("ufunc_inner_loop", Text, comment="ufunc_inner_loop: as 'Key: name (dtypes); ...', else NULL"),
    Column("is_out", Boolean, nullable=False, comment="has kwarg-only mutable Tensor outputs (an out= overload)"),
    *file_line(),
    Index("ix_native_functions_name", "name"),
    Index("ix_native_functions_full_name", "full_name"),
    comment="One row per native_functions.yaml entry.",
)

native_dispatch = Table(
    "native_dispatch", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(),
    Column("native_function_id", Integer, ForeignKey("native_functions.id"), nullable=False,
           comment="the entry (native_functions.id)"),
    Column("function", Text, nullable=False, comment="the entry's full_name, repeated for convenience"),
    Column("dispatch_key", Text, nullable=False, comment="CPU, CUDA, CompositeImplicitAutograd, SparseCPU, ..."),
    Column("kernel", Text, nullable=False, comment="C++ kernel name as written (add_out, at::native::foo)"),
    Column("implicit", Boolean, nullable=False,
           comment="true for rows torchgen derives that the file does not write: the CompositeImplicitAutograd "
                   "row of an entry with neither dispatch: nor structured_delegate, and the CPU/CUDA rows "
                   "(ufunc_add_CPU) of a ufunc_inner_loop entry; WHERE NOT implicit gives exactly the rows written"),
    *file_line(),
    Index("ix_native_dispatch_fn", "native_function_id"),
    Index("ix_native_dispatch_kernel", "kernel"),
    comment="One row per (entry, dispatch key): 'CPU, CUDA: add_out' is two rows.",
)

native_ufunc_loops = Table(
    "native_ufunc_loops", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(),
    Column("native_function_id", Integer, ForeignKey("native_functions.id"), nullable=False,
           comment="the entry (native_functions.id)"),
    Column("function", Text, nullable=False, comment="the entry's full_name"),
    Column("ufunc_key", Text, nullable=False, comment="Generic, ScalarOnly, CPUScalar, CUDAFunctor, ..."),
    Column("loop", Text, nullable=False, comment="the inner loop name, implemented in native/ufunc/<loop>.h"),
    Column("dtypes", Text, comment="the dtype list in parentheses, as written"),
    *file_line(),
    Index("ix_native_ufunc_loops_loop", "loop"),
    comment="One row per ufunc_inner_loop key of an entry.",
)

derivatives = Table(
    "derivatives", metadata,
    Column("id", Integer, primary_key=True, comment="entry id"),
    checkout_fk(),
    Column("name", Text, nullable=False, comment="operator base name (mm, add_)"),
    Column("overload", Text, nullable=False, comment="overload name, '' for none"),
    Column("full_name", Text, nullable=False, comment="name.overload, or name"),
    Column("schema", Text, nullable=False, comment="the name: text as written (a schema)"),
    Column("output_differentiability", Text, comment="output_differentiability: as written, else NULL"),
    Column("dispatch", Text, comment="keys of the dispatch: section, comma-separated, else NULL"),
    *file_line(),
    Index("ix_derivatives_full_name", "full_name"),
    Index("ix_derivatives_name", "name"),
    comment="One row per derivatives.yaml entry.",
)

derivative_formulas = Table(
    "derivative_formulas", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(),
    Column("derivative_id", Integer, ForeignKey("derivatives.id"), nullable=False,
           comment="the entry (derivatives.id)"),
    Column("function", Text, nullable=False, comment="the entry's full_name"),
    Column("dispatch_key", Text, nullable=False,
           comment="'Default', or the key of the dispatch: section the formula sits in"),
    Column("inputs", Text, nullable=False,
           comment="the names it covers, as written ('self', 'input, weight, bias'); 'result' names a forward "
                   "(JVP) formula"),
    Column("formula", Text, nullable=False, comment="the formula text"),
    Column("is_forward", Boolean, nullable=False, comment="a forward-mode formula (its key names result/resultN)"),
    Column("uses_result", Boolean, nullable=False, comment="the formula reads result or resultN (saved outputs)"),
    Column("uses_grads", Boolean, nullable=False, comment="the formula reads grads (all output gradients)"),
    *file_line(),
    Index("ix_derivative_formulas_derivative", "derivative_id"),
    comment="One row per formula of a derivatives.yaml entry.",
)
