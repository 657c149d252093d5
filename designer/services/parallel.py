"""Run one function over many items on all local cores or on a Dask cluster (no Qt).

``run_tasks(func, items, shared)`` calls ``func(item, shared)`` for every item of ``items`` (any
iterable, read lazily: a grid of a million points is never a list) and yields ``(index, result)``
in item order. ``shared`` (a design as a dict, a search target) is sent once per worker, not once
per item:

- ``workers=1`` without a scheduler: in this process, one item at a time (no start-up cost);
- default: a local process pool of ``workers`` processes (all cores when None), started with
  ``spawn`` (a process with Qt or threads in it is never forked); ``shared`` is handed to each
  worker by the pool's initializer;
- ``scheduler``: a Dask cluster's address (``tcp://host:port``) or a ``distributed.Client``;
  ``shared`` is scattered to every worker once (``Client.scatter(..., broadcast=True,
  hash=False)``: a key of its own each time, so two runs that scatter equal objects never share,
  and release, one key).

**Bounded.** At most :data:`IN_FLIGHT` x the workers (the pool's processes, the Dask cluster's
threads) items are taken from ``items`` and not yet yielded: handed out, running, or finished
and waiting in the reorder buffer for an earlier item. So memory does not grow with the number of
items, and the results come in item order whatever the worker count (derived: a result is yielded
only once every earlier one has been, and each is computed by the same pure ``func`` from the same
item and ``shared``). Four per worker keeps every worker busy while one slow item holds the head of
the buffer for up to three items' time of the others.

``func`` must be importable by name (a module-level function). Setting ``cancel`` (a
``threading.Event``) or closing the generator stops handing out items: those not started are
cancelled, those running finish (their results are dropped).
"""

from __future__ import annotations

import collections
import itertools
import threading
from collections.abc import Callable, Iterable, Iterator, Sized
from typing import Any

from designer.errors import UsageError

#: items handed out but not yet yielded, per worker (module docstring, "Bounded")
IN_FLIGHT = 4

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


def run_tasks(func: Callable[[Any, Any], Any], items: Iterable[Any], shared: Any = None, *,
              workers: int | None = None, scheduler: Any = None,
              cancel: threading.Event | None = None) -> Iterator[tuple[int, Any]]:
    """See the module docstring."""
    if workers is not None and workers < 1:
        raise UsageError("--workers must be 1 or more")
    cancel = cancel or threading.Event()
    if scheduler is not None:
        yield from _dask(func, items, shared, scheduler, cancel)
        return
    if workers == 1 or (isinstance(items, Sized) and len(items) <= 1):
        for i, item in enumerate(items):
            if cancel.is_set():
                return
            yield i, func(item, shared)
        return
    import concurrent.futures as cf
    import multiprocessing
    import os

    n = workers or os.cpu_count() or 1
    if isinstance(items, Sized):
        n = min(n, len(items))
    with cf.ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn"),
                                initializer=_init, initargs=(func, shared)) as pool:
        yield from _in_order(lambda item: pool.submit(_task, item), items, IN_FLIGHT * n, cancel,
                             lambda futures: [f.cancel() for f in futures])


def _in_order(submit: Callable[[Any], Any], items: Iterable[Any], window: int,
              cancel: threading.Event, drop: Callable[[list], Any]) -> Iterator[tuple[int, Any]]:
    """Hand out at most ``window`` items ahead of the one yielded next (``submit(item)`` returns a
    future with ``.result()``), yield ``(index, result)`` in item order; on cancel, close or an
    error ``drop`` gets the futures not yielded."""
    queue: collections.deque = collections.deque()
    source = enumerate(items)
    try:
        while True:
            if not cancel.is_set():
                for i, item in itertools.islice(source, window - len(queue)):
                    queue.append((i, submit(item)))
            if not queue or cancel.is_set():
                return
            i, fut = queue.popleft()
            result = fut.result()
            if cancel.is_set():
                return
            yield i, result
    finally:
        drop([f for _, f in queue])


def _dask(func, items, shared, scheduler, cancel) -> Iterator[tuple[int, Any]]:
    try:
        from distributed import Client
    except ImportError as exc:  # pragma: no cover - a dependency
        raise UsageError("--scheduler needs dask.distributed (pip install 'dask[distributed]')") from exc
    own = not isinstance(scheduler, Client)
    try:
        client = Client(scheduler, timeout="5s") if own else scheduler
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({exc}); start one with "
                         f"`dask scheduler` and workers with `dask worker ADDRESS`") from exc
    try:
        remote = client.scatter(shared, broadcast=True, hash=False) if shared is not None else None
        threads = max(1, sum(client.nthreads().values()))
        yield from _in_order(lambda item: client.submit(_call, item, task=func, shared=remote, pure=False),
                             items, IN_FLIGHT * threads, cancel,
                             lambda futures: futures and client.cancel(futures))
    finally:
        if own:
            client.close()
