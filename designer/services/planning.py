"""The layout search as the CLI's ``plan`` and the window's plan dialog run it, and its words."""

from __future__ import annotations

from collections.abc import Iterator
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


def search_steps(design: Any, catalog: Any, *, top: int = 5, evaluate: int | None = None,
                 seed: int | None = None) -> Iterator[tuple]:
    """:func:`prepare`, then ``engine.plan.search_steps`` (its items unchanged); a refit is said
    in the result's ``current_note`` (the design's layout in the ranking is the refitted one)."""
    from designer.engine import plan

    notes = prepare(design, catalog)
    for item in plan.search_steps(design, catalog, top=top, evaluate=evaluate, seed=seed):
        if item[0] == "result" and notes:
            result = item[1]
            result.current_note = "; ".join(notes + ([result.current_note] if result.current_note else []))
        yield item


def search(design: Any, catalog: Any, *, top: int = 5, evaluate: int | None = None,
           seed: int | None = None) -> Any:
    """Run :func:`search_steps` to the end and return its ``PlanResult``."""
    result = None
    for item in search_steps(design, catalog, top=top, evaluate=evaluate, seed=seed):
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
