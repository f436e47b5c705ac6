"""The command line: a thin click layer over opindex.api. No traceback reaches the user: an error prints one line.

Exit codes, the same for every command (EXIT_CODES, shown in `opindex --help`): 0 found, 1 nothing found, 2 usage
error or ambiguous name, 3 broken index or environment, 4 a query stopped at its --timeout or another limit, 130
interrupted."""
from __future__ import annotations

import functools
import sys

import click

from . import __version__
from .pytorch.build_config import DTYPES
from .pytorch.devices import DEVICE_OPTIONS
from .render.rows import FORMATS

EXIT_CODES = """\b
Exit codes (every command):
  0 found; 1 nothing found (find, callers, callees, op, stub, trace,
    kernels --op);
  diff: 0 differences shown, 1 none;
  2 usage error, or a name that is ambiguous (its candidates are listed);
  3 broken index or environment (missing, damaged, unreadable index, a
    failed write); 4 a query stopped at its --timeout or another of
    its limits; 130 interrupted."""


def _fail(message: str, code: int):
    error = click.ClickException(message)
    error.exit_code = code
    return error


def _fail_cleanly(fn):
    """No traceback reaches the user: OpindexError, SQLite and OS errors become one line and the exit code of
    EXIT_CODES (OpindexError's own exit_code: db.UsageError 2, db.Broken 3, query.QueryTimeout 4; else 2)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        import sqlite3

        from .model import OpindexError
        try:
            return fn(*args, **kwargs)
        except OpindexError as exc:
            raise _fail(str(exc), getattr(exc, "exit_code", 2)) from None
        except sqlite3.DatabaseError as exc:  # a query path the library did not wrap: the index is damaged
            raise _fail(f"index damaged: run `opindex build` to rebuild it ({exc})", 3) from None
        except BrokenPipeError:  # `opindex ... | head`: the reader has gone, and so do we, quietly
            _quiet_stdout()
            sys.exit(141)
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            raise _fail(f"{where}{exc.strerror or exc}", 3) from None
        except KeyboardInterrupt:
            click.echo("interrupted; the index was left as it was" if fn.__name__ == "build" else "interrupted",
                       err=True)
            sys.exit(130)
    return wrapper


def _quiet_stdout() -> None:
    """After EPIPE: point stdout at /dev/null so the interpreter's final flush cannot raise again."""
    import os
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _one_format(ctx: click.Context, args: list[str]) -> None:
    """Refuse two different output formats (--json --markdown, --csv --fmt tsv): click would keep the last."""
    try:
        _, _, order = click.Command.make_parser(ctx.command, ctx).parse_args(args=list(args))
    except click.ClickException:
        return  # the real parse reports it
    given = list(dict.fromkeys(p for p in order if getattr(p, "name", None) == "fmt"))
    if len(given) > 1:
        raise click.UsageError(f"{' and '.join(p.opts[0] for p in given)} are mutually exclusive: give one "
                               f"output format", ctx=ctx)


class _Command(click.Command):
    def parse_args(self, ctx, args):
        _one_format(ctx, args)
        return super().parse_args(ctx, args)


def _interrupted(signum, frame):
    raise KeyboardInterrupt


class _Cli(click.Group):
    command_class = _Command

    def main(self, *args, **kwargs):
        import signal
        for sig in (signal.SIGTERM, signal.SIGHUP):  # `kill`, a closed terminal: handled as Ctrl-C is (the build
            signal.signal(sig, _interrupted)  # stops its workers, removes its temporary file, leaves the index)
        if sys.stdout is None:  # `opindex sql ... >&-`: nowhere to answer; said on stderr, exit 3 (environment)
            if sys.stderr is not None:
                sys.stderr.write("opindex: standard output is closed: nowhere to write the answer\n")
            sys.exit(3)
        # any output encoding works (PYTHONIOENCODING=latin-1, LC_ALL=C): what it cannot encode is replaced
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.reconfigure(errors="replace")
            except (AttributeError, ValueError):
                pass
        return super().main(*args, **kwargs)


def output_options(fn):
    """The same output flags on every listing command (learn them once)."""
    fn = click.option("--fmt", "fmt", type=click.Choice(FORMATS), default=None,
                      help="Output format (default: table, on a terminal or not; each JSON row names its index: "
                           "`index`, docs/json.md).")(fn)
    for flag in ("tsv", "csv", "ndjson", "json", "table"):
        fn = click.option(f"--{flag}", "fmt", flag_value=flag, help=f"Same as --fmt {flag}.")(fn)
    return fn


def link_options(fn):
    """--absolute and --hyperlinks/--no-hyperlinks, kept in the click context (_emit and trace read them)."""
    def keep(ctx, param, value):
        ctx.meta[f"opindex.{param.name}"] = value
        return value
    fn = click.option("--absolute", is_flag=True, expose_value=False, callback=keep,
                      help="File paths absolute (the checkout root joined), not relative to the checkout.")(fn)
    return click.option("--hyperlinks/--no-hyperlinks", default=None, expose_value=False, callback=keep,
                        help="Each file:line an OSC 8 hyperlink to the file (default: on a terminal, unless "
                             "NO_COLOR, TERM=dumb or $OPINDEX_HYPERLINKS=0).")(fn)


def _link_settings() -> tuple[bool, bool]:
    """(--absolute, hyperlinks on) of the running command."""
    from .render import terminal
    from .render.links import use_hyperlinks
    meta = click.get_current_context().meta
    return bool(meta.get("opindex.absolute")), use_hyperlinks(meta.get("opindex.hyperlinks"),
                                                              terminal.is_terminal())


def _emit(rows: list[dict], fmt: str | None, columns=None, cap: str | None = None, ix=None) -> None:
    """Print rows; `cap` (a listing cut at --limit) is stated on stderr, and under a table; the index that answered
    (`ix`) ends a table and is each JSON row's `index` field; paths absolute with --absolute and hyperlinks where
    _link_settings says."""
    from .render import terminal
    from .render.rows import render
    fmt = fmt or "table"  # on a terminal or not, as git and rg: piping drops only colour and pager
    link = None
    if ix is not None:
        rows, link = _located(rows, ix, fmt)
        rows = list(rows)
    click.echo(render(rows, fmt, columns, width=terminal.width() if fmt == "table" else None, link=link), nl=False)
    if ix is not None and fmt == "table":
        click.echo(ix.which())
    if cap:
        click.echo(f"opindex: {cap}", err=True)


def _located(rows, ix, fmt: str):
    """(rows, link) of an answer of `ix`: path columns absolute with --absolute, each JSON row naming the index
    (render.rows.with_index), and link(row, column), the OSC 8 target of a path cell, where hyperlinks are on."""
    from .render.links import absolute, terminal_link
    from .render.rows import is_path_column, with_index
    whole, links = _link_settings()
    root = ix.meta.get("checkout_root")
    if whole:
        rows = ({k: absolute(root, v) if is_path_column(k) and isinstance(v, str) else v for k, v in r.items()}
                for r in rows)
    if fmt in ("json", "ndjson"):  # every JSON answer names its index (docs/json.md)
        rows = with_index(rows, ix.answered_by())
    link = (lambda row, column: terminal_link(root, row.get(column), row.get("line"))) if links else None
    return rows, link


def _open(db):
    """The index a command reads (Index(db)); a warning on stderr when the current folder lies in a checkout
    that is not the index's."""
    import warnings

    from .api import Index
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # said here, once, as the CLI says warnings
        ix = Index(db)
    if ix.mismatch:
        click.echo(f"warning: {ix.mismatch}", err=True)
    return ix


def _nothing(what: str, ix, name: str, pool: str) -> str:
    """What a command that found nothing says: what was looked for, in which index, and the names of `pool` (op,
    stub, find, callers, callees) close to `name`."""
    near = ix.similar(name, pool)
    return f"{what} in {ix.which()}" + (f"; did you mean {', '.join(near)}?" if near else "")


def limit_option(default: int):
    return click.option("--limit", type=click.IntRange(0), default=default, show_default=True,
                        help="Show at most N rows and say so when there are more (0: all).")


def _capped(rows: list, limit: int) -> tuple[list, str | None]:
    """Rows fetched with limit + 1: the first `limit`, and the sentence that says more were left out."""
    if limit and len(rows) > limit:
        return rows[:limit], (f"showing the first {limit} rows; there are more (--limit N shows N, --limit 0 "
                              f"all)")
    return rows, None


db_option = click.option("--db", "db", default=None, metavar="PATH",
                         help="Index file (default: $OPINDEX_DB, else the index of the checkout holding this "
                              "folder, else the one built last: `opindex list`).")


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES)
@click.version_option(__version__, prog_name="opindex")
def main():
    """opindex: a code index of a PyTorch checkout, from nn.Module to CUDA kernel.

    \b
    opindex build [CHECKOUT]        index a checkout (once; rebuilds are incremental)
    opindex list                    the indexes built, one per checkout
    opindex trace nn.LSTM           Python -> YAML -> C++ -> stubs -> CUDA -> backward
    opindex sql "SELECT ..."        read-only SQL over the index (see `opindex schema`)
    """


@main.command()
@click.argument("checkout", required=False)
@click.option("--db", "db", default=None, metavar="PATH",
              help="Index file (default: $OPINDEX_DB, else this checkout's own, ~/.cache/opindex/<name>-<hash>.sqlite).")
@click.option("--installed", is_flag=True, help="Index the torch package installed in this Python instead.")
@click.option("--sample", is_flag=True, help="Index the miniature sample checkout shipped with opindex.")
@click.option("--jobs", "-j", type=click.IntRange(1, 256), default=None, help="Worker processes (default: CPUs).")
@click.option("--include", multiple=True, metavar="DIR",
              help="Also index this folder (relative to the checkout); repeatable.")
@click.option("--exclude", multiple=True, metavar="PATH",
              help="Skip this folder or file (relative to the checkout); repeatable.")
@click.option("--quiet", "-q", is_flag=True, help="No progress output.")
@click.option("--force", is_flag=True, help="Replace --db even when it is a regular file that is not an index "
                                            "($OPINDEX_DB: also when it is the index of another checkout).")
@_fail_cleanly
def build(checkout, db, installed, sample, jobs, include, exclude, quiet, force):
    """Index CHECKOUT into the database.

    CHECKOUT defaults to $TILEGYM_SKILL_CACHE_DIR/pytorch-source, else ~/.cache/tilegym/pytorch-source, else the
    bundled sample_checkout (--sample takes it in any case). Indexed: torch, aten, c10, tools, torchgen, functorch (never third_party or build
    outputs). The index is written to a temporary file and replaces the old one only when complete.

    Without --db and $OPINDEX_DB each checkout has its own index, ~/.cache/opindex/<name>-<hash>.sqlite (`opindex
    list`); queries open the index of the checkout they run in, else the one built last. $OPINDEX_DB naming an
    index of another checkout is refused unless --force.

    --db must be an opindex index or a new file: any other file is refused (--force replaces a regular file; a
    device, FIFO or folder never), an empty --db is an error. A symlink is followed: the file it points to is
    replaced, in its own folder, and the link stays.
    """
    from .api import build as _build
    err = lambda msg: click.echo(msg, err=True)

    def log(kind: str, text: str) -> None:
        if kind == "warning":
            err(f"warning: {text}")
        elif not quiet:
            err(text)

    report = _build(checkout, db, installed=installed, jobs=jobs, include=include, exclude=exclude,
                    progress=not quiet, force=force, log=log, sample=sample)
    for w in report.warnings[:50]:
        err(f"warning: {w}")
    if len(report.warnings) > 50:
        err(f"warning: ... and {len(report.warnings) - 50} more (see the files table, column message)")
    if not quiet:
        _summary(report, err)


def _summary(report, err) -> None:
    if report.up_to_date:
        err(f"up to date: {sum(report.files_by_layer.values())} files unchanged ({report.seconds:.2f} s)")
        return
    layers = ", ".join(f"{k} {v}" for k, v in sorted(report.files_by_layer.items()))
    err(f"files:    {layers}  (parsed {report.parsed}, unchanged {report.reused}, removed {report.removed})")
    rows = ", ".join(f"{k} {v}" for k, v in report.rows.items() if k not in ("meta", "checkouts"))
    err(f"rows:     {rows}")
    err(f"PyTorch:  {report.pytorch_version or 'version unknown'}")
    if report.absent:
        err(f"absent:   {', '.join(report.absent)} (traces stop where these would be)")
    phases = ", ".join(f"{k} {v:.1f} s" for k, v in report.phases.items())
    err(f"done in {report.seconds:.1f} s ({phases})")


@main.command(epilog=EXIT_CODES)
@click.argument("query")
@click.option("-p", "--param", "params", type=(str, str), multiple=True, metavar="NAME VALUE",
              help="Bind :NAME to VALUE; repeatable.")
@click.option("--timeout", type=click.FloatRange(0), default=30, show_default=True, metavar="SECONDS",
              help="Stop the query after this many seconds in SQLite and say so, exit 4 (0: no limit).")
@click.option("--max-value", type=click.IntRange(0), default=1_000_000, show_default=True, metavar="BYTES",
              help="Stop a query that makes a longer string or blob, exit 4 (0: SQLite's own limit, 1 GB).")
@click.option("--max-memory", type=click.FloatRange(0), default=256, show_default=True, metavar="MB",
              help="Stop a query that needs more of SQLite's memory, exit 4 (0: no limit).")
@db_option
@output_options
@link_options
@_fail_cleanly
def sql(query, params, timeout, max_value, max_memory, db, fmt):
    """Run a read-only SQL QUERY against the index (see `opindex schema` for tables and views).

    Rows are written as SQLite returns them (any number, in constant memory); a column name that repeats gets _2,
    _3 (`SELECT 1 AS x, 2 AS x` gives x and x_2). Columns named file, path, where, location or ending _file or
    _path are file paths (--absolute joins the checkout root). JSON rows end with `index`, the index that answered
    (docs/json.md). Ctrl-C stops a running query. A query that returns no rows exits 0."""
    from .render import terminal
    from .render.stream import write_rows
    fmt = fmt or "table"  # on a terminal or not, as git and rg: piping drops only colour and pager
    out = _Batched()
    with _open(db) as ix, ix.stream(query, dict(params), timeout=timeout, max_value=max_value,
                                    max_memory_mb=max_memory) as found:
        rows, link = _located(found, ix, fmt)
        write_rows(rows, found.columns, fmt, out.write, width=terminal.width() if fmt == "table" else None,
                   link=link)
        if fmt == "table":
            out.write(ix.which() + "\n")
    out.flush()


class _Batched:
    """Text to stdout in batches (64 KB, or what came within 0.2 s): a write per row would be a system call per
    row, and a slow query's rows still show as they come."""

    def __init__(self):
        import time
        self.parts, self.size, self.clock = [], 0, time.monotonic
        self.last = self.clock()

    def write(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        if self.size >= 65536 or self.clock() - self.last > 0.2:
            self.flush()

    def flush(self) -> None:
        if self.parts:
            click.echo("".join(self.parts), nl=False)
            self.parts, self.size = [], 0
        self.last = self.clock()


@main.command(name="list")
@output_options
@_fail_cleanly
def list_(fmt):
    """The indexes in ~/.cache/opindex ($XDG_CACHE_HOME/opindex), one per checkout built without --db, and those
    built with --db or $OPINDEX_DB: the checkout each holds, its PyTorch version, when it was built; `current`
    marks the one a query here opens (without --db or $OPINDEX_DB), `last` the one built last."""
    from .indexer.indexes import list_indexes
    _emit(list_indexes(), fmt)


@main.command()
@click.option("--markdown", is_flag=True, help="The schema section of docs/schema.md (from the code, not an index).")
@_fail_cleanly
def schema(markdown):
    """Tables, columns and views, with what each column means."""
    from .schema.doc import markdown as md, text
    click.echo(md() if markdown else text(), nl=False)


@main.command()
@db_option
@output_options
@_fail_cleanly
def stats(db, fmt):
    """What the index holds: build facts, files per layer, rows per table."""
    with _open(db) as ix:
        _emit(ix.stats(), fmt, ix=ix)


def _flat(records) -> list[dict]:
    """Typed records -> rows (model.Record.to_dict: a Location becomes file and line columns)."""
    return [r.to_dict() for r in records]


@main.command()
@click.argument("name")
@click.option("--device", type=click.Choice(DEVICE_OPTIONS), default="cuda", show_default=True,
              help="Which dispatch rows, registrations and platform code to follow (code under another "
                   "platform's #if, such as #ifdef USE_ROCM on cuda, is not walked).")
@click.option("--depth", type=click.IntRange(0, 5), default=1, show_default=True,
              help="How many times to follow a C++ kernel's calls of other ops back into their YAML entries "
                   "(a deeper trace only adds hops).")
@click.option("--up", is_flag=True, default=None, help="Bottom-up: from a kernel, stub or op up to the Python surface "
              "(automatic for __global__ kernels, registered kernel functions and stubs).")
@click.option("--backward", is_flag=True, help="Also trace the ops the backward formulas call.")
@click.option("--tree", is_flag=True, help="Text: every hop as a tree (the default shows the main chain, the "
                                          "branches folded to one line each, and the backward).")
@click.option("--full", is_flag=True, help="Text: the tree with the shared TensorIterator launch machinery hop by hop "
                                          "(folded to one line otherwise; --json always has every hop).")
@click.option("--snippets", is_flag=True, help="Text: the source lines under each hop shown (--context of them).")
@click.option("--context", type=click.IntRange(0, 50), default=2, show_default=True,
              help="With --snippets: source lines shown from each hop's line on (0: the hop's line only).")
@click.option("--json", "fmt", flag_value="json", help="The documented JSON shape (file and line on every hop).")
@click.option("--markdown", "fmt", flag_value="markdown", help="Markdown (nested list and summary table).")
@click.option("--dot", "fmt", flag_value="dot", help="Graphviz dot.")
@click.option("--mermaid", "fmt", flag_value="mermaid", help="Mermaid flowchart.")
@click.option("--max-hops", type=click.IntRange(0), default=5000, show_default=True,
              help="Stop the walk after N hops and say so (0: no limit).")
@click.option("--limit", type=click.IntRange(0), default=6, show_default=True,
              help="Bottom-up: callers, launches and registrations walked per step; more are grouped by file with "
                   "their ops named, and the trace says so (0: walk every one). Top-down, 0 also lifts the fan-out "
                   "caps each stated where it cuts (overloads, AT_DISPATCH sites, __device__ functions and helpers "
                   "without device code per body).")
@click.option("--color/--no-color", "color", default=None,
              help="Colour the text (default: on a terminal, unless NO_COLOR is set).")
@click.option("--legend/--no-legend", "legend", default=None,
              help="Text: the line that explains '◆ default of N' (default: once per terminal session, never when "
                   "piped).")
@click.option("--no-pager", is_flag=True, help="Never page (long text output on a terminal goes through "
                                              "$OPINDEX_PAGER, else $PAGER, else less -FRX).")
@click.option("--dtype", type=click.Choice(DTYPES), default=None,
              help="The input's dtype (float32 unless given; a traced call's tensors give it; a factory whose schema "
                   "defaults dtype=long, torch.randperm, makes int64): it decides the C++ "
                   "tests of a dtype (`if (at::isComplexType(common_dtype))` is false for float32: the complex-only "
                   "jiterator path is not the main chain).")
@click.option("-D", "--define", "defines", multiple=True, metavar="NAME[=VALUE]",
              help="The build traced defines NAME (as a compiler's -D; repeatable): `-D CUDNN_VERSION=8600`, "
                   "`-D USE_ROCM`, `-D 'AT_CUDNN_ENABLED()=0'`; the GPU: `-D TORCH_CUDA_ARCH_LIST=8.0` (default 9.0, "
                   "an sm_90 GPU; a list leaves the device's tests open).")
@click.option("-U", "--undefine", "undefines", multiple=True, metavar="NAME",
              help="The build traced does not define NAME (repeatable): `-U USE_MACA` for a fork's stock CUDA path.")
@click.option("--config", "config", type=click.Path(dir_okay=False), default=None,
              help="A YAML file of NAME: value (null for undefined) for the build traced; -D and -U win over it. "
                   "Without any, the build is what the checkout requires, then a current upstream CUDA build, then "
                   "the checkout's CMakeLists.txt options, then its own #defines; the text's Build line and the "
                   "JSON's `build` say which value decided and where it came from.")
@db_option
@link_options
@_fail_cleanly
def trace(name, device, depth, up, backward, tree, full, snippets, context, fmt, max_hops, limit, color, legend,
          no_pager, dtype, defines, undefines, config, db):
    """Trace NAME across the layers: Python -> bridge -> native_functions.yaml -> C++ kernel -> stubs ->
    registrations -> CUDA launches / library calls -> backward formulas -> decompositions -> codegen.

    NAME can be nn.LSTM, torch.nn.LSTM, F.relu, torch.relu, relu, Tensor.add_, aten::add.Tensor, add.out,
    at::native::relu, a kernel function, a stub or a __global__ kernel.

    NAME can also be a call, as Python writes it, traced with its arguments:

    
      opindex trace "F.interpolate(torch.randn(8, 16, 32, 32), scale_factor=2, mode='bilinear')"

    Its values (given, else the defaults) decide the `if` tests that read them, in Python and, through the
    schema, in C++ (mode='bilinear' takes upsample_bilinear2d; reduction='none' the no_reduce kernel); a tensor
    (torch.randn/rand/empty/zeros/ones/full/randint/arange/tensor, sizes and dtype=torch.X) gives the input's
    dtype, rank and sizes. The header's Call line says the values read; anything else is unknown, never guessed.

    Text output (the default) fits one screen: the main chain, the default path for --device (and for the op's
    default arguments) from the Python surface to the __global__ kernel or library call the op ends in, one
    line per hop with file:line; the branches, each folded to one line with the hops below it (the __device__
    functions a kernel calls, and the helpers without device code each body calls, among them); the backward;
    and the flags that expand it.
    --tree prints every hop, --snippets the source lines. Every cap (--max-hops, --limit) is stated in the
    output, once: a TRUNCATED line in text; `truncated` in JSON, and a line on stderr beside every other format.
    """
    from .render import terminal
    with _open(db) as ix:
        t = ix.trace(name, device=device, depth=depth, up=up, backward=backward, max_hops=max_hops, limit=limit,
                     defines=defines, undefines=undefines, config=config, dtype=dtype)
    whole, links = _link_settings()
    if whole:
        t = t.with_absolute_paths()
    if t.truncated and fmt:  # text says it in its TRUNCATED line: each note once
        click.echo(f"opindex: {t.truncated['reason']}", err=True)
    if not t.hops:
        click.echo(t.to_text(), err=True, nl=False)
        sys.exit(1 if t.unknown else 2)  # nothing found; ambiguous (candidates listed) or a usage error
    out = {"json": t.to_json, "markdown": t.to_markdown, "dot": t.to_dot, "mermaid": t.to_mermaid}.get(fmt)
    if out:
        click.echo(out(), nl=fmt == "json")
        return
    if legend is None:
        legend = terminal.is_terminal() and terminal.once_per_session("legend")
    text = t.to_text(context=context, full=full, tree=tree, snippets=snippets, color=terminal.use_color(color),
                     width=terminal.width(), links=links, legend=legend)
    terminal.page(text, enabled=not no_pager)


@main.command()
@click.argument("name")
@click.option("--kind", default=None, help="function, method, impl_func, global_kernel, class, ...")
@click.option("--layer", default=None, help="python, cpp or cuda.")
@click.option("--exact", is_flag=True, help="Take NAME literally: * and ? match only themselves.")
@limit_option(200)
@db_option
@output_options
@link_options
@_fail_cleanly
def find(name, kind, layer, exact, limit, db, fmt):
    """Definitions named NAME (name or qualified name), exit 1 when there is none.

    NAME is literal (operator[] finds operator[]) except the wildcards * (any characters) and ? (one character):
    '*lstm*'. A backslash makes a wildcard literal ('operator\\*' is operator*), as does --exact for the whole
    name."""
    with _open(db) as ix:
        rows, cap = _capped(ix.find(name, kind=kind, layer=layer, limit=limit and limit + 1, exact=exact), limit)
        _emit(_flat(rows), fmt, cap=cap, ix=ix)
        if not rows:
            click.echo(f"opindex: {_nothing(f'no definition named {name}', ix, name, 'find')}", err=True)
    if not rows:
        sys.exit(1)


def _records_command(method: str, doc: str):
    """A listing command that is one Index method returning typed records (callers, callees)."""
    def command(name, limit, db, fmt):
        with _open(db) as ix:
            rows, cap = _capped(getattr(ix, method)(name, limit=limit and limit + 1), limit)
            _emit(_flat(rows), fmt, cap=cap, ix=ix)
            if not rows:
                what = f"no {'call of' if method == 'callers' else 'call from'} {name}"
                click.echo(f"opindex: {_nothing(what, ix, name, method)}", err=True)
        if not rows:
            sys.exit(1)  # nothing found
    command.__doc__ = doc
    command.__name__ = method
    return main.command(name=method)(click.argument("name")(limit_option(500)(db_option(output_options(
        link_options(_fail_cleanly(command)))))))


_records_command("callers", "Call sites of NAME.")
_records_command("callees", "What the function NAME calls.")


@main.command()
@click.argument("name")
@db_option
@output_options
@link_options
@_fail_cleanly
def op(name, db, fmt):
    """The native_functions.yaml entry (or every overload of NAME) and its dispatch rows, one row per row."""
    with _open(db) as ix:
        rows = [row for e in ix.op(name) for row in e.rows()]
        if not rows:
            raise click.ClickException(_nothing(f"no native_functions.yaml entry named {name}", ix, name, "op"))
        _emit(rows, fmt, ix=ix)


@main.command()
@click.argument("name")
@db_option
@output_options
@link_options
@_fail_cleanly
def stub(name, db, fmt):
    """A dispatch stub: declaration, callers, and registrations per device."""
    with _open(db) as ix:
        s = ix.stub(name)
        if s is None:
            raise click.ClickException(_nothing(f"no dispatch stub named {name}", ix, name, "stub"))
        _emit(s.rows(), fmt, ix=ix)


@main.command()
@click.argument("a", metavar="A")
@click.argument("rest", nargs=-1, metavar="B [NAME ...]")
@click.option("--fork", is_flag=True, help="Report what the checkout of A, a vendor fork, changes against its "
              "upstream, from A alone (no B): its platform macro's #if branches, its own folders, its registrations, "
              "kernels and launches; NAMEs keep what lies in the files of their traces.")
@click.option("--fork-macro", "fork_macros", multiple=True, metavar="NAME",
              help="With --fork: the fork's platform macro (repeatable); default: the macros the checkout requires "
                   "that upstream leaves undefined (USE_MACA).")
@click.option("--device", type=click.Choice(DEVICE_OPTIONS), default="cuda", show_default=True,
              help="The device the op's main chains are traced for.")
@click.option("--json", "fmt", flag_value="json", help="The documented JSON shape (docs/diff.md).")
@click.option("--markdown", "fmt", flag_value="markdown", help="Markdown.")
@click.option("--limit", type=click.IntRange(0), default=10, show_default=True,
              help="Text: items shown per list, and the text says how many more (0: all; JSON and Markdown have "
                   "all).")
@click.option("--trace-limit", type=click.IntRange(0), default=6, show_default=True,
              help="The traces' fan-out caps, as trace's --limit (0: none); a cut trace says so under its op.")
@click.option("--max-hops", type=click.IntRange(0), default=5000, show_default=True,
              help="Stop each trace after N hops and say so (0: no limit).")
@click.option("--no-pager", is_flag=True, help="Never page (as for trace).")
@_fail_cleanly
def diff(a, rest, fork, fork_macros, device, fmt, limit, trace_limit, max_hops, no_pager):
    """Two indexes side by side: A and B are index files or checkouts (each with its own index); read-only.
    `opindex diff --fork A [NAME ...]`: what the fork A changes against its upstream, from A alone.

    Without NAME: the registries (ops added, removed, renamed, changed: schema, dispatch keys, structured, ufunc,
    composite status; derivative formulas) and the C++/CUDA side (stubs, registrations per device, __global__
    kernels added, removed, moved, renamed; library calls). With NAME (as `opindex trace` takes it): one screen per
    op, its two main chains hop by hop matched by role (line shifts are no change), the device code each side
    runs, its registry entries and backward formulas. Exit 0 when differences are shown, 1 when there are none."""
    from .api import Index, index_path
    from .render import terminal
    if not fork and not rest:
        raise click.UsageError("give two indexes or checkouts (A B), or --fork A")
    names = rest if fork else rest[1:]
    with Index(index_path(a)) as ix:
        d = ix.fork_report(names, macros=fork_macros, device=device) if fork else ix.diff(
            rest[0], names, device=device, trace_limit=trace_limit, max_hops=max_hops)
    if fmt == "json":
        click.echo(d.to_json())
    elif fmt == "markdown":
        click.echo(d.to_markdown(), nl=False)  # a report: every item
    else:
        terminal.page(d.to_text(limit=limit, width=terminal.width()), enabled=not no_pager)
    sys.exit(0 if d.differences else 1)


@main.command()
@click.option("--op", "op_name", default=None, metavar="NAME", help="Only the GPU code this op's trace reaches.")
@db_option
@output_options
@link_options
@_fail_cleanly
def kernels(op_name, db, fmt):
    """GPU launches (<<<>>>, TensorIterator launchers, cub/thrust) and, with --op, the device code and library calls
    an op's trace reaches: a NAME trace does not know exits 1 (2 when ambiguous) with the close names."""
    with _open(db) as ix:
        rows = ix.kernels(op_name)
        if op_name and not rows:
            t = ix.trace(op_name)  # why nothing: trace's own message (the index, did you mean ...)
            if not t.hops:
                raise _fail(t.to_text().rstrip("\n"), 1 if t.unknown else 2)
        _emit(rows, fmt, ix=ix)


@main.command()
@click.argument("profile_path", metavar="PROFILE", type=click.Path(dir_okay=False))
@db_option
@click.option("--limit", type=click.IntRange(1), default=None, help="Show only the N kernels with the most GPU time.")
@click.option("--max-size", type=click.FloatRange(0), default=512, show_default=True, metavar="MB",
              help="Refuse a profile larger than this after gunzip, exit 2 (0: no limit).")
@click.option("--fmt", "fmt", type=click.Choice(["table", "json", "csv", "markdown", "html"]), default=None,
              help="Output format (default: table, on a terminal or not).")
@click.option("--table", "fmt", flag_value="table", help="Same as --fmt table.")
@click.option("--json", "fmt", flag_value="json", help="Same as --fmt json.")
@click.option("--csv", "fmt", flag_value="csv", help="Same as --fmt csv.")
@click.option("--markdown", "fmt", flag_value="markdown", help="A Markdown report: a table, then each kernel's chain.")
@click.option("--html", "fmt", flag_value="html",
              help="One self-contained HTML page: GPU time by layer and by module -> op -> kernel, then each "
                   "kernel's chain and snippets.")
@click.option("--editor-url", "editor_url", default=None, metavar="TEMPLATE",
              help="With --html: each location links to TEMPLATE with {path} and {line} (`vscode://file/{path}:{line}`"
                   "; default $OPINDEX_EDITOR_URL, else file://).")
@click.option("--trace-calls", "trace_calls", type=click.IntRange(0), default=20, show_default=True, metavar="N",
              help="A profile recorded with shapes gives each kernel's op call: trace the first N distinct ones (by "
                   "GPU time) with those inputs and say where each main chain ends (0: none; the output says how "
                   "many were left).")
@click.option("-D", "--define", "defines", multiple=True, metavar="NAME[=VALUE]",
              help="The build the profile ran defines NAME (as trace's -D; repeatable): which #if sides its kernels "
                   "are tied to, and the build its recorded calls are traced for.")
@click.option("-U", "--undefine", "undefines", multiple=True, metavar="NAME",
              help="The build the profile ran does not define NAME (repeatable).")
@click.option("--config", "config", type=click.Path(dir_okay=False), default=None,
              help="A YAML file of NAME: value (null for undefined) for the build the profile ran.")
@link_options
@_fail_cleanly
def profile(profile_path, db, limit, max_size, fmt, editor_url, trace_calls, defines, undefines, config):
    """From a GPU profile to the source: each kernel of PROFILE (a torch.profiler Chrome trace, .json or .json.gz,
    or a text file of kernel names) with its __global__ definition or library call site, op body, stub and aten op."""
    from .profile import render
    fmt = fmt or "table"  # on a terminal or not, as git and rg: piping drops only colour and pager
    with _open(db) as ix:
        bar = None

        def progress(done, total):
            nonlocal bar
            if bar is None and total >= 200 and sys.stderr.isatty():   # small profiles finish before a bar helps
                bar = click.progressbar(length=total, label="attributing kernels", file=sys.stderr)
                bar.__enter__()
            if bar is not None:
                bar.update(1)
        try:
            rows = ix.profile(profile_path, limit=limit, progress=progress, max_size_mb=max_size,
                              trace_calls=trace_calls, defines=defines, undefines=undefines, config=config)
        finally:
            if bar is not None:
                bar.__exit__(None, None, None)
    if fmt != "table":
        for w in rows.warnings:
            click.echo(f"warning: {w}", err=True)
    whole, links = _link_settings()
    rows = rows.with_absolute_paths() if whole else rows
    if fmt == "html":
        click.echo(render.to_html(rows, editor_url), nl=False)
        return
    click.echo(render.to_table(rows, links=links) if fmt == "table" else {
        "json": render.to_json, "csv": render.to_csv, "markdown": render.to_markdown}[fmt](rows), nl=False)


@main.command(name="mcp")
@db_option
@_fail_cleanly
def mcp_(db):
    """Serve the index to coding agents over the Model Context Protocol (stdio): tools trace, find, op, stub,
    callers, callees, kernels, sql, profile, diff, coverage; resources opindex://schema and opindex://build (docs/mcp.md).

    Needs `pip install 'opindex[mcp]'`. Which index: --db, else the same rules as every query (stderr says which).
    Nothing but protocol messages is written to stdout."""
    import importlib.util
    if importlib.util.find_spec("mcp") is None:
        raise _fail("opindex mcp needs the MCP Python SDK: pip install 'opindex[mcp]'", 3)
    from .mcp import serve
    serve(db)


@main.command(epilog=EXIT_CODES)
@click.option("--device", "devices", multiple=True, metavar="KEY",
              help="A dispatch key to report (cuda, mps, QuantizedCPU, CompositeImplicitAutograd; repeatable). "
                   "Default: CPU, CUDA, MPS, XPU, Meta, the Quantized/Sparse/SparseCsr/NestedTensor CPU and CUDA "
                   "keys, PrivateUse1, the two composite keys, and a fork's own key.")
@click.option("--op", "ops", multiple=True, metavar="NAME", help="Only this op (add: every overload; add.Tensor; "
              "quantized::add; repeatable).")
@click.option("--missing", is_flag=True, help="Only what the one --device lacks (missing, or only its fallback) "
              "that CUDA has, most Python APIs first.")
@click.option("--for", "for_", metavar="PROFILE|NAME", default=None,
              help="Only the ops a torch.profiler trace (.json/.json.gz) holds, or that a trace of NAME reaches "
                   "(nn.LSTM), and the ops their composites lack: with --missing, what that model needs.")
@click.option("--with", "with_dir", metavar="DIR", type=click.Path(file_okay=False), default=None,
              help="An out-of-tree backend's folder: its backend YAML and TORCH_LIBRARY registrations on top.")
@click.option("--html", "html", is_flag=True, help="One self-contained HTML page: the ops x keys matrix, coloured by "
              "status, filterable.")
@limit_option(0)
@db_option
@output_options
@link_options
@_fail_cleanly
def coverage(devices, ops, missing, for_, with_dir, html, fmt, limit, db):
    """Per operator overload and dispatch key: kernel, inherited, composite_implicit, composite_explicit, fallback
    or missing, with file:line (docs/coverage.md). Exit 1 when no row is listed."""
    from .coverage import ROW_FIELDS
    with _open(db) as ix:
        cov = ix.coverage(devices, ops=ops, missing=missing, for_=for_, with_dir=with_dir)
        rows, cap = _capped(cov.rows, limit)
        for note in cov.notes:
            click.echo(f"opindex: {note}", err=True)
        if html:
            if fmt:
                raise click.UsageError("--html and --" + fmt + " are mutually exclusive: give one output format")
            from .render.coverage_html import to_html
            click.echo(to_html(rows, cov.keys, cov.notes + ([cap] if cap else []), root=ix.meta.get(
                "checkout_root"), index=ix.which()), nl=False)
        elif fmt == "json":  # one compact row a line: the pretty printer's pure-Python encoder took 1 s on 2.4
            import json
            click.echo("[" + ",\n ".join(json.dumps(r) for r in _located(rows, ix, fmt)[0]) + "]")
            if cap:
                click.echo(f"opindex: {cap}", err=True)
        else:  # a table when piped too, as every listing
            columns = list(ROW_FIELDS) if fmt not in (None, "table") else ["op", "key", "status", "file", "line",
                                                                            "kernel", "lacks"]
            _emit([_coverage_cells(r, fmt) for r in rows], fmt, columns, cap=cap, ix=ix)
    if not rows:
        sys.exit(1)


def _coverage_cells(row: dict, fmt: str) -> dict:
    """A row for text formats: lacks as space-separated names (JSON keeps the list)."""
    if fmt in ("json", "ndjson") or row["lacks"] is None:
        return row
    return {**row, "lacks": " ".join(row["lacks"])}


@main.command()
@db_option
@_fail_cleanly
def check(db):
    """SQLite's full integrity check of the index: exit 0 when sound, 3 when damaged (a build then rebuilds it
    from scratch)."""
    from .indexer.indexes import for_query
    from .db import check as check_index
    path = for_query(db)
    problems = check_index(path)
    for problem in problems:
        click.echo(f"{path}: damaged: {problem}")
    if problems:
        click.echo(f"{path}: rebuild it with `opindex build` (it rebuilds a damaged index from scratch)", err=True)
        sys.exit(3)
    click.echo(f"{path}: ok")


@main.command()
@db_option
@click.option("--to", "revision", default="head", show_default=True, help="Target schema revision.")
@click.option("--downgrade", is_flag=True, help="Go down to --to instead of up.")
@_fail_cleanly
def migrate(db, revision, downgrade):
    """Upgrade an index built by an older opindex to this version's schema, keeping its data."""
    from .indexer.indexes import for_query
    from .migrate import run
    path = for_query(db)
    run(path, revision, downgrade=downgrade)
    click.echo(f"{path}: schema at {revision}", err=True)
    note = _rebuild_needed(path)
    if note:
        click.echo(f"{path}: {note}", err=True)


def _rebuild_needed(path) -> str | None:
    """meta.rebuild_needed: what a migration could not derive (0008: facts only a build reads from the source)."""
    from .indexer.indexes import meta_value
    return meta_value(path, "rebuild_needed")
