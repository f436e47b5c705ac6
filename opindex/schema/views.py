"""Views for the common cross-layer joins (plain SQL that runs on SQLite and PostgreSQL).

They are recreated by every build and migration, so they always match the tables of this version.
"""
from __future__ import annotations

from ..plumbing import PLUMBING_OPS

_PLUMBING = ", ".join(f"'{op}'" for op in sorted(PLUMBING_OPS))  # our own constant names, not user text

_DEF_KINDS = "('function', 'method', 'impl_func')"

VIEWS: dict[str, str] = {
    "op_kernels": f"""
        SELECT n.full_name AS function, d.dispatch_key, d.kernel, d.implicit,
               s.qualified_name AS definition, s.kind, s.file, s.line
        FROM native_dispatch d
        JOIN native_functions n ON n.id = d.native_function_id
        LEFT JOIN symbols s ON s.checkout_id = d.checkout_id AND s.name = d.kernel
             AND s.language IN ('cpp', 'cuda') AND s.kind IN {_DEF_KINDS}""",
    "op_stubs": f"""
        SELECT n.full_name AS function, d.dispatch_key, d.kernel, c.stub, c.device_arg, c.file, c.line
        FROM native_dispatch d
        JOIN native_functions n ON n.id = d.native_function_id
        JOIN symbols s ON s.checkout_id = d.checkout_id AND s.name = d.kernel
             AND s.language IN ('cpp', 'cuda') AND s.kind IN {_DEF_KINDS}
        JOIN stub_calls c ON c.checkout_id = s.checkout_id AND c.caller = s.qualified_name AND c.file = s.file""",
    "stub_kernels": """
        SELECT r.stub, r.device, r.cpu_capability, r.macro, r.kernel, r.from_macro,
               r.file AS registered_in, r.line AS registered_line,
               s.qualified_name AS definition, s.file, s.line
        FROM dispatch_registrations r
        LEFT JOIN symbols s ON s.checkout_id = r.checkout_id AND s.name = r.kernel AND s.file = r.file
             AND s.kind IN ('function', 'method')""",
    "kernel_launch_sites": """
        SELECT k.qualified_name AS kernel, k.file AS defined_in, k.line AS defined_line,
               l.caller, l.template_args, l.config, l.file, l.line
        FROM symbols k
        JOIN kernel_launches l ON l.checkout_id = k.checkout_id AND l.kernel = k.name AND l.kind = 'chevron'
        WHERE k.kind = 'global_kernel'""",
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
    "op_kernels": "native function -> dispatch row -> C++ definition of the kernel (NULL definition: none indexed)."
                  " Columns: function, dispatch_key, kernel, implicit, definition, kind, file, line.",
    "op_stubs": "native function -> kernel definition -> the dispatch stubs it calls. Columns: function, "
                "dispatch_key, kernel, stub, device_arg, file, line (of the stub call).",
    "stub_kernels": "stub -> registration per device -> the registered function's definition in the same file. "
                    "Columns: stub, device, cpu_capability, macro, kernel, from_macro, registered_in, "
                    "registered_line, definition, file, line.",
    "kernel_launch_sites": "__global__ kernel -> its <<<>>> launch sites. Columns: kernel, defined_in, "
                           "defined_line, caller, template_args, config, file, line.",
    "python_compositions": "Python defs composed in Python: their bridges reach two or more ops (in-place twins such "
                           "as relu/relu_ count once; allocation, shape and view ops not at all). Columns: function, "
                           "file, ops, op_names.",
    "op_backward": "derivatives.yaml entry -> its formulas. Columns: function, dispatch_key, inputs, formula, "
                   "is_forward, uses_result, file, line.",
}
