"""The canvas view: zoom about the cursor, pan, rubber-band selection, moving, dropping from the
palette, and connect mode (drag from one item to another to lay a cable).

The view turns gestures into :class:`~designer.gui.editor.Editor` calls; it changes no model itself.
The viewport is a raster widget; ``DPU_DESIGNER_OPENGL=1`` asks for an OpenGL one (not offscreen).
"""

from __future__ import annotations

import json
import os

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QCursor, QPainter, QPen
from PySide6.QtWidgets import (QApplication, QGraphicsItem, QGraphicsLineItem, QGraphicsView, QMenu,
                               QWidget)

from designer.gui.editor import Editor, RefusedEdit
from designer.gui.items import BOTTLENECK, DETAIL_LOD, GRID, UTIL_COLORS, ComponentItem
from designer.gui.overview import Minimap, RailLegend, key_painter
from designer.gui.scene import LINK_PICK_PX, DesignScene

PALETTE_MIME = "application/x-dpu-designer-component"
MIN_SCALE, MAX_SCALE = 0.02, 6.0
LINK_MEDIUM_LABEL = {"infiniband": "InfiniBand", "ethernet": "Ethernet"}


class CanvasView(QGraphicsView):
    """Shows a :class:`DesignScene`; ``connect_mode`` switches dragging from moving to cabling."""

    message = Signal(str)
    zoomed = Signal(float)
    connect_mode_changed = Signal(bool)  #: connect mode went on or off (the toolbar button follows)
    #: time a frame spends making the NIC/DPU badges of servers that came into view (ms)
    BADGE_BUDGET_MS = 8.0
    #: whether the last frame left badges in view to make (the next frames make them)
    badges_pending = False

    def __init__(self, scene: DesignScene, editor: Editor, parent=None) -> None:
        super().__init__(scene, parent)
        self.editor = editor
        if os.environ.get("DPU_DESIGNER_OPENGL") == "1":
            from PySide6.QtOpenGLWidgets import QOpenGLWidget

            self.setViewport(QOpenGLWidget())
        self.setRenderHint(QPainter.Antialiasing, True)
        self.setRenderHint(QPainter.TextAntialiasing, True)
        self.setViewportUpdateMode(QGraphicsView.SmartViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.DontSavePainterState, True)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.AnchorViewCenter)
        self.setDragMode(QGraphicsView.RubberBandDrag)
        self.setRubberBandSelectionMode(Qt.ContainsItemShape)
        self.setAcceptDrops(True)
        self.setBackgroundBrush(QColor("#fbfbfc"))
        self.connect_mode = False
        self._wire: QGraphicsLineItem | None = None
        self._wire_from: str | None = None
        self._press_pos: dict[str, QPointF] = {}
        self._highlighted: ComponentItem | None = None
        self._pan_from: QPointF | None = None
        self._band_from: QPointF | None = None
        #: a press on a cable: (link id, adding, viewport point); a click picks it, a drag bands
        self._link_press: tuple[str, bool, QPointF] | None = None
        #: the design is fitted to the view again at every resize until the user zooms or pans
        #: (the window gets its real size only after it is shown, under a window manager even later)
        self.fit_pending = False
        self.legend = UtilizationLegend(self.viewport(), scene)
        self.rail_legend = RailLegend(self.viewport())
        self.minimap = Minimap(self)
        scene.overlay_changed.connect(self._show_legend)
        scene.rebuilt.connect(self.minimap.invalidate)
        self._show_legend()

    @property
    def dscene(self) -> DesignScene:
        return self.scene()  # type: ignore[return-value]

    # ------------------------------------------------------------------ zoom
    def scale_factor(self) -> float:
        return self.transform().m11()

    def zoom(self, factor: float, about: QPointF | None = None) -> None:
        """Zoom by ``factor``, keeping the scene point under viewport point ``about`` in place
        (default: the centre)."""
        self.fit_pending = False
        new = min(MAX_SCALE, max(MIN_SCALE, self.scale_factor() * factor))
        factor = new / self.scale_factor()
        if factor == 1.0:
            return
        if about is None:
            about = QPointF(self.viewport().rect().center())
        before = self.mapToScene(about.toPoint())
        self.setTransformationAnchor(QGraphicsView.NoAnchor)
        self.scale(factor, factor)
        after = self.mapToScene(about.toPoint())
        self.translate(after.x() - before.x(), after.y() - before.y())
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self._after_zoom()

    def fit_design(self) -> None:
        """Fit the design to the view now and at every resize until the user zooms or pans (a
        newly opened design)."""
        self.fit_pending = True
        self.zoom_to_fit()

    def zoom_to_fit(self) -> None:
        rect = self.dscene.content_rect()
        if rect.isNull():
            return
        self._fitting = True  # the map is placed once fitted, not at the scrolls on the way
        try:
            self.fitInView(rect.adjusted(-40, -40, 40, 40), Qt.KeepAspectRatio)
            if self.scale_factor() > 1.5:
                self.resetTransform()
                self.scale(1.5, 1.5)
                self.centerOn(rect.center())
        finally:
            self._fitting = False
        self._after_zoom()

    _fitting = False

    def zoom_reset(self) -> None:
        self.fit_pending = False
        self.resetTransform()
        self._after_zoom()

    def _after_zoom(self) -> None:
        self.setRenderHint(QPainter.Antialiasing, self.scale_factor() >= 0.6)  # cheaper far out
        self.dscene.set_detail(self.scale_factor())
        self.minimap.place()
        self.zoomed.emit(self.scale_factor())

    def wheelEvent(self, event) -> None:  # noqa: N802
        delta = event.angleDelta().y()
        if delta:
            self.zoom(1.0015 ** delta, event.position())
        event.accept()

    def center_on_id(self, comp_or_link: str) -> None:
        rect = self.dscene.bounds_of(comp_or_link)
        if rect is None:
            return
        self.fit_pending = False
        if self.scale_factor() < 0.6:
            self.resetTransform()
            self.scale(0.8, 0.8)
            self._after_zoom()
        self.centerOn(rect.center())

    def _show_legend(self) -> None:
        self.legend.scene = self.dscene
        self.legend._sync()
        self.legend.setVisible(self.dscene.overlay is not None)
        self.rail_legend.set_rails(self.dscene.rails, management=any(
            getattr(c, "mgmt", False) for c in self.dscene.link_items.values()))
        self.rail_legend.setVisible(self.dscene.overlay is None and bool(self.dscene.rails))
        self._place_legend()

    def _place_legend(self, minimap: bool = True) -> None:
        self.legend.adjustSize()
        self.legend.move(8, self.viewport().height() - self.legend.height() - 8)
        self.rail_legend.move(8, self.viewport().height() - self.rail_legend.height() - 8)
        if minimap:
            self.minimap.place()

    def paintEvent(self, event) -> None:  # noqa: N802
        if self.scale_factor() >= DETAIL_LOD:  # the badges of the servers in view, made lazily,
            # a few milliseconds' worth a frame (the rest in the next frames, asked for here)
            shown = self.mapToScene(self.viewport().rect()).boundingRect()
            self.badges_pending = not self.dscene.ensure_badges(shown, self.BADGE_BUDGET_MS)
            if self.badges_pending:
                QTimer.singleShot(0, self.viewport().update)
        else:
            self.badges_pending = False
        super().paintEvent(event)

    def scrollContentsBy(self, dx: int, dy: int) -> None:  # noqa: N802
        super().scrollContentsBy(dx, dy)
        # the viewport scrolls its child widgets with the picture: the keys go back to their
        # corner (seen under X: the rail key half out of the canvas after a fit)
        self._place_legend(minimap=not self._fitting)

    def resizeEvent(self, event) -> None:  # noqa: N802
        fitting, self._fitting = self._fitting, True  # the map placed at the end, as it ends up
        try:
            super().resizeEvent(event)
        finally:
            self._fitting = fitting
        if self.fit_pending and self.viewport().width() > 50 and self.viewport().height() > 50:
            self.zoom_to_fit()
        self._place_legend()

    # ---------------------------------------------------------- connect mode
    def set_connect_mode(self, on: bool) -> None:
        on = bool(on)
        self.cancel_wire()
        changed = on != self.connect_mode
        self.connect_mode = on
        self.setDragMode(QGraphicsView.NoDrag if on else QGraphicsView.RubberBandDrag)
        self.viewport().setCursor(Qt.CrossCursor if on else Qt.ArrowCursor)
        self.message.emit("Connect mode: drag from one item to another (Esc cancels)" if on else "")
        if changed:
            self.connect_mode_changed.emit(on)

    def cancel_wire(self) -> None:
        if self._wire is not None:
            self.dscene.removeItem(self._wire)
            self._wire = None
            self._wire_from = None
        self._set_highlight(None)

    def _set_highlight(self, item: ComponentItem | None) -> None:
        if self._highlighted is not None and self._highlighted is not item:
            self._highlighted.set_highlight(False)
        self._highlighted = item
        if item is not None:
            item.set_highlight(True)

    def _connect_target(self, scene_pos: QPointF) -> ComponentItem | None:
        return self.dscene.component_at(scene_pos, exclude={self._wire_from})

    # ----------------------------------------------------------------- mouse
    def mousePressEvent(self, event) -> None:  # noqa: N802
        scene_pos = self.mapToScene(event.position().toPoint())
        if event.button() == Qt.MiddleButton:
            self.fit_pending = False
            self._pan_from = event.position()
            self.viewport().setCursor(Qt.ClosedHandCursor)
            event.accept()
            return
        if self.connect_mode and event.button() == Qt.LeftButton:
            item = self.dscene.component_at(scene_pos)
            if item is not None:
                self._wire_from = item.cid
                start = item.sceneBoundingRect().center()
                self._wire = QGraphicsLineItem(QLineF(start, scene_pos))
                pen = QPen(QColor("#1e66f5"), 2, Qt.DashLine)
                pen.setCosmetic(True)
                self._wire.setPen(pen)
                self._wire.setZValue(10)
                self.dscene.addItem(self._wire)
            event.accept()
            return
        if event.button() == Qt.LeftButton:
            adding = bool(event.modifiers() & (Qt.ControlModifier | Qt.ShiftModifier))
            self._link_press = None
            if self.dscene.component_at(scene_pos) is None:
                # off the components a rubber band starts, even on a cable: a click (no drag)
                # on a cable picks the cable when the button is released
                lid = self.dscene.link_at(scene_pos, LINK_PICK_PX / self.scale_factor())
                if lid is not None:
                    self._link_press = (lid, adding, event.position())
                self._band_from = scene_pos
            if not adding:
                self.dscene.set_selected_links(())
        super().mousePressEvent(event)
        if event.button() == Qt.LeftButton:
            self._press_pos = {i.cid: i.scenePos() for i in self.dscene.selectedItems()
                               if isinstance(i, ComponentItem) and i.flags() & QGraphicsItem.ItemIsMovable}

    def mouseMoveEvent(self, event) -> None:  # noqa: N802
        scene_pos = self.mapToScene(event.position().toPoint())
        if self._pan_from is not None:
            delta = event.position() - self._pan_from
            self._pan_from = event.position()
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() - int(delta.x()))
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() - int(delta.y()))
            return
        if self._wire is not None:
            line = self._wire.line()
            self._wire.setLine(QLineF(line.p1(), scene_pos))
            target = self._connect_target(scene_pos)
            self._set_highlight(target)
            if target is not None:
                try:
                    link = self.editor.check_link(self._wire_from, target.cid)
                    self.message.emit(f"Release to connect {link.a} – {link.b} "
                                      f"({link.medium}, {link.speed_Gbps:g} Gb/s)")
                except RefusedEdit as exc:
                    self.message.emit(f"Cannot connect: {exc}")
            return
        super().mouseMoveEvent(event)
        if self._press_pos and event.buttons() & Qt.LeftButton and self.dscene.mouseGrabberItem():
            moving = list(self._press_pos)
            self.dscene.refresh_links([c for cid in moving for c in self.dscene.subtree(cid)])
            self._set_highlight(self._drop_container(scene_pos, moving))

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802
        scene_pos = self.mapToScene(event.position().toPoint())
        if event.button() == Qt.MiddleButton and self._pan_from is not None:
            self._pan_from = None
            self.viewport().setCursor(Qt.CrossCursor if self.connect_mode else Qt.ArrowCursor)
            return
        if self._wire is not None:
            source = self._wire_from
            target = self._connect_target(scene_pos)
            self.cancel_wire()
            if target is not None:
                self.connect_items(source, target.cid, event.position().toPoint())
            return
        super().mouseReleaseEvent(event)
        press, self._link_press = self._link_press, None
        if self._band_from is not None and event.button() == Qt.LeftButton:
            band = QRectF(self._band_from, scene_pos).normalized()
            self._band_from = None
            moved = (event.position() - press[2]).manhattanLength() if press else 0.0
            if press is not None and moved < QApplication.startDragDistance():
                self.dscene.pick_link(press[0], toggle=press[1])  # a click on a cable
            else:  # the rubber band also takes the cables wholly inside it
                self.dscene.set_selected_links(self.dscene.links_in(band), add=True)
        if event.button() == Qt.LeftButton and self._press_pos:
            self._finish_move(scene_pos)
        self._press_pos = {}
        self._set_highlight(None)

    def connect_items(self, source: str, target: str, at=None) -> str | None:
        """Lay a cable from ``source`` to ``target``; where several fit (a server's NICs/DPUs,
        InfiniBand or Ethernet on VPI adapters) the user picks one (:meth:`choose_link`)."""
        try:
            options = self.editor.link_options(source, target)
        except RefusedEdit as exc:
            self.message.emit(f"Not done: {exc}")
            return None
        option = options[0] if len(options) == 1 else self.choose_link(options, at)
        if option is None:
            self.message.emit("Connection cancelled")
            return None
        made = None

        def lay():
            nonlocal made
            made = self.editor.connect(option.a, option.b, option)

        if self._try(lay, f"Connected {option.a} – {option.b} ({option.medium}, "
                          f"{option.speed_Gbps:g} Gb/s)"):
            return made
        return None

    def choose_link(self, options: list, at=None):
        """Ask which of several possible cables to lay (a menu at the pointer); None: cancelled."""
        menu = QMenu(self)
        menu.addSection("Connect with")
        for option in options:
            text = (f"{option.a} port {option.a_port} – {option.b} port {option.b_port}: "
                    f"{LINK_MEDIUM_LABEL.get(option.medium, option.medium)}, {option.speed_Gbps:g} Gb/s")
            menu.addAction(text).setData(options.index(option))
        where = self.viewport().mapToGlobal(at) if at is not None else QCursor.pos()
        chosen = menu.exec(where)
        return options[chosen.data()] if chosen is not None else None

    def _finish_move(self, scene_pos: QPointF) -> None:
        items = self.dscene.comp_items
        moved = {cid: items[cid].scenePos() for cid in self._press_pos if cid in items}
        if all((moved[c] - p).manhattanLength() < 1 for c, p in self._press_pos.items() if c in moved):
            return
        container = self._drop_container(scene_pos, list(moved))
        topo = self.editor.topo
        if container is None and any(topo.components[c].parent for c in moved):
            # a rack member dropped outside any rack leaves it; one moved inside its rack changes slot
            rack = self.dscene.component_at(scene_pos, kinds=("rack",), exclude=set(moved))
            if rack is not None and len(moved) == 1:
                cid = next(iter(moved))
                item = items[cid]
                slot = rack.slot_at(rack.mapFromScene(moved[cid]).y(),
                                    float(item.resolved.get("rack_units_used", 1) or 1))
                self._try(lambda: self.editor.set_slot(cid, rack.cid, slot), None)
                return
        into = container.cid if container is not None else None
        positions = {c: (p.x(), p.y()) for c, p in moved.items()}
        if not self._try(lambda: self.editor.move(positions, into=into), None):
            self.dscene.refresh_links([c for cid in moved for c in self.dscene.subtree(cid)])

    def _drop_container(self, scene_pos: QPointF, moving: list[str]) -> ComponentItem | None:
        """The rack a dragged server/switch/storage would go into (not its current rack)."""
        topo = self.editor.topo
        kinds = {topo.components[c].kind for c in moving if c in topo.components}
        if not kinds or not kinds <= {"gpu_server", "switch", "storage"}:
            return None
        rack = self.dscene.component_at(scene_pos, kinds=("rack",), exclude=set(moving))
        if rack is None or all(topo.components[c].parent == rack.cid for c in moving):
            return None
        return rack

    def _try(self, action, success: str | None) -> bool:
        """Run an editor action; a refusal is shown (the editor's ``refused`` signal) not raised."""
        try:
            action()
        except RefusedEdit as exc:
            self.message.emit(f"Not done: {exc}")
            for cid, pos in self._press_pos.items():  # put dragged items back
                item = self.dscene.comp_items.get(cid)
                if item is not None and item.parentItem() is None:
                    item.setPos(pos)
            return False
        if success:
            self.message.emit(success)
        return True

    def keyPressEvent(self, event) -> None:  # noqa: N802
        if event.key() == Qt.Key_Escape:
            if self._wire is not None:
                self.cancel_wire()
                self.message.emit("Connection cancelled")
            elif self.connect_mode:
                self.set_connect_mode(False)
            else:
                self.dscene.clearSelection()
            event.accept()
            return
        super().keyPressEvent(event)

    # ------------------------------------------------------------ drag & drop
    def _palette_payload(self, event) -> dict | None:
        if not event.mimeData().hasFormat(PALETTE_MIME):
            return None
        return json.loads(bytes(event.mimeData().data(PALETTE_MIME)).decode())

    def _palette_target(self, payload: dict, scene_pos: QPointF) -> ComponentItem | None:
        kind = payload["kind"]
        if kind in ("dpu", "nic"):
            return self.dscene.component_at(scene_pos, kinds=("gpu_server",))
        if kind in ("gpu_server", "switch", "storage"):
            return self.dscene.component_at(scene_pos, kinds=("rack",))
        return None

    def dragEnterEvent(self, event) -> None:  # noqa: N802
        if self._palette_payload(event) is not None:
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event) -> None:  # noqa: N802
        payload = self._palette_payload(event)
        if payload is None:
            super().dragMoveEvent(event)
            return
        self._set_highlight(self._palette_target(payload, self.mapToScene(event.position().toPoint())))
        event.acceptProposedAction()

    def dragLeaveEvent(self, event) -> None:  # noqa: N802
        self._set_highlight(None)
        super().dragLeaveEvent(event)

    def dropEvent(self, event) -> None:  # noqa: N802
        payload = self._palette_payload(event)
        if payload is None:
            super().dropEvent(event)
            return
        self._set_highlight(None)
        scene_pos = self.mapToScene(event.position().toPoint())
        self.drop_component(payload, scene_pos)
        event.acceptProposedAction()

    def drop_component(self, payload: dict, scene_pos: QPointF) -> str | None:
        """Place a palette entry at a scene point (into the rack or onto the server under it)."""
        target = self._palette_target(payload, scene_pos)
        new_id = None

        def place():
            nonlocal new_id
            new_id = self.editor.place(payload["kind"], payload["model"],
                                       (scene_pos.x() - GRID, scene_pos.y() - GRID),
                                       into=target.cid if target is not None else None,
                                       props=payload.get("props"))

        if self._try(place, None):
            self.dscene.select_ids([new_id])
            self.message.emit(f"Added {new_id}" + (f" to {target.cid}" if target is not None else ""))
        return new_id

    def drawBackground(self, painter: QPainter, rect: QRectF) -> None:  # noqa: N802
        super().drawBackground(painter, rect)
        if self.scale_factor() < 0.5:
            return
        step = GRID * (5 if self.scale_factor() < 1.0 else 1)
        painter.setPen(QPen(QColor("#e6e8eb"), 0))
        left = int(rect.left() // step) * step
        top = int(rect.top() // step) * step
        lines = []
        x = left
        while x < rect.right():
            lines.append(QLineF(x, rect.top(), x, rect.bottom()))
            x += step
        y = top
        while y < rect.bottom():
            lines.append(QLineF(rect.left(), y, rect.right(), y))
            y += step
        painter.drawLines(lines)



class UtilizationLegend(QWidget):
    """The colour scale of the utilization overlay, fixed in a corner of the canvas. It says what
    the colours show: the utilization averaged over the iteration, or the busiest phase's; when
    the run gave both, a click on the key switches (``DesignScene.set_overlay_view``)."""

    BAR_W, BAR_H = 200, 12
    TITLE = {"mean": "Link utilization, averaged over the iteration",
             "peak": "Link utilization in its busiest phase"}
    SWITCH = {"mean": "click: busiest phase instead", "peak": "click: averaged over the iteration"}

    def __init__(self, parent=None, scene: DesignScene | None = None) -> None:
        super().__init__(parent)
        self.scene = scene
        self.setFixedSize(self.BAR_W + 110, 88)
        self._sync()

    def _switchable(self) -> bool:
        return self.scene is not None and self.scene.overlay_peak is not None

    def _sync(self) -> None:
        """Cursor and tooltip as the scene's overlay allows (called when it changes)."""
        can = self._switchable()
        self.setAttribute(Qt.WA_TransparentForMouseEvents, not can)
        self.setCursor(Qt.PointingHandCursor if can else Qt.ArrowCursor)
        self.setToolTip("Click to switch between the utilization averaged over the iteration "
                        "and the utilization in each cable's busiest phase" if can else "")
        self.update()

    def view(self) -> str:
        return self.scene.overlay_view if self._switchable() else "mean"

    def mousePressEvent(self, event) -> None:  # noqa: N802
        if self._switchable() and event.button() == Qt.LeftButton:
            self.scene.set_overlay_view("peak" if self.scene.overlay_view == "mean" else "mean")
            event.accept()
            return
        super().mousePressEvent(event)

    def paintEvent(self, event) -> None:  # noqa: N802
        view = self.view() if self._switchable() else None
        title = self.TITLE[view] if view is not None else "Link utilization"
        p = key_painter(self, title, QRectF(12, 4, self.width() - 20, 16))
        step = self.BAR_W / len(UTIL_COLORS)
        for i, color in enumerate(UTIL_COLORS):
            p.fillRect(QRectF(12 + i * step, 22, step + 0.5, self.BAR_H), color)
        p.setPen(QColor("#4b5563"))
        labels = QRectF(12, 36, self.BAR_W, 14)
        for text, align in (("0 %", Qt.AlignLeft), ("50 %", Qt.AlignHCenter), ("100 %", Qt.AlignRight)):
            p.drawText(labels, align | Qt.AlignVCenter, text)
        p.setPen(QPen(BOTTLENECK, 3))
        p.setBrush(Qt.NoBrush)
        p.drawRect(QRectF(14, 56, 14, 10))
        p.setPen(QColor("#1f2328"))
        p.drawText(QRectF(36, 52, self.width() - 44, 18), Qt.AlignLeft | Qt.AlignVCenter,
                   "bottleneck (named by the engine)")
        if view is not None:
            p.setPen(QColor("#2563eb"))
            p.drawText(QRectF(12, 68, self.width() - 20, 16), Qt.AlignLeft | Qt.AlignVCenter, self.SWITCH[view])
        p.end()
