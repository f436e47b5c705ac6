"""Every example the README and the docs/ pages give runs and prints rows: on the sample checkout always, on a real
tree when OPINDEX_REAL_CHECKOUT names one (an example true on the sample only, such as `stub add_stub` was, fails
there).

Examples are: the `opindex ...` lines of the ```sh blocks of README.md and docs/*.md (not `opindex build`: CI runs
the quick start's build, and test_build the others), the `opindex ...` cells of the "From greps to queries" table
(docs/commands.md), every inline code span that is a whole SELECT or PRAGMA, and the `ix.` calls of the notebook API
block (docs/library.md). tests/test_readme_recipes.py runs the README's recipes as written."""
from __future__ import annotations

import json
import re
import shlex

import pytest
from click.testing import CliRunner

from conftest import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
TEXT = "\n".join(p.read_text(encoding="utf-8") for p in PAGES)
PROFILE = REPO / "tests" / "data" / "train_step_h200_torch2.11.json.gz"
# the table's generic rows name a placeholder; these stand for it
PLACEHOLDERS = {"NAME": "nn.LSTM", "KERNEL": "cunn_SoftMaxForward"}


def cli_examples() -> list[str]:
    out = []
    for block in re.findall(r"```sh\n(.*?)```", TEXT, re.S):
        for line in block.splitlines():
            command = re.split(r"\s#\s", line)[0].strip()
            if command.startswith("opindex ") and not command.startswith("opindex build"):
                out.append(command)
    greps = (REPO / "docs" / "commands.md").read_text(encoding="utf-8")
    greps = greps.split("## From greps to queries", 1)[1].split("\n## ", 1)[0]
    for row in re.findall(r"^\| .* \| .*$", greps, re.M)[1:]:  # after the header row
        out += re.findall(r"`(opindex [^`]*)`", row.split(" | ", 1)[1])
    return list(dict.fromkeys(out))


def sql_examples() -> list[str]:
    spans = re.findall(r"`((?:SELECT|PRAGMA) [^`]*)`", TEXT)
    return list(dict.fromkeys(s for s in spans if "..." not in s))


def python_examples() -> list[str]:
    library = (REPO / "docs" / "library.md").read_text(encoding="utf-8")
    block = library.split("# The notebook API", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    calls = []
    for line in block.splitlines():
        code = re.split(r"\s#\s", line)[0].strip()
        if code.startswith("ix.") and "=" not in code.split("(")[0]:
            calls += [c.strip() for c in code.split(";") if c.strip()]
    return calls


def test_the_readme_has_the_examples_this_file_runs():
    """The parsing finds each kind of example (others may be added: each then runs too)."""
    assert [p.name for p in PAGES[:1]] == ["README.md"] and len(PAGES) > 5
    assert {"opindex trace nn.LSTM", "opindex profile step.json.gz --html > p.html",
            "opindex sql \"SELECT stub, device, kernel FROM stub_kernels WHERE stub = :s\" -p s LayerNormKernel",
            "opindex sql \"SELECT file, line, caller FROM kernel_launch_sites WHERE kernel = 'cunn_SoftMaxForward'\"",
            "opindex find '*SoftMax*' --kind global_kernel", "opindex trace KERNEL"} <= set(cli_examples())
    assert not [c for c in cli_examples() if c.startswith("opindex build")]
    assert {"PRAGMA table_info(calls)", "SELECT name FROM macros WHERE file LIKE '%DispatchStub.h'"} \
        <= set(sql_examples())
    assert python_examples() == ['ix.sql("SELECT * FROM op_kernels WHERE function = :f", f="add.out")',
                                 'ix.find("relu")', 'ix.op("add")', 'ix.stub("LayerNormKernel")',
                                 'ix.callers("clamp_min")', 'ix.callees("at::native::relu")',
                                 'ix.coverage("mps", missing=True).rows',
                                 'ix.similar("layer_nrom", "op")']


def run_cli(db, command: str) -> tuple[int, str]:
    from opindex.cli import main
    for name, value in PLACEHOLDERS.items():
        command = re.sub(rf"\b{name}\b", value, command)
    args = shlex.split(command.split(" > ")[0])[1:]
    args = [str(PROFILE) if a == "step.json.gz" else a for a in args]
    result = CliRunner().invoke(main, args, env={"OPINDEX_DB": str(db)})
    return result.exit_code, result.output


def rows_printed(command: str, output: str) -> int:
    """How many rows (or, for a trace or a report, lines) the command printed."""
    if "--csv" in command:
        return len(output.splitlines()) - 1
    if output.lstrip().startswith("["):
        return len(json.loads(output))
    return len([line for line in output.splitlines() if line.strip()])


def check_cli(db, command):
    code, output = run_cli(db, command)
    assert code == 0, (command, output)
    assert rows_printed(command, output) > 0, (command, output)


def check_python(path, call):
    import opindex
    with opindex.open(path) as ix:
        result = eval(call, {"ix": ix})  # the README's own text, run as written
        if hasattr(result, "rows"):
            result = result.rows()
        assert len(result) > 0, call


@pytest.mark.parametrize("command", cli_examples())
def test_cli_example_prints_rows_on_the_sample(sample_db, command):
    check_cli(sample_db, command)


@pytest.mark.parametrize("query", sql_examples())
def test_sql_example_returns_rows_on_the_sample(ix, query):
    assert ix.rows(query), query


@pytest.mark.parametrize("call", python_examples())
def test_notebook_example_returns_rows_on_the_sample(sample_db, call):
    check_python(sample_db, call)


@pytest.mark.parametrize("command", cli_examples())
def test_cli_example_prints_rows_on_a_real_tree(real_index, command):
    check_cli(real_index.path, command)


@pytest.mark.parametrize("query", sql_examples())
def test_sql_example_returns_rows_on_a_real_tree(real_index, query):
    assert real_index.rows(query), query


@pytest.mark.parametrize("call", python_examples())
def test_notebook_example_returns_rows_on_a_real_tree(real_index, call):
    check_python(real_index.path, call)
