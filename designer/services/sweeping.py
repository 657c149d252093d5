"""Sweeps driven on all local cores or on a Dask cluster (no Qt): one path for the CLI and the app.

:func:`stream` checks the sweep (:func:`designer.engine.sweep.prepare`), then runs
:func:`designer.engine.sweep.point` for every value through
:func:`designer.services.parallel.run_tasks`: the design as a dict is the shared object, sent once
per worker process (or scattered once to a Dask cluster), not once per point. Points are yielded as
they finish, so a caller can write each row and forget it; :func:`sweep` collects them in value
order into a :class:`~designer.engine.sweep.SweepResult`. Every point gets the same design and
seed, so the result is the same for any worker count or executor.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Iterator, Sequence

from designer.engine.sweep import SweepResult, engine_point, point, prepare
from designer.topology.design import Design


def worker_count(workers: int | None, points: int) -> int:
    """Processes for ``points`` points: ``workers`` (None: all cores), never more than the cores
    (CPU-bound engine runs go no faster on more processes, they only use more memory) nor than
    the points."""
    cores = os.cpu_count() or 1
    return max(1, min(workers or cores, cores, points))


def stream(design: Design, param: str, values: Sequence[float], *, seed: int | None = None,
           workers: int | None = None, scheduler: Any = None,
           cancel: threading.Event | None = None,
           evaluate: Callable[[Design, str, int], dict[str, float]] = engine_point,
           ) -> tuple[tuple[str, ...], Iterator[tuple[int, dict[str, dict[str, float]]]]]:
    """``(notes, points)``: the sweep's notes (see :func:`~designer.engine.sweep.prepare`, which
    refuses a bad parameter or value here, before any process starts) and an iterator of
    ``(index into values, row)`` in finishing order. ``workers`` 1 runs in this process;
    ``scheduler`` (``tcp://host:port`` or a ``distributed.Client``) runs on Dask; setting
    ``cancel`` stops handing out points."""
    from designer.services.parallel import run_tasks

    shared, notes = prepare(design, param, values, seed=seed, evaluate=evaluate)
    n = len(values) if scheduler is not None else worker_count(workers, len(values))
    return notes, run_tasks(point, list(values), shared, workers=n, scheduler=scheduler, cancel=cancel)


def sweep(design: Design, param: str, values: Sequence[float], *, seed: int | None = None,
          workers: int | None = None, scheduler: Any = None,
          cancel: threading.Event | None = None,
          evaluate: Callable[[Design, str, int], dict[str, float]] = engine_point,
          progress: Callable[[int, int], None] | None = None,
          on_point: Callable[[int, dict[str, dict[str, float]]], None] | None = None,
          keep: bool = True) -> SweepResult:
    """:func:`stream` collected in value order: ``on_point(index, row)`` and ``progress(done,
    total)`` as each point finishes; ``keep`` False holds no rows (a caller that writes each row
    in ``on_point``), the result then has the notes alone. A cancelled sweep returns the values
    that finished, in value order; an exception (Ctrl-C) stops handing out points."""
    cancel = cancel or threading.Event()
    notes, points = stream(design, param, values, seed=seed, workers=workers, scheduler=scheduler,
                           cancel=cancel, evaluate=evaluate)
    rows: dict[int, dict] = {}
    done = 0
    try:
        for index, row in points:
            done += 1
            if keep:
                rows[index] = row
            if on_point:
                on_point(index, row)
            if progress:
                progress(done, len(values))
    finally:
        cancel.set()
        points.close()  # type: ignore[attr-defined]  # a generator
    order = sorted(rows)
    return SweepResult(param, tuple(values[i] for i in order), tuple(rows[i] for i in order), notes)
