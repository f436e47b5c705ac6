"""A tool call's arguments checked against the tool's input schema, defaults filled in. The schemas use a small
part of JSON Schema (string, integer with bounds, boolean, enum, array of strings, object of scalars), so the check
is written here: one message per mistake, naming the argument and what it takes. A `type` may be a list (an object
or a string)."""
from __future__ import annotations

from ..model import OpindexError


class BadArguments(OpindexError):
    """Arguments the tool's input schema does not allow."""


_TYPES = {"string": str, "integer": int, "boolean": bool, "object": dict, "array": list}


def checked(tool: str, schema: dict, arguments: dict | None) -> dict:
    """`arguments` with the schema's defaults added; BadArguments for an unknown, missing or ill-typed one."""
    arguments = dict(arguments or {})
    props = schema["properties"]
    unknown = sorted(set(arguments) - set(props))
    if unknown:
        raise BadArguments(f"{tool}: unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; it "
                           f"takes {', '.join(props)}")
    missing = [k for k in schema.get("required", ()) if k not in arguments]
    if missing:
        raise BadArguments(f"{tool}: missing required argument {', '.join(missing)}")
    out = {}
    for name, prop in props.items():
        if name in arguments and arguments[name] is not None:
            out[name] = _value(tool, name, prop, arguments[name])
        elif "default" in prop:
            out[name] = prop["default"]
    return out


def _value(tool: str, name: str, prop: dict, value):
    kinds = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
    kind = next((k for k in kinds if isinstance(value, _TYPES[k])), kinds[0])  # the first type the value has
    wanted = _TYPES[kind]
    # JSON has one number type: 3.0 is an integer; a bool is never one
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, wanted) or (kind == "integer" and isinstance(value, bool)):
        what = " or ".join(kinds)
        raise BadArguments(f"{tool}: {name} must be a{'n' if what[0] in 'aeiou' else ''} {what}, got "
                           f"{type(value).__name__} {value!r}")
    if "enum" in prop and value not in prop["enum"]:
        raise BadArguments(f"{tool}: {name} must be one of {', '.join(map(str, prop['enum']))}, got {value!r}")
    low, high = prop.get("minimum"), prop.get("maximum")
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"from {low}" + (f" to {high}" if high is not None else "")
        raise BadArguments(f"{tool}: {name} must be {bounds}, got {value}")
    if kind == "array" and not all(isinstance(v, str) for v in value):
        raise BadArguments(f"{tool}: {name} must be a list of strings")
    if kind == "string" and not value and prop.get("minLength"):
        raise BadArguments(f"{tool}: {name} must not be empty")
    return value
