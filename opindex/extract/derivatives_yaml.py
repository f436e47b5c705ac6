"""derivatives.yaml -> derivatives and derivative_formulas rows."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import yaml_lines
from .native_yaml import split_func_name
from .yaml_lines import KEY_LINES, LINE

_NOT_FORMULAS = {"name", "output_differentiability", "dispatch"}
_RESULT = re.compile(r"\bresult\d*\b")
_GRADS = re.compile(r"\bgrads\b")


@dataclass
class DerivativeEntry:
    name: str
    overload: str
    schema: str
    output_differentiability: str | None
    dispatch: str | None
    line: int
    # dispatch_key, inputs, formula, is_forward, uses_result, uses_grads, line
    formulas: list[tuple[str, str, str, bool, bool, bool, int]] = field(default_factory=list)

    @property
    def full_name(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else self.name


def _formulas(section: dict, dispatch_key: str) -> list[tuple]:
    rows = []
    for inputs, formula in yaml_lines.strip(section).items():
        if inputs in _NOT_FORMULAS:
            continue
        names = [n.strip() for n in str(inputs).split(",")]
        is_forward = all(_RESULT.fullmatch(n) for n in names)
        text = str(formula)
        rows.append((dispatch_key, str(inputs), text, is_forward, bool(_RESULT.search(text)),
                     bool(_GRADS.search(text)), section[KEY_LINES].get(inputs, section[LINE])))
    return rows


def parse_entry(raw: dict) -> DerivativeEntry:
    schema = raw["name"]
    if not isinstance(schema, str) or "(" not in schema:
        raise ValueError("name: is not an operator schema")
    name, overload = split_func_name(schema)
    od = raw.get("output_differentiability")
    dispatch = raw.get("dispatch")
    entry = DerivativeEntry(
        name=name, overload=overload, schema=schema,
        output_differentiability=str(od) if od is not None else None,
        dispatch=", ".join(yaml_lines.strip(dispatch)) if isinstance(dispatch, dict) else None,
        line=raw[LINE],
    )
    entry.formulas.extend(_formulas(raw, "Default"))
    if isinstance(dispatch, dict):
        for key, section in yaml_lines.strip(dispatch).items():
            if isinstance(section, dict):
                entry.formulas.extend(_formulas(section, str(key)))
    return entry


def parse(text: bytes, path: str) -> tuple[list, list[str]]:
    """Entries plus warnings ("file:line: message") for entries that could not be read; a file that is not YAML
    at all raises SourceError naming the line."""
    return yaml_lines.parse_entries(text, path, "name", parse_entry)
