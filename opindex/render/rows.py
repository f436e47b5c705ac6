"""One way to print rows for every listing command: table (default on a terminal), json, ndjson, csv, tsv."""
from __future__ import annotations

import csv
import io
import json

FORMATS = ("table", "json", "ndjson", "csv", "tsv")  # the listing commands' --fmt choices (cli.output_options)


def render(rows: list[dict], fmt: str, columns: list[str] | None = None) -> str:
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
    return table(rows, columns)


def _cell(v) -> str:
    return "" if v is None else str(v)


def table(rows: list[dict], columns: list[str], max_width: int = 80) -> str:
    if not columns:
        return "(no rows)\n"
    cells = [[_clip(_cell(r.get(c)), max_width) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    line = lambda vals: "  ".join(v.ljust(w) for v, w in zip(vals, widths)).rstrip()
    out = [line(columns), line(["-" * w for w in widths])] + [line(r) for r in cells]
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out) + "\n"


def _clip(s: str, n: int) -> str:
    s = s.replace("\n", "\\n")
    return s if len(s) <= n else s[: n - 1] + "…"
