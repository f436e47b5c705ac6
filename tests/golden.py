"""Golden traces of the sample checkout, kept in sample_checkout/README.md.

Each block there is `<!-- golden: NAME [--device D] [--depth N] [--up] -->` followed by a ```text fence holding
the trace's tree. tests/test_trace_golden.py holds the index to them. After a deliberate change, regenerate with
    python tests/golden.py
and read the diff of sample_checkout/README.md line by line before committing it.
"""
from __future__ import annotations

import re
import shlex
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
README = HERE.parent / "sample_checkout" / "README.md"
BLOCK = re.compile(r"<!-- golden: (?P<args>.+?) -->\n```text\n(?P<body>.*?)```", re.S)


def parse_args(args: str) -> tuple[str, dict]:
    words = shlex.split(args)
    name, opts, i = words[0], {}, 1
    while i < len(words):
        if words[i] == "--up":
            opts["up"] = True
            i += 1
        else:
            key = words[i].lstrip("-")
            opts[key] = int(words[i + 1]) if key == "depth" else words[i + 1]
            i += 2
    return name, opts


def render(ix, args: str) -> str:
    from opindex.render.trace_text import tree
    name, opts = parse_args(args)
    t = ix.trace(name, **opts)
    lines = tree(t) if t.hops else [t.message.replace(t.which_index(), "this index")]  # no temporary path
    return "\n".join(line.rstrip() for line in lines) + "\n"


def blocks(text: str) -> list[tuple[str, str]]:
    return [(m.group("args"), m.group("body")) for m in BLOCK.finditer(text)]


def regenerate() -> None:
    from opindex.api import Index, build
    db = Path(tempfile.mkdtemp()) / "golden.sqlite"
    build(str(README.parent), db, jobs=1)
    text = README.read_text(encoding="utf-8")
    with Index(db) as ix:
        new = BLOCK.sub(lambda m: f"<!-- golden: {m.group('args')} -->\n```text\n{render(ix, m.group('args'))}```",
                        text)
    README.write_text(new, encoding="utf-8")
    print("updated" if new != text else "unchanged", README)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    regenerate()
