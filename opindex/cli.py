"""The command line: a thin click layer over opindex.api. Errors the user can act on print one line, exit 1."""
from __future__ import annotations

import functools
import sys

import click

from . import __version__


def _fail_cleanly(fn):
    """No traceback reaches the user: OpindexError and OS errors become one line and a non-zero exit."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from .model import OpindexError
        try:
            return fn(*args, **kwargs)
        except OpindexError as exc:
            raise click.ClickException(str(exc)) from None
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            raise click.ClickException(f"{where}{exc.strerror or exc}") from None
        except KeyboardInterrupt:
            click.echo("interrupted; the index was left as it was", err=True)
            sys.exit(130)
    return wrapper


def output_options(fn):
    """The same output flags on every listing command (learn them once)."""
    fn = click.option("--fmt", "fmt", type=click.Choice(["table", "json", "ndjson", "csv", "tsv"]), default=None,
                      help="Output format (default: table on a terminal, json otherwise).")(fn)
    for flag in ("tsv", "csv", "ndjson", "json", "table"):
        fn = click.option(f"--{flag}", "fmt", flag_value=flag, help=f"Same as --fmt {flag}.")(fn)
    return fn


def _emit(rows: list[dict], fmt: str | None, columns=None) -> None:
    from .render.rows import render
    fmt = fmt or ("table" if sys.stdout.isatty() else "json")
    click.echo(render(rows, fmt, columns), nl=False)


db_option = click.option("--db", "db", default=None, metavar="PATH",
                         help="Index file (default: $OPINDEX_DB, else ~/.cache/opindex/index.sqlite).")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="opindex")
def main():
    """opindex: a code index of a PyTorch checkout, from nn.Module to CUDA kernel.

    \b
    opindex build [CHECKOUT]        index a checkout (once; rebuilds are incremental)
    opindex trace nn.LSTM           Python -> YAML -> C++ -> stubs -> CUDA -> backward
    opindex sql "SELECT ..."        read-only SQL over the index (see `opindex schema`)
    """


@main.command()
@click.argument("checkout", required=False)
@db_option
@click.option("--installed", is_flag=True, help="Index the torch package installed in this Python instead.")
@click.option("--jobs", "-j", type=click.IntRange(1, 256), default=None, help="Worker processes (default: CPUs).")
@click.option("--include", multiple=True, metavar="DIR",
              help="Also index this folder (relative to the checkout); repeatable.")
@click.option("--exclude", multiple=True, metavar="PATH",
              help="Skip this folder or file (relative to the checkout); repeatable.")
@click.option("--quiet", "-q", is_flag=True, help="No progress output.")
@_fail_cleanly
def build(checkout, db, installed, jobs, include, exclude, quiet):
    """Index CHECKOUT into the database.

    CHECKOUT defaults to $TILEGYM_SKILL_CACHE_DIR/pytorch-source, else ~/.cache/tilegym/pytorch-source, else the
    bundled sample_checkout. Indexed: torch, aten, c10, tools, torchgen, functorch (never third_party or build
    outputs). The index is written to a temporary file and replaces the old one only when complete.
    """
    from .api import build as run_build
    from .build import checkout as co
    from .db import resolve_db
    ck = co.resolve(checkout, installed=installed, include=include, exclude=exclude)
    target = resolve_db(db)
    err = lambda msg: click.echo(msg, err=True)
    if not quiet:
        err(f"checkout: {ck.root} ({ck.how})")
        err(f"index:    {target}")
    _warn_version_mismatch(ck, err)
    from .build.pipeline import build as _build
    report = _build(ck, target, jobs=jobs, progress=not quiet)
    for w in report.warnings[:50]:
        err(f"warning: {w}")
    if len(report.warnings) > 50:
        err(f"warning: ... and {len(report.warnings) - 50} more (see the files table, column message)")
    if not quiet:
        _summary(report, err)


def _warn_version_mismatch(ck, err) -> None:
    from .build import checkout as co
    src, inst = co.pytorch_version(ck.root), co.installed_torch_version()
    if src and inst and co.release(src) != co.release(inst):
        err(f"warning: the checkout is PyTorch {src} but this Python has torch {inst}; "
            f"the source should match the installed torch")


def _summary(report, err) -> None:
    if report.up_to_date:
        err(f"up to date: {sum(report.files_by_layer.values())} files unchanged ({report.seconds:.2f} s)")
        return
    layers = ", ".join(f"{k} {v}" for k, v in sorted(report.files_by_layer.items()))
    err(f"files:    {layers}  (parsed {report.parsed}, unchanged {report.reused}, removed {report.removed})")
    rows = ", ".join(f"{k} {v}" for k, v in report.rows.items() if k not in ("meta", "checkouts"))
    err(f"rows:     {rows}")
    err(f"PyTorch:  {report.pytorch_version or 'version unknown'}")
    err(f"done in {report.seconds:.1f} s")


@main.command()
@click.argument("query")
@click.option("-p", "--param", "params", type=(str, str), multiple=True, metavar="NAME VALUE",
              help="Bind :NAME to VALUE; repeatable.")
@db_option
@output_options
@_fail_cleanly
def sql(query, params, db, fmt):
    """Run a read-only SQL QUERY against the index (see `opindex schema` for tables and views)."""
    from .api import Index
    with Index(db) as ix:
        _emit(ix.rows(query, dict(params)), fmt)


@main.command()
@db_option
@click.option("--markdown", is_flag=True, help="The README's schema section (from the code, not an index).")
@_fail_cleanly
def schema(db, markdown):
    """Tables, columns and views, with what each column means."""
    from .schema.doc import markdown as md, text
    click.echo(md() if markdown else text(), nl=False)


@main.command()
@db_option
@output_options
@_fail_cleanly
def stats(db, fmt):
    """What the index holds: build facts, files per layer, rows per table."""
    from .api import Index
    with Index(db) as ix:
        _emit(ix.stats(), fmt)
