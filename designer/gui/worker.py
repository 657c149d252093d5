"""Run a generator in a worker thread; its yields arrive as a Qt signal in the GUI thread.

The structure follows napari's (superqt's) generator thread workers: the work is a generator; the
worker checks an abort flag between two yields, so cancelling takes at most one step of the
generator. The worker is a QObject moved into its own QThread.

Signals: ``yielded(object)`` per yielded value, then exactly one of ``finished()``,
``aborted()`` or ``errored(str)``; ``done()`` after any of them. :meth:`GeneratorWorker.stop`
asks the generator to stop, quits the thread and waits for it. Start workers with
:meth:`RetiredWorkers.start`: it delivers those signals to the given callbacks in the GUI thread
whatever they are (through a relay living there: PySide runs a lambda, or a method it does not
recognise as its object's, that is connected to the worker itself in the worker thread), and
callbacks check :func:`sent_by` to ignore the last items of a cancelled worker.

Garbage: Python's cycle collector runs in whichever thread trips its allocation threshold. In a
worker thread it would destroy the Qt objects of GUI-thread garbage there (a closed window's
timers, items, widgets), which Qt does not allow ("Timers cannot be stopped from another
thread", a timer left registered for a freed object, crashes, a GUI thread that waits for ever).
While any worker thread runs, the automatic collector is off and :class:`GuiThreadCollector`
collects the young generations from a GUI-thread timer instead.
"""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any, Callable, Iterator

from PySide6.QtCore import QObject, QThread, QTimer, Signal, Slot

from designer.errors import UsageError


class GuiThreadCollector(QObject):
    """Python's automatic cycle collection off while worker threads run, done here instead.

    :meth:`hold` (one per worker thread started, in the GUI thread) turns the automatic collector
    off and starts a timer; :meth:`release` (when that thread has finished) turns it back on after
    the last one, if it was on before. Every ``INTERVAL_MS`` the timer collects the youngest
    generation whose count is over its threshold, as the automatic collector would, but at most
    generation 1: a full collection walks every object (seconds on a large design, which is why
    the automatic one runs it rarely, by a rule Python does not expose); old garbage waits for
    the automatic collector once no worker runs.
    """

    INTERVAL_MS = 100

    def __init__(self) -> None:
        super().__init__()
        self._holders = 0
        self._was_enabled = False
        self.collections = [0, 0]  # collections run by the timer, by generation (tests read it)
        self._timer = QTimer(self)
        self._timer.setInterval(self.INTERVAL_MS)
        self._timer.timeout.connect(self.collect)

    def hold(self) -> None:
        if self._holders == 0:
            self._was_enabled = gc.isenabled()
            gc.disable()
            self._timer.start()
        self._holders += 1

    @Slot()
    def release(self) -> None:
        if self._holders == 0:
            return
        self._holders -= 1
        if self._holders == 0:
            self._timer.stop()
            if self._was_enabled:
                gc.enable()

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


def gui_thread_collector() -> GuiThreadCollector:
    """The one :class:`GuiThreadCollector` (made on first use, in the GUI thread)."""
    global _collector
    if _collector is None:
        _collector = GuiThreadCollector()
    return _collector


class GeneratorWorker(QObject):
    yielded = Signal(object)
    finished = Signal()
    aborted = Signal()
    errored = Signal(str)
    done = Signal()

    def __init__(self, func: Callable[..., Iterator[Any]], *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self._func, self._args, self._kwargs = func, args, kwargs
        self._abort = threading.Event()
        self._thread: QThread | None = None

    @property
    def abort_requested(self) -> bool:
        return self._abort.is_set()

    def start(self) -> None:
        """Start the generator in a new QThread (from the GUI thread); the automatic cycle
        collector stays off until the thread has finished (:class:`GuiThreadCollector`)."""
        thread = QThread()
        self._thread = thread
        self.moveToThread(thread)
        thread.started.connect(self._work)
        self.done.connect(thread.quit)
        collector = gui_thread_collector()
        thread.finished.connect(collector.release)
        collector.hold()
        thread.start()

    def is_running(self) -> bool:
        return self._thread is not None and self._thread.isRunning()

    def stop(self, timeout_ms: int = 5000) -> bool:
        """Ask the generator to stop, quit the thread and wait; True once the thread has ended."""
        self._abort.set()
        thread = self._thread
        if thread is None:
            return True
        thread.quit()
        ended = thread.wait(timeout_ms)
        return bool(ended)

    @Slot()
    def _work(self) -> None:
        try:
            gen = self._func(*self._args, **self._kwargs)
            for value in gen:
                if self._abort.is_set():
                    gen.close()
                    self.aborted.emit()
                    return
                self.yielded.emit(value)
                if self._abort.is_set():
                    gen.close()
                    self.aborted.emit()
                    return
            self.finished.emit()
        except UsageError as exc:
            self.errored.emit(str(exc))
        except Exception as exc:  # noqa: BLE001 - shown to the user instead of killing the thread
            self.errored.emit(f"{type(exc).__name__}: {exc}")
        finally:
            self.done.emit()


#: the worker whose signal a :class:`_Relay` is delivering right now (GUI thread), else None
_delivering: GeneratorWorker | None = None


def sent_by(receiver: QObject, worker: GeneratorWorker | None) -> bool:
    """In a callback of ``receiver``: the signal comes from ``worker``. A cancelled worker may be
    gone by the time its queued signals arrive, and a newer one started: they must not count."""
    if worker is None:
        return False
    return _delivering is worker or receiver.sender() is worker


class _Relay(QObject):
    """Delivers one worker's signals to its callbacks in the thread that made it (the GUI thread).

    Its slots are declared slots of an object living there, so Qt queues the worker's signals to
    them across threads whatever the callbacks are; connected to the worker directly, a lambda or
    a wrapped method would run in the worker thread (PySide then connects without a receiver)."""

    def __init__(self, worker: GeneratorWorker, callbacks: dict[str, Callable],
                 on_done: Callable[[GeneratorWorker], None], parent: QObject) -> None:
        super().__init__(parent)
        # the worker is not kept alive from here: its owner (a run view, the retired list) decides
        # when it goes, as without a relay
        self._worker = weakref.ref(worker)
        self._callbacks, self._on_done = callbacks, on_done
        worker.yielded.connect(self.item)
        worker.finished.connect(self.finished)
        worker.aborted.connect(self.aborted)
        worker.errored.connect(self.errored)
        worker.done.connect(self.done)

    def _deliver(self, name: str, *args: Any) -> None:
        global _delivering
        previous, _delivering = _delivering, self._worker()
        try:
            self._callbacks[name](*args)
        finally:
            _delivering = previous

    @Slot(object)
    def item(self, value: Any) -> None:
        self._deliver("on_item", value)

    @Slot()
    def finished(self) -> None:
        self._deliver("on_finished")

    @Slot()
    def aborted(self) -> None:
        self._deliver("on_aborted")

    @Slot(str)
    def errored(self, message: str) -> None:
        self._deliver("on_error", message)

    @Slot()
    def done(self) -> None:
        """The worker's last signal: nothing more comes through this relay. It lets go of the
        callbacks (and what they hold) and stays, empty, till its parent goes: deleted from
        here (``deleteLater`` in this slot), it crashed the GUI thread when the parent went in
        the same pass of the event loop (a pytest-qt teardown, PySide 6.11)."""
        worker = self._worker()
        self._callbacks = {}
        if worker is not None:
            self._on_done(worker)


class RetiredWorkers(QObject):
    """Cancelled workers still finishing a step that cannot be interrupted (an engine run): they
    are kept here, so that no QThread is destroyed while it quits, until they end (or ``wait``)."""

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
        """``worker``'s generator has ended: join its thread if it was retired."""
        for old in [w for w in self._workers if w is worker]:
            old.stop()  # the thread is quitting: returns at once
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
