"""Widgets over the canvas's corners: the overview map (minimap) and the rail colour key.

:class:`Minimap` shows the whole design small (each rack, switch and storage box in its kind's
colour) with the part the canvas shows as a frame; a click or a drag on it moves the canvas there.
Its picture is redrawn only when the design changes (at most every ``REDRAW_MS``), from the
top-level boxes' scene rectangles: a 21,000-server design has ~5,000 of them, so it is cheap.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPen
from PySide6.QtWidgets import QWidget

from designer.gui.cables import rail_color
from designer.gui.items import MANAGEMENT_COLOR, SELECT, PortItem, RackItem, kind_color

#: the overview map's longest side (px)
MINIMAP_PX = 200
REDRAW_MS = 300
RACK_FILL = QColor("#c9ced6")


class Minimap(QWidget):
    """The overview map of a :class:`~designer.gui.view.CanvasView`, in its top-right corner."""

    jumped = Signal(QPointF)  #: the user clicked the map here (scene point)

    def __init__(self, view) -> None:
        super().__init__(view.viewport())
        self.view = view
        self.setCursor(Qt.PointingHandCursor)
        self.setAttribute(Qt.WA_OpaquePaintEvent)  # its repaints never repaint the canvas under it
        self.setToolTip("Overview: click or drag to move the canvas there")
        self._image: QImage | None = None
        self._world = QRectF()  # the scene rectangle the picture shows
        self._redraw = QTimer(self, singleShot=True, interval=REDRAW_MS)
        self._redraw.timeout.connect(self.rebuild)
        self.resize(MINIMAP_PX, MINIMAP_PX * 2 // 3)

    def invalidate(self) -> None:
        """A new document: drawn when the map first shows (a design opened fitted needs none)."""
        self._image = None
        self._stale = True
        self.place()

    def schedule(self) -> None:
        """The design changed: redraw the picture soon (edits in a burst redraw once); while the
        map is hidden, only when it shows again (a 250k-component design takes a moment)."""
        if self.isVisible():
            self._redraw.start()
        else:
            self._stale = True

    _stale = False

    def rebuild(self) -> None:
        """Draw the picture of the design's top-level boxes."""
        scene = self.view.scene()
        if scene is None:
            return
        world = scene.content_rect()
        if world.isNull() or world.width() <= 0 or world.height() <= 0:
            self._image, self._world = None, QRectF()
            self.update()
            return
        world = world.adjusted(-40, -40, 40, 40)
        scale = MINIMAP_PX / max(world.width(), world.height())
        w, h = max(40, int(world.width() * scale)), max(30, int(world.height() * scale))
        image = QImage(w, h, QImage.Format_ARGB32_Premultiplied)
        image.fill(QColor(255, 255, 255))
        p = QPainter(image)
        try:
            p.scale(w / world.width(), h / world.height())
            p.translate(-world.topLeft())
            p.setPen(Qt.NoPen)
            min_w, min_h = world.width() / w, world.height() / h  # a pixel at least
            for item in scene.comp_items.values():
                parent = item.parentItem()
                if isinstance(item, PortItem) or not item.isVisible() or (
                        parent is not None and not isinstance(parent, RackItem)):
                    continue
                if isinstance(item, RackItem):
                    p.setBrush(RACK_FILL)
                else:
                    p.setBrush(kind_color(item.comp, item.resolved))
                rect = item.sceneBoundingRect()
                p.drawRect(QRectF(rect.x(), rect.y(), max(rect.width(), min_w),
                                  max(rect.height(), min_h)))
        finally:
            p.end()
        self._image, self._world = image, world
        self._stale = False
        self.resize(w + 2, h + 2)
        self.place()
        self.update()

    def place(self) -> None:
        """Top-right in the canvas; shown when wanted, when the canvas is wide enough, and when
        part of the design is out of view (with all of it in view the map tells nothing more)."""
        port = self.view.viewport()
        if self.view.scene() is None:  # the window is going away
            self.hide()
            return
        self.move(port.width() - self.width() - 8, 8)
        seen = self.view.mapToScene(port.rect()).boundingRect()
        content = self.view.dscene.content_rect()
        show = ((self._image is not None or self._stale) and self.wanted
                and port.width() > 3 * self.width() and not seen.contains(content))
        if show and self._stale:
            self._stale = False
            self.rebuild()  # places it again
            return
        if show != self.isVisible():
            self.setVisible(show)
        elif show:
            self.update()

    wanted = True  #: the View menu's "Overview map"

    def set_wanted(self, on: bool) -> None:
        self.wanted = bool(on)
        self.place()

    def shown_rect(self) -> QRectF:
        """The part of the scene the canvas shows, in map pixels."""
        view = self.view
        seen = view.mapToScene(view.viewport().rect()).boundingRect()
        return self._to_map(seen)

    def _to_map(self, rect: QRectF) -> QRectF:
        sx = (self.width() - 2) / self._world.width()
        sy = (self.height() - 2) / self._world.height()
        return QRectF(1 + (rect.x() - self._world.x()) * sx, 1 + (rect.y() - self._world.y()) * sy,
                      rect.width() * sx, rect.height() * sy)

    def to_scene(self, point: QPointF) -> QPointF:
        """The scene point under a point of the map."""
        return QPointF(self._world.x() + (point.x() - 1) * self._world.width() / (self.width() - 2),
                       self._world.y() + (point.y() - 1) * self._world.height() / (self.height() - 2))

    def paintEvent(self, event) -> None:  # noqa: N802
        if self._image is None:
            return
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(255, 255, 255))
        p.drawImage(1, 1, self._image)
        p.setPen(QPen(QColor("#9aa0a6"), 1))
        p.setBrush(Qt.NoBrush)
        p.drawRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5))
        frame = self.shown_rect().intersected(QRectF(self.rect()).adjusted(1, 1, -1, -1))
        if not frame.isEmpty():
            p.setPen(QPen(SELECT, 1.5))
            p.setBrush(QColor(30, 102, 245, 30))
            p.drawRect(frame)
        p.end()

    def mousePressEvent(self, event) -> None:  # noqa: N802
        if event.button() == Qt.LeftButton and self._image is not None:
            self._jump(event.position())
        event.accept()

    def mouseMoveEvent(self, event) -> None:  # noqa: N802
        if event.buttons() & Qt.LeftButton and self._image is not None:
            self._jump(event.position())
        event.accept()

    def _jump(self, at: QPointF) -> None:
        target = self.to_scene(at)
        self.view.fit_pending = False
        self.view.centerOn(target)
        self.jumped.emit(target)
        self.update()


def key_painter(widget: QWidget, title: str, title_rect: QRectF) -> QPainter:
    """A painter on a canvas key (``widget``) that has drawn its rounded panel and ``title``; the
    caller draws the entries and ends it."""
    p = QPainter(widget)
    p.setRenderHint(QPainter.Antialiasing)
    p.setPen(QPen(QColor("#9aa0a6"), 1))
    p.setBrush(QColor(255, 255, 255, 235))
    p.drawRoundedRect(QRectF(widget.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 5, 5)
    p.setPen(QColor("#1f2328"))
    p.drawText(title_rect, Qt.AlignLeft | Qt.AlignVCenter, title)
    return p


class RailLegend(QWidget):
    """The colour of each rail, in the canvas's bottom-left corner (when rails are coloured)."""

    SWATCH, GAP = 14, 6

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setAttribute(Qt.WA_TransparentForMouseEvents)
        self.rails: list[int] = []
        self.management = False

    def set_rails(self, rails: list[int], management: bool = False) -> None:
        """The rails' colours and, when the design has a management network, its muted grey."""
        self.rails = list(rails)
        self.management = management
        per_row = 10
        rows = max(1, (len(self.rails) + per_row - 1) // per_row) + (1 if management else 0)
        cols = min(per_row, max(1, len(self.rails)))
        self.setFixedSize(max(150, 16 + cols * (self.SWATCH + 18)), 28 + rows * (self.SWATCH + self.GAP))
        self.update()

    def paintEvent(self, event) -> None:  # noqa: N802
        p = key_painter(self, "Cables by rail (NIC slot)", QRectF(10, 4, self.width() - 20, 16))
        for n, rail in enumerate(self.rails):
            x = 10 + (n % 10) * (self.SWATCH + 18)
            y = 24 + (n // 10) * (self.SWATCH + self.GAP)
            p.fillRect(QRectF(x, y + 3, self.SWATCH, self.SWATCH - 6), rail_color(rail))
            p.drawText(QRectF(x + self.SWATCH + 2, y, 16, self.SWATCH), Qt.AlignLeft | Qt.AlignVCenter,
                       str(rail + 1))
        if self.management:
            y = 24 + ((len(self.rails) + 9) // 10) * (self.SWATCH + self.GAP)
            p.fillRect(QRectF(10, y + 3, self.SWATCH, self.SWATCH - 6), MANAGEMENT_COLOR)
            p.drawText(QRectF(10 + self.SWATCH + 4, y, self.width() - self.SWATCH - 24, self.SWATCH),
                       Qt.AlignLeft | Qt.AlignVCenter, "management (BMC/OOB)")
        p.end()
