"""A profile's bytes read with a bound, and its events' fields taken only when they have the profiler's types.

A profile is input from anywhere (issue 33, item 13): a 4 MB .json.gz can expand to 4 GiB, PROFILE=/dev/zero
never ends, and an event whose `args` is a list or whose `name` is a number is still valid JSON. Reading stops one
byte past the size limit (`--max-size`, stated in the error and liftable), gzip is expanded in chunks under the same
limit, and each event field is checked for its type before use: an event of other types is skipped and counted."""
from __future__ import annotations

import re
import zlib
from pathlib import Path

from ..model import OpindexError

MAX_SIZE_MB = 512  # a profile's text after gunzip, in MB (--max-size): kineto's traces of a few steps are 10-300 MB
_CHUNK = 1 << 20
_SURROGATE = re.compile("[\ud800-\udfff]")


def too_large(path: Path, max_mb: float) -> OpindexError:
    return OpindexError(f"{path}: the profile is larger than {max_mb:g} MB (after gunzip) and was not read "
                        f"(--max-size MB raises the limit, --max-size 0 lifts it)")


def read_bounded(path: Path, max_mb: float | None = MAX_SIZE_MB) -> bytes:
    """The profile's text as bytes, gunzipped when it is gzip; at most `max_mb` MB (None or 0: no limit).
    Any file works, a pipe too (`<(zcat x.json.gz)`); a device such as /dev/zero stops at the limit."""
    limit = int(max_mb * 2**20) if max_mb else None
    try:
        with open(path, "rb") as fh:
            head = fh.read(2)
            if head == b"\x1f\x8b":
                return _gunzip(path, head, fh, limit, max_mb)
            return head + _read(fh, None if limit is None else limit - len(head), path, max_mb)
    except OSError as exc:
        raise OpindexError(f"{path}: cannot read the profile ({exc.strerror or exc})") from None


def _read(fh, limit: int | None, path: Path, max_mb) -> bytes:
    if limit is None:
        return fh.read()
    data = fh.read(limit + 1)  # one byte past the limit tells a file of exactly the limit from a longer one
    if len(data) > limit:
        raise too_large(path, max_mb)
    return data


def _gunzip(path: Path, head: bytes, fh, limit: int | None, max_mb) -> bytes:
    """Expanded chunk by chunk: the output is bounded while it is made, not after (a gzip bomb). Concatenated gzip
    members are read one after another, as gzip.decompress does."""
    out, size = [], 0
    d, fed = zlib.decompressobj(wbits=31), False  # fed: the current member has had input
    pending = head
    try:
        while True:
            chunk = pending or fh.read(_CHUNK)
            pending = b""
            if not chunk:
                break
            while chunk:
                room = _CHUNK if limit is None else min(_CHUNK, limit + 1 - size)
                piece, fed = d.decompress(chunk, room), True
                out.append(piece)
                size += len(piece)
                if limit is not None and size > limit:
                    raise too_large(path, max_mb)
                chunk = d.unconsumed_tail
                if d.eof:  # another gzip member may follow
                    chunk, d, fed = d.unused_data, zlib.decompressobj(wbits=31), False
        if fed and not d.eof:
            raise OpindexError(f"{path}: not a readable gzip file (it ends early)")
    except zlib.error as exc:
        raise OpindexError(f"{path}: not a readable gzip file ({exc})") from None
    return b"".join(out)


# -- an event's fields, by the types the profiler writes -----------------------------------------------------------
def text_field(e: dict, key: str) -> str | None:
    """A string field; lone surrogates (JSON's "\\udcff" escapes, which UTF-8 cannot hold) become U+FFFD."""
    v = e.get(key)
    if not isinstance(v, str):
        return None
    return _SURROGATE.sub("\ufffd", v)


def scalar_field(v):
    """An id or a pid/tid as the profiler writes them (int or str); anything else (a list, an object) is no id."""
    return v if isinstance(v, (int, str)) and not isinstance(v, bool) else None


def args_of(e: dict) -> dict:
    a = e.get("args")
    return a if isinstance(a, dict) else {}
