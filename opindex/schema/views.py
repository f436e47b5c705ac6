"""Views for the common cross-layer joins (plain SQL that runs on SQLite and PostgreSQL).

They are recreated by every build and migration, so they always match the tables of this version.
"""
from __future__ import annotations

from ..pytorch.plumbing import PLUMBING_OPS

_PLUMBING = ", ".join(f"'{op}'" for op in sorted(PLUMBING_OPS))  # our own constant names, not user text


VIEWS: dict[str, str] = {
    "op_kernels": """
        SELECT n.full_name AS function, d.dispatch_key, d.kernel, d.implicit,
               k.definition, s.kind, k.def_file AS file, k.def_line AS line
        FROM native_dispatch d
        JOIN native_functions n ON n.id = d.native_function_id
        JOIN op_kernel_links k ON k.dispatch_id = d.id AND k.chosen
        LEFT JOIN symbols s ON s.id = k.symbol_id""",
    "op_stubs": """
        SELECT n.full_name AS function, d.dispatch_key, d.kernel, c.stub, c.device_arg, c.file, c.line
        FROM native_dispatch d
        JOIN native_functions n ON n.id = d.native_function_id
        JOIN op_kernel_links k ON k.dispatch_id = d.id AND k.chosen
        JOIN stub_calls c ON c.checkout_id = k.checkout_id AND c.caller = k.definition AND c.file = k.def_file""",
    "stub_kernels": """
        SELECT r.stub, r.device, r.cpu_capability, r.macro, r.kernel, r.from_macro,
               r.file AS registered_in, r.line AS registered_line,
               k.definition, k.def_file AS file, k.def_line AS line
        FROM dispatch_registrations r
        LEFT JOIN registration_links k ON k.registration_id = r.id""",
    "kernel_launch_sites": """
        SELECT s.qualified_name AS kernel, s.name AS kernel_name, k.def_file AS defined_in,
               k.def_line AS defined_line, l.caller, l.template_args, l.config, l.file, l.line
        FROM kernel_launches l
        JOIN launch_links k ON k.launch_id = l.id
        JOIN symbols s ON s.id = k.symbol_id""",
    "call_targets": """
        SELECT c.caller, c.file, c.line, c.qualifier, c.callee, k.definition, k.def_file, k.def_line, k.overloads
        FROM calls c
        JOIN call_links k ON k.file = c.file AND k.qualifier = c.qualifier AND k.callee = c.callee
        WHERE NOT c.is_method AND c.language != 'python'""",
    "python_compositions": f"""
        SELECT caller AS function, file, count(DISTINCT rtrim(op, '_')) AS ops,
               group_concat(DISTINCT op) AS op_names
        FROM python_bridges
        WHERE caller != '' AND op NOT IN ({_PLUMBING})
        GROUP BY caller, file
        HAVING count(DISTINCT rtrim(op, '_')) >= 2""",
    "op_backward": """
        SELECT d.full_name AS function, f.dispatch_key, f.inputs, f.formula, f.is_forward, f.uses_result,
               f.file, f.line
        FROM derivatives d JOIN derivative_formulas f ON f.derivative_id = d.id""",
}

VIEW_DOCS: dict[str, str] = {
    "op_kernels": "native function -> dispatch row -> the C++ definition(s) its kernel name denotes "
                  "(op_kernel_links.chosen: what `opindex trace` walks; NULL definition: none found by opindex). "
                  "Columns: function, dispatch_key, kernel, implicit, definition, kind, file, line.",
    "op_stubs": "native function -> kernel definition (op_kernel_links.chosen) -> the dispatch stubs it calls. "
                "Columns: function, dispatch_key, kernel, stub, device_arg, file, line (of the stub call).",
    "stub_kernels": "stub -> registration per device -> the registered function's definition (registration_links: "
                    "its own file first). Columns: stub, device, cpu_capability, macro, kernel, from_macro, "
                    "registered_in, registered_line, definition, file, line.",
    "kernel_launch_sites": "__global__ kernel -> its <<<>>> launch sites (launch_links). Columns: kernel "
                           "(qualified), kernel_name (bare), defined_in, defined_line, caller, template_args, config, "
                           "file, line.",
    "call_targets": "C++/CUDA call site -> the helper definition(s) it reaches (call_links; overloads > 1: every "
                    "C++ overload the call may reach, one row each). Columns: caller, file, line, qualifier, callee, "
                    "definition, def_file, def_line, overloads.",
    "python_compositions": "Python defs composed in Python: their bridges reach two or more ops (in-place twins such "
                           "as relu/relu_ count once; allocation, shape and view ops not at all). Columns: function, "
                           "file, ops, op_names.",
    "op_backward": "derivatives.yaml entry -> its formulas. Columns: function, dispatch_key, inputs, formula, "
                   "is_forward, uses_result, file, line.",
}
