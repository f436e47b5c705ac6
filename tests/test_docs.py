"""The README and --help texts match the code."""
from __future__ import annotations

from click.testing import CliRunner

from conftest import REPO


def test_readme_schema_section_is_generated_from_the_code():
    from opindex.schema.doc import markdown
    assert markdown() in (REPO / "README.md").read_text(encoding="utf-8"), \
        "README schema is stale: run `python -m opindex.schema.doc README.md`"


def test_compiled_ddl_is_generated_from_the_schema():
    from opindex.schema.ddl import TARGET, render
    assert TARGET.read_text(encoding="utf-8") == render(), \
        "opindex/sqlite_ddl.py is stale: run `python -m opindex.schema.ddl`"


def test_a_build_does_not_import_sqlalchemy(tmp_path):
    import subprocess
    import sys
    code = ("import sys; from opindex.indexer import pipeline, checkout; "
            f"pipeline.build(checkout.resolve({str(REPO / 'sample_checkout')!r}), "
            f"__import__('pathlib').Path({str(tmp_path / 'i.sqlite')!r}), jobs=1, progress=False); "
            "print(sorted(m for m in sys.modules if m.startswith('sqlalchemy')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert (tmp_path / "i.sqlite").is_file()


def test_every_column_is_documented():
    from opindex.schema import metadata
    missing = [f"{t.name}.{c.name}" for t in metadata.sorted_tables for c in t.columns if not c.comment]
    assert missing == []
    assert [t.name for t in metadata.sorted_tables if not t.comment] == []


def test_readme_lists_every_command():
    from opindex.cli import main
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for name in main.commands:
        assert f"`opindex {name}" in readme, name


def test_help_of_every_command():
    from opindex.cli import main
    runner = CliRunner()
    for name in main.commands:
        result = runner.invoke(main, [name, "--help"])
        assert result.exit_code == 0, name
        assert "Usage: main " + name in result.output or f"Usage: opindex {name}" in result.output or \
            f" {name} " in result.output
