"""The database contract that SQL users read.

Every table carries ``checkout_id`` so one database can later hold several checkouts; paths are relative to the
checkout root ("/"-separated), line numbers are 1-based. Each column has a ``comment``: ``opindex schema`` and the
schema section of docs/schema.md are generated from these comments, so the documentation cannot drift from the code.

Fact tables (one row per thing found in one file) are filled by the extractors; their columns, minus ``id`` and
``checkout_id``, are the fields of the row types extractors emit (opindex/records.py, generated from these tables
by ``python -m opindex.schema.ddl``). Nothing here is SQLite-specific: the same tables can live on PostgreSQL.
"""
from __future__ import annotations

from .core import metadata, checkouts, meta, files
from .registry import native_functions, native_dispatch, native_ufunc_loops, derivatives, derivative_formulas
from .code import symbols, calls
from .cpp import (macros, dispatch_stubs, dispatch_registrations, stub_calls, kernel_launches,
                  library_calls, type_dispatches, backend_choices, conditions, includes)
from .python import class_bases, module_state, python_imports, python_bridges, decompositions, generated_launch_sites
from .links import (LINK_TABLES, op_kernel_links, registration_links, launch_links, call_links,
                    stub_arguments, device_reach, receiver_types, generated_launches, functor_links,
                    legacy_kernel_links)
from .views import VIEWS

# Tables whose rows come from one source file each: rebuilt per file, deleted by file on re-index.
PER_FILE_TABLES = [
    "symbols", "calls", "macros", "dispatch_stubs", "dispatch_registrations", "stub_calls", "kernel_launches",
    "library_calls", "type_dispatches", "backend_choices", "conditions", "class_bases", "module_state",
    "python_imports", "python_bridges",
    "decompositions", "includes", "generated_launch_sites",
]
# Registry tables are filled from the two YAML files; rows of the formulas/dispatch tables point at their entry.
# Link tables are derived from the others by indexer/link.py, all of them again on every build.
REGISTRY_TABLES = ["native_functions", "native_dispatch", "native_ufunc_loops", "derivatives", "derivative_formulas"]

SCHEMA_VERSION = "0008"  # the alembic head revision this code writes

__all__ = ["metadata", "PER_FILE_TABLES", "REGISTRY_TABLES", "LINK_TABLES", "SCHEMA_VERSION", "VIEWS"] + [
    "checkouts", "meta", "files", "native_functions", "native_dispatch", "native_ufunc_loops", "derivatives",
    "derivative_formulas", "symbols", "calls", "macros", "dispatch_stubs", "dispatch_registrations", "stub_calls",
    "kernel_launches", "library_calls", "type_dispatches", "backend_choices", "conditions", "includes", "class_bases",
    "module_state", "generated_launch_sites",
    "python_imports",
    "python_bridges", "decompositions", "op_kernel_links", "registration_links", "launch_links", "call_links",
    "stub_arguments", "device_reach", "receiver_types", "generated_launches", "functor_links", "legacy_kernel_links",
]
