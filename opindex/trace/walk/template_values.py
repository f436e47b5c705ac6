"""The values a call gives a template's non-type parameters: `cuda_scatter_gather_base_kernel</*is_scatter_like=*/
false>()(...)` makes `is_scatter_like` false in the operator() it calls, and that operator() passing
`_cuda_scatter_gather_internal_kernel<is_scatter_like, dtype, scalar_t>()` on makes it false there too, so the
internal kernel's `if (is_scatter_like && ...)` branches are not gather's. A parameter the call leaves out takes the
default its template head writes (`template <bool is_scatter_like = true, ...>`: scatter's `<>`).

Read from the calls rows (`template_args` of the call naming the template) and the template's symbol
(`template_parameters`); the defaults from the template head's source lines. Only values a test can read are kept:
true/false, integers, and a name the caller's own tests know the value of.
"""
from __future__ import annotations

import json
import re

from .. import facts as q
from ...pytorch.syntax import split_top_level
from ..sequence import file_lines

_VALUE = re.compile(r"^(?:/\*.*?\*/\s*)?(true|false|-?\d+)[uUlL]*$")
_NAME = re.compile(r"^(?:/\*.*?\*/\s*)?([A-Za-z_]\w*)$")
_TYPE = re.compile(r"^(?:scalar_t|float|double|(?:at::|c10::)?(?:Half|BFloat16)|cutlass::(?:half_t|bfloat16_t)|"
                   r"u?int(?:8|16|32|64)_t|bool)$")
_HEAD_LINES = 4  # a template head is written on the lines just above the definition it templates
_PARAMETER_DEFAULT = re.compile(r"([A-Za-z_]\w*)\s*=\s*(.+)$", re.S)


def template_arguments(con, root: str | None, d: dict, call_site: tuple[str, int] | None,
                       known: dict | None) -> dict[str, str]:
    """{template parameter: value as C++ writes it} for the definition `d` its call at `call_site` reaches: the
    template arguments written there (or the head's defaults), for the template `d` is (a function template) or
    belongs to (a method of a class template). Empty when the call writes none and nothing is known."""
    if call_site is None or d.get("language") == "python":
        return {}
    owner = _template_owner(con, d)
    if owner is None:
        return {}
    params = _parameters(owner)
    written = _written(con, call_site, owner["name"])
    if not params or written is None or len(written) > len(params):
        return {}
    defaults = _head_defaults(root, owner) if len(written) < len(params) else {}
    out = {}
    for i, name in enumerate(params):
        text = written[i] if i < len(written) else defaults.get(name)
        value = None if not name or text is None else _value(text, known or {})
        if value is not None:
            out[name] = value
    return out


def _template_owner(con, d: dict) -> dict | None:
    """The template whose parameters `d`'s body sees: `d` itself when it is a function template, else the class
    template a method is defined in (`cuda_scatter_gather_base_kernel` of its `operator()`)."""
    if d.get("kind") == "method":
        scope = d.get("qualified_name", "").rpartition("::")[0]
        found = q.class_templates(con, scope, d.get("file"))
        if len(found) == 1:
            return found[0]
    return d if d.get("is_template") and _parameters(d) else None


def _parameters(symbol: dict) -> list[str]:
    try:
        return json.loads(symbol.get("template_parameters") or "[]")
    except ValueError:
        return []


def _written(con, call_site: tuple[str, int], name: str) -> list[str] | None:
    """The template arguments the call at `call_site` writes for `name` (`<>`: none), split; None when that line
    names the template with no or several different argument lists."""
    found = set(q.template_args_at(con, call_site[0], call_site[1], name))
    if len(found) != 1:
        return None
    text = found.pop().strip()
    if not (text.startswith("<") and text.endswith(">")):
        return None
    return [p.strip() for p in split_top_level(text[1:-1], ",", "<([{") if p.strip()]


def _head_defaults(root: str | None, owner: dict) -> dict[str, str]:
    """The defaults the template head above `owner` writes (`template <bool is_scatter_like = true, bool
    cast_to_opaque = true>`), by parameter name."""
    lines = file_lines(root, owner["file"]) if root else None
    if not lines:
        return {}
    first = max(0, owner["line"] - 1 - _HEAD_LINES)
    text = " ".join(lines[first:owner["line"]])
    heads = re.findall(r"\btemplate\s*<(.*?)>\s*(?:struct|class|[\w:<>]+\s+\w+\s*\(|C10_|__global__|static|inline|void)",
                       text, re.S)
    if not heads:
        return {}
    out = {}
    for part in split_top_level(heads[-1], ",", "<([{"):
        m = _PARAMETER_DEFAULT.search(part.strip())
        if m is not None:
            out[m.group(1)] = m.group(2).strip()
    return out


def _value(text: str, known: dict) -> str | None:
    m = _VALUE.match(text.strip())
    if m is not None:
        return m.group(1)
    if _TYPE.match(text.strip()):  # a type the tests compare (`std::is_same<DT, float>`): the dispatched scalar_t
        return text.strip()         # or a scalar type

    m = _NAME.match(text.strip())
    if m is not None and isinstance(known.get(m.group(1)), (bool, int)):
        value = known[m.group(1)]  # passed on by name: `<is_scatter_like, dtype, scalar_t>`
        return ("true" if value else "false") if isinstance(value, bool) else str(value)
    return None
