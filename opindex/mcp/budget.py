"""Answers and their budget. Every answer is text for the model and the same facts as structured content; each of
the two must fit the call's `max_chars`. An answer that does not fit is refused, with the narrower calls that do
fit (and their sizes) and the max_chars that takes the whole answer: an agent never gets a cut answer it cannot
tell from a whole one."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

DEFAULT_MAX_CHARS = 8000  # about 2,000 tokens: the main chain of a large op fits, a whole tree does not
MIN_MAX_CHARS = 200  # below this not even a refusal's hint fits


@dataclass
class Answer:
    text: str  # what the model reads
    data: dict = field(default_factory=dict)  # the same facts as structured content
    error: bool = False  # a tool error (isError): an unknown name, bad arguments, a refusal

    def size(self) -> int:
        """The characters of the larger of the two forms: the budget holds for whichever a client shows."""
        return max(len(self.text), len(dumps(self.data)))


def dumps(data) -> str:
    """Structured content as a client receives it (compact JSON, non-ASCII as is)."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str)


def error(kind: str, message: str, suggestions: list[str] | None = None, **more) -> Answer:
    """A tool error the model can act on: what went wrong and, for an unknown name, the names close to it."""
    text = message
    if suggestions:  # (a trace's message asks the question itself)
        text += ("\n  " if message.endswith("?") else "\ndid you mean: ") + ", ".join(suggestions)
    data = {"error": kind, "message": message, **({"suggestions": suggestions} if suggestions else {}), **more}
    return Answer(text + "\n", data, error=True)


def refusal(size: int, max_chars: int, narrower: list[tuple[str, int]], what: str) -> Answer:
    """The answer of `size` characters does not fit `max_chars`: the `narrower` calls ((arguments in words, their
    size, or None where only running it tells); those that fit first) and the max_chars that takes it whole."""
    said = lambda n: f" ({n:,} characters)" if n is not None else ""
    fitting = [(call, n) for call, n in narrower if n is not None and n <= max_chars]
    lines = [f"refused: {what} is {size:,} characters, over max_chars={max_chars:,}; nothing was cut."]
    if fitting:
        lines.append("Narrower calls that fit: " + "; ".join(f"{call}{said(n)}" for call, n in fitting))
    others = [(call, n) for call, n in narrower if n is not None and n > max_chars]
    if others:
        lines.append("Narrower, still over: " + "; ".join(f"{call}{said(n)}" for call, n in others))
    untold = [call for call, n in narrower if n is None]
    if untold:
        lines.append("Narrower: " + "; ".join(untold))
    lines.append(f"The whole answer: max_chars={size}.")
    hint = " ".join(lines[1:])
    return Answer("\n".join(lines) + "\n", {"error": "too_large", "chars": size, "max_chars": max_chars,
                                            "narrower": [{"call": c, "chars": n} for c, n in narrower],
                                            "hint": hint}, error=True)


def fit(answer: Answer, max_chars: int, narrower, what: str) -> Answer:
    """`answer` when it fits, else its refusal; `narrower()` (called only then) lists the narrower calls."""
    size = answer.size()
    if answer.error or size <= max_chars:
        return answer
    return refusal(size, max_chars, narrower(), what)
