"""derivatives.yaml -> model.Derivative records (each with its formulas, every one with its Location); the store
writes them as derivatives and derivative_formulas rows."""
from __future__ import annotations

import re

from ..model import Derivative, DerivativeFormula, Location
from . import yaml_lines
from .native_yaml import split_func_name
from .yaml_lines import KEY_LINES, LINE

_NOT_FORMULAS = {"name", "output_differentiability", "dispatch"}
_RESULT = re.compile(r"\bresult\d*\b")
_GRADS = re.compile(r"\bgrads\b")


def _formulas(section: dict, dispatch_key: str, path: str) -> list[DerivativeFormula]:
    rows = []
    for inputs, formula in yaml_lines.strip(section).items():
        if inputs in _NOT_FORMULAS:
            continue
        names = [n.strip() for n in str(inputs).split(",")]
        is_forward = all(_RESULT.fullmatch(n) for n in names)
        text = str(formula)
        rows.append(DerivativeFormula(
            dispatch_key=dispatch_key, inputs=str(inputs), formula=text, is_forward=is_forward,
            uses_result=bool(_RESULT.search(text)), uses_grads=bool(_GRADS.search(text)),
            location=Location(path, section[KEY_LINES].get(inputs, section[LINE]))))
    return rows


def parse_entry(raw: dict, path: str) -> Derivative:
    schema = raw["name"]
    if not isinstance(schema, str) or "(" not in schema:
        raise ValueError("name: is not an operator schema")
    name, overload = split_func_name(schema)
    od = raw.get("output_differentiability")
    dispatch = raw.get("dispatch")
    formulas = _formulas(raw, "Default", path)
    if isinstance(dispatch, dict):
        for key, section in yaml_lines.strip(dispatch).items():
            if isinstance(section, dict):
                formulas.extend(_formulas(section, str(key), path))
    return Derivative(
        full_name=f"{name}.{overload}" if overload else name, schema=schema,
        output_differentiability=str(od) if od is not None else None,
        dispatch=", ".join(yaml_lines.strip(dispatch)) if isinstance(dispatch, dict) else None,
        location=Location(path, raw[LINE]),
        formulas=tuple(formulas),
    )


def parse(text: bytes, path: str) -> tuple[list[Derivative], list[str]]:
    """Entries plus warnings ("file:line: message") for entries that could not be read; a file that is not YAML
    at all raises SourceError naming the line."""
    return yaml_lines.parse_entries(text, path, "name", parse_entry)
