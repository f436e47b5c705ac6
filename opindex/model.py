"""Typed records shared by the layers, each carrying where it came from.

What a registry file says (a native_functions.yaml entry, a derivatives.yaml entry) is parsed once into these
records, and the store writes their rows; the library hands the same records to users, and errors carry their
Location. Extractors of source files emit rows instead (opindex.records: one row type per table, cheap to pickle
from worker processes). Records are frozen: a record is a fact about one checkout at one build.
"""
from __future__ import annotations

from dataclasses import dataclass, fields


def require_pandas():
    """pandas, or an error that says how to get it (it is optional: `pip install 'opindex[pandas]'`)."""
    try:
        import pandas
    except ImportError:
        raise OpindexError("pandas is not installed: `pip install pandas` (or opindex[pandas]) for DataFrames; "
                           "to_dicts() / rows() give the same rows as dicts") from None
    return pandas


class Record:
    """A typed result row: to_dict() is its flat row (a Location as file and line, a tuple as its length), what
    the CLI prints and a DataFrame holds."""

    def to_dict(self) -> dict:
        row: dict = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, Location):
                row["file"], row["line"] = v.file, v.line
            elif isinstance(v, tuple):
                row[f.name] = len(v)
            else:
                row[f.name] = v
        return row


class Listing(list):
    """What a listing method returns: a list of records (or dicts) that also gives its flat rows (to_dicts(); a
    record with rows(), an op's entry, gives one row per dispatch row) and a pandas DataFrame (to_dataframe())."""

    def to_dicts(self) -> list[dict]:
        out: list[dict] = []
        for r in self:
            if hasattr(r, "rows"):
                out += r.rows()
            elif hasattr(r, "to_dict"):
                out.append(r.to_dict())
            else:
                out.append(dict(r))
        return out

    def to_dataframe(self):
        return require_pandas().DataFrame(self.to_dicts())


@dataclass(frozen=True)
class Location:
    file: str  # relative to the checkout root
    line: int  # 1-based

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


class OpindexError(Exception):
    """An error the user can act on; the CLI prints it as one line and exits non-zero."""


class SourceError(OpindexError):
    """Bad input at a known place."""

    def __init__(self, location: Location | str, message: str):
        self.location = location
        self.message = message
        super().__init__(f"{location}: {message}")


@dataclass(frozen=True)
class Symbol(Record):
    """A definition (C++/CUDA function, kernel, structured kernel, class; Python class or def)."""
    name: str
    qualified_name: str
    kind: str
    language: str
    location: Location
    signature: str | None = None


@dataclass(frozen=True)
class DispatchRow(Record):
    dispatch_key: str
    kernel: str
    implicit: bool
    location: Location


@dataclass(frozen=True)
class UfuncLoop(Record):
    """One key of an entry's ufunc_inner_loop: (Generic: add (AllAndComplex, BFloat16, Half))."""
    ufunc_key: str
    loop: str
    dtypes: str | None
    location: Location


class _OpName:
    """`add_` and `Tensor` of an entry named add_.Tensor (native_functions.yaml and derivatives.yaml alike)."""
    full_name: str

    @property
    def name(self) -> str:
        """The operator base name: add_ of add_.Tensor."""
        return self.full_name.partition(".")[0]

    @property
    def overload(self) -> str:
        """The overload name, '' for the default overload."""
        return self.full_name.partition(".")[2]


@dataclass(frozen=True)
class NativeFunction(_OpName, Record):
    """A native_functions.yaml entry with its dispatch rows (torchgen's NativeFunction, in the index's words: the
    list fields are the comma-separated text the native_functions table holds)."""
    full_name: str
    schema: str
    variants: str
    structured: bool
    structured_delegate: str | None
    location: Location
    dispatch: tuple[DispatchRow, ...] = ()
    # the rest of the entry; Index.op leaves them at their defaults
    structured_inherits: str | None = None
    python_module: str | None = None
    tags: str | None = None
    autogen: str | None = None
    category_override: str | None = None
    ufunc_inner_loop: str | None = None  # 'Key: name (dtypes); ...'
    is_out: bool = False  # has kwarg-only mutable Tensor outputs (an out= overload)
    ufunc_loops: tuple[UfuncLoop, ...] = ()

    def rows(self) -> list[dict]:
        """One flat row per dispatch row (one with empty dispatch columns when there is none): what `opindex op`
        prints, for a notebook too."""
        base = {"function": self.full_name, "structured": self.structured,
                "structured_delegate": self.structured_delegate, "variants": self.variants, "entry": str(self.location)}
        return [{**base, "dispatch_key": d.dispatch_key, "kernel": d.kernel, "implicit": d.implicit}
                for d in self.dispatch] or [{**base, "dispatch_key": None, "kernel": None, "implicit": None}]


@dataclass(frozen=True)
class DerivativeFormula(Record):
    """One formula of a derivatives.yaml entry: the inputs it covers and its text."""
    dispatch_key: str  # 'Default', or the key of the dispatch: section it sits in
    inputs: str  # as written: 'self', 'input, weight, bias'; 'result' names a forward (JVP) formula
    formula: str
    is_forward: bool
    uses_result: bool
    uses_grads: bool
    location: Location


@dataclass(frozen=True)
class Derivative(_OpName, Record):
    """A derivatives.yaml entry with its formulas."""
    full_name: str
    schema: str
    output_differentiability: str | None
    dispatch: str | None  # the keys of its dispatch: section, comma-separated
    location: Location
    formulas: tuple[DerivativeFormula, ...] = ()


@dataclass(frozen=True)
class Registration(Record):
    stub: str
    kernel: str | None
    macro: str
    device: str
    location: Location


@dataclass(frozen=True)
class CallSite(Record):
    caller: str
    callee: str
    qualifier: str
    location: Location


@dataclass(frozen=True)
class Stub(Record):
    """A dispatch stub: where it is declared/defined, who calls it, what each device registers."""
    name: str
    declarations: tuple[Location, ...]
    callers: tuple[CallSite, ...]
    registrations: tuple[Registration, ...]

    def rows(self) -> list[dict]:
        """Declarations, call sites and registrations as flat rows: what `opindex stub` prints."""
        rows = [{"what": "declared/defined", "device": None, "name": self.name, "file": d.file, "line": d.line}
                for d in self.declarations]
        rows += [{"what": "called", "device": c.qualifier, "name": c.caller, "file": c.location.file,
                  "line": c.location.line} for c in self.callers]
        rows += [{"what": f"registered ({r.macro})", "device": r.device, "name": r.kernel, "file": r.location.file,
                  "line": r.location.line} for r in self.registrations]
        return rows

    def to_dataframe(self):
        """rows() as a pandas DataFrame."""
        return require_pandas().DataFrame(self.rows())
