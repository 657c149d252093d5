"""Graphics items of the canvas: what a component or a link looks like (they never change the model).

Sizes are in scene units (1 unit = 1 pixel at 100 % zoom). A rack is a frame whose members (servers,
switches, storage) are child items placed by their U slot; a server shows its NICs and DPUs as small
port badges along its bottom edge. Items paint less when small on screen (level of detail), and a
link is a plain C++ line item so that 20,000 of them draw quickly.
"""

from __future__ import annotations

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsLineItem, QStyle, QStyleOptionGraphicsItem

from designer.topology.kinds import KIND_LABEL
from designer.topology.model import Component, Link

GRID = 20.0
U_PX = 10.0             # height of one rack unit
RACK_PAD = 6.0          # frame around rack members
RACK_HEADER = 20.0
MEMBER_W = 140.0        # width of a server/switch/storage item (layout_by_tier spaces boxes 170 apart)
MIN_H = 40.0            # height of a box that is not in a rack
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
MEDIUM_COLOR = {
    "infiniband": QColor(47, 111, 176, 150),
    "ethernet": QColor(184, 110, 29, 160),
    "nvlink": QColor(90, 138, 31, 170),
    "pcie": QColor(110, 110, 110, 160),
}
SEVERITY_COLOR = {"error": QColor("#d32f2f"), "warning": QColor("#f2a900")}

_LABEL_FONT = QFont()
_LABEL_FONT.setPointSizeF(8.5)
_BOLD_FONT = QFont(_LABEL_FONT)
_BOLD_FONT.setBold(True)
_SMALL_FONT = QFont(_LABEL_FONT)
_SMALL_FONT.setPointSizeF(6.0)


def snap(value: float) -> float:
    return round(value / GRID) * GRID


def rack_size(rack_units: float) -> tuple[float, float]:
    return MEMBER_W + 2 * RACK_PAD, RACK_HEADER + rack_units * U_PX + RACK_PAD


def member_offset(rack_units: float, slot: int, units: float) -> tuple[float, float]:
    """Centre of a rack member relative to the rack's centre (U 1 is at the bottom)."""
    w, h = rack_size(rack_units)
    top = RACK_HEADER + (rack_units - (slot + units - 1)) * U_PX
    return 0.0, -h / 2 + top + units * U_PX / 2


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
        self.in_rack = False
        self.ghosts: list[tuple[int, float, str]] = []
        self._size = self.size_for(comp, resolved)
        self.setFlag(QGraphicsItem.ItemIsSelectable)
        self.setAcceptHoverEvents(False)

    # ------------------------------------------------------------- geometry
    def units(self) -> float:
        return float(self.resolved.get("rack_units_used", 1) or 1)

    def size_for(self, comp: Component, resolved: dict) -> tuple[float, float]:
        height = float(resolved.get("rack_units_used", 1) or 1) * U_PX
        return MEMBER_W, height if getattr(self, "in_rack", False) else max(MIN_H, height)

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt's name
        return self.body().adjusted(-2, -8, 8, 2)

    def body(self) -> QRectF:
        w, h = self._size
        return QRectF(-w / 2, -h / 2, w, h)

    def anchor(self, toward: QPointF) -> QPointF:
        """Where a link to ``toward`` (scene point) leaves this item: top or bottom middle."""
        r = self.mapRectToScene(self.body())
        y = r.top() if toward.y() < r.center().y() else r.bottom()
        return QPointF(r.center().x(), y)

    def set_in_rack(self, in_rack: bool) -> None:
        if in_rack != self.in_rack:
            self.in_rack = in_rack
            self.refresh(self.comp, self.resolved)

    def refresh(self, comp: Component, resolved: dict) -> None:
        self.comp, self.resolved = comp, resolved
        size = self.size_for(comp, resolved)
        if size != self._size:
            self.prepareGeometryChange()
            self._size = size
        self.update()

    def set_problems(self, problems: list) -> None:
        self.problems = problems
        self.setToolTip("\n".join(f"{p.severity}: {p.message}" + (f"\n  → {p.hint}" if p.hint else "")
                                  for p in problems) or self.tooltip_text())
        self.update()

    def tooltip_text(self) -> str:
        model = self.comp.model
        return f"{KIND_LABEL[self.comp.kind]} {self.comp.label} ({model})"

    def set_highlight(self, on: bool) -> None:
        if on != self.highlight:
            self.highlight = on
            self.update()

    # -------------------------------------------------------------- painting
    def subtitle(self) -> str:
        return self.comp.model

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        color = kind_color(self.comp, self.resolved)
        rect = self.body()
        selected = bool(option.state & QStyle.State_Selected)
        if lod < DETAIL_LOD:
            painter.fillRect(rect, SELECT if selected else color)
            return
        painter.setPen(QPen(SELECT if selected or self.highlight else color.darker(115),
                            2.5 if selected or self.highlight else 1.2))
        painter.setBrush(QBrush(color.lighter(185) if not self.highlight else QColor("#dbe7ff")))
        painter.drawRoundedRect(rect, 4, 4)
        painter.fillRect(QRectF(rect.left() + 1, rect.top() + 1, 5, rect.height() - 2), color)
        if lod >= LABEL_LOD:
            self.paint_labels(painter, rect)
        if self.problems:
            self.paint_marker(painter, rect)

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
        r = self.body()
        step = min(BADGE_W + BADGE_GAP, (r.width() - 12 - BADGE_W) / max(1, count - 1))
        return QPointF(r.left() + 9 + index * step, r.bottom() - BADGE_H - 3)


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

    def paint(self, painter, option, widget=None) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        rect = self.body()
        selected = bool(option.state & QStyle.State_Selected)
        frame = SELECT if selected or self.highlight else KIND_COLOR["rack"]
        painter.setPen(QPen(frame, 3 if selected or self.highlight else 1.5))
        painter.setBrush(QColor("#e3f0ff") if self.highlight else QColor("#f3f4f6"))
        painter.drawRect(rect)
        header = QRectF(rect.left(), rect.top(), rect.width(), RACK_HEADER)
        painter.fillRect(header, frame)
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
        if self.problems and lod >= DETAIL_LOD:
            self.paint_marker(painter, rect)


class PortItem(ComponentItem):
    """A NIC or DPU: a badge on its server, or a small box of its own when not attached."""

    def __init__(self, comp, resolved) -> None:
        super().__init__(comp, resolved)
        self.attached = False

    def size_for(self, comp, resolved):
        return (BADGE_W, BADGE_H) if getattr(self, "attached", False) else (100.0, MIN_H)

    def set_attached(self, attached: bool) -> None:
        if attached != self.attached:
            self.prepareGeometryChange()
            self.attached = attached
            self._size = self.size_for(self.comp, self.resolved)
            self.setZValue(1 if attached else 0)

    def body(self) -> QRectF:
        if self.attached:  # a badge's origin is its top-left corner on the server
            return QRectF(0, 0, BADGE_W, BADGE_H)
        return super().body()

    def boundingRect(self) -> QRectF:  # noqa: N802
        if self.attached:
            return QRectF(-4, -4, BADGE_W + 8, BADGE_H + 8)
        return super().boundingRect()

    def subtitle(self) -> str:
        r = self.resolved
        return f"{r.get('ports', '?')}×{r.get('port_speed_Gbps', 0):g}G {r.get('medium', '')}"

    def paint(self, painter, option, widget=None) -> None:
        if not self.attached:
            super().paint(painter, option, widget)
            return
        selected = bool(option.state & QStyle.State_Selected)
        color = KIND_COLOR[self.comp.kind]
        painter.setPen(QPen(SELECT if selected else color.darker(140), 2 if selected else 0.8))
        painter.setBrush(color)
        painter.drawRect(QRectF(0, 0, BADGE_W, BADGE_H))
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


ITEM_CLASS = {"rack": RackItem, "gpu_server": ServerItem, "switch": SwitchItem,
              "storage": StorageItem, "dpu": PortItem, "nic": PortItem}


class LinkItem(QGraphicsLineItem):
    """A cable: a cosmetic line between the anchors of its two ends (painted in C++)."""

    def __init__(self, link: Link) -> None:
        super().__init__()
        self.lid = link.id
        self.link = link
        self.setFlag(QGraphicsItem.ItemIsSelectable)
        self.setZValue(-1)
        self.problems: list = []
        self.set_link(link)

    def set_link(self, link: Link) -> None:
        self.link = link
        self.restyle()
        self.setToolTip(f"{link.id}: {link.a} – {link.b}\n{link.medium}, {link.lanes}× {link.speed_Gbps:g} Gb/s")

    def restyle(self) -> None:
        if self.isSelected():
            pen = QPen(SELECT, 2.5)
        elif self.problems:
            pen = QPen(SEVERITY_COLOR["error"], 1.5)
        else:
            pen = QPen(MEDIUM_COLOR.get(self.link.medium, QColor("#666")), 1.0)
        pen.setCosmetic(True)
        self.setPen(pen)

    def set_problems(self, problems: list) -> None:
        self.problems = problems
        if problems:
            self.setToolTip("\n".join(f"{p.severity}: {p.message}" for p in problems))
        self.restyle()

    def set_ends(self, a: QPointF, b: QPointF) -> None:
        self.setLine(QLineF(a, b))
