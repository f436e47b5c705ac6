"""Views for the common cross-layer joins (SQLite SQL; on PostgreSQL instr and group_concat are strpos and
string_agg).

They are recreated by every build and migration, so they always match the tables of this version. In every view a
column named `kernel` holds a bare name (`WHERE kernel = 'cunn_SoftMaxForward'` finds it however the source
qualified it) and `definition` the qualified name of the definition it denotes (NULL when opindex found none).
"""
from __future__ import annotations

from ..pytorch.plumbing import PLUMBING_OPS

_PLUMBING = ", ".join(f"'{op}'" for op in sorted(PLUMBING_OPS))  # our own constant names, not user text


def _bare(expr: str) -> str:
    """SQL for the bare name of a C++ name as written: template arguments and namespaces dropped
    (`CPU_CAPABILITY::abs_kernel` -> `abs_kernel`, `qadd_kernel<false>` -> `qadd_kernel`). rtrim(x, chars) with
    every character of x but ':' leaves the text up to the last ':'; replace() drops that prefix (it cannot recur
    in the rest, which has no ':')."""
    name = f"(CASE WHEN instr({expr}, '<') > 0 THEN substr({expr}, 1, instr({expr}, '<') - 1) ELSE {expr} END)"
    return f"replace({name}, rtrim({name}, replace({name}, ':', '')), '')"


def _template_args(expr: str) -> str:
    """SQL for the template arguments of a name as written (`qadd_kernel<false>` -> `<false>`; '' when none)."""
    return f"(CASE WHEN instr({expr}, '<') > 0 THEN substr({expr}, instr({expr}, '<')) ELSE '' END)"



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
    "stub_kernels": f"""
        SELECT r.stub, r.device, r.cpu_capability, r.macro, {_bare("r.kernel")} AS kernel,
               {_template_args("r.kernel")} AS template_args, r.from_macro,
               r.file AS registered_in, r.line AS registered_line,
               k.definition, k.def_file AS file, k.def_line AS line
        FROM dispatch_registrations r
        LEFT JOIN registration_links k ON k.registration_id = r.id""",
    "kernel_launch_sites": """
        SELECT s.name AS kernel, s.qualified_name AS definition, k.def_file AS defined_in,
               k.def_line AS defined_line, l.caller, l.template_args, l.config, l.file, l.line
        FROM kernel_launches l
        JOIN launch_links k ON k.launch_id = l.id
        JOIN symbols s ON s.id = k.symbol_id""",
    "call_targets": """
        SELECT c.caller, c.file, c.line, c.qualifier, c.callee, k.definition, k.def_file, k.def_line, k.overloads,
               k.condition
        FROM calls c
        JOIN call_links k ON k.file = c.file AND k.qualifier = c.qualifier AND k.callee = c.callee AND (
            k.template_args = c.template_args OR (k.template_args IS NULL AND NOT EXISTS (
                SELECT 1 FROM call_links t WHERE t.file = c.file AND t.qualifier = c.qualifier AND t.callee = c.callee
                AND t.template_args = c.template_args)))
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
                  "Columns: function, dispatch_key, kernel (the YAML's, bare), implicit, definition (qualified), "
                  "kind, file, line.",
    "op_stubs": "native function -> kernel definition (op_kernel_links.chosen) -> the dispatch stubs it calls. "
                "Columns: function, dispatch_key, kernel, stub, device_arg, file, line (of the stub call).",
    "stub_kernels": "stub -> registration per device -> the registered function's definition (registration_links: "
                    "its own file first). Columns: stub, device, cpu_capability, macro, kernel (bare: "
                    "`&CPU_CAPABILITY::abs_kernel` is abs_kernel; dispatch_registrations.kernel keeps it as "
                    "written), template_args (`<false>` of `qadd_kernel<false>`, else ''), from_macro, "
                    "registered_in, registered_line, definition (qualified), file, line.",
    "kernel_launch_sites": "__global__ kernel -> its <<<>>> launch sites (launch_links). Columns: kernel "
                           "(bare name), definition (qualified name), defined_in, defined_line, caller, "
                           "template_args, config, file, line.",
    "call_targets": "C++/CUDA call site -> the helper definition(s) it reaches (call_links; overloads > 1: every "
                    "C++ overload the call may reach, one row each; a call written with template arguments that name "
                    "explicit specializations, gemm_internal<float>(...), reaches only those; same-file definitions "
                    "under alternative #if branches are each a row with that branch's condition, and the build "
                    "decides which one runs). Columns: caller, file, line, qualifier, callee, definition, def_file, "
                    "def_line, overloads, condition.",
    "python_compositions": "Python defs composed in Python: their bridges reach two or more ops (in-place twins such "
                           "as relu/relu_ count once; allocation, shape and view ops not at all). Columns: function, "
                           "file, ops, op_names.",
    "op_backward": "derivatives.yaml entry -> its formulas. Columns: function, dispatch_key, inputs, formula, "
                   "is_forward, uses_result, file, line.",
}
