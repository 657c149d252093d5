"""Graphics items of the canvas: what a component or a link looks like (they never change the model).

Sizes are in scene units (1 unit = 1 pixel at 100 % zoom). A rack is a frame whose members (servers,
switches, storage) are child items placed by their U slot; a server shows its NICs and DPUs as small
port badges along its bottom edge. Items paint less when small on screen (level of detail). Cables are no items of
their own: one :class:`designer.gui.cables.CableLayer` draws all of them.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem

from designer.topology.kinds import KIND_LABEL
from designer.topology.layout import (MEMBER_W, MIN_H, PORT_BOX_W, RACK_HEADER, U_PX, box_height,
                                      member_offset, rack_size)
from designer.topology.model import Component

GRID = 20.0
#: kinds drawn inside their rack's frame; switches and storage in a rack stay where the fabric
#: diagram puts them and their rack shows the U they take as a grey bar
DRAWN_IN_RACK = ("gpu_server",)
BADGE_W, BADGE_H, BADGE_GAP = 16.0, 12.0, 2.0
LABEL_LOD = 0.45        # below this zoom, no text
DETAIL_LOD = 0.3        # below this zoom, no port badges

SELECT = QColor("#1e66f5")
TIER_COLOR = {"core": QColor("#7b4fa0"), "spine": QColor("#2f6fb0"), "leaf": QColor("#23897d")}
KIND_COLOR = {
    "rack": QColor("#4b5563"),
    "gpu_server": QColor("#5a8a1f"),
    "storage": QColor("#b86e1d"),
    "dpu": QColor("#76b900"),
    "nic": QColor("#3b82c4"),
}
#: cable colours, opaque (blending 40,000 translucent lines costs ten times more); light enough that
#: boxes stay in front
MEDIUM_COLOR = {
    "infiniband": QColor("#8fb0d3"),
    "ethernet": QColor("#d9b48c"),
    "nvlink": QColor("#a9c48c"),
    "pcie": QColor("#b5b5b5"),
}
#: the management network's cables (``designer.topology.management``): a muted light grey, drawn
#: thin under the fabric's colours, since they carry no training traffic
MANAGEMENT_COLOR = QColor("#d4d4d4")
SEVERITY_COLOR = {"error": QColor("#d32f2f"), "warning": QColor("#f2a900")}
#: utilization colour scale, low to high: ColorBrewer "RdYlGn" 9-class scheme, reversed (Brewer,
#: colorbrewer2.org); its lightness peaks at the yellow middle and falls to both ends
UTIL_COLORS = [QColor(c) for c in ("#1a9850", "#66bd63", "#a6d96a", "#d9ef8b", "#fee08b",
                                   "#fdae61", "#f46d43", "#d73027", "#a50026")]
BOTTLENECK = QColor("#e6007e")   # outline of components and cables marked as bottlenecks

_LABEL_FONT = QFont()
_LABEL_FONT.setPointSizeF(8.5)
_BOLD_FONT = QFont(_LABEL_FONT)
_BOLD_FONT.setBold(True)
_SMALL_FONT = QFont(_LABEL_FONT)
_SMALL_FONT.setPointSizeF(6.0)


def _cosmetic(color: QColor, width: float) -> QPen:
    pen = QPen(color, width)
    pen.setCosmetic(True)
    return pen


# pens, brushes and rects that items draw with on every frame, made once
_RACK_PENS = {False: QPen(KIND_COLOR["rack"], 1.5), True: QPen(SELECT, 3)}   # by selected/highlit
_RACK_FILL = {False: QBrush(QColor("#f3f4f6")), True: QBrush(QColor("#e3f0ff"))}  # by highlit
_BADGE = QRectF(0, 0, BADGE_W, BADGE_H)
_BOX_STYLE: dict[tuple[int, str, bool], QPen | QBrush] = {}


def _box_pen(color: QColor, strong: bool) -> QPen:
    """Outline of a box of ``color``; ``strong``: selected or highlighted."""
    key = (color.rgba(), "pen", strong)
    if key not in _BOX_STYLE:
        _BOX_STYLE[key] = QPen(SELECT, 2.5) if strong else QPen(color.darker(115), 1.2)
    return _BOX_STYLE[key]


def _box_brush(color: QColor, highlight: bool) -> QBrush:
    key = (color.rgba(), "brush", highlight)
    if key not in _BOX_STYLE:
        _BOX_STYLE[key] = QBrush(QColor("#dbe7ff") if highlight else color.lighter(185))
    return _BOX_STYLE[key]


_BADGE_PENS = {(kind, selected): QPen(SELECT, 2) if selected else QPen(KIND_COLOR[kind].darker(140), 0.8)
               for kind in ("dpu", "nic") for selected in (False, True)}


def anchor(rect: QRectF, toward: QPointF) -> QPointF:
    """Where a cable to ``toward`` leaves a box (scene rect): the middle of its top or bottom."""
    y = rect.top() if toward.y() < rect.center().y() else rect.bottom()
    return QPointF(rect.center().x(), y)


def snap(value: float) -> float:
    return round(value / GRID) * GRID


def kind_color(comp: Component, resolved: dict) -> QColor:
    if comp.kind == "switch":
        return TIER_COLOR.get(resolved.get("tier", "leaf"), TIER_COLOR["leaf"])
    return KIND_COLOR[comp.kind]


class ComponentItem(QGraphicsItem):
    """Base of every component item: knows its component id, figures and validation marks."""

    def __init__(self, comp: Component, resolved: dict) -> None:
        super().__init__()
        self.cid = comp.id
        self.comp = comp
        self.resolved = resolved
        self.problems: list = []
        self.highlight = False
        self.marked = False
        self.in_rack = False
        self.ghosts: list[tuple[int, float, str]] = []
        self._shape: tuple[QRectF, QRectF] | None = None  # (body, bounding rect) until resized
        self._color = kind_color(comp, resolved)
        self._size = self.size_for(comp, resolved)
        self.setFlag(QGraphicsItem.ItemIsSelectable)
        self.setAcceptHoverEvents(False)

    # ------------------------------------------------------------- geometry
    def units(self) -> float:
        return float(self.resolved.get("rack_units_used", 1) or 1)

    def size_for(self, comp: Component, resolved: dict) -> tuple[float, float]:
        units = float(resolved.get("rack_units_used", 1) or 1)
        return MEMBER_W, units * U_PX if getattr(self, "in_rack", False) else box_height(units)

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt's name
        return self.shape_rects()[1]

    def outline(self) -> QRectF:
        """The bounding rect: the body and room for marks and the selection pen."""
        return self.body().adjusted(-6, -8, 8, 6)

    def body(self) -> QRectF:
        w, h = self._size
        return QRectF(-w / 2, -h / 2, w, h)

    def shape_rects(self) -> tuple[QRectF, QRectF]:
        """(body, bounding rect), kept until the size changes: Qt asks for the bounding rect of
        every item it draws, every frame (thousands far out)."""
        if self._shape is None:
            self._shape = (self.body(), self.outline())
        return self._shape

    def scene_body(self) -> QRectF:
        return self.mapRectToScene(self.body())

    def set_in_rack(self, in_rack: bool) -> None:
        if in_rack != self.in_rack:
            self.in_rack = in_rack
            self.refresh(self.comp, self.resolved)

    def refresh(self, comp: Component, resolved: dict) -> None:
        self.comp, self.resolved = comp, resolved
        self._color = kind_color(comp, resolved)
        size = self.size_for(comp, resolved)
        if size != self._size:
            self.prepareGeometryChange()
            self._size = size
            self._shape = None
        self.update()
        boxes = getattr(self.scene(), "boxes", None)
        if boxes is not None:  # far out: its place in the picture drawn anew
            boxes.touched(self)

    def set_problems(self, problems: list) -> None:
        self.problems = problems
        self.update()

    def tooltip(self) -> str:
        """Its problems, or what it is (the scene shows it on hover)."""
        return "\n".join(f"{p.severity}: {p.message}" + (f"\n  → {p.hint}" if p.hint else "")
                         for p in self.problems) or self.tooltip_text()

    def tooltip_text(self) -> str:
        model = self.comp.model
        return f"{KIND_LABEL[self.comp.kind]} {self.comp.label} ({model})"

    def set_highlight(self, on: bool) -> None:
        if on != self.highlight:
            self.highlight = on
            self._restyled()

    def set_marked(self, on: bool) -> None:
        """Outline the item as a bottleneck (the utilization overlay)."""
        if on != self.marked:
            self.marked = on
            self._restyled()

    def _restyled(self) -> None:
        """Its look changed: repainted, by itself or (far out) by the scene's box layer, which
        draws it on top of its picture while it is highlighted or marked."""
        self.update()
        boxes = getattr(self.scene(), "boxes", None)
        if boxes is not None:
            boxes.restyled(self)

    # -------------------------------------------------------------- painting
    def subtitle(self) -> str:
        return self.comp.model

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        color = self._color
        rect = self.shape_rects()[0]
        selected = self.isSelected()  # what option.state says, without slow enum arithmetic
        if lod < DETAIL_LOD:
            self.paint_far(painter, rect, selected, self.highlight, self.marked)
            return
        painter.setPen(_box_pen(color, selected or self.highlight))
        painter.setBrush(_box_brush(color, self.highlight))
        painter.drawRoundedRect(rect, 4, 4)
        painter.fillRect(QRectF(rect.left() + 1, rect.top() + 1, 5, rect.height() - 2), color)
        if lod >= LABEL_LOD:
            self.paint_labels(painter, rect)
        if self.problems:
            self.paint_marker(painter, rect)
        self.paint_mark(painter, rect)

    def paint_far(self, painter: QPainter, rect: QRectF, selected: bool, highlight: bool,
                  marked: bool) -> None:
        """How the box looks far out (zoom below ``DETAIL_LOD``): a block of its kind's colour
        (the selection's when selected) and the bottleneck outline when ``marked``; ``rect`` is its
        body in the painter's coordinates. The item's own paint far out (an export) and the
        scene's box layer (:class:`designer.gui.boxes.BoxLayer`, on screen: its picture in the
        plain state, the selected, highlighted, marked and moving boxes on top) both draw this."""
        painter.fillRect(rect, SELECT if selected else self._color)
        if marked:
            self.paint_mark(painter, rect, True)

    def paint_mark(self, painter: QPainter, rect: QRectF, marked: bool | None = None) -> None:
        if self.marked if marked is None else marked:
            painter.setPen(_cosmetic(BOTTLENECK, 3.0))
            painter.setBrush(Qt.NoBrush)
            painter.drawRect(rect.adjusted(-3, -3, 3, 3))

    def paint_labels(self, painter: QPainter, rect: QRectF) -> None:
        painter.setPen(QColor("#1f2328"))
        if rect.height() < 16:
            painter.setFont(_SMALL_FONT)
            painter.drawText(rect.adjusted(10, 0, -4, 0), Qt.AlignLeft | Qt.AlignVCenter,
                             f"{self.comp.label}  {self.subtitle()}")
            return
        painter.setFont(_BOLD_FONT)
        text_rect = rect.adjusted(10, 2, -4, 0)
        painter.drawText(QRectF(text_rect.left(), text_rect.top(), text_rect.width(), 15),
                         Qt.AlignLeft | Qt.AlignVCenter, self.comp.label)
        if rect.height() >= 30:
            painter.setFont(_LABEL_FONT)
            painter.setPen(QColor("#4b5563"))
            painter.drawText(QRectF(text_rect.left(), text_rect.top() + 14, text_rect.width(), 14),
                             Qt.AlignLeft | Qt.AlignVCenter, self.subtitle())

    def paint_marker(self, painter: QPainter, rect: QRectF) -> None:
        severity = "error" if any(p.severity == "error" for p in self.problems) else "warning"
        center = QPointF(rect.right() - 1, rect.top() + 1)
        painter.setPen(QPen(Qt.white, 1.5))
        painter.setBrush(SEVERITY_COLOR[severity])
        painter.drawEllipse(center, 7, 7)
        painter.setFont(_BOLD_FONT)
        painter.drawText(QRectF(center.x() - 7, center.y() - 7, 14, 14), Qt.AlignCenter, "!")


class ServerItem(ComponentItem):
    """A GPU server; its NICs and DPUs are :class:`PortItem` children along the bottom edge."""

    def subtitle(self) -> str:
        gpus = self.resolved.get("gpu_count", "?")
        gpu = str(self.resolved.get("gpu_model", "")).upper()
        return f"{gpus}× {gpu}"

    def badge_pos(self, index: int, count: int) -> QPointF:
        """Top-left of the ``index``-th of ``count`` port badges (they overlap a little when many)."""
        return QPointF(*self.badge_corners(count)[index])

    def badge_corners(self, count: int) -> list[tuple[float, float]]:
        """Top-left (x, y) of each of ``count`` port badges, in the server's coordinates."""
        r = self.body()
        step = min(BADGE_W + BADGE_GAP, (r.width() - 12 - BADGE_W) / max(1, count - 1))
        left, top = r.left() + 9, r.bottom() - BADGE_H - 3
        return [(left + i * step, top) for i in range(count)]


class SwitchItem(ComponentItem):
    def subtitle(self) -> str:
        r = self.resolved
        return f"{r.get('tier', 'leaf')} · {r.get('ports', '?')}×{r.get('port_speed_Gbps', 0):g}G"


class StorageItem(ComponentItem):
    def subtitle(self) -> str:
        return f"{self.resolved.get('capacity_TB', 0):g} TB · {self.comp.model}"


class RackItem(ComponentItem):
    """A rack frame; members are child items placed by slot (U 1 at the bottom)."""

    def height_U(self) -> float:
        return float(self.resolved.get("rack_units", 42) or 42)

    def size_for(self, comp, resolved):
        return rack_size(float(resolved.get("rack_units", 42) or 42))

    def member_pos(self, slot: int, units: float) -> QPointF:
        return QPointF(*member_offset(self.height_U(), slot, units))

    def slot_at(self, local_y: float, units: float) -> int:
        """The slot of a member whose centre is at ``local_y`` (rack coordinates)."""
        top = local_y - units * U_PX / 2 + self._size[1] / 2
        top_u = self.height_U() - (top - RACK_HEADER) / U_PX
        return max(1, int(round(top_u - units + 1)))

    def paint_far(self, painter, rect, selected, highlight, marked) -> None:
        """The frame, its fill and its header bar (and the bottleneck outline when ``marked``):
        the rack as drawn at every zoom, without the labels and member bars of nearer zooms."""
        strong = highlight or selected
        painter.setPen(_RACK_PENS[strong])
        painter.setBrush(_RACK_FILL[highlight])
        painter.drawRect(rect)
        painter.fillRect(QRectF(rect.left(), rect.top(), rect.width(), RACK_HEADER),
                         SELECT if strong else KIND_COLOR["rack"])
        if marked:
            self.paint_mark(painter, rect, True)

    def paint(self, painter, option, widget=None) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        rect = self.shape_rects()[0]
        if lod < DETAIL_LOD:
            self.paint_far(painter, rect, self.isSelected(), self.highlight, self.marked)
            return
        self.paint_far(painter, rect, self.isSelected(), self.highlight, False)
        header = QRectF(rect.left(), rect.top(), rect.width(), RACK_HEADER)
        if lod >= LABEL_LOD:
            painter.setPen(Qt.white)
            painter.setFont(_BOLD_FONT)
            painter.drawText(header.adjusted(8, 0, -6, 0), Qt.AlignLeft | Qt.AlignVCenter,
                             f"{self.comp.label}  ({self.height_U():g}U)")
        if lod >= DETAIL_LOD:
            painter.setPen(Qt.NoPen)
            painter.setBrush(QColor("#d5d9e0"))
            for slot, units, label in self.ghosts:
                center = QPointF(*member_offset(self.height_U(), slot, units))
                bar = QRectF(center.x() - MEMBER_W / 2, center.y() - units * U_PX / 2 + 1,
                             MEMBER_W, units * U_PX - 2)
                painter.drawRect(bar)
                if lod >= LABEL_LOD:
                    painter.setPen(QColor("#4b5563"))
                    painter.setFont(_SMALL_FONT)
                    painter.drawText(bar.adjusted(6, 0, 0, 0), Qt.AlignLeft | Qt.AlignVCenter, label)
                    painter.setPen(Qt.NoPen)
        if self.problems:
            self.paint_marker(painter, rect)
        self.paint_mark(painter, rect)


class PortItem(ComponentItem):
    """A NIC or DPU: a badge on its server, or a small box of its own when not attached."""

    def __init__(self, comp, resolved) -> None:
        super().__init__(comp, resolved)
        self.attached = False

    def size_for(self, comp, resolved):
        return (BADGE_W, BADGE_H) if getattr(self, "attached", False) else (PORT_BOX_W, MIN_H)

    def set_attached(self, attached: bool) -> None:
        if attached != self.attached:
            self.prepareGeometryChange()
            self.attached = attached
            self._size = self.size_for(self.comp, self.resolved)
            self._shape = None
            self.setZValue(1 if attached else 0)

    def body(self) -> QRectF:
        if self.attached:  # a badge's origin is its top-left corner on the server
            return QRectF(0, 0, BADGE_W, BADGE_H)
        return super().body()

    def outline(self) -> QRectF:
        if self.attached:
            return QRectF(-6, -6, BADGE_W + 12, BADGE_H + 12)
        return super().outline()

    def subtitle(self) -> str:
        r = self.resolved
        return f"{r.get('ports', '?')}×{r.get('port_speed_Gbps', 0):g}G {r.get('medium', '')}"

    def paint(self, painter, option, widget=None) -> None:
        if not self.attached:
            super().paint(painter, option, widget)
            return
        selected = self.isSelected()
        kind = self.comp.kind
        painter.setPen(_BADGE_PENS[kind, selected])
        painter.setBrush(KIND_COLOR[kind])
        painter.drawRect(_BADGE)
        if option.levelOfDetailFromTransform(painter.worldTransform()) >= 1.2:
            painter.setPen(Qt.white)
            font = QFont(_BOLD_FONT)
            font.setPointSizeF(5)
            painter.setFont(font)
            painter.drawText(QRectF(0, 0, BADGE_W, BADGE_H), Qt.AlignCenter,
                             "D" if self.comp.kind == "dpu" else "N")
        if self.problems:
            painter.setPen(Qt.NoPen)
            painter.setBrush(SEVERITY_COLOR["error" if any(p.severity == "error" for p in self.problems)
                                             else "warning"])
            painter.drawEllipse(QPointF(BADGE_W, 0), 3.5, 3.5)
        if self.marked:
            self.paint_mark(painter, _BADGE)


ITEM_CLASS = {"rack": RackItem, "gpu_server": ServerItem, "switch": SwitchItem,
              "storage": StorageItem, "dpu": PortItem, "nic": PortItem}
