"""Run a generator in a worker thread; its yields arrive as a Qt signal in the GUI thread.

Built on superqt's thread workers (``superqt.utils.GeneratorWorker``, the ones napari uses): the
work is a generator run by a ``QRunnable`` on a thread pool; superqt's loop checks the abort flag
between two yields, so cancelling takes at most one step of the generator, and its signals
object (``worker.signals``, made in the GUI thread) carries ``yielded(object)``, ``returned``,
``aborted()``, ``errored(exception)`` and, last of all, ``finished()``. This module adds what the
window needs on top:

- :class:`GeneratorWorker` runs on a pool of its own (:func:`worker_pool`), so that a cancelled
  run still finishing an engine step never holds up the next one; ``is_running()`` is true from
  ``start`` until the runnable has returned, and :meth:`GeneratorWorker.stop` asks the
  generator to stop and waits for that; an abandoned generator is closed in its thread; a
  ``RuntimeError`` of the generator is an error like any other (superqt would end silently).
- :meth:`RetiredWorkers.start` delivers exactly one of ``on_finished``, ``on_aborted`` or
  ``on_error(message)`` (a one-line message: a UsageError's own words, else the exception's
  type and text) after the ``on_item`` calls, to the given callbacks in the GUI thread whatever
  they are: the worker's signals are connected to declared slots of a relay living there
  (:class:`_Relay`), never to a lambda or wrapped method (PySide would run those in the worker
  thread when it does not see a receiver), and callbacks check :func:`sent_by` to ignore the
  last items of a cancelled worker.

Garbage: Python's cycle collector runs in whichever thread trips its allocation threshold. In a
worker thread it would destroy the Qt objects of GUI-thread garbage there (a closed window's
timers, items, widgets), which Qt does not allow ("Timers cannot be stopped from another
thread", a timer left registered for a freed object, crashes, a GUI thread that waits for ever).
While any worker runs, the automatic collector is paused (:mod:`designer.gcpause`, counted with
every other pause of the program) and :class:`GuiThreadCollector` collects the young generations
from a GUI-thread timer instead.
"""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any, Callable, Iterator

from PySide6.QtCore import QObject, QThreadPool, QTimer, Slot
from superqt.utils import GeneratorWorker as _SuperqtGeneratorWorker

from designer import gcpause
from designer.errors import UsageError


class GuiThreadCollector(QObject):
    """Python's automatic cycle collection paused while worker threads run, done here instead.

    :meth:`hold` (one per worker started, in the GUI thread) pauses the automatic collector
    (``designer.gcpause.hold``) and starts a timer; :meth:`release` (when that worker has ended)
    ends the pause (after the last pause of the program it comes back on if it was on before).
    Every ``INTERVAL_MS`` the timer collects the youngest generation whose count is over its
    threshold, as the automatic collector would, but at most generation 1: a full collection
    walks every object (seconds on a large design, which is why the automatic one runs it
    rarely, by a rule Python does not expose); old garbage waits for the automatic collector
    once no worker runs.
    """

    INTERVAL_MS = 100

    def __init__(self) -> None:
        super().__init__()
        self._holders = 0
        self.collections = [0, 0]  # collections run by the timer, by generation (tests read it)
        self._timer = QTimer(self)
        self._timer.setInterval(self.INTERVAL_MS)
        self._timer.timeout.connect(self.collect)

    def hold(self) -> None:
        gcpause.hold()
        if self._holders == 0:
            self._timer.start()
        self._holders += 1

    @Slot()
    def release(self) -> None:
        if self._holders == 0:
            return
        self._holders -= 1
        if self._holders == 0:
            self._timer.stop()
        gcpause.release()

    @property
    def holding(self) -> bool:
        return self._holders > 0

    @Slot()
    def collect(self) -> None:
        """Collect the generations 0 or 0-1 if their counts are over their thresholds."""
        counts, limits = gc.get_count(), gc.get_threshold()
        if counts[0] <= limits[0]:
            return
        generation = 1 if counts[1] >= limits[1] else 0
        gc.collect(generation)
        self.collections[generation] += 1


_collector: GuiThreadCollector | None = None
_pool: QThreadPool | None = None
#: most worker threads at once (derived: one current run per window part that runs workers, the
#: run view and the plan and sweep dialogs, plus cancelled ones finishing a step; a start beyond
#: it waits for a thread)
MAX_WORKER_THREADS = 32


def gui_thread_collector() -> GuiThreadCollector:
    """The one :class:`GuiThreadCollector` (made on first use, in the GUI thread)."""
    global _collector
    if _collector is None:
        _collector = GuiThreadCollector()
    return _collector


def worker_pool() -> QThreadPool:
    """The thread pool of the window's workers (not Qt's global one, whose size is the core
    count: two cancelled runs still in an engine step would queue the next run behind them)."""
    global _pool
    if _pool is None:
        _pool = QThreadPool()
        _pool.setMaxThreadCount(MAX_WORKER_THREADS)
    return _pool


def error_message(exc: BaseException) -> str:
    """One line for the window: a UsageError's own words, else the exception's type and text."""
    if isinstance(exc, UsageError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


class _EndWatch(QObject):
    """Ends a worker's collector pause in the GUI thread once its runnable has returned."""

    def __init__(self, ended: threading.Event) -> None:
        super().__init__()
        self._ended = ended

    @Slot()
    def ended(self) -> None:
        # superqt's ``finished`` is emitted just before the runnable returns: wait for that (a
        # few Python statements), so that no allocation of the worker thread runs unpaused
        self._ended.wait(5.0)
        gui_thread_collector().release()


class GeneratorWorker(_SuperqtGeneratorWorker):
    """superqt's generator worker on :func:`worker_pool`, with ``is_running()`` and ``stop()``
    (see the module docstring). ``func(*args, **kwargs)`` must return a generator."""

    def __init__(self, func: Callable[..., Iterator[Any]], *args: Any, **kwargs: Any) -> None:
        super().__init__(func, *args, **kwargs)
        self._ended = threading.Event()
        self._begun = False
        self._end_watch: _EndWatch | None = None

    def start(self) -> None:
        """Start the generator on the worker pool (from the GUI thread); the automatic cycle
        collector stays paused until the runnable has returned (:class:`GuiThreadCollector`)."""
        if self._begun:
            raise RuntimeError("This worker is already started!")
        self._begun = True
        # superqt's bookkeeping of running workers (``WorkerBase.start``), on our own pool
        self._worker_set.add(self)
        self._finished.connect(self._set_discard)
        self._end_watch = _EndWatch(self._ended)
        self.signals.finished.connect(self._end_watch.ended)
        gui_thread_collector().hold()
        worker_pool().start(self)

    def run(self) -> None:
        try:
            super().run()
        finally:
            self._ended.set()

    def work(self) -> Any:
        try:
            result = super().work()
        finally:
            if self.abort_requested:
                self._gen.close()  # its ``finally`` blocks run here, in the worker thread
        if isinstance(result, RuntimeError):
            # superqt takes a RuntimeError for a deleted worker and ends without a signal
            raise result
        return result

    def is_running(self) -> bool:  # type: ignore[override]  # superqt's is a property
        """Started and not yet returned (also while it finishes a step after a stop request)."""
        return self._begun and not self._ended.is_set()

    def stop(self, timeout_ms: int = 5000) -> bool:
        """Ask the generator to stop and wait up to ``timeout_ms``; True once it has returned."""
        self.quit()
        if not self._begun:
            return True
        return self._ended.wait(max(timeout_ms, 0) / 1000.0)


#: the worker whose signal a :class:`_Relay` is delivering right now (GUI thread), else None
_delivering: GeneratorWorker | None = None


def sent_by(receiver: QObject, worker: GeneratorWorker | None) -> bool:
    """In a callback of ``receiver``: the signal comes from ``worker``. A cancelled worker may be
    gone by the time its queued signals arrive, and a newer one started: they must not count."""
    if worker is None:
        return False
    return _delivering is worker or receiver.sender() is worker.signals


class _Relay(QObject):
    """Delivers one worker's signals to its callbacks in the thread that made it (the GUI thread).

    Its slots are declared slots of an object living there, so Qt queues the worker's signals to
    them across threads whatever the callbacks are; connected to the worker directly, a lambda or
    a wrapped method might run in the worker thread (PySide then connects without a receiver)."""

    def __init__(self, worker: GeneratorWorker, callbacks: dict[str, Callable],
                 on_done: Callable[[GeneratorWorker], None], parent: QObject) -> None:
        super().__init__(parent)
        # the worker is not kept alive from here: its owner (a run view, the retired list) decides
        # when it goes, as without a relay
        self._worker = weakref.ref(worker)
        self._callbacks, self._on_done = callbacks, on_done
        self._ended = False
        signals = worker.signals
        signals.yielded.connect(self.item)
        signals.returned.connect(self.finished)
        signals.aborted.connect(self.aborted)
        signals.errored.connect(self.errored)
        signals.finished.connect(self.done)

    def _deliver(self, name: str, *args: Any) -> None:
        global _delivering
        previous, _delivering = _delivering, self._worker()
        try:
            self._callbacks[name](*args)
        finally:
            _delivering = previous

    def _end(self, name: str, *args: Any) -> None:
        if not self._ended:
            self._ended = True
            self._deliver(name, *args)

    @Slot(object)
    def item(self, value: Any) -> None:
        self._deliver("on_item", value)

    @Slot(object)
    def finished(self, _result: Any) -> None:
        self._end("on_finished")

    @Slot()
    def aborted(self) -> None:
        self._end("on_aborted")

    @Slot(object)
    def errored(self, exc: BaseException) -> None:
        self._end("on_error", error_message(exc))

    @Slot()
    def done(self) -> None:
        """The worker's last signal: nothing more comes through this relay. A worker stopped
        after its generator's last step ends without ``returned``: that counts as aborted. The
        relay lets go of the callbacks (and what they hold) and stays, empty, till its parent
        goes: deleted from here (``deleteLater`` in this slot), it crashed the GUI thread when
        the parent went in the same pass of the event loop (a pytest-qt teardown, PySide 6.11)."""
        self._end("on_aborted")
        worker = self._worker()
        self._callbacks = {}
        if worker is not None:
            self._on_done(worker)


class RetiredWorkers(QObject):
    """Cancelled workers still finishing a step that cannot be interrupted (an engine run): they
    are kept here (referenced, with what their callbacks hold) until their runnable has returned
    (or ``wait``)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._workers: list[GeneratorWorker] = []

    def start(self, func: Callable[..., Iterator[Any]], *args: Any, on_item: Callable,
              on_finished: Callable, on_aborted: Callable, on_error: Callable,
              **kwargs: Any) -> "GeneratorWorker":
        """Start ``func(*args, **kwargs)`` in a worker whose signals reach the given callables in
        this (the GUI) thread, tracked so that it can be retired on cancel."""
        worker = GeneratorWorker(func, *args, **kwargs)
        _Relay(worker, {"on_item": on_item, "on_finished": on_finished, "on_aborted": on_aborted,
                        "on_error": on_error}, self._reap, self)
        worker.start()
        return worker

    def retire(self, worker: "GeneratorWorker") -> bool:
        """Stop ``worker``; True if it stopped at once, False if it is kept until its step ends."""
        if worker.stop(timeout_ms=0):
            return True
        self._workers.append(worker)
        return False

    def pending(self) -> bool:
        return bool(self._workers)

    def wait(self) -> None:
        """Wait for every retired worker (the window does that when it closes)."""
        for old in self._workers:
            old.stop(timeout_ms=600_000)
        self._workers.clear()

    def _reap(self, worker: GeneratorWorker) -> None:
        """``worker``'s generator has ended: let it go if it was retired."""
        for old in [w for w in self._workers if w is worker]:
            old.stop()  # the runnable is returning: returns at once
            self._workers.remove(old)


class WorkerOwner:
    """What a widget that runs one :class:`GeneratorWorker` at a time (the run view, the sweep and
    plan dialogs) shares: ``self.worker`` is the current worker (None when idle),
    ``self._retired`` the :class:`RetiredWorkers` that finish cancelled ones, and ``cancel(wait)``
    the owner's own way to stop. Mixed in before the Qt class (``class X(WorkerOwner, QDialog)``)."""

    worker: GeneratorWorker | None
    _retired: RetiredWorkers

    def is_running(self) -> bool:
        return self.worker is not None and self.worker.is_running()

    def busy(self) -> bool:
        """A run, or a cancelled run's last step, is still going."""
        return self.is_running() or self._retired.pending()

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt name
        self.cancel(wait=True)
        super().closeEvent(event)

    def _from_current(self) -> bool:
        """The signal being handled comes from the current worker (not a cancelled one's last items)."""
        return sent_by(self, self.worker)


class SearchDialog(WorkerOwner):
    """What a dialog that runs one search at a time (Run → Plan layout, Run → Optimize) shares:
    ``search_button``, ``cancel_button``, ``progress`` and ``status`` widgets and the window it
    belongs to (``window_``); ``cancel`` stops the search (a step that cannot be interrupted
    finishes in the background, saying so with ``busy_note``), the window closing stops it too,
    and ``_ended`` shows how it ended. Mixed in before QDialog; the dialog calls
    ``window.installEventFilter(self)``."""

    window_: Any
    search_button: Any
    cancel_button: Any
    progress: Any
    status: Any
    busy_note = "Cancelled (the current step finishes in the background)"

    def cancel(self, wait: bool = False) -> None:
        """Stop a running search at its next step; with ``wait``, also wait for the thread."""
        worker, self.worker = self.worker, None
        if worker is not None and worker.is_running():
            stopped = self._retired.retire(worker)
            self.status.setText("Cancelled" if stopped else self.busy_note)
            self.progress.setRange(0, 1)
            self.progress.setValue(0)
        if wait:
            self._retired.wait()
        self.search_button.setEnabled(True)
        self.cancel_button.setEnabled(False)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt name
        from PySide6.QtCore import QEvent

        if obj is self.window_ and event.type() == QEvent.Close:
            self.cancel(wait=True)
        return False

    def _on_aborted(self) -> None:
        if sent_by(self, self.worker):
            self.status.setText("Cancelled")

    def _ended(self, status: str) -> None:
        assert self.worker is not None
        self.worker.stop()  # the generator has ended: this only joins the thread
        self.status.setText(status)
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        self.search_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
