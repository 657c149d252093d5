"""File → Export in the designer window: canvas (whole or selection), plots, and the PDF report.

The main window calls :func:`install_export_menu` with its File menu. The window must have
``scene`` (the canvas :class:`DesignScene`, whose class also draws the report's topology),
``design`` and ``catalog``; the plots are the window's children with ``export_items`` (LivePlots). Failures are shown in a message box, never raised.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QFileDialog, QMenu, QMessageBox, QWidget

from designer.errors import UsageError
from designer.report.export import export_graphics_item, export_scene, scene_source_rect

_PICTURE_FILTERS = "PNG image (*.png);;SVG image (*.svg)"
#: longest side (px) of a canvas picture: a large design at 2 px per scene unit would give a PNG
#: of several hundred MB of pixels, which viewers (and Qt's 256 MB image allocation limit) refuse
MAX_PICTURE_SIDE = 6000


def _ask_path(window: QWidget, title: str, name: str, filters: str) -> Path | None:
    path, chosen = QFileDialog.getSaveFileName(window, title, name, filters)
    if not path:
        return None
    path = Path(path)
    if not path.suffix:  # the dialog does not always add it
        path = path.with_suffix(".svg" if "svg" in chosen.lower() else
                                ".pdf" if "pdf" in chosen.lower() else ".png")
    return path


def _guarded(window: QWidget, what: str, work: Callable[[], object]) -> None:
    QApplication.setOverrideCursor(Qt.WaitCursor)
    try:
        result = work()
    except UsageError as exc:
        QApplication.restoreOverrideCursor()
        QMessageBox.warning(window, what, str(exc))
        return
    except OSError as exc:
        QApplication.restoreOverrideCursor()
        QMessageBox.warning(window, what, f"Cannot write the file: {exc.strerror or exc}")
        return
    QApplication.restoreOverrideCursor()
    if hasattr(window, "show_message"):
        window.show_message(f"{what}: wrote {result}")


def export_canvas(window, selection_only: bool = False) -> None:
    what = "Export selection" if selection_only else "Export canvas"
    if selection_only and not window.scene.selectedItems():
        QMessageBox.information(window, what, "Select the components to export first.")
        return
    path = _ask_path(window, what, "topology.png", _PICTURE_FILTERS)
    if path:
        _guarded(window, what, lambda: export_scene(
            window.scene, path, selection_only=selection_only,
            scale=canvas_scale(window.scene, selection_only)))


def canvas_scale(scene, selection_only: bool = False) -> float:
    """Pixels per scene unit of a canvas picture: 2, or less so that the long side stays within
    :data:`MAX_PICTURE_SIDE`."""
    rect = scene_source_rect(scene, selection_only)
    return min(2.0, MAX_PICTURE_SIDE / max(rect.width(), rect.height()))


def export_plot(window, plot_item, name: str) -> None:
    path = _ask_path(window, f"Export plot: {name}", f"{name}.png", _PICTURE_FILTERS)
    if path:
        _guarded(window, "Export plot", lambda: export_graphics_item(plot_item, path))


def export_report(window) -> None:
    path = _ask_path(window, "Export PDF report", f"{window.design.name}.pdf", "PDF (*.pdf)")
    if path:
        from designer.report.build import build_report

        _guarded(window, "Export report",
                 lambda: build_report(window.design, window.catalog, path,
                                      canvas=type(window.scene)).pdf)


def _fill_plot_menu(window, menu: QMenu) -> None:
    menu.clear()
    # the window's plot panels (the GUI's LivePlots) are the children with ``export_items``; the
    # report does not import the GUI, which sits above it
    panels = [w for w in window.findChildren(QWidget) if hasattr(w, "export_items")]
    items = [item for plots in panels for item in plots.export_items]
    for title, plot in items:
        name = "-".join(re.findall(r"\w+", title.lower()))
        menu.addAction(title, lambda p=plot, n=name: export_plot(window, p, n))
    if not items:
        menu.addAction("(no plots open)").setEnabled(False)


def install_export_menu(window, file_menu: QMenu) -> QMenu:
    """Add File → Export (canvas, selection, plots, PDF report) to ``file_menu``."""
    menu = file_menu.addMenu("&Export")
    menu.addAction("&Canvas as PNG/SVG…", lambda: export_canvas(window))
    menu.addAction("&Selection as PNG/SVG…", lambda: export_canvas(window, selection_only=True))
    plots = menu.addMenu("&Plot as PNG/SVG")
    plots.aboutToShow.connect(lambda: _fill_plot_menu(window, plots))
    menu.addSeparator()
    menu.addAction("PDF &report…", lambda: export_report(window))
    return menu
