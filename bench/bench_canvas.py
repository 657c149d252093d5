"""Canvas scale: open a 2,048-server rail-optimized design (16,384 GPUs, 42,016 cables) in the window
and time pan and zoom frames (whole-viewport repaints, 1600 x 1000 window), without and with the
utilization overlay. Target: open < 3 s, frame medians < 50 ms at every zoom.

    QT_QPA_PLATFORM=offscreen python bench/bench_canvas.py [SERVERS]
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QObject  # noqa: E402 - after the platform is chosen


def frame_ms(view) -> float:
    t = time.perf_counter()
    view.viewport().repaint()
    return (time.perf_counter() - t) * 1000


class FirstPaint(QObject):
    """Notes when a widget is first painted (``at``: perf_counter time)."""

    def __init__(self, widget) -> None:
        super().__init__(widget)
        self.at = None
        widget.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if self.at is None and event.type() == QEvent.Paint:
            self.at = time.perf_counter()
        return False


def report_frames(window, what: str) -> None:
    """Frames at four zoom levels: a pan (a drag of 60 px steps, 12 to the right then 8 down, so
    that it uncovers new ground), zoom steps about the centre in a quick run (a wheel turning),
    and the frame that draws the cables sharp once the zoom rests."""
    view = window.view
    cables = window.scene.cables
    for label, scale in (("fit", None), ("25 %", 0.25), ("50 %", 0.5), ("100 %", 1.0)):
        view.zoom_reset()  # through the view's own zoom calls: its level-of-detail settings follow
        if scale is None:
            view.zoom_to_fit()
        elif scale != 1.0:
            view.zoom(scale)
        view.centerOn(window.scene.content_rect().center())
        cables.settle()  # as after a pause at this zoom
        frame_ms(view)
        pans = []
        for i in range(20):
            bar = view.horizontalScrollBar() if i < 12 else view.verticalScrollBar()
            bar.setValue(bar.value() + (60 if bar.value() + 60 <= bar.maximum() else -60))
            pans.append(frame_ms(view))
        zooms = []
        for f in (1.1, 0.91) * 3:
            view.zoom(f)
            zooms.append(frame_ms(view))
        cables.settle()  # what its timer does once the zoom rests
        sharp = frame_ms(view)
        print(f"{what}, zoom {label:>5} ({view.scale_factor() * 100:.0f} %): "
              f"pan median {statistics.median(pans):.1f} ms (max {max(pans):.1f}), "
              f"zoom step median {statistics.median(zooms):.1f} ms (max {max(zooms):.1f}), "
              f"sharp after the zoom rests {sharp:.1f} ms; all frames median "
              f"{statistics.median(pans + zooms):.1f} ms")


def main(servers: int = 2048) -> None:
    from PySide6.QtWidgets import QApplication

    from designer.gui.app import make_app
    from designer.gui.mainwindow import MainWindow
    from designer.topology import fileformat
    from designer.topology.catalog import load_catalog
    from designer.topology.templates import rail_optimized

    app = make_app()
    catalog = load_catalog()
    t = time.perf_counter()
    design = rail_optimized(servers=servers)
    print(f"template: {time.perf_counter() - t:.2f} s")
    topo = design.topology
    gpus = sum(int(catalog.resolve(s)["gpu_count"]) for s in topo.servers())
    print(f"{len(topo.servers())} servers, {gpus} GPUs, {len(topo.components)} components, "
          f"{len(topo.links)} links")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.json"
        fileformat.save(design, path)
        t = time.perf_counter()
        loaded = fileformat.load(path)
        t_load = time.perf_counter() - t
        window = MainWindow(loaded, str(path), catalog)
        window.resize(1600, 1000)
        painted = FirstPaint(window.view.viewport())
        window.show()
        while painted.at is None:
            QApplication.processEvents()
        t_open = painted.at - t
        while window.check_pending:  # the design is checked after the first paint
            QApplication.processEvents()
        t_checked = time.perf_counter() - t
    print(f"open (load file {t_load:.2f} s + window, items, first paint of the canvas): {t_open:.2f} s; "
          f"problems listed at {t_checked:.2f} s")
    print(f"scene items: {len(window.scene.items())}")
    view = window.view
    report_frames(window, "no overlay")
    rng = random.Random(0)
    util = {lid: rng.random() for lid in topo.links}
    marked = set(rng.sample(sorted(topo.links), 20)) | {topo.servers()[0].id}
    t = time.perf_counter()
    window.scene.show_utilization(util, marked)
    frame_ms(view)
    print(f"utilization overlay on {len(util)} cables: {time.perf_counter() - t:.2f} s (with a frame)")
    report_frames(window, "overlay")
    window.editor.stack.clear()
    window.close()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2048)
