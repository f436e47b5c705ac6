"""Load YAML keeping the line of every mapping and of each of its keys (torchgen's trick, plus key lines)."""
from __future__ import annotations

import re

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


MAX_NODES = 2_000_000  # nodes a registry may expand to (native_functions.yaml has ~40,000; an alias bomb of a few KB
# expands to billions)
_ANCHOR = re.compile(r"(?:^|[\s\[{,:-])&[\w-]", re.M)


def load(text: str | bytes):
    """Parse YAML; raises yaml.YAMLError (with problem_mark) on malformed input, and on a text whose aliases
    expand to more than MAX_NODES nodes (sized from the parser's events, only when the text defines an anchor)."""
    source = text.decode("utf-8") if isinstance(text, bytes) else text
    if _ANCHOR.search(source):
        _check_expansion(source)
    return yaml.load(source, Loader=LineLoader)


def _check_expansion(source: str) -> None:
    """The size each anchored node expands to, each alias counted at that size: refused past MAX_NODES."""
    anchors: dict[str, int] = {}
    stack: list[list] = [[0, None]]  # open collections: [nodes inside, anchor]
    for event in yaml.parse(source, Loader=_Base):
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            stack.append([1, event.anchor])
            continue
        if isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            size, anchor = stack.pop()
        elif isinstance(event, yaml.ScalarEvent):
            size, anchor = 1, event.anchor
        elif isinstance(event, yaml.AliasEvent):
            size, anchor = anchors.get(event.anchor, 1), None
        else:
            continue
        if anchor:
            anchors[anchor] = size
        stack[-1][0] += size
        if stack[-1][0] > MAX_NODES:
            raise yaml.constructor.ConstructorError(
                None, None, f"its aliases expand to more than {MAX_NODES:,} nodes (an alias bomb?)", event.start_mark)


def error_line(exc: yaml.YAMLError) -> int:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return mark.line + 1 if mark is not None else 1


def strip(mapping: dict) -> dict:
    return {k: v for k, v in mapping.items() if k not in (LINE, KEY_LINES)}


def parse_entries(text: bytes, path: str, key: str, parse_entry) -> tuple[list, list[str]]:
    """A registry file: a YAML list of mappings, each needing `key`. Returns (the records parse_entry(raw, path)
    makes, warnings naming file:line for entries that could not be read). A file that is not such a list raises
    SourceError."""
    from ..model import Location, SourceError
    try:
        data = load(text)
    except Exception as exc:  # yaml.YAMLError and decoding errors
        line = error_line(exc) if isinstance(exc, yaml.YAMLError) else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SourceError(Location(path, line), f"malformed YAML: {problem}") from None
    if data is None:
        return [], []
    if not isinstance(data, list):
        raise SourceError(Location(path, 1), "expected a list of entries")
    entries, warnings = [], []
    for raw in data:
        if not isinstance(raw, dict) or key not in raw:
            line = raw.get(LINE, 1) if isinstance(raw, dict) else 1
            warnings.append(f"{path}:{line}: entry without {key}: skipped")
            continue
        try:
            entries.append(parse_entry(raw, path))
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            warnings.append(f"{path}:{raw[LINE]}: {exc}; entry skipped")
    return entries, warnings
