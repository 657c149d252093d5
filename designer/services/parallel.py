"""Run one function over many items on all local cores or on a Dask cluster (no Qt).

``run_tasks(func, items, shared)`` calls ``func(item, shared)`` for every item and yields
``(index, result)`` as each finishes. ``shared`` (a design as a dict, a search target) is sent once
per worker, not once per item:

- ``workers=1`` without a scheduler: in this process, in item order (no start-up cost);
- default: a local process pool of ``workers`` processes (all cores when None), started with
  ``spawn`` (a process with Qt or threads in it is never forked); ``shared`` is handed to each
  worker by the pool's initializer;
- ``scheduler``: a Dask cluster's address (``tcp://host:port``) or a ``distributed.Client``;
  ``shared`` is scattered to every worker once (``Client.scatter(..., broadcast=True)``).

``func`` must be importable by name (a module-level function). Results arrive in finishing order;
callers that need item order sort by the index, so the outcome never depends on the worker count.
Setting ``cancel`` (a ``threading.Event``) stops handing out items; items already running finish.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from designer.errors import UsageError

_shared: Any = None
_func: Callable[[Any, Any], Any] | None = None


def _init(func: Callable[[Any, Any], Any], shared: Any) -> None:
    """Pool initializer: what every task of this worker process shares arrives once."""
    global _shared, _func
    _shared, _func = shared, func


def _task(item: Any) -> Any:
    assert _func is not None
    return _func(item, _shared)


def _call(item: Any, task: Callable[[Any, Any], Any], shared: Any) -> Any:
    """A Dask task: ``task(item, shared)``, ``shared`` resolved by Dask from its scattered copy."""
    return task(item, shared)


def run_tasks(func: Callable[[Any, Any], Any], items: Sequence[Any], shared: Any = None, *,
              workers: int | None = None, scheduler: Any = None,
              cancel: threading.Event | None = None) -> Iterator[tuple[int, Any]]:
    """See the module docstring."""
    if workers is not None and workers < 1:
        raise UsageError("--workers must be 1 or more")
    if scheduler is not None:
        yield from _dask(func, items, shared, scheduler, cancel)
        return
    if workers == 1 or len(items) <= 1:
        for i, item in enumerate(items):
            if cancel is not None and cancel.is_set():
                return
            yield i, func(item, shared)
        return
    import concurrent.futures as cf
    import multiprocessing
    import os

    n = min(workers or os.cpu_count() or 1, len(items))
    with cf.ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn"),
                                initializer=_init, initargs=(func, shared)) as pool:
        futures = {pool.submit(_task, item): i for i, item in enumerate(items)}
        try:
            for fut in cf.as_completed(futures):
                if cancel is not None and cancel.is_set():
                    break
                yield futures[fut], fut.result()
        finally:
            for f in futures:
                f.cancel()


def _dask(func, items, shared, scheduler, cancel) -> Iterator[tuple[int, Any]]:
    try:
        from distributed import Client, as_completed
    except ImportError as exc:  # pragma: no cover - a dependency
        raise UsageError("--scheduler needs dask.distributed (pip install 'dask[distributed]')") from exc
    own = not isinstance(scheduler, Client)
    try:
        client = Client(scheduler, timeout="5s") if own else scheduler
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({exc}); start one with "
                         f"`dask scheduler` and workers with `dask worker ADDRESS`") from exc
    try:
        remote = client.scatter(shared, broadcast=True) if shared is not None else None
        futures = client.map(_call, list(items), task=func, shared=remote, pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        for fut in as_completed(futures):
            if cancel is not None and cancel.is_set():
                client.cancel(futures)
                break
            yield index[fut.key], fut.result()
    finally:
        if own:
            client.close()
