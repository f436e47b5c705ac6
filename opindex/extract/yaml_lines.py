"""Load YAML keeping the line of every mapping and of each of its keys (torchgen's trick, plus key lines)."""
from __future__ import annotations

import yaml

try:  # the C loader is several times faster on native_functions.yaml
    _Base = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - pyyaml built without libyaml
    _Base = yaml.SafeLoader

LINE = "__line__"
KEY_LINES = "__key_lines__"


class LineLoader(_Base):
    pass


def _construct_mapping(loader: LineLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    mapping = loader.construct_mapping(node, deep=deep)
    mapping[LINE] = node.start_mark.line + 1
    mapping[KEY_LINES] = {k.value: k.start_mark.line + 1 for k, _ in node.value if isinstance(k, yaml.ScalarNode)}
    return mapping


LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load(text: str | bytes):
    """Parse YAML; raises yaml.YAMLError (with problem_mark) on malformed input."""
    return yaml.load(text, Loader=LineLoader)


def error_line(exc: yaml.YAMLError) -> int:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return mark.line + 1 if mark is not None else 1


def strip(mapping: dict) -> dict:
    return {k: v for k, v in mapping.items() if k not in (LINE, KEY_LINES)}
