"""The layout search as the CLI's ``plan`` and the window's plan dialog run it, and its words."""

from __future__ import annotations

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


def search(design: Any, catalog: Any, *, top: int = 5, evaluate: int | None = None,
           seed: int | None = None) -> tuple[Any, list[str]]:
    """:func:`prepare`, then ``engine.plan.search``: (PlanResult, the prepare lines)."""
    from designer.engine import plan

    notes = prepare(design, catalog)
    return plan.search(design, catalog, top=top, evaluate=evaluate, seed=seed), notes


def settled(result: Any) -> str:
    """Whether a layout left out could still beat the best (its estimate is a lower bound)."""
    if not result.unsettled:
        return ("no layout left out can beat the best: each one's estimate, which the engine's "
                "figure never undercuts, is slower")
    return (f"{result.unsettled} layouts left out have estimates below the best engine time and "
            f"might beat it; run with a larger --evaluate to check them")
