"""Run a generator in a worker thread; its yields arrive as a Qt signal in the GUI thread.

The structure follows napari's (superqt's) generator thread workers: the work is a generator; the
worker checks an abort flag between two yields, so cancelling takes at most one step of the
generator. The worker is a QObject moved into its own QThread; connect its signals to methods of
QObjects that live in the GUI thread (a lambda would run in the worker thread).

Signals: ``yielded(object)`` per yielded value, then exactly one of ``finished()``,
``aborted()`` or ``errored(str)``; ``done()`` after any of them. :meth:`GeneratorWorker.stop`
asks the generator to stop, quits the thread and waits for it. Slots check :func:`sent_by`
to ignore the last items of a cancelled worker.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterator

from PySide6.QtCore import QObject, QThread, Signal, Slot

from designer.errors import UsageError


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
        """Start the generator in a new QThread."""
        thread = QThread()
        self._thread = thread
        self.moveToThread(thread)
        thread.started.connect(self._work)
        self.done.connect(thread.quit)
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


def sent_by(receiver: QObject, worker: GeneratorWorker | None) -> bool:
    """In a slot of ``receiver``: the signal comes from ``worker``. A cancelled worker may be gone
    by the time its queued signals arrive; ``sender()`` is then None, which must not count."""
    return worker is not None and receiver.sender() is worker


class RetiredWorkers(QObject):
    """Cancelled workers still finishing a step that cannot be interrupted (an engine run): they
    are kept here, so that no QThread is destroyed while it quits, until they end (or ``wait``)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._workers: list[GeneratorWorker] = []

    def start(self, func: Callable[..., Iterator[Any]], *args: Any, on_item: Callable,
              on_finished: Callable, on_aborted: Callable, on_error: Callable,
              **kwargs: Any) -> "GeneratorWorker":
        """Start ``func(*args, **kwargs)`` in a worker whose signals go to the given methods (of
        GUI-thread objects: no lambdas), tracked so that it can be retired on cancel."""
        worker = GeneratorWorker(func, *args, **kwargs)
        worker.yielded.connect(on_item)
        worker.finished.connect(on_finished)
        worker.aborted.connect(on_aborted)
        worker.errored.connect(on_error)
        worker.done.connect(self._reap)
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

    @Slot()
    def _reap(self) -> None:
        """A worker's generator has ended: join the threads of retired ones."""
        for old in [w for w in self._workers if w is self.sender()]:
            old.stop()  # the thread is quitting: returns at once
            self._workers.remove(old)
