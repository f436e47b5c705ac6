"""The README, the docs/ pages and --help texts match the code; the README stays a first read."""
from __future__ import annotations

import re

from click.testing import CliRunner

from conftest import REPO

README = REPO / "README.md"
DOCS = REPO / "docs"
# written by another change (the test tiers); the README links it before it lands here
NOT_YET_HERE = {DOCS / "testing.md"}


def test_schema_page_is_generated_from_the_code():
    from opindex.schema.doc import PAGE, markdown
    assert (REPO / PAGE) == DOCS / "schema.md"
    assert markdown() in (DOCS / "schema.md").read_text(encoding="utf-8"), \
        "docs/schema.md is stale: run `python -m opindex.schema.doc`"


def test_the_schema_generator_writes_the_page(tmp_path):
    from opindex.schema.doc import BEGIN, END, markdown, update_page
    page = tmp_path / "schema.md"
    page.write_text(f"# Schema\n\n{BEGIN}\nold\n{END}\n\nafter\n", encoding="utf-8")
    assert update_page(str(page)) is True
    assert page.read_text(encoding="utf-8") == "# Schema\n\n" + markdown() + "\nafter\n"
    assert update_page(str(page)) is False


def test_the_readme_is_a_first_read():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: move detail into docs/"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but - and _ dropped, spaces as -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _links(path):
    """(target path, anchor or None) of every relative Markdown link of a page."""
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        yield (path.parent / file).resolve() if file else path, anchor or None


def _check_links(path) -> list[str]:
    bad = []
    for target, anchor in _links(path):
        if target in NOT_YET_HERE and not target.exists():
            continue
        if not target.is_file():
            bad.append(f"{path.name}: {target} is missing")
        elif anchor and target.suffix == ".md":
            headings = re.findall(r"^#+ (.*)$", target.read_text(encoding="utf-8"), re.M)
            if anchor not in {_slug(h) for h in headings}:
                bad.append(f"{path.name}: no heading #{anchor} in {target.name}")
    return bad


def test_every_docs_link_of_the_readme_resolves():
    links = [(t, a) for t, a in _links(README)]
    named = {t.relative_to(REPO).as_posix() for t, _ in links}
    for page in ("install", "testing", "commands", "build", "trace", "json", "schema", "library", "profile",
                 "robustness", "benchmarks"):
        assert f"docs/{page}.md" in named, page
    assert _check_links(README) == []
    # every page is linked from the README, so none is left where a newcomer cannot find it
    assert {p.relative_to(REPO).as_posix() for p in DOCS.glob("*.md")} <= named


def test_every_link_of_the_docs_resolves():
    bad = [b for page in [*DOCS.glob("*.md"), REPO / "benchmarks" / "results" / "HISTORY.md"]
           for b in _check_links(page)]
    assert bad == []


def test_the_readme_says_why_the_grammar_wheels():
    readme = README.read_text(encoding="utf-8")
    for name in ("tree-sitter-python", "tree-sitter-cpp", "tree-sitter-cuda", "tree-sitter-languages",
                 "tree-sitter-language-pack", "offline", "0.21.x", "without network"):
        assert name in readme, name


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
