"""Start the designer window (``dpu-designer [FILE] [--screenshot OUT.png]``)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from designer.errors import UsageError
from designer.paths import resources_dir

#: longest wait for the window to settle before a screenshot (s)
SETTLE_S = 30.0


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        w = h = 0
    if not (200 <= w <= 10000 and 200 <= h <= 10000):
        raise UsageError(f"--size {text!r}: give the window size as WIDTHxHEIGHT, e.g. 1600x1000")
    return w, h


def make_app():
    """The QApplication (created once), with the designer's style."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        app = QApplication(["dpu-designer"])
        app.setApplicationName("DPU Cluster Designer")
        app.setOrganizationName("dpu-designer")
        app.setStyle("Fusion")
        qss = resources_dir() / "styles" / "designer.qss"
        if qss.is_file():
            app.setStyleSheet(qss.read_text(encoding="utf-8"))
    return app


def render_png(window, out: str | os.PathLike) -> None:
    """Render ``window`` (already sized) to a PNG file."""
    from PySide6.QtWidgets import QApplication

    window.show()
    end = time.monotonic() + SETTLE_S  # the design is checked (and the run view docked) once the
    while window.check_pending and time.monotonic() < end:  # canvas has been painted
        QApplication.processEvents()
    QApplication.processEvents()
    window.view.zoom_to_fit()
    QApplication.processEvents()
    out = Path(out)
    if not window.grab().save(str(out), "PNG"):
        raise UsageError(f"cannot write the screenshot {out}: check the folder exists and is writable")


def run_gui(file: str | None = None, screenshot: str | None = None, size: str = "1600x1000") -> int:
    """Open the window on ``file`` (or the example design). With ``screenshot``, render the window
    offscreen to that PNG and return 0 instead of running the event loop."""
    width, height = _size(size)
    if screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from designer.topology import fileformat

    path = Path(file) if file else resources_dir() / "examples" / "example.json"
    if not path.is_file():
        raise UsageError(f"{path}: no such design file")
    design = fileformat.load(path)  # DesignFileError (a UsageError) says what is wrong and where
    app = make_app()
    from designer.gui.mainwindow import MainWindow

    window = MainWindow(design, str(path) if file else None)
    if screenshot:
        window.resize(width, height)
        render_png(window, screenshot)
        window.autosaver.discard()
        return 0
    window.show()
    window.offer_recovery()
    _quit_on_signals(app, window)
    return app.exec()


def _quit_on_signals(app, window) -> None:
    """Ctrl+C (SIGINT) and SIGTERM close the window keeping unsaved work in the recovery file.

    Python runs signal handlers only when the interpreter gets control, so a light timer wakes it
    while Qt's event loop runs."""
    import signal

    from PySide6.QtCore import QTimer

    def stop(signum, frame) -> None:
        window.quit_keeping_work()
        app.quit()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)
    wake = QTimer(app)
    wake.timeout.connect(_keep_interpreter_awake)
    wake.start(250)


def _keep_interpreter_awake() -> None:
    """Nothing: the timer only gives Python a chance to run pending signal handlers."""
