"""The rack elevation window (View → Rack elevation): each rack front-on with its U positions and
the servers, switches and storage in them (names, height in U, NICs/DPUs), as a planner needs it.

What is drawn and how comes from :mod:`designer.report.elevation` (the same picture as
``dpu-designer export --elevation``); Export writes it as PNG or SVG through
:func:`designer.report.export.save_picture`, Print sends it to a printer (or a PDF file).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (QComboBox, QDialog, QFileDialog, QHBoxLayout, QLabel, QMessageBox,
                               QPushButton, QScrollArea, QSizePolicy, QVBoxLayout, QWidget)

from designer.errors import UsageError
from designer.report.elevation import draw_racks, elevations, natural_size

#: most racks drawn at once (a 21,000-server design has ~5,000 racks): select racks on the canvas
#: to see others
MAX_RACKS = 64
ZOOMS = (0.5, 0.75, 1.0, 1.5, 2.0)


class ElevationCanvas(QWidget):
    """The racks at a zoom, as large as the drawing (a scroll area shows part of it)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.racks: list = []
        self.zoom = 1.0
        self.setSizePolicy(QSizePolicy.Fixed, QSizePolicy.Fixed)

    def set_racks(self, racks: list, zoom: float | None = None) -> None:
        self.racks = list(racks)
        if zoom is not None:
            self.zoom = zoom
        w, h = natural_size(self.racks)
        self.setFixedSize(max(1, int(w * self.zoom)), max(1, int(h * self.zoom)))
        self.update()

    def paint_into(self, painter: QPainter, target: QRectF) -> None:
        if self.racks:
            draw_racks(painter, target, self.racks)

    def paintEvent(self, event) -> None:  # noqa: N802
        p = QPainter(self)
        p.fillRect(self.rect(), Qt.white)
        p.setRenderHint(QPainter.Antialiasing)
        p.setRenderHint(QPainter.TextAntialiasing)
        self.paint_into(p, QRectF(self.rect()))
        p.end()


class ElevationDialog(QDialog):
    """Rack elevations of the window's design: the selected racks (or the racks of the selected
    servers, switches and storage), else the first :data:`MAX_RACKS` racks."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window_ = window
        self.setWindowTitle("Rack elevation")
        self.canvas = ElevationCanvas()
        scroll = QScrollArea()
        scroll.setWidget(self.canvas)
        scroll.setAlignment(Qt.AlignHCenter | Qt.AlignTop)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.zoom = QComboBox()
        for z in ZOOMS:
            self.zoom.addItem(f"{z * 100:.0f} %", z)
        self.zoom.setCurrentIndex(ZOOMS.index(1.0))
        self.zoom.currentIndexChanged.connect(lambda i: self.canvas.set_racks(self.canvas.racks,
                                                                              self.zoom.itemData(i)))
        refresh = QPushButton("From selection")
        refresh.setToolTip("Show the racks selected on the canvas (or those holding the selected "
                           "servers, switches and storage); all racks when nothing is selected")
        refresh.clicked.connect(self.refresh)
        self.export_button = QPushButton("Export PNG/SVG…")
        self.export_button.clicked.connect(self.export_dialog)
        print_button = QPushButton("Print…")
        print_button.clicked.connect(self.print_dialog)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Zoom"))
        bar.addWidget(self.zoom)
        bar.addWidget(refresh)
        bar.addStretch(1)
        bar.addWidget(self.export_button)
        bar.addWidget(print_button)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.note)
        layout.addWidget(scroll, 1)
        self.resize(1100, 800)
        self.refresh()

    def chosen_racks(self) -> tuple[list[str] | None, int]:
        """Ids of the racks to show (None: all, in canvas order) and how many racks there are."""
        design = self.window_.design
        topo = design.topology
        total = sum(1 for c in topo.components.values() if c.kind == "rack")
        wanted = []
        for cid in self.window_.selected():
            comp = topo.components.get(cid)
            while comp is not None and comp.kind != "rack" and comp.parent:
                comp = topo.components.get(comp.parent)
            if comp is not None and comp.kind == "rack" and comp.id not in wanted:
                wanted.append(comp.id)
        return (wanted or None), total

    def refresh(self) -> None:
        """Show the racks of the selection (or the first ones) of the current design."""
        design, catalog = self.window_.design, self.window_.catalog
        wanted, total = self.chosen_racks()
        racks = elevations(design, catalog, wanted)
        shown = racks[:MAX_RACKS]
        self.canvas.set_racks(shown, self.zoom.currentData())
        if not racks:
            self.note.setText("The design has no racks: place a rack from the Components palette "
                              "and put servers, switches or storage into it.")
        elif wanted:
            self.note.setText(f"{len(shown)} selected rack(s) of {total}.")
        elif len(racks) > len(shown):
            self.note.setText(f"The first {len(shown)} of {total} racks. Select racks (or what is "
                              "in them) on the canvas and press From selection to see others.")
        else:
            self.note.setText(f"All {total} racks; U 1 at the bottom.")
        self.export_button.setEnabled(bool(shown))

    def export(self, path: str | Path) -> Path:
        """Write the racks shown as PNG or SVG (the suffix says which), at 100 %."""
        from designer.report.export import save_picture

        w, h = natural_size(self.canvas.racks)
        return save_picture(self.canvas.paint_into, QSize(int(w), int(h)), path,
                            title=f"{self.window_.design.name}: rack elevation")

    def export_dialog(self) -> None:
        start = str(Path(self.window_.path).with_suffix("").as_posix() + "-racks.svg") \
            if self.window_.path else str(Path.home() / "racks.svg")
        path, _ = QFileDialog.getSaveFileName(self, "Export rack elevation", start,
                                              "SVG picture (*.svg);;PNG image (*.png)")
        if not path:
            return
        try:
            written = self.export(path)
        except UsageError as exc:
            QMessageBox.warning(self, "Rack elevation", str(exc))
            return
        self.window_.show_message(f"Wrote {written}")

    def print_dialog(self) -> None:
        from PySide6.QtPrintSupport import QPrintDialog, QPrinter

        printer = QPrinter(QPrinter.HighResolution)
        if QPrintDialog(printer, self).exec() != QDialog.Accepted:
            return
        p = QPainter(printer)
        try:
            self.canvas.paint_into(p, QRectF(printer.pageRect(QPrinter.DevicePixel)))
        finally:
            p.end()


def open_elevation(window) -> ElevationDialog:
    """Show the window's rack elevation dialog (one per window), refreshed for the selection."""
    dialog = getattr(window, "_elevation_dialog", None)
    if dialog is None:
        dialog = window._elevation_dialog = ElevationDialog(window)
    else:
        dialog.refresh()
    dialog.show()
    dialog.raise_()
    return dialog
