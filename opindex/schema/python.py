"""Python-layer facts: classes' bases, module state, imports, bridges into C++, decompositions."""
from __future__ import annotations

from sqlalchemy import Column, Index, Integer, String, Table, Text

from .core import metadata, checkout_fk, file_line

class_bases = Table(
    "class_bases", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(), *file_line(),
    Column("class_name", Text, nullable=False, comment="qualified name of the class (symbols.qualified_name)"),
    Column("base", Text, nullable=False, comment="the base as written (Module, nn.Module, RNNBase)"),
    Column("position", Integer, nullable=False, comment="0-based position in the bases list"),
    Index("ix_class_bases_class", "class_name"),
    comment="Base classes of Python classes, as written; resolved across files by the query layer.",
)

module_state = Table(
    "module_state", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(), *file_line(),
    Column("class_name", Text, nullable=False, comment="qualified name of the class"),
    Column("name", Text, nullable=False, comment="attribute or parameter name"),
    Column("kind", String(16), nullable=False,
           comment="init_param (an __init__ parameter, self excluded), parameter (self.x = Parameter(...) or "
                   "self.register_parameter('x', ...) in any method), buffer (self.register_buffer('x', ...))"),
    Index("ix_module_state_class", "class_name"),
    comment="What an nn.Module takes in __init__ and the parameters and buffers it registers.",
)

python_imports = Table(
    "python_imports", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(), *file_line(),
    Column("module", Text, nullable=False, comment="the importing module (torch.nn.functional)"),
    Column("name", Text, nullable=False,
           comment="the name bound in that module (F, _VF, relu; * for `from x import *`; the dotted path as "
                   "written for a plain `import a.b`)"),
    Column("target", Text, nullable=False,
           comment="the absolute dotted thing it names (torch.nn.functional, torch._VF, torch._C._nn.linear)"),
    Column("kind", String(8), nullable=False,
           comment="import, from (from x import y; relative imports made absolute), alias (a module-level "
                   "`name = dotted.name` or `name = _add_docstr(dotted.name, ...)` assignment), "
                   "all (a name listed in __all__; target is the module's own name), dispatch (one row per branch "
                   "def of a module-level `name = boolean_dispatch(..., if_true=a, if_false=b)`: F.max_pool2d)"),
    Index("ix_python_imports_module_name", "module", "name"),
    comment="Module-level names bound by imports, aliases and __all__ (imports inside if/try blocks count; imports "
            "inside defs do not): the re-exports name resolution follows.",
)

python_bridges = Table(
    "python_bridges", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(), *file_line(),
    Column("caller", Text, nullable=False,
           comment="qualified name of the enclosing def (or class body), '' at module level: a module-level alias "
                   "to C++ (linear = _add_docstr(torch._C._nn.linear, ...)) is a bridge with caller ''"),
    Column("kind", String(24), nullable=False,
           comment="VF (_VF.x), variable_functions (torch._C._VariableFunctions.x), c_namespace "
                   "(torch._C._nn.x and _fft/_linalg/_special/_nested/_sparse), torch_ops (torch.ops.<ns>.x, "
                   "torch.ops.<ns>.x.overload), torch (torch.x(...) with x lowercase and not a Python helper such "
                   "as no_grad or device), tensor_method (p.x(...) where p is a parameter of the enclosing def "
                   "not annotated as a non-Tensor; a method's self only inside class Tensor). Names resolve through the "
                   "file's imports and aliases (`from torch import _VF`, `aten = torch.ops.aten`); "
                   "has_torch_function/handle_torch_function plumbing is never a bridge"),
    Column("namespace", Text, nullable=False,
           comment="_VF, _VariableFunctions, _nn, _fft, ..., the torch.ops namespace (aten, prims, ...), torch, "
                   "Tensor"),
    Column("op", Text, nullable=False, comment="the operator name reached (lstm, linear, relu)"),
    Column("overload", Text, comment="the overload for torch.ops.<ns>.x.overload, else NULL"),
    Column("text", Text, nullable=False,
           comment="the callee as written (_VF.lstm, torch.ops.aten.mm.default, input.softmax)"),
    Index("ix_python_bridges_caller", "caller"),
    Index("ix_python_bridges_op", "op"),
    comment="Python calls that cross into C++, classified.",
)

decompositions = Table(
    "decompositions", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(), *file_line(),
    Column("op", Text, nullable=False, comment="the aten operator covered (addmm); an operator of another "
                                               "namespace with its prefix (mkldnn::_linear_pointwise)"),
    Column("overload", Text, comment="its overload (default, out, Tensor), NULL when the packet is named"),
    Column("kind", String(16), nullable=False,
           comment="decomposition (@register_decomposition outside torch/_refs), reference (a module-level def in "
                   "torch/_refs/**: registered by @register_decomposition there, or listed in its module's "
                   "__all__, then op is the def's name), meta (@register_meta); also a module-level call of a "
                   "helper that registers one: register_inplace(aten.x_, ...) and "
                   "_create_binary_float_meta_func(aten.x) (meta) for the op they name, `x_ = _make_inplace(x)` "
                   "and `x_copy = _make_copy_from_view(aten.x)` for the op named like the variable; skipped: an "
                   "op activate_meta's own list leaves to its C++ Meta kernel (`elif op_overload.name() in "
                   "{\"aten::clone\", ...}: pass`), overload `default` for a name without one, line the "
                   "name's, function torch._meta_registrations.activate_meta"),
    Column("function", Text, nullable=False,
           comment="qualified name of the Python def implementing it, line that def's line; for a helper's call "
                   "the module's name of the helper (torch._refs._make_copy_from_view), or of the def "
                   "_make_inplace wraps (torch._refs.abs), line the call's"),
    Index("ix_decompositions_op", "op"),
    comment="Python decompositions, references and meta functions, with the ops they cover.",
)

generated_launch_sites = Table(
    "generated_launch_sites", metadata,
    Column("id", Integer, primary_key=True, comment="row id"),
    checkout_fk(), *file_line(),
    Column("launcher", Text, nullable=False, comment="the TensorIterator launcher named in the text (gpu_kernel)"),
    Column("caller", Text, nullable=False, comment="qualified name of the innermost def around that line"),
    comment="TensorIterator launcher calls (`gpu_kernel(`, `launch_...(`) written in the text of torchgen's Python "
            "defs (the C++ they generate); generated_launches links them to the def.",
)
