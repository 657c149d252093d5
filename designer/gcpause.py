"""One way to pause Python's cycle collector while many acyclic objects are made or walked.

Loading a design, building a template, validating, solving and drawing a large design make or walk
hundreds of thousands of small objects that hold no reference cycles; every full collection their
allocations set off walks all of them (a sixth of a 2,048-server load, about a third of a 131k-GPU
solve). ``collector_paused()`` turns the collector off for the duration and back on afterwards.

The collector is process-wide state, so the pause is counted: nested pauses, and pauses in several
threads at once (the GUI's worker thread and its main thread), turn it back on only when the last
one ends, and only if it was on when the first began. Code that never pauses sees the collector as
it left it. Stdlib only (every layer may use it).
"""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

_P = ParamSpec("_P")
_R = TypeVar("_R")

_lock = threading.Lock()
_holders = 0
_was_enabled = False


def hold() -> None:
    """Start one pause (pair it with ``release``; prefer ``collector_paused``)."""
    global _holders, _was_enabled
    with _lock:
        if _holders == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holders += 1


def release() -> None:
    """End one pause; the last one to end turns the collector back on if it was on before."""
    global _holders
    with _lock:
        if _holders == 0:
            return
        _holders -= 1
        if _holders == 0 and _was_enabled:
            gc.enable()


def holders() -> int:
    """How many pauses are in force (for tests)."""
    return _holders


@contextmanager
def collector_paused() -> Iterator[None]:
    """``with collector_paused(): ...``: the collector is off inside, as it was afterwards."""
    hold()
    try:
        yield
    finally:
        release()


def paused(func: Callable[_P, _R]) -> Callable[_P, _R]:
    """Decorator form of ``collector_paused``."""

    @functools.wraps(func)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with collector_paused():
            return func(*args, **kwargs)

    return wrapper
