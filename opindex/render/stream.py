"""Rows written as they arrive (`opindex sql`): the same text render.rows makes for a list, in constant memory.
A table takes its column widths from the first BLOCK rows (what a terminal shows first); later rows are cut to
them only where the table is fitted to a terminal's width."""
from __future__ import annotations

import csv
import itertools
import json
from collections.abc import Callable, Iterable
from types import SimpleNamespace

from .links import osc8
from .rows import _GAP, _cell, _clip, fit, is_path_column, render

BLOCK = 1000


def write_rows(rows: Iterable[dict], columns: list[str], fmt: str, write: Callable[[str], object],
               width: int | None = None, link=None) -> int:
    """Write `rows` (dicts keyed by `columns`; JSON writes every key a row has) in `fmt`; returns how many were
    written. A table's path cells are OSC 8 hyperlinks to `link(row, column)` when given (render.rows.table)."""
    rows = iter(rows)
    if fmt == "json":
        n = 0
        for n, row in enumerate(rows, 1):
            body = json.dumps(row, indent=2, default=str).replace("\n", "\n  ")
            write(("[\n  " if n == 1 else ",\n  ") + body)
        write("\n]\n" if n else "[]\n")
        return n
    if fmt == "ndjson":
        n = 0
        for n, row in enumerate(rows, 1):
            write(json.dumps(row, default=str) + "\n")
        return n
    if fmt in ("csv", "tsv"):
        w = csv.writer(SimpleNamespace(write=write), delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
        w.writerow(columns)
        n = 0
        for n, row in enumerate(rows, 1):
            w.writerow([_cell(row.get(c)) for c in columns])
        return n
    first = list(itertools.islice(rows, BLOCK))
    if len(first) < BLOCK:  # all of it: exactly what every other listing prints
        write(render(first, "table", columns, width, link))
        return len(first)
    return _long_table(first, rows, columns, write, width, link)


def _long_table(first: list[dict], rest, columns: list[str], write, width: int | None, link=None) -> int:
    cell = lambda row: [_cell(row.get(c)).replace("\n", "\\n") for c in columns]
    cells = [cell(r) for r in first]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    paths = [is_path_column(c) for c in columns]
    if width:
        widths = fit(widths, paths, width)

    def line(vals, row=None):
        if width:
            vals = [_clip(v, w) for v, w in zip(vals, widths)]
        if row is None or link is None:
            return (" " * _GAP).join(v.ljust(w) for v, w in zip(vals, widths)).rstrip() + "\n"
        # a hyperlink's escape sequence takes no room on the screen: padded by the text it shows
        return (" " * _GAP).join(osc8(v, link(row, c)) + " " * (w - len(v)) if p and v else v.ljust(w)
                                 for v, w, c, p in zip(vals, widths, columns, paths)).rstrip() + "\n"
    write(line([_clip(c, w) for c, w in zip(columns, widths)]) + line(["-" * w for w in widths]))
    n = 0
    for n, (values, row) in enumerate(itertools.chain(zip(cells, first), ((cell(r), r) for r in rest)), 1):
        write(line(values, row))
    write(f"({n} rows)\n")
    return n
