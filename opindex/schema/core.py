"""Bookkeeping tables: which checkout, which build, which files."""
from __future__ import annotations

from sqlalchemy import Column, ForeignKey, Index, Integer, MetaData, String, Table, Text, BigInteger

metadata = MetaData()


def checkout_fk() -> Column:
    return Column("checkout_id", Integer, ForeignKey("checkouts.id"), nullable=False,
                  comment="the checkout this row came from (checkouts.id)")


def file_line() -> list[Column]:
    return [Column("file", Text, nullable=False, comment="path relative to the checkout root"),
            Column("line", Integer, nullable=False, comment="1-based line")]


checkouts = Table(
    "checkouts", metadata,
    Column("id", Integer, primary_key=True, comment="checkout id"),
    Column("root", Text, nullable=False, comment="absolute path of the checkout root at build time"),
    Column("kind", String(16), nullable=False, comment="'source' (a source tree) or 'installed' (a torch package)"),
    Column("pytorch_version", Text, comment="from version.txt or torch/version.py; NULL when neither exists"),
    Column("git_commit", Text, comment="HEAD commit when the checkout is a git work tree, else NULL"),
    Column("built_at", Text, nullable=False, comment="UTC time the build finished, ISO 8601"),
    comment="One row per indexed checkout.",
)

meta = Table(
    "meta", metadata,
    Column("key", String(64), primary_key=True, comment="setting name"),
    Column("value", Text, comment="its value, as text"),
    comment="Build facts as key/value: checkout_root, pytorch_version, git_commit, built_at, build_seconds, "
            "opindex_version, schema_version, scope, installed_torch_version, absent_layers, extractor_fingerprint, views_fingerprint "
            "(a rebuild by other extractors, PyTorch rules or indexer code starts cold).",
)

files = Table(
    "files", metadata,
    Column("id", Integer, primary_key=True, comment="file id"),
    checkout_fk(),
    Column("path", Text, nullable=False, comment="path relative to the checkout root"),
    Column("language", String(16), nullable=False, comment="python, cpp, cuda, yaml or template"),
    Column("layer", String(16), nullable=False,
           comment="python, cpp, cuda, registry (the two YAML files) or codegen (generators and templates)"),
    Column("module", Text, comment="dotted Python module name for .py/.pyi files (torch.nn.modules.rnn), else NULL"),
    Column("size", BigInteger, nullable=False, comment="bytes"),
    Column("mtime_ns", BigInteger, nullable=False, comment="modification time, ns (for incremental rebuilds)"),
    Column("sha1", String(40), nullable=False, comment="SHA-1 of the content"),
    Column("parse_errors", Integer, nullable=False, default=0,
           comment="tree-sitter ERROR/MISSING nodes (C++/CUDA/Python) or YAML errors; facts outside them are kept"),
    Column("message", Text, comment="why the file was skipped or only partly indexed, else NULL"),
    Index("ix_files_path", "checkout_id", "path", unique=True),
    comment="Every file the build looked at.",
)
