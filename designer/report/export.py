"""Pictures to files: the canvas (whole or selection), plot widgets and report charts as PNG or SVG.

Every export goes through :func:`save_picture`, which takes a *paint function* ``paint(painter,
target: QRectF)`` and writes it to a PNG (QImage) or an SVG (QSvgGenerator, so the SVG holds
vector paths and text, not an embedded bitmap). pyqtgraph's own SVGExporter is not used: it
produces broken files with pyqtgraph 0.14.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6.QtCore import QBuffer, QIODevice, QRect, QRectF, QSize, QSizeF, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QApplication, QGraphicsItem, QGraphicsScene, QGraphicsView, QWidget

from designer.errors import UsageError

#: most pixels of one picture (derived: 64 MP x 4 bytes = 256 MB while drawn; an 8K frame is 33 MP)
MAX_PIXELS = 64_000_000

#: file suffixes :func:`save_picture` writes
FORMATS = (".png", ".svg")

PaintFn = Callable[[QPainter, QRectF], None]


def picture_format(path: str | Path) -> str:
    """``".png"`` or ``".svg"`` from a file name; a clear UsageError for anything else."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise UsageError(f"{path}: cannot write '{suffix or 'no suffix'}' pictures; "
                         "name the file .png or .svg")
    return suffix


def parse_size(text: str) -> QSize:
    """``"1600x900"`` -> QSize(1600, 900); a clear UsageError otherwise."""
    try:
        w, h = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise UsageError(f"picture size '{text}': write it as WIDTHxHEIGHT in pixels, "
                         "e.g. 1600x900") from None
    if not (16 <= w <= 20000 and 16 <= h <= 20000):
        raise UsageError(f"picture size '{text}': width and height must be 16 to 20000 pixels")
    if w * h > MAX_PIXELS:
        raise UsageError(f"picture size '{text}': {w * h / 1e6:.0f} megapixels is more than the "
                         f"{MAX_PIXELS // 10**6} allowed (each takes 4 bytes of memory while drawn); "
                         "give a smaller size")
    return QSize(w, h)


def save_picture(paint: PaintFn, size: QSize, path: str | Path, *, title: str = "",
                 background: QColor | Qt.GlobalColor = Qt.white, inputs=()) -> Path:
    """Paint ``paint`` into a ``size`` picture and write it to ``path`` (.png or .svg).

    The picture is encoded in memory and written with ``designer.safeio.atomic_write_bytes``: the
    path is checked first (no folder, device, pipe, or one of ``inputs``) and a failed write
    leaves the old file (Qt's own file writers do not report a full disk)."""
    from designer.safeio import atomic_write_bytes, check_output_path

    path = Path(path)
    suffix = picture_format(path)
    check_output_path(path, inputs=inputs, what="picture")
    target = QRectF(0, 0, size.width(), size.height())
    buffer = QBuffer()
    buffer.open(QIODevice.WriteOnly)
    if suffix == ".png":
        device = QImage(size, QImage.Format_ARGB32)
        device.fill(background)
    else:
        device = QSvgGenerator()
        device.setOutputDevice(buffer)
        device.setSize(size)
        device.setViewBox(QRect(0, 0, size.width(), size.height()))
        device.setTitle(title)
    painter = QPainter(device)
    try:
        painter.setRenderHint(QPainter.Antialiasing)
        painter.setRenderHint(QPainter.TextAntialiasing)
        if suffix == ".svg":
            painter.fillRect(target, background)
        paint(painter, target)
    finally:
        painter.end()
    if suffix == ".png" and not device.save(buffer, "PNG"):
        raise UsageError(f"{path}: cannot encode the picture as PNG ({size.width()}x{size.height()})")
    data = bytes(buffer.data())
    if suffix == ".svg":  # design names with control characters would make the file ill-formed
        from designer.textsafe import xml_bytes

        data = xml_bytes(data)
    if not data:
        raise UsageError(f"{path}: the picture came out empty; nothing was written")
    atomic_write_bytes(path, data, inputs=inputs, what="picture")
    return path


def fit(source: QSize | QSizeF, target: QRectF) -> QRectF:
    """The largest rectangle of ``source``'s aspect ratio centred in ``target``."""
    scale = min(target.width() / max(source.width(), 1e-9), target.height() / max(source.height(), 1e-9))
    w, h = source.width() * scale, source.height() * scale
    return QRectF(target.x() + (target.width() - w) / 2, target.y() + (target.height() - h) / 2, w, h)



# --------------------------------------------------------------------------- scenes (the canvas)
def _layers(scene: QGraphicsScene) -> set[QGraphicsItem]:
    """Items that span the whole canvas (the batched cable layer, the far-out box layer): they
    neither set the exported area nor are hidden for a selection; their contents lie between or
    on the component boxes."""
    layers = (getattr(scene, name, None) for name in ("cables", "boxes"))
    return {layer for layer in layers if isinstance(layer, QGraphicsItem)}


def _content_rect(scene: QGraphicsScene) -> QRectF:
    layers = _layers(scene)
    rect = QRectF()
    for item in scene.items():
        if item.parentItem() is None and item.isVisible() and item not in layers:
            rect = rect.united(item.sceneBoundingRect())
    return rect


def _selection_rect(scene: QGraphicsScene) -> QRectF:
    rect = QRectF()
    for item in scene.selectedItems():
        rect = rect.united(item.sceneBoundingRect())
    return rect


def _hidden_for_selection(scene: QGraphicsScene, rect: QRectF) -> list[QGraphicsItem]:
    """Visible top-level items to hide when exporting the selection: those that neither are, hold
    nor belong to a selected item, unless they lie wholly inside the selection (links and labels
    between selected boxes)."""
    selected = set(scene.selectedItems())
    keep: set[QGraphicsItem] = _layers(scene)
    for item in selected:
        while item is not None:
            keep.add(item)
            item = item.parentItem()
    hide = []
    for item in scene.items():
        if item.parentItem() is not None or not item.isVisible() or item in keep:
            continue
        if any(child in selected for child in item.childItems()):
            continue
        if rect.contains(item.sceneBoundingRect()):
            continue
        hide.append(item)
    return hide


def scene_source_rect(scene: QGraphicsScene, selection_only: bool = False,
                      margin: float = 20.0) -> QRectF:
    """The scene area an export shows: every item, or the selected ones, plus ``margin``."""
    rect = _selection_rect(scene) if selection_only else _content_rect(scene)
    if rect.isEmpty():
        what = "selection" if selection_only else "canvas"
        raise UsageError(f"the {what} is empty: nothing to export"
                         + ("; select components first" if selection_only else ""))
    return rect.adjusted(-margin, -margin, margin, margin)


def export_scene(scene: QGraphicsScene, path: str | Path, *, size: QSize | None = None,
                 selection_only: bool = False, scale: float = 2.0) -> Path:
    """Write the canvas scene (all of it, or only the selection) to a PNG or SVG.

    ``size`` defaults to the shown area times ``scale``; the picture keeps the scene's aspect ratio
    and is centred. Selection outlines are not drawn (the selection is restored afterwards).
    """
    source = scene_source_rect(scene, selection_only)
    if size is None:
        size = QSize(max(16, round(source.width() * scale)), max(16, round(source.height() * scale)))
    selected = scene.selectedItems()
    hidden = _hidden_for_selection(scene, _selection_rect(scene)) if selection_only else []
    for item in hidden:
        item.setVisible(False)
    for item in selected:
        item.setSelected(False)
    try:
        def paint(painter: QPainter, target: QRectF) -> None:
            scene.render(painter, fit(source.size(), target), source, Qt.KeepAspectRatio)

        return save_picture(paint, size, path, title="Cluster topology")
    finally:
        for item in hidden:
            item.setVisible(True)
        for item in selected:
            item.setSelected(True)


def export_graphics_item(item: QGraphicsItem, path: str | Path, *, size: QSize | None = None,
                         scale: float = 2.0) -> Path:
    """Write one graphics item as drawn in its scene (e.g. one plot of a pyqtgraph layout)."""
    scene = item.scene()
    if scene is None:
        raise UsageError("this plot is not shown anywhere: nothing to export")
    source = item.sceneBoundingRect()
    if size is None:
        size = QSize(max(16, round(source.width() * scale)), max(16, round(source.height() * scale)))

    def paint(painter: QPainter, target: QRectF) -> None:
        scene.render(painter, fit(source.size(), target), source, Qt.KeepAspectRatio)

    return save_picture(paint, size, path, title="Plot")


# --------------------------------------------------------------------------- widgets (plots)
def _laid_out(widget: QWidget) -> None:
    """A widget that was never shown has no layout yet: show it off-screen once to get one."""
    if widget.isVisible():
        return
    widget.setAttribute(Qt.WA_DontShowOnScreen, True)
    widget.show()
    QApplication.processEvents()


def export_widget(widget: QWidget, path: str | Path, *, size: QSize | None = None) -> Path:
    """Write a widget (a pyqtgraph plot, or any widget) as it looks now to a PNG or SVG.

    ``size`` defaults to the widget's size; another size scales the picture (keeping its aspect
    ratio, centred), so fonts and lines grow with it as in a zoomed screenshot.
    """
    was_hidden = not widget.isVisible()
    _laid_out(widget)
    own = widget.size()
    size = size or own
    try:
        def paint(painter: QPainter, target: QRectF) -> None:
            box = fit(own, target)
            if isinstance(widget, QGraphicsView):  # its render() draws the scene, not the widget
                widget.render(painter, box, widget.viewport().rect(), Qt.KeepAspectRatio)
                return
            painter.translate(box.topLeft())
            painter.scale(box.width() / own.width(), box.height() / own.height())
            widget.render(painter)

        return save_picture(paint, size, path, title=widget.windowTitle() or "Plot")
    finally:
        if was_hidden:
            widget.hide()
