"""Names (issue 29, item 4): every command that takes a name suggests close names when it finds nothing (op, stub,
find, callers, callees, as trace does), and `opindex sql` names the tables or columns close to an unknown one and
points to `opindex schema`."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from conftest import SAMPLE


def cli(db, *args):
    from opindex.cli import main
    return CliRunner().invoke(main, [*args, "--db", str(db)])


@pytest.mark.parametrize("args, code, said", [
    (["op", "layer_nrom"], 1, "Error: no native_functions.yaml entry named layer_nrom in {where}; did you mean "
                              "layer_norm?"),
    (["stub", "LayerNormKernal"], 1, "Error: no dispatch stub named LayerNormKernal in {where}; did you mean "
                                     "LayerNormKernel?"),
    (["find", "LayerNormKernelImp", "--json"], 1, "opindex: no definition named LayerNormKernelImp in {where}; did "
                                                  "you mean LayerNormKernelImpl, LayerNormKernelImplInternal?"),
    (["callers", "rellu", "--json"], 1, "opindex: no call of rellu in {where}; did you mean relu, relu_?"),
    (["callees", "layernormkernelimpl", "--json"], 1, "opindex: no call from layernormkernelimpl in {where}; did "
                                                      "you mean LayerNormKernelImpl, LayerNormKernelImplInternal?"),
    (["kernels", "--op", "layer_nrom"], 1, "  layer_norm"),  # trace's own message, below the line that says it
])
def test_a_name_that_finds_nothing_suggests_close_ones(sample_db, args, code, said):
    result = cli(sample_db, *args)
    assert result.exit_code == code
    assert result.stderr.splitlines()[-1] == said.format(where=f"index {sample_db} (checkout {SAMPLE})")


def test_the_library_suggests_too(ix):
    assert ix.similar("layer_nrom", "op") == ["layer_norm"]
    assert ix.similar("LayerNormKernal", "stub") == ["LayerNormKernel"]


@pytest.mark.parametrize("query, said", [
    ("SELECT * FROM stubs", "no such table: stubs; did you mean dispatch_stubs, op_stubs, stub_calls, stub_kernels, "
                            "stub_arguments?"),
    ("SELECT stubb FROM dispatch_stubs", "no such column: stubb; did you mean stub (columns of dispatch_stubs)?"),
    ("SELECT s.kernl FROM stub_kernels s", "no such column: s.kernl; did you mean kernel (columns of stub_kernels)?"),
    # first the columns of the tables the query names: symbols has name and qualified_name
    ("SELECT nam FROM symbols", "no such column: nam; did you mean name, qualified_name (columns of symbols)?"),
    # none close there: every table's
    ("SELECT stubb FROM symbols", "no such column: stubb; did you mean stub?"),
    ("SELECT * FROM zzz", "no such table: zzz"),
])
def test_an_unknown_table_or_column_names_close_ones_and_the_schema(sample_db, query, said):
    result = cli(sample_db, "sql", query)
    assert result.exit_code == 2
    assert result.stderr == f"Error: SQL error: {said} (`opindex schema` lists every table, column and view)\n"


def test_kernels_of_an_unknown_name_say_which_index_and_what_is_close(sample_db):
    result = cli(sample_db, "kernels", "--op", "layer_nrom")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (f"Error: 'layer_nrom' is not a Python name, op, C++ function, stub or kernel in the index "
                             f"{sample_db} (checkout {SAMPLE}); did you mean one of these?\n  layer_norm\n")
