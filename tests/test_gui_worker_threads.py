"""Worker threads and the GUI thread (designer/gui/worker.py): a worker's signals reach their
callbacks in the GUI thread whatever the callbacks are, and no garbage collection in a worker
thread destroys GUI-thread Qt objects (the causes of a stalled F5 run in a clean-clone CI)."""

import functools
import gc
import threading
import weakref

import pytest
from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QApplication

from designer.gui.worker import RetiredWorkers, gui_thread_collector, sent_by


def _churn(steps: int = 40, per_step: int = 3000):
    """A generator that allocates as the timeline does (container objects: the cycle collector's
    allocation count trips over and over in the thread that runs it)."""
    for n in range(steps):
        rows = [[n, k] for k in range(per_step)]
        yield len(rows)


def _run_to_end(qtbot, retired: RetiredWorkers, func, *args, **callbacks):
    ended = []
    callbacks.setdefault("on_item", lambda item: None)
    callbacks.setdefault("on_aborted", lambda: ended.append("aborted"))
    callbacks.setdefault("on_error", lambda message: ended.append(message))
    finished = callbacks.pop("on_finished", None)

    def on_finished():
        ended.append("finished")
        if finished is not None:
            finished()

    worker = retired.start(func, *args, on_finished=on_finished, **callbacks)
    qtbot.waitUntil(lambda: bool(ended) and not worker.is_running(), timeout=30_000)
    assert ended == ["finished"]
    return worker


class _Holder:
    pass


def test_gui_thread_garbage_is_never_destroyed_in_a_worker_thread(qtbot):
    # garbage as a closed window leaves it: running timers reachable only through a reference
    # cycle (the canvas layer and its scene), so only a cycle collection frees them
    where: list[threading.Thread] = []
    gc.collect()  # the young generation empty: the garbage below is all it holds
    for _ in range(20):
        holder = _Holder()
        holder.timer = QTimer()
        holder.timer.start(60_000)
        holder.itself = holder
        # called by the collection that frees the holder, in its thread (which then deletes the
        # timer, a C++ object of the GUI thread)
        weakref.finalize(holder, lambda: where.append(threading.current_thread()))
    del holder
    over = threading.Event()

    def work():
        yield from _churn()
        over.set()

    retired = RetiredWorkers()
    worker = retired.start(work, on_item=lambda item: None, on_finished=lambda: None,
                           on_aborted=lambda: None, on_error=lambda message: None)
    # the GUI thread blocks (no Python runs in it, its timers wait): any collection meanwhile
    # is the worker thread's own
    assert over.wait(30)
    in_worker = list(where)
    qtbot.waitUntil(lambda: not worker.is_running() and not gui_thread_collector().holding,
                    timeout=5000)
    assert in_worker == [], "a collection in the worker thread destroyed GUI-thread timers"
    gc.collect()
    assert len(where) == 20 and set(where) == {threading.main_thread()}


def test_the_collector_is_off_during_a_run_collects_young_garbage_in_the_gui_thread_and_comes_back(
        qtbot):
    assert gc.isenabled()
    collector = gui_thread_collector()
    before = list(collector.collections)
    seen = []

    def look(item):
        seen.append((gc.isenabled(), threading.current_thread() is threading.main_thread()))

    def slow():
        for rows in _churn(steps=30):
            threading.Event().wait(0.02)  # the GUI thread's timer gets its turns
            yield rows

    _run_to_end(qtbot, RetiredWorkers(), slow, on_item=look)
    assert seen and set(seen) == {(False, True)}  # off while it ran; items in the GUI thread
    qtbot.waitUntil(lambda: not collector.holding, timeout=5000)
    assert gc.isenabled()  # on again once the thread has finished
    assert sum(collector.collections) > sum(before)  # young garbage was collected meanwhile


def test_the_collector_leaves_the_collector_off_when_it_was_off(qtbot):
    gc.disable()
    try:
        _run_to_end(qtbot, RetiredWorkers(), _churn, 3)
        qtbot.waitUntil(lambda: not gui_thread_collector().holding, timeout=5000)
        assert not gc.isenabled()
    finally:
        gc.enable()


class _Receiver(QObject):
    def __init__(self):
        super().__init__()
        self.calls = []
        self.worker = None

    def note(self, kind, *args):
        self.calls.append((kind, threading.current_thread() is threading.main_thread(),
                           sent_by(self, self.worker)))


def _wrapped(method):
    @functools.wraps(method)
    def wrapper(*args):
        return method(*args)
    wrapper.__name__ = "renamed"  # PySide no longer finds it on its object: no receiver
    return wrapper


def test_callbacks_of_any_kind_run_in_the_gui_thread_and_know_their_worker(qtbot):
    r = _Receiver()
    callbacks = {  # each a kind PySide connects without a GUI-thread receiver
        "on_item": lambda item: r.note("item", item),
        "on_finished": functools.partial(r.note, "finished"),
        "on_aborted": _wrapped(lambda: r.note("aborted")),
        "on_error": _wrapped(lambda message: r.note("error", message)),
    }
    retired = RetiredWorkers(r)
    r.worker = retired.start(_churn, 3, 10, **callbacks)
    qtbot.waitUntil(lambda: any(c[0] == "finished" for c in r.calls), timeout=30_000)
    assert r.calls == [("item", True, True)] * 3 + [("finished", True, True)]

    def fails():
        yield 1
        raise ValueError("bad input")

    r.calls.clear()
    r.worker = retired.start(fails, **callbacks)
    qtbot.waitUntil(lambda: any(c[0] == "error" for c in r.calls), timeout=30_000)
    assert r.calls == [("item", True, True), ("error", True, True)]


def test_items_of_a_worker_replaced_meanwhile_are_not_its_successors(qtbot):
    r = _Receiver()
    retired = RetiredWorkers(r)
    gate = threading.Event()

    def waits():
        gate.wait(10)
        yield "late"

    old = retired.start(waits, on_item=lambda item: r.note("item", item),
                        on_finished=lambda: r.note("finished"), on_aborted=lambda: r.note("aborted"),
                        on_error=lambda message: r.note("error", message))
    r.worker = old
    assert not retired.retire(old)  # still in its step: kept until it ends
    r.worker = retired.start(_churn, 1, 1, on_item=lambda item: r.note("new", item),
                             on_finished=lambda: r.note("new finished"), on_aborted=lambda: None,
                             on_error=lambda message: None)
    gate.set()
    qtbot.waitUntil(lambda: not retired.pending() and not r.worker.is_running(), timeout=30_000)
    QApplication.processEvents()
    assert ("new", True, True) in r.calls and ("new finished", True, True) in r.calls
    assert all(not mine for kind, _, mine in r.calls if kind in ("item", "aborted", "finished"))


@pytest.fixture(autouse=True)
def _collector_restored():
    yield
    assert gc.isenabled()


# --- built on superqt (issue #20): what the window's workers add to superqt.utils.GeneratorWorker

def _callbacks(log: list):
    return {"on_item": lambda item: log.append(("item", item)),
            "on_finished": lambda: log.append(("finished",)),
            "on_aborted": lambda: log.append(("aborted",)),
            "on_error": lambda message: log.append(("error", message))}


def test_workers_are_superqt_generator_workers_on_their_own_pool(qtbot):
    """Three workers blocked in a step at once all run (Qt's global pool has the core count,
    2 here, and would queue the third): the window's pool is its own."""
    from superqt.utils import GeneratorWorker as SuperqtWorker

    from designer.gui.worker import MAX_WORKER_THREADS, worker_pool

    gate, began = threading.Event(), []

    def blocked(n):
        began.append(n)
        gate.wait(10)
        yield n

    log: list = []
    retired = RetiredWorkers()
    workers = [retired.start(blocked, n, **_callbacks(log)) for n in range(3)]
    assert all(isinstance(w, SuperqtWorker) for w in workers)
    assert worker_pool().maxThreadCount() == MAX_WORKER_THREADS
    qtbot.waitUntil(lambda: len(began) == 3, timeout=5000)
    gate.set()
    qtbot.waitUntil(lambda: log.count(("finished",)) == 3, timeout=10_000)
    assert sorted(e for e in log if e[0] == "item") == [("item", 0), ("item", 1), ("item", 2)]
    qtbot.waitUntil(lambda: not any(w.is_running() for w in workers), timeout=5000)


def test_a_runtime_error_is_an_error_and_an_abandoned_generator_is_closed(qtbot):
    """superqt ends a worker whose generator raised RuntimeError without any signal (it takes it
    for a deleted worker): here it is reported like any error, in one line. A stopped worker's
    generator is closed in its thread (its finally blocks run) and ends as aborted, once."""
    log: list = []
    retired = RetiredWorkers()

    def breaks():
        yield 1
        raise RuntimeError("the engine broke")

    worker = retired.start(breaks, **_callbacks(log))
    qtbot.waitUntil(lambda: not worker.is_running() and ("error", "RuntimeError: the engine broke") in log,
                    timeout=10_000)
    assert log == [("item", 1), ("error", "RuntimeError: the engine broke")]
    qtbot.waitUntil(lambda: not gui_thread_collector().holding, timeout=5000)

    closed, step = [], threading.Event()

    def endless():
        try:
            while True:
                step.set()
                threading.Event().wait(0.01)
                yield "x"
        finally:
            closed.append(threading.current_thread() is threading.main_thread())

    log.clear()
    worker = retired.start(endless, **_callbacks(log))
    assert step.wait(10)
    assert worker.stop(timeout_ms=5000) and not worker.is_running()
    qtbot.waitUntil(lambda: ("aborted",) in log, timeout=5000)
    QApplication.processEvents()
    assert closed == [False]  # closed once, in the worker thread
    ends = [e for e in log if e[0] != "item"]
    assert ends == [("aborted",)]


def test_a_usage_error_reads_as_its_own_words(qtbot):
    from designer.errors import UsageError

    log: list = []
    retired = RetiredWorkers()

    def refuses():
        raise UsageError("workload: tp 3 does not divide the heads")
        yield  # noqa: unreachable - a generator

    worker = retired.start(refuses, **_callbacks(log))
    qtbot.waitUntil(lambda: bool(log) and not worker.is_running(), timeout=10_000)
    assert log == [("error", "workload: tp 3 does not divide the heads")]
