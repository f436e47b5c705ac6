"""Rows as an answer: a page of at most `limit` rows from a cursor, as tab-separated text and as {columns, rows}.
A page that says nothing of what follows would be a silent cut: a page with more after it carries `next_cursor`
(and says so in its text), and a page over max_chars is refused with the `limit` that fits."""
from __future__ import annotations

import base64
import hashlib
import json

from ..model import OpindexError
from ..render.rows import render
from .budget import Answer, refusal


class BadCursor(OpindexError):
    """A cursor that is not one this server wrote for the same call."""


def call_key(tool: str, arguments: dict) -> str:
    """What a cursor is tied to: the tool and every argument that chooses the rows (not limit, cursor, max_chars)."""
    chosen = {k: v for k, v in arguments.items() if k not in ("limit", "cursor", "max_chars")}
    return hashlib.sha1(json.dumps([tool, chosen], sort_keys=True, default=str).encode()).hexdigest()[:12]


def cursor_for(key: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{offset}:{key}".encode()).decode().rstrip("=")


def offset_of(cursor: str | None, key: str) -> int:
    """The row a cursor starts at (0 without one); BadCursor for a cursor of another call or a damaged one."""
    if not cursor:
        return 0
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        offset, _, owner = text.partition(":")
        offset = int(offset)
    except (ValueError, UnicodeDecodeError):
        raise BadCursor(f"cursor {cursor!r} is not one this server wrote: pass the next_cursor of the previous "
                        f"page, unchanged") from None
    if owner != key or offset < 0:
        raise BadCursor("this cursor belongs to another call: a cursor pages only the call (the same tool and "
                        "arguments but limit and max_chars) whose answer carried it")
    return offset


def page(fetch, offset: int, limit: int) -> tuple[list, bool]:
    """Rows offset..offset+limit of `fetch(n)` (the first n rows, or all when n is None), and whether more follow:
    one row past the page is fetched to know."""
    rows = list(fetch(offset + limit + 1 if limit else None))
    chunk = rows[offset:]
    if limit and len(chunk) > limit:
        return chunk[:limit], True
    return chunk, False


def answer(columns: list[str], rows: list[list], *, key: str, offset: int, more: bool, head: str = "",
           extra: dict | None = None) -> Answer:
    """A page of rows: a TSV text (`head`, a header, a row a line, a closing line that says where the page sits and
    how to get the next), and {**extra, columns, rows, offset, next_cursor}."""
    table = render([dict(zip(columns, row)) for row in rows], "tsv", columns)  # `opindex ... --tsv`'s rows
    lines = ([head] if head else []) + table.splitlines()
    span = f"rows {offset + 1}-{offset + len(rows)}" if rows else "no rows"
    data = {**(extra or {}), "columns": columns, "rows": rows, "offset": offset}
    if more:
        nxt = cursor_for(key, offset + len(rows))
        data["next_cursor"] = nxt
        lines.append(f"({span}; more follow: call again with cursor={nxt!r})")
    else:
        rows_word = "row" if len(rows) == 1 else "rows"
        lines.append(f"({span}; no more)" if offset or not rows else f"({len(rows)} {rows_word}, all)")
    return Answer("\n".join(lines) + "\n", data)


def fit_page(columns: list[str], rows: list[list], max_chars: int, *, what: str, key: str, offset: int,
             more: bool, head: str = "", extra: dict | None = None) -> Answer:
    """answer(), or, over max_chars, a refusal naming the largest `limit` whose page fits."""
    full = answer(columns, rows, key=key, offset=offset, more=more, head=head, extra=extra)
    if full.size() <= max_chars:
        return full
    size = lambda k: answer(columns, rows[:k], key=key, offset=offset, more=True, head=head,
                                extra=extra).size()
    lo, hi = 0, len(rows)  # the largest k whose page fits: the size grows with k
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if size(mid) <= max_chars else (lo, mid - 1)
    narrower = [(f"limit={lo}", size(lo))] if lo else []
    return refusal(full.size(), max_chars, narrower, f"this page of {len(rows)} {what}")

