"""Locations a person can click: OSC 8 hyperlinks on a terminal (file:// with the absolute path), absolute paths
(--absolute), and the links of HTML reports (file://, or an editor's URL scheme from $OPINDEX_EDITOR_URL or an
option: `vscode://file/{path}:{line}`). Paths in the index are relative to the checkout; these make them whole."""
from __future__ import annotations

import os
import socket
from urllib.parse import quote

ENV = "OPINDEX_EDITOR_URL"  # a URL template with {path} and {line}, for HTML reports' links
HYPERLINKS_ENV = "OPINDEX_HYPERLINKS"  # 1 / 0: OSC 8 hyperlinks on a terminal or not, whatever it is
FILE_URL = "file://{path}"
_NO_OSC8 = ("dumb", "linux")  # terminals that print an OSC 8 sequence as text (the Linux console, TERM=dumb)


def absolute(root: str | None, file: str | None) -> str | None:
    """The file's absolute path: the checkout root joined with the index's relative path (kept when absolute)."""
    if not file:
        return file
    if os.path.isabs(file) or not root:
        return file
    return os.path.join(root, file)


def url(root: str | None, file: str | None, line: int | None, template: str | None = None,
        host: str = "") -> str | None:
    """The link of a location: `template` (else $OPINDEX_EDITOR_URL, else file://) with {path} (absolute,
    URL-quoted) and {line} (1 when unknown); `host` goes into a file:// URL (OSC 8 asks for the host name)."""
    path = absolute(root, file)
    if not path or not os.path.isabs(path):
        return None
    template = template or os.environ.get(ENV) or FILE_URL
    if template == FILE_URL:
        return f"file://{host}{quote(path)}"
    return template.replace("{path}", quote(path)).replace("{line}", str(line or 1))


def osc8(text: str, target: str | None) -> str:
    """`text` as an OSC 8 hyperlink to `target` (the text alone without one)."""
    if not target:
        return text
    return f"\x1b]8;;{target}\x1b\\{text}\x1b]8;;\x1b\\"


def terminal_link(root: str | None, file: str | None, line: int | None) -> str | None:
    """The file:// URL an OSC 8 hyperlink of a location carries (with this host's name, as the spec asks)."""
    return url(root, file, line, FILE_URL, host=_host())


def _host() -> str:
    try:
        return socket.gethostname()
    except OSError:
        return ""


def use_hyperlinks(flag: bool | None, on_terminal: bool) -> bool:
    """--hyperlinks / --no-hyperlinks win, then $OPINDEX_HYPERLINKS (1/0); else on a terminal that shows colour
    (NO_COLOR and TERM=dumb turn both off) and is not the Linux console, as `ls --hyperlink=auto`."""
    if flag is not None:
        return flag
    env = os.environ.get(HYPERLINKS_ENV)
    if env in ("0", "1"):
        return env == "1"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM", "") in _NO_OSC8:
        return False
    return on_terminal
