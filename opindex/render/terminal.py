"""Terminal habits people already have (ripgrep, git): colour only on a terminal and never with NO_COLOR, columns
that fit its width, long output through a pager (`$OPINDEX_PAGER`, else `$PAGER`, else `less -FRX`), never when the
output is not a terminal."""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys


def is_terminal(stream=None) -> bool:
    stream = stream or sys.stdout
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def use_color(flag: bool | None, stream=None) -> bool:
    """--color / --no-color win; else colour on a terminal unless NO_COLOR is set (https://no-color.org) or
    TERM=dumb."""
    if flag is not None:
        return flag
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return is_terminal(stream)


def width(stream=None) -> int | None:
    """The terminal's width (COLUMNS when set); None when the output is not a terminal (nothing is cut then)."""
    if not is_terminal(stream):
        return None
    return shutil.get_terminal_size((100, 24)).columns


def once_per_session(what: str) -> bool:
    """True the first time `what` is asked for in this terminal session (the session id of the shell: a new
    terminal starts a new one), then False; a marker file in the cache folder remembers it."""
    from ..indexer.indexes import cache_dir
    try:
        marker = cache_dir() / f".{what}-{os.getsid(0)}"
        if marker.exists():
            return False
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:
        return True  # nowhere to remember it: shown, as before
    return True


def height() -> int:
    return shutil.get_terminal_size((100, 24)).lines


def page(text: str, enabled: bool = True, stream=None) -> None:
    """Write `text`; through a pager when `enabled`, the output is a terminal and the text is taller than it."""
    stream = stream or sys.stdout
    if not (enabled and is_terminal(stream)) or text.count("\n") < height() - 1:
        stream.write(text)
        stream.flush()
        return
    command = os.environ.get("OPINDEX_PAGER") or os.environ.get("PAGER") or "less"
    if command.strip() in ("", "cat"):
        stream.write(text)
        stream.flush()
        return
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")  # as git: quit if one screen, keep colours, do not clear the screen
    try:
        proc = subprocess.Popen(shlex.split(command), stdin=subprocess.PIPE, env=env)
    except (OSError, ValueError):
        stream.write(text)
        stream.flush()
        return
    try:
        proc.communicate(text.encode(getattr(stream, "encoding", None) or "utf-8", "replace"))
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    proc.wait()
