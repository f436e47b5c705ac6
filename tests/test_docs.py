"""The README and --help texts match the code."""
from __future__ import annotations

from click.testing import CliRunner

from conftest import REPO


def test_readme_schema_section_is_generated_from_the_code():
    from opindex.schema.doc import markdown
    assert markdown() in (REPO / "README.md").read_text(encoding="utf-8"), \
        "README schema is stale: run `python -m opindex.schema.doc README.md`"


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
