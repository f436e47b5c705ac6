"""extract: one source file in, plain rows out, one row type per table (opindex.records, generated from the schema).

Each language has its own module and its tree-sitter patterns in queries/*.scm; this module only routes, and checks
what comes out (check_rows). Extractors build rows by keyword through the row types (`MacroRow(file=..., ...)`),
except in their hot loops (calls, symbols, Python imports and bridges: most of the rows of a tree), where a tuple
literal in the row type's field order costs a tenth of a NamedTuple call; those orders are stated where they are
written (columns()) and checked against the schema when the extractor is imported.
Extractors never raise on bad input: a file that cannot be read or parsed yields what could be found plus a message.
"""
from __future__ import annotations

import functools
import typing
from dataclasses import dataclass, field

from ..pytorch.devices import in_dialect
from ..records import FACT_ROWS


@dataclass
class FileFacts:
    rows: dict[str, list[tuple]] = field(default_factory=dict)  # table -> rows in its row type's field order
    parse_errors: int = 0
    message: str | None = None

    def records(self, table: str) -> list[tuple]:
        """The rows of one table as its row type (fields by name): for tests and notebooks, not the build."""
        make = FACT_ROWS[table]._make
        return [make(r) for r in self.rows.get(table, ())]


class ColumnError(ValueError):
    """A row that does not fit its table (an extractor bug or a schema change): the message names both."""


def columns(row_type, *names: str) -> tuple[str, ...]:
    """The field order a hot loop writes as tuple literals, checked against the row type: a column the schema
    added, dropped, renamed or moved fails the import, naming the table and the column."""
    table = _TABLE_OF[row_type]
    want = row_type._fields
    for i, (mine, theirs) in enumerate(zip(names, want)):
        if mine != theirs:
            raise ColumnError(f"{table}: column {i + 1} is {theirs!r} in the schema, the extractor writes {mine!r}")
    if len(names) < len(want):
        raise ColumnError(f"{table}: the extractor writes no {want[len(names)]!r} column")
    if len(names) > len(want):
        raise ColumnError(f"{table}: the extractor writes {names[len(want)]!r}, a column the schema lacks")
    return names


_TABLE_OF = {row_type: table for table, row_type in FACT_ROWS.items()}


def _allowed(hint) -> tuple[type, ...]:
    """`str | None` -> (str, NoneType); a bool column takes an int (rows carry 0/1)."""
    return tuple(int if kind is bool else kind for kind in typing.get_args(hint) or (hint,))


def _spec(row_type) -> tuple[int, tuple[str, ...], tuple[tuple[type, ...], ...]]:
    hints = row_type.__annotations__
    return len(row_type._fields), row_type._fields, tuple(_allowed(hints[f]) for f in row_type._fields)


_SPECS = {table: _spec(row_type) for table, row_type in FACT_ROWS.items()}


def check_rows(rows: dict[str, list[tuple]], path: str, every_row: bool = False) -> None:
    """Each row as wide as its table's row type, and the values of the first row (of every row with every_row)
    of its column types; raises ColumnError naming the file, the table and the column. About 0.3% of extraction:
    the widths are compared in C, the types of one row per table."""
    for table, got in rows.items():
        if not got:
            continue
        spec = _SPECS.get(table)
        if spec is None:
            raise ColumnError(f"{path}: {table}: no such fact table")
        width, names, allowed = spec
        if len(got[0]) != width or len(set(map(len, got))) != 1:
            row = next(r for r in got if len(r) != width)
            if len(row) < width:
                raise ColumnError(f"{path}: {table}: a row of {len(row)} values lacks column {names[len(row)]!r}")
            raise ColumnError(f"{path}: {table}: a row of {len(row)} values has one past its last column "
                              f"{names[-1]!r}")
        for row in got if every_row else got[:1]:
            if not all(map(isinstance, row, allowed)):  # the usual case in C; the message only on a mismatch
                name, value, types = next((n, v, t) for n, v, t in zip(names, row, allowed) if not isinstance(v, t))
                raise ColumnError(f"{path}: {table}: column {name!r} holds {type(value).__name__} {value!r:.60}"
                                  f" (the schema has {' or '.join(t.__name__ for t in types)})")


@functools.lru_cache(maxsize=1)  # asked twice per build (compare, then record); the files do not change
def fingerprint_files() -> list:
    """The files fingerprint() hashes: the extractors' code and queries, the PyTorch rules they use (opindex/pytorch/),
    the indexer that links their facts (opindex/indexer/: a link rule changed leaves every file of a checkout
    unchanged, and an update would keep the old links) and the row records."""
    from pathlib import Path
    here = Path(__file__).parent
    return sorted([*here.glob("*.py"), *here.glob("queries/*.scm"), *here.parent.glob("pytorch/*.py"),
                   *here.parent.glob("indexer/*.py"), here.parent / "records.py"])


def fingerprint() -> str:
    """SHA-1 of fingerprint_files(): an index built by other code is rebuilt, not updated."""
    import hashlib
    digest = hashlib.sha1()
    for path in fingerprint_files():
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def extract(path: str, data: bytes, language: str, module: str | None) -> FileFacts:
    from .nesting import MAX_NESTING, flatten, too_deep
    deep = []
    if language in ("cpp", "cuda", "python") and too_deep(data):  # linear time whatever the nesting
        data, deep = flatten(data)
    facts = _extract(path, data, language, module)
    if deep:
        where = ", ".join(map(str, deep[:5])) + (f" and {len(deep) - 5} more" if len(deep) > 5 else "")
        note = (f"brackets nested deeper than {MAX_NESTING} levels (line {where}): the text inside them is not "
                f"indexed")
        facts.message = f"{facts.message}; {note}" if facts.message else note
    return facts


def _extract(path: str, data: bytes, language: str, module: str | None) -> FileFacts:
    from .source_text import cpp_text_facts, generated_launch_sites
    if language in ("cpp", "cuda"):
        from . import cpp
        written = data
        if in_dialect(path):  # Objective-C++ (.mm, mps/ headers): its Objective-C is rewritten as C++ first
            from .objc import prepare
            data = prepare(data)
        facts = cpp.extract(path, data, language)
        cpp_text_facts(path, written, facts.rows)  # what the link step reads of the text as written
    elif language == "python":
        from . import python
        facts = python.extract(path, data, module)
        generated_launch_sites(path, data, facts.rows)
    else:
        return FileFacts()
    check_rows(facts.rows, path)
    return facts
