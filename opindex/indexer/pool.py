"""The worker processes of a build, and what happens when one dies.

Not multiprocessing.Pool: when one of its workers dies (the OOM killer, a crash in a parser) it starts another
but the batch the dead one held never comes back, so the build waits forever; and a worker killed while it waits
for a task takes the queue's lock with it, so even Pool.terminate() hangs. Here each worker has its own pipe: the
writing process hands it at most two batches at a time and waits on every worker's pipe and process sentinel at
once, so a death is seen at once, with the batches that worker held. Each worker also notes, in shared memory,
which file it is extracting, so the build fails naming that file (--exclude skips a file that crashes a parser)
and leaves the index as it was: the dead worker's shard file may hold a half-written transaction.

The workers die with the writing process (PR_SET_PDEATHSIG) and drop their inherited copy of the build lock, so a
`kill -9` of a build leaves no orphaned workers holding the lock: the next build can start at once.
"""
from __future__ import annotations

import os
import sys
from collections import deque

from ..model import OpindexError

IN_FLIGHT = 2  # batches handed to a worker at once: the next one is there when it finishes the current one


class WorkerDied(OpindexError):
    """A worker process died while it held files; the build cannot complete."""

    def __init__(self, pid: int, exitcode: int | None, files: list[str], current: str | None):
        self.pid, self.files, self.current = pid, files, current
        how = (f"killed by signal {-exitcode}" if exitcode is not None and exitcode < 0
               else f"exit status {exitcode}" if exitcode is not None else "gone")
        where = f"while extracting {current}" if current else "while it held " + _some(files)
        super().__init__(f"a worker process (pid {pid}) died {where} ({how}: out of memory, or a crash in a "
                         f"parser?); {len(files)} files were not extracted")


def _some(files: list[str], n: int = 5) -> str:
    return ", ".join(files[:n]) + (f" and {len(files) - n} more" if len(files) > n else "")


class _Worker:
    def __init__(self, ctx, parent: int, lock_fd: int | None):
        self.conn, child = ctx.Pipe(duplex=True)
        self.at = ctx.RawArray("i", 2)  # (batch, index in it) of the file being extracted, written by the worker
        self.at[0] = -1
        self.proc = ctx.Process(target=_serve, args=(child, self.at, parent, lock_fd), daemon=True,
                                name="opindex-worker")
        self.proc.start()
        child.close()
        self.held: list[int] = []  # batch ids handed over, oldest first


class WorkerPool:
    """`jobs` worker processes (forked on Linux, so they start with the grammars this process loaded). `lock_fd`:
    the build lock's descriptor, which the workers close (they must not keep the index locked)."""

    def __init__(self, jobs: int, lock_fd: int | None = None):
        import multiprocessing as mp
        fork = sys.platform.startswith("linux")
        ctx = mp.get_context("fork" if fork else "spawn")
        self.workers: list[_Worker] = []
        try:
            for _ in range(jobs):
                self.workers.append(_Worker(ctx, os.getpid(), lock_fd if fork else None))
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop every worker now (they hold nothing the build still needs once it stops waiting for them)."""
        for w in self.workers:
            if w.proc.exitcode is None:
                w.proc.kill()
        for w in self.workers:
            w.proc.join(5)
            w.conn.close()
        self.workers = []

    def run(self, root: str, batches: list[list], shard: str | None):
        """Yield each batch's results as it completes; raise WorkerDied if a worker dies holding a batch."""
        from multiprocessing.connection import wait
        todo = deque(range(len(batches)))

        def hand_out(w: _Worker) -> None:
            while todo and len(w.held) < IN_FLIGHT:
                i = todo.popleft()
                w.held.append(i)
                try:
                    w.conn.send((i, root, batches[i], shard))
                except OSError:  # it died since its last answer
                    raise self._lost(w, batches) from None

        for w in self.workers:
            hand_out(w)
        by_handle = {}
        for w in self.workers:
            by_handle[w.conn] = by_handle[w.proc.sentinel] = w
        remaining = len(batches)
        while remaining:
            for ready in wait(list(by_handle)):
                w = by_handle.get(ready)
                if w is None:
                    continue  # dropped in this round
                if ready is w.proc.sentinel and w.conn.poll():
                    continue  # it sent results before it ended: read them first
                try:
                    if ready is w.proc.sentinel:
                        raise EOFError
                    i, results, error = w.conn.recv()
                except (EOFError, OSError):
                    if w.held:
                        raise self._lost(w, batches) from None
                    del by_handle[w.conn], by_handle[w.proc.sentinel]  # it held nothing: the others go on
                    continue
                w.held.remove(i)
                remaining -= 1
                if error is not None:
                    raise error
                hand_out(w)
                yield results

    @staticmethod
    def _lost(w: _Worker, batches: list[list]) -> WorkerDied:
        w.proc.join(1)
        files = [src.path for i in w.held for src, _ in batches[i]]
        batch, index = w.at[0], w.at[1]
        current = None
        if batch in w.held and 0 <= index < len(batches[batch]):
            current = batches[batch][index][0].path
        return WorkerDied(w.proc.pid, w.proc.exitcode, files, current)


# -- in the worker -----------------------------------------------------------------------------------------------
def _serve(conn, at, parent: int | None, lock_fd: int | None) -> None:
    from . import workers
    from .workers import warm_up, work
    workers._AT = at  # the slot workers.note writes the file being extracted into
    warm_up(parent, lock_fd)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return  # the writing process is gone
        if task is None:
            return
        i, root, batch, shard = task
        try:
            conn.send((i, work(root, batch, shard=shard, batch_id=i), None))
        except Exception as exc:  # noqa: BLE001 - the writing process raises it
            try:
                conn.send((i, None, exc))
            except Exception:  # noqa: BLE001 - an exception that does not pickle
                conn.send((i, None, RuntimeError(f"{type(exc).__name__}: {exc}")))
