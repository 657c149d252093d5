"""Start the designer window (``dpu-designer [FILE] [--screenshot OUT.png]``)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from designer.errors import UsageError
from designer.paths import resources_dir

#: longest wait for the window to settle before a screenshot (s)
SETTLE_S = 30.0
#: largest design (components) whose ``--screenshot`` checks it and docks the run view first, as
#: the window does after its first paint. derived: the check takes ~30 us a component on the
#: 2-core bench machine (7.3 s for 249,540 components, bench/bench_canvas.py --screenshot), the
#: run view ~2.5 s to import and dock; 50,000 components keep both under ~4 s of a screenshot.
#: A larger design's screenshot says in the problems list that it was not checked.
SCREENSHOT_CHECK_MAX = 50_000


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        w = h = 0
    if not (200 <= w <= 10000 and 200 <= h <= 10000):
        raise UsageError(f"--size {text!r}: give the window size as WIDTHxHEIGHT, e.g. 1600x1000")
    return w, h


#: what Qt's offscreen platform says about window-manager features it lacks (nothing a user can act on)
_OFFSCREEN_CHATTER = ("does not support propagateSizeHints", "does not support raise")


def _quiet_offscreen() -> None:
    """Drop the offscreen plugin's notes on missing window-manager features from stderr."""
    from PySide6.QtCore import qInstallMessageHandler

    previous = None

    def handler(mode, context, message):
        if any(text in message for text in _OFFSCREEN_CHATTER):
            return
        if previous is not None:
            previous(mode, context, message)
        else:
            import sys

            print(message, file=sys.stderr)

    previous = qInstallMessageHandler(handler)


#: the display scales the window accepts from QT_SCALE_FACTOR / QT_SCREEN_SCALE_FACTORS.
#: assumed: the desktops' own settings span 100 % to 500 % (Windows 11 display settings; GNOME
#: offers 100-400 %); 0.5 leaves room for a deliberate shrink. Outside it (0 divides by zero in
#: pyqtgraph, a negative, NaN or huge factor leaves Qt painters inactive) the variable is dropped.
SCALE_RANGE = (0.5, 5.0)
_SCALE_VARS = ("QT_SCALE_FACTOR", "QT_SCREEN_SCALE_FACTORS")


def _scale_ok(text: str) -> bool:
    """One factor (``"1.5"``) or a screen list (``"1.5;2"`` or ``"HDMI-1=1.5;DP-1=2"``) within SCALE_RANGE."""
    lo, hi = SCALE_RANGE
    parts = [p.rpartition("=")[2].strip() for p in text.replace(",", ";").split(";") if p.strip()]
    try:
        factors = [float(p) for p in parts]
    except ValueError:
        return False
    return bool(factors) and all(lo <= f <= hi for f in factors)  # NaN fails both comparisons


def sane_scale_environment(environ=os.environ) -> list[str]:
    """Drop scale-factor variables Qt cannot draw with (see SCALE_RANGE); one note per dropped
    variable (printed on stderr by :func:`make_app`). Must run before the QApplication exists."""
    notes = []
    for name in _SCALE_VARS:
        value = environ.get(name)
        if value is None or _scale_ok(value):
            continue
        del environ[name]
        shown = value if len(value) <= 40 and value.isprintable() else repr(value[:40])
        notes.append(f"{name}={shown} ignored: give a display scale from {SCALE_RANGE[0]:g} to "
                     f"{SCALE_RANGE[1]:g} (e.g. {name}=1.5)")
    return notes


def make_app():
    """The QApplication (created once), with the designer's style. A display scale Qt cannot
    draw with is dropped first (:func:`sane_scale_environment`)."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        import sys

        for note in sane_scale_environment():
            print(f"dpu-designer: {note}", file=sys.stderr)
        if os.environ.get("QT_QPA_PLATFORM", "").startswith("offscreen"):
            _quiet_offscreen()
        app = QApplication(["dpu-designer"])
        app.setApplicationName("DPU Cluster Designer")
        app.setOrganizationName("dpu-designer")
        app.setStyle("Fusion")
        qss = resources_dir() / "styles" / "designer.qss"
        if qss.is_file():
            app.setStyleSheet(qss.read_text(encoding="utf-8"))
    return app


def render_png(window, out: str | os.PathLike, inputs=()) -> None:
    """Render ``window`` (already sized) to a PNG file, written atomically (never a truncated
    file; a folder, device, pipe or one of ``inputs`` as ``out`` is refused before rendering)."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice
    from PySide6.QtWidgets import QApplication

    from designer.safeio import atomic_write_bytes, check_output_path

    check_output_path(out, inputs=inputs, what="screenshot")
    # the cables drawn whole in each frame (a window draws them a few tiles or batches a frame,
    # so a grab would show as many as the machine's load allowed): no frame rate to keep here
    cables = window.scene.cables
    cables.BUDGET_MS = float("inf")
    # a window not shown yet is shown (sized, laid out, checked, fitted) with its updates off:
    # the grab below is its one paint. Painted on show and again after the fit, it cost a
    # 250k-component design's boxes and cables twice for nothing (~0.4-1 s each, bench_large)
    shown = window.isVisible()
    if not shown:
        window.setUpdatesEnabled(False)
    try:
        window.show()
        QApplication.processEvents()
        if not shown:
            window.first_paint_work_now()  # checked (unless left unchecked), run view docked
        end = time.monotonic() + SETTLE_S  # a painted window does both after its first paint
        while window.check_pending and time.monotonic() < end:
            QApplication.processEvents()
        QApplication.processEvents()
        window.view.zoom_to_fit()
        QApplication.processEvents()
        window.setUpdatesEnabled(True)
        while cables.refining and time.monotonic() < end:
            window.view.viewport().repaint()
        picture = window.grab()  # within the lifted budget: it may be the first paint
    finally:
        window.setUpdatesEnabled(True)
        del cables.BUDGET_MS  # the class's again
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.WriteOnly)
    if not picture.save(buffer, "PNG"):
        raise UsageError(f"cannot render the screenshot {out}: the window picture is empty "
                         "(is --size too large for memory?)")
    buffer.close()
    atomic_write_bytes(out, bytes(data), inputs=inputs, what="screenshot")


def run_gui(file: str | None = None, screenshot: str | None = None, size: str = "1600x1000") -> int:
    """Open the window on ``file`` (or the example design). With ``screenshot``, render the window
    offscreen to that PNG and return 0 instead of running the event loop.

    A screenshot pauses the cycle collector (its passes over a large design's millions of
    objects cost seconds, during the first paint too, and all of them live till the end) and
    turns it back on as it found it (a caller in the same process, e.g. a test, keeps its own)."""
    if not screenshot:
        return _run_gui(file, None, size)
    from designer.gcpause import collector_paused

    with collector_paused():
        return _run_gui(file, screenshot, size)


def _run_gui(file: str | None, screenshot: str | None, size: str) -> int:
    width, height = _size(size)
    path = Path(file) if file else resources_dir() / "examples" / "example.json"
    if screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        from designer.safeio import check_output_path

        check_output_path(screenshot, inputs=[path], what="screenshot")  # before a long load
    from designer.gui.platform_check import display_problem

    problem = display_problem()
    if problem:
        raise UsageError(problem)
    from designer.topology import fileformat

    if not path.exists():
        raise UsageError(f"{path}: no such design file; check the path")
    if path.is_dir():
        raise UsageError(f"{path} is a folder; give a design file (.json)")
    design = fileformat.load(path)  # DesignFileError (a UsageError) says what is wrong and where
    app = make_app()
    from designer.gui.mainwindow import MainWindow

    window = MainWindow(design, str(path) if file else None)
    if screenshot:
        window.resize(width, height)
        count = len(design.topology.components)
        if count > SCREENSHOT_CHECK_MAX:
            window.leave_unchecked(f"Not checked for this screenshot ({count:,} components); "
                                   f"dpu-designer validate {path} checks it.")
        render_png(window, screenshot, inputs=[path])
        window.autosaver.discard()
        # the interpreter's exit runs one full collection even with the collector off: over a
        # 250k-component design's objects it cost ~1.7 s CPU after the PNG was written (measured
        # with /proc schedstat, issue 14). Frozen objects are left out of it (and out of any
        # later collection: the screenshot is the process's last work).
        import gc

        gc.freeze()
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
