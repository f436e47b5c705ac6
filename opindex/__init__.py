"""opindex: a persistent code index of a PyTorch checkout.

    import opindex
    ix = opindex.open()            # $OPINDEX_DB, else the index of the checkout here, else the last built
    ix.trace("nn.LSTM")            # Python -> YAML -> C++ -> stubs -> CUDA -> backward
    ix.sql("SELECT * FROM native_dispatch WHERE function = :f", f="add.out")

Heavy modules load lazily so `opindex --help` stays fast.
"""
from __future__ import annotations

__version__ = "0.1.0"


def open(db=None):  # noqa: A001 - mirrors sqlite3.connect / opindex.Index
    from .api import Index
    return Index(db)


def __getattr__(name):
    if name in ("Index", "Trace"):
        from . import api
        return getattr(api, name)
    if name == "build":
        from .api import build
        return build
    if name == "list_indexes":  # `opindex list`: the per-checkout indexes in ~/.cache/opindex
        from .indexer.indexes import list_indexes
        return list_indexes
    raise AttributeError(name)
