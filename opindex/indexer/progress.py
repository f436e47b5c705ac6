"""Progress on long work: a bar on a terminal, plain lines otherwise (logs, CI)."""
from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, total: int, label: str, stream=None, enabled: bool = True):
        self.total, self.label, self.done = total, label, 0
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.tty = self.enabled and self.stream.isatty()
        self.start = self._last = time.monotonic()
        self._next_pct = 10

    def advance(self, n: int = 1) -> None:
        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
        rate = self.done / max(now - self.start, 1e-9)
        if self.tty:
            if now - self._last >= 0.1 or self.done == self.total:
                width = 30
                filled = int(width * self.done / self.total)
                self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] "
                                  f"{self.done}/{self.total} files, {rate:,.0f} files/s")
                self.stream.flush()
                self._last = now
        elif self.done * 100 >= self._next_pct * self.total:
            self.stream.write(f"{self.label}: {self.done}/{self.total} files ({self.done * 100 // self.total}%), "
                              f"{rate:,.0f} files/s\n")
            self._next_pct = self.done * 100 // self.total // 10 * 10 + 10

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
