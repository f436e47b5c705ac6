"""What `pip install .` ships: the package, its migrations and the sample checkout (so `opindex build --sample` works
after a non-editable install), with no packaging warning; and `import opindex` from the folder that holds a clone
named opindex imports the clone's package, not an empty namespace package."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile

import pytest

from conftest import REPO, SAMPLE, SAMPLE_ENTRIES

PACKAGING_WARNINGS = ("BuildBackendWarning", "SetuptoolsDeprecationWarning", "is absent from the `packages`",
                      "as data is deprecated")


def sample_files() -> list[str]:
    return sorted(str(p.relative_to(SAMPLE)) for p in SAMPLE.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts)


def test_pyproject_ships_every_folder_of_the_sample():
    tool = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = sorted({"opindex._sample" + "".join("." + part for part in p.relative_to(SAMPLE).parts)
                      for p in [SAMPLE, *SAMPLE.rglob("*")] if p.is_dir() and p.name != "__pycache__"})
    assert sorted(p for p in tool["packages"] if p.startswith("opindex._sample")) == folders
    assert sorted(k for k in tool["package-data"] if k.startswith("opindex._sample")) == folders
    assert all(tool["package-data"][k] == ["*"] for k in folders)
    assert tool["package-dir"]["opindex._sample"] == "sample_checkout"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> tuple[zipfile.ZipFile, str]:
    """A wheel built from a copy of the project (the build writes build/ and *.egg-info next to its sources)."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in ("opindex", "migrations", "sample_checkout"):
        shutil.copytree(REPO / name, src / name, ignore=ignore)
    out = tmp_path_factory.mktemp("wheel")
    run = subprocess.run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation", "-w",
                          str(out), str(src)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    [path] = out.glob("opindex-*.whl")
    return zipfile.ZipFile(path), run.stdout + run.stderr


def test_the_wheel_builds_without_a_packaging_warning(wheel):
    _, log = wheel
    assert [line for line in log.splitlines() if any(w in line for w in PACKAGING_WARNINGS)] == []


def test_the_wheel_ships_the_sample_and_the_migrations(wheel):
    whl, _ = wheel
    names = set(whl.namelist())
    assert sorted(n.removeprefix("opindex/_sample/") for n in names if n.startswith("opindex/_sample/")) \
        == sample_files()
    assert {"opindex/_migrations/env.py", "opindex/_migrations/script.py.mako",
            "opindex/_migrations/versions/0003_bare_kernel_names.py", "opindex/extract/queries/cpp-calls.scm"} <= names
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/", "sample_checkout/"))]


def test_build_sample_works_from_an_installed_package(wheel, tmp_path):
    """The wheel unpacked is what pip installs; run from an unrelated folder, `--sample` finds its own copy."""
    whl, _ = wheel
    site = tmp_path / "site"
    whl.extractall(site)
    env = {**os.environ, "PYTHONPATH": str(site), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("OPINDEX_DB", None)
    work = tmp_path / "elsewhere"
    work.mkdir()

    def opindex(*args):
        return subprocess.run([sys.executable, "-m", "opindex", *args], cwd=work, env=env, capture_output=True,
                              text=True)
    done = opindex("build", "--sample", "-j", "1")
    assert done.returncode == 0, done.stderr
    assert f"checkout: {site / 'opindex' / '_sample'} (--sample: the sample checkout shipped with opindex)" \
        in done.stderr
    rows = opindex("sql", "SELECT count(*) AS n FROM native_functions", "--json")
    assert rows.returncode == 0, rows.stderr
    [row] = json.loads(rows.stdout)
    assert row["n"] == SAMPLE_ENTRIES and row["index"]["checkout"] == str(site / "opindex" / "_sample")
    which = subprocess.run([sys.executable, "-c", "import opindex; print(opindex.__file__)"], cwd=work, env=env,
                           capture_output=True, text=True)
    assert which.stdout.strip() == str(site / "opindex" / "__init__.py")  # the unpacked wheel, not this tree


def test_sample_and_a_checkout_together_is_a_usage_error(tmp_path):
    from click.testing import CliRunner
    from opindex.cli import main
    result = CliRunner().invoke(main, ["build", "--sample", str(SAMPLE), "--db", str(tmp_path / "x.sqlite")])
    assert result.exit_code == 2
    assert result.output == "Error: give one of CHECKOUT, --installed and --sample\n"


def test_import_from_the_folder_that_holds_the_clone(tmp_path):
    """A clone named opindex, Python started beside it: `import opindex` is the clone's package."""
    clone = tmp_path / "opindex"
    clone.mkdir()
    shutil.copy(REPO / "__init__.py", clone / "__init__.py")
    (clone / "opindex").symlink_to(REPO / "opindex")
    code = "import opindex, opindex.api; print(opindex.__version__, callable(opindex.open), opindex.api.__file__)"
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["0.1.0", "True", str(clone / "opindex" / "api.py")]
