"""One way to print rows for every listing command: table (default on a terminal), json, ndjson, csv, tsv."""
from __future__ import annotations

import csv
import io
import json

from .printable import printable

FORMATS = ("table", "json", "ndjson", "csv", "tsv")  # the listing commands' --fmt choices (cli.output_options)


def render(rows: list[dict], fmt: str, columns: list[str] | None = None, width: int | None = None,
           link=None) -> str:
    """`rows` in `fmt`; a table fits `width` when given, and with `link(row, column)` (a URL or None) its path
    cells are OSC 8 hyperlinks."""
    columns = columns or (list(rows[0]) if rows else [])
    if fmt == "json":
        return json.dumps(rows, indent=2, default=str) + "\n"
    if fmt == "ndjson":
        return "".join(json.dumps(r, default=str) + "\n" for r in rows)
    if fmt in ("csv", "tsv"):
        buf = io.StringIO()
        w = csv.writer(buf, delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
        w.writerow(columns)
        w.writerows([[_cell(r.get(c)) for c in columns] for r in rows])
        return buf.getvalue()
    return table(rows, columns, width, link)


LISTING_JSON_VERSION = 2  # of the listing commands' JSON rows (docs/json.md): 2 added the `index` field


def index_field(row: dict) -> str:
    """The name of the field that names the index in `row`: `index`, or, where the row has a column of that name
    (`SELECT ... AS "index"`), index_2, index_3, as a repeated column name is named."""
    name, n = "index", 1
    while name in row:
        n += 1
        name = f"index_{n}"
    return name


def with_index(rows, index: dict):
    """Each row (a dict) with the index that answered as its last field (LISTING_JSON_VERSION 2)."""
    for row in rows:
        yield {**row, index_field(row): index}


def _cell(v) -> str:
    return "" if v is None else str(v)


_GAP = 2
_MIN = 8  # a cut column keeps at least this many characters


def is_path_column(name: str) -> bool:
    """Columns that hold file paths: never cut (a cut path cannot be opened)."""
    return name in ("file", "path", "where", "location") or name.endswith(("_file", "_path"))


def table(rows: list[dict], columns: list[str], width: int | None = None, link=None) -> str:
    """An aligned table. With `width` (a terminal's), the widest columns that are not file paths are cut (with …)
    until the rows fit; file paths are never cut. Without it nothing is cut."""
    if not columns:
        return "(no rows)\n"
    cells = [[printable(_cell(r.get(c))) for c in columns] for r in rows]  # a newline shows as \x0a
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    if width:
        widths = fit(widths, [is_path_column(c) for c in columns], width)
        cells = [[_clip(v, w) for v, w in zip(row, widths)] for row in cells]
    line = lambda vals: (" " * _GAP).join(v.ljust(w) for v, w in zip(vals, widths)).rstrip()
    out = [line([_clip(c, w) for c, w in zip(columns, widths)]), line(["-" * w for w in widths])]
    if link is None:
        out += [line(r) for r in cells]
    else:  # a hyperlink's escape sequence takes no room on the screen: padded by the text it shows
        from .links import osc8
        paths = [is_path_column(c) for c in columns]
        out += [(" " * _GAP).join(osc8(v, link(row, c)) + " " * (w - len(v)) if p and v else v.ljust(w)
                                  for v, w, c, p in zip(cells_of, widths, columns, paths)).rstrip()
                for row, cells_of in zip(rows, cells)]
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out) + "\n"


def fit(widths: list[int], fixed: list[bool], total: int) -> list[int]:
    """Column widths that fit `total` characters: the widest cuttable column gives way first, down to _MIN; file
    path columns keep their width (the line may then be wider than the terminal, never a path shorter)."""
    widths = list(widths)
    over = sum(widths) + _GAP * (len(widths) - 1) - total
    while over > 0:
        cuttable = [i for i, w in enumerate(widths) if not fixed[i] and w > _MIN]
        if not cuttable:
            break
        i = max(cuttable, key=lambda j: widths[j])
        others = sorted((widths[j] for j in cuttable if j != i), reverse=True)
        step = min(over, widths[i] - max(_MIN, others[0] if others else _MIN)) or min(over, widths[i] - _MIN)
        widths[i] -= max(step, 1)
        over -= max(step, 1)
    return widths


def _clip(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"
