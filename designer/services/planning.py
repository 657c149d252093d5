"""The layout search as the CLI's ``plan`` and the window's plan dialog run it, and its words.

The engine runs of the search's best estimates go through
:func:`designer.services.parallel.run_tasks` (:func:`runner`): a local process pool on all cores by
default (``workers``), one process with ``workers=1``, a Dask cluster given its address
(``scheduler``); the design is sent once per worker. The ranking is the same for any of them
(``designer.engine.plan``, "Where the engine runs").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from designer.engine.fit import refit_for_batch


def prepare(design: Any, catalog: Any) -> list[str]:
    """Make the design's workload one the search can start from: a global batch (changed with
    ``--set workload.global_batch`` or in the window) that the saved dp x micro-batch does not
    split gets dp and micro-batch refitted (:func:`designer.engine.fit.refit_for_batch`). Changes
    ``design.workload`` in place (a copy of the dict); returns the lines saying what changed."""
    workload = dict(design.workload or {})
    note = refit_for_batch(workload, design, catalog)
    if note is None:
        return []
    design.workload = workload
    return [note]


def runner(workers: int | None = None, scheduler: Any = None) -> Callable[..., Iterator[tuple[int, Any]]]:
    """The ``runner`` of ``engine.plan.search_steps``: each round of engine runs through
    ``run_tasks`` on ``workers`` processes (None: all cores; never more than the cores or the
    runs, :func:`designer.services.sweeping.worker_count`) or on the Dask cluster ``scheduler``
    (an address or a ``distributed.Client``). A search stopped between two steps (the window's
    Cancel closes it) hands out no more runs; those running finish."""
    from designer.services.parallel import run_tasks
    from designer.services.sweeping import worker_count

    if workers is not None and workers < 1:
        from designer.errors import UsageError

        raise UsageError(f"--workers must be 1 or more, got {workers}")

    def run(func: Callable[[Any, Any], Any], items: list, shared: Any) -> Iterator[tuple[int, Any]]:
        n = len(items) if scheduler is not None else worker_count(workers, len(items))
        return run_tasks(func, items, shared, workers=n, scheduler=scheduler)

    return run


def search_steps(design: Any, catalog: Any, *, top: int = 5, evaluate: int | None = None,
                 seed: int | None = None, workers: int | None = None, scheduler: Any = None
                 ) -> Iterator[tuple]:
    """:func:`prepare`, then ``engine.plan.search_steps`` with the engine runs on :func:`runner`
    (its items unchanged); a refit is said in the result's ``current_note`` (the design's layout
    in the ranking is the refitted one)."""
    from designer.engine import plan

    notes = prepare(design, catalog)
    for item in plan.search_steps(design, catalog, top=top, evaluate=evaluate, seed=seed,
                                  runner=runner(workers, scheduler)):
        if item[0] == "result" and notes:
            result = item[1]
            result.current_note = "; ".join(notes + ([result.current_note] if result.current_note else []))
        yield item


def search(design: Any, catalog: Any, *, top: int = 5, evaluate: int | None = None,
           seed: int | None = None, workers: int | None = None, scheduler: Any = None,
           progress: Callable[[str, int, int], None] | None = None) -> Any:
    """Run :func:`search_steps` to the end and return its ``PlanResult``; ``progress(stage, done,
    total)`` after each step."""
    result = None
    for item in search_steps(design, catalog, top=top, evaluate=evaluate, seed=seed, workers=workers,
                             scheduler=scheduler):
        if item[0] == "progress" and progress is not None:
            progress(*item[1:])
        if item[0] == "result":
            result = item[1]
    return result


def settled(result: Any) -> str:
    """Whether a layout left out could still beat the best (its estimate is a lower bound)."""
    if not result.unsettled:
        return ("no layout left out can beat the best: each one's estimate, which the engine's "
                "figure never undercuts, is slower")
    return (f"{result.unsettled} layouts left out have estimates below the best engine time and "
            f"might beat it; run with a larger --evaluate to check them")
