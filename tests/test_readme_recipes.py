"""The README's five recipes run as written on the bundled sample.

The sample is built into a temporary index; each recipe's commands run with that index as $OPINDEX_DB, in a folder
that holds the test profile as `step.json.gz` (the name the profile recipe uses), and each must exit 0 and print what
it is there to show. A recipe changed in the README fails here until EXPECTED says what it prints."""
from __future__ import annotations

import re
import shlex
import shutil

import pytest
from click.testing import CliRunner

from conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
PROFILE = REPO / "tests" / "data" / "train_step_h200_torch2.11.json.gz"

# each command of the recipes: (a piece of what it prints, a piece it must not print or None)
EXPECTED = {
    # (a) top-down: on CUDA to the cuDNN call, on CPU without it, deeper op calls followed to the CPU kernel
    "opindex trace nn.LSTM": ("cudnnRNNForward", None),
    "opindex trace nn.LSTM --device cpu": ("lstm_cudnn_stub", "cudnnRNNForward"),
    "opindex trace F.layer_norm --device cpu --depth 2": ("at::native::LayerNormKernelImpl", None),
    # ... for an input dtype (said in the first line), for a stated build
    "opindex trace relu --dtype bfloat16": ("(top-down, device cuda, dtype bfloat16, depth 1;", None),
    "opindex trace nn.LSTM -D CUDNN_VERSION=8600": ("cudnnRNNForward", None),
    # (b) bottom-up: from the stub up to the op kernel that calls it; from an op up to its Python binding
    "opindex trace LayerNormKernel": ("at::native::layer_norm_cpu", None),
    "opindex trace relu --up": ("torch.relu", None),
    # (c) SQL: the stub's registered kernel; the schema's views
    'opindex sql "SELECT stub, device, kernel FROM stub_kernels WHERE stub = :s" -p s LayerNormKernel':
        ("LayerNormKernelImpl", None),
    "opindex schema": ("stub_kernels", None),
    # (d) profile: the LSTM's cuDNN kernel tied to the library call in the sample's cudnn/RNN.cpp
    "opindex profile step.json.gz": ("RNN_blockPersist_fp_LSTM", None),
}
RECIPE_HEADINGS = 5


def recipes() -> list[tuple[str, str, str]]:
    """(heading, language, code) of each recipe: the ### sections of the README's "## Recipes"."""
    section = README.split("\n## Recipes\n", 1)[1].split("\n## ", 1)[0]
    out = []
    for part in section.split("\n### ")[1:]:
        heading = part.splitlines()[0]
        [(lang, code)] = re.findall(r"```(\w+)\n(.*?)```", part, re.S)
        out.append((heading, lang, code))
    return out


def commands() -> list[str]:
    return [line.strip() for _, lang, code in recipes() if lang == "sh" for line in code.splitlines()
            if line.strip()]


@pytest.fixture(scope="module")
def recipe_db(tmp_path_factory):
    """The sample built into a temporary index, as `opindex build --sample --db PATH` builds it."""
    from opindex.cli import main
    db = tmp_path_factory.mktemp("recipes") / "sample.sqlite"
    result = CliRunner().invoke(main, ["build", "--sample", "--db", str(db), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    return db


@pytest.fixture
def in_a_folder_with_a_profile(tmp_path, monkeypatch):
    shutil.copy(PROFILE, tmp_path / "step.json.gz")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_readme_has_five_recipes_each_a_heading_and_commands():
    found = recipes()
    assert len(found) == RECIPE_HEADINGS, [h for h, _, _ in found]
    assert [lang for _, lang, _ in found] == ["sh", "sh", "sh", "sh", "python"]
    assert all(code.strip() for _, _, code in found)
    for line in commands():  # only opindex commands, each with at most a trailing comment
        assert shlex.split(line, comments=True)[0] == "opindex", line
    assert [shlex.join(shlex.split(c, comments=True)) for c in commands()] == \
        [shlex.join(shlex.split(c)) for c in EXPECTED]


@pytest.mark.parametrize("command", list(EXPECTED))
def test_a_recipe_command_runs_as_written(recipe_db, in_a_folder_with_a_profile, command):
    from opindex.cli import main
    [line] = [c for c in commands() if shlex.split(c, comments=True) == shlex.split(command)]
    args = shlex.split(line, comments=True)[1:]  # as a shell reads the README's line: the comment dropped
    result = CliRunner().invoke(main, args, env={"OPINDEX_DB": str(recipe_db)})
    assert result.exit_code == 0, (line, result.output)
    present, absent = EXPECTED[command]
    assert present in result.output, (line, result.output)
    if absent:
        assert absent not in result.output, (line, result.output)


def test_the_notebook_recipe_runs_as_written(recipe_db, monkeypatch):
    [(_, _, code)] = [r for r in recipes() if r[1] == "python"]
    monkeypatch.setenv("OPINDEX_DB", str(recipe_db))
    *body, last = [line for line in code.splitlines() if line.strip()]
    scope: dict = {}
    exec("\n".join(body), scope)  # the README's own text, run as written
    chain = eval(last, scope)
    assert "opindex.Index()" in code and "ix.trace(" in code
    assert scope["ix"].path.resolve() == recipe_db.resolve()  # the index $OPINDEX_DB names
    assert [hop.name for hop in chain][-1] == "cudnnRNNForward"
    scope["ix"].close()
