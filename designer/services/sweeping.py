"""Sweeps driven on all local cores or on a Dask cluster (no Qt): one path for the CLI and the app.

:func:`stream` checks the sweep (:func:`designer.engine.sweep.prepare`), then runs
:func:`designer.engine.sweep.point` for every combination of the grid
(:class:`designer.engine.sweep.Grid`, made lazily) through
:func:`designer.services.parallel.run_tasks`: the design as a dict is the shared object, sent once
per worker process (or scattered once to a Dask cluster), not once per point, and at most a few
points per worker are in flight. Points are yielded in grid order as they finish, so a caller can
write each row and forget it (:mod:`designer.services.rowfile`); :func:`sweep` keeps a bounded
:class:`~designer.engine.sweep.Summary` of them for a table or a plot. Every point gets the same
design and seed, so the rows are the same, in the same order, for any worker count or executor.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Iterator, Sequence

from designer.engine.sweep import Grid, Summary, SweepResult, as_grid, engine_point, point, prepare
from designer.topology.design import Design

#: a row as :func:`stream` yields it: (index in the grid, the parameters' values, row, notes)
Point = tuple[int, tuple, dict, tuple]


def worker_count(workers: int | None, points: int) -> int:
    """Processes for ``points`` points: ``workers`` (None: all cores), never more than the cores
    (CPU-bound engine runs go no faster on more processes, they only use more memory) nor than
    the points."""
    cores = os.cpu_count() or 1
    return max(1, min(workers or cores, cores, points))


def stream(design: Design, param: str | Grid, values: Sequence[float] | None = None, *,
           seed: int | None = None, workers: int | None = None, scheduler: Any = None,
           cancel: threading.Event | None = None,
           evaluate: Callable[[Design, str, int], dict[str, float]] = engine_point) -> Iterator[Point]:
    """The grid's points ``(index, values, row, notes)`` in grid order (``param`` a
    :class:`~designer.engine.sweep.Grid`, or one parameter with its ``values``). A bad parameter or
    value is refused here (:func:`~designer.engine.sweep.prepare`), before any process starts.
    ``workers`` 1 runs in this process; ``scheduler`` (``tcp://host:port`` or a
    ``distributed.Client``) runs on Dask; setting ``cancel`` or closing the iterator stops handing
    out points."""
    from designer.services.parallel import run_tasks

    grid = as_grid(param, values)
    shared = prepare(design, grid, seed=seed, evaluate=evaluate)
    n = None if scheduler is not None else worker_count(workers, grid.size)
    return _points(run_tasks(point, grid.points(), shared, workers=n, scheduler=scheduler, cancel=cancel),
                   grid)


def _points(results: Iterator[tuple[int, Any]], grid: Grid) -> Iterator[Point]:
    try:
        for (index, (row, notes)), values in zip(results, grid.points()):  # both in grid order
            yield index, values, row, notes
    finally:
        results.close()  # type: ignore[attr-defined]  # a generator: stops handing out points


def sweep(design: Design, param: str | Grid, values: Sequence[float] | None = None, *,
          seed: int | None = None, workers: int | None = None, scheduler: Any = None,
          cancel: threading.Event | None = None,
          evaluate: Callable[[Design, str, int], dict[str, float]] = engine_point,
          progress: Callable[[int, int], None] | None = None,
          on_point: Callable[[int, tuple, dict], None] | None = None) -> SweepResult:
    """:func:`stream` to the end: ``on_point(index, values, row)`` and ``progress(done, total)``
    as each point finishes, in grid order; returns the :class:`~designer.engine.sweep.Summary`'s
    result (every point up to its head size). A cancelled sweep returns the points that finished;
    an exception (Ctrl-C) stops handing out points."""
    grid = as_grid(param, values)
    summary = Summary(grid)
    points = stream(design, grid, seed=seed, workers=workers, scheduler=scheduler, cancel=cancel,
                    evaluate=evaluate)
    try:
        for index, vals, row, notes in points:
            summary.add(index, vals, row, notes)
            if on_point:
                on_point(index, vals, row)
            if progress:
                progress(summary.count, grid.size)
    finally:
        points.close()  # type: ignore[attr-defined]  # a generator
    return summary.result()
