"""Rack elevation: each rack drawn front-on with its U positions and what sits in them.

:func:`elevations` collects what to draw (no Qt); :func:`draw_racks` paints it into any QPainter
(the GUI's rack view, ``dpu-designer export --elevation`` via ``designer.report.export.save_picture``).
U 1 is at the bottom (as ``designer.topology.layout`` and the validator count); a member takes U
``slot`` to ``slot + rack_units_used - 1``. Racks are drawn left to right in canvas order (rows top
to bottom, then left to right), ``per_row`` to a row.
"""

from __future__ import annotations

from dataclasses import dataclass

from designer.topology.kinds import KIND_LABEL
from designer.topology.model import ATTACHABLE

#: picture geometry in pixels at scale 1
RACK_W = 230.0
U_H = 14.0
HEADER_H = 34.0
LABEL_W = 26.0   # U numbers on the left of each rack
GAP_X = 30.0
GAP_Y = 40.0
MARGIN = 20.0
RACKS_PER_ROW = 16

#: member fill colours by kind (light, so the black labels stay readable in print)
FILL = {"gpu_server": "#cfe3f7", "switch": "#f7dcb4", "storage": "#d7efd0"}


@dataclass(frozen=True)
class Member:
    id: str
    kind: str
    model: str
    slot: int
    units: int
    adapters: str  #: e.g. "8 DPU" or "8 NIC, 2 DPU" ('' for none)

    @property
    def top(self) -> int:
        return self.slot + self.units - 1


@dataclass(frozen=True)
class Rack:
    id: str
    model: str
    units: int
    members: tuple[Member, ...]

    @property
    def used(self) -> int:
        return sum(m.units for m in self.members)


def elevations(design, catalog, rack_ids=None) -> list[Rack]:
    """The racks to draw (all, or ``rack_ids`` in that order), in canvas order otherwise."""
    from designer.errors import UsageError

    topo = design.topology
    comps = topo.components
    racks = [c for c in comps.values() if c.kind == "rack"]
    if rack_ids:
        missing = [r for r in rack_ids if r not in comps or comps[r].kind != "rack"]
        if missing:
            known = ", ".join(r.id for r in racks[:8]) + (" ..." if len(racks) > 8 else "")
            raise UsageError(f"--racks: no rack '{missing[0]}' in the design (racks: {known or 'none'})")
        racks = [comps[r] for r in rack_ids]
    else:
        racks.sort(key=lambda r: (r.pos[1], r.pos[0]) if r.pos else (0.0, 0.0))
    members: dict[str, list] = {r.id: [] for r in racks}
    adapters: dict[str, dict[str, int]] = {}
    for c in comps.values():
        if c.parent in members:
            members[c.parent].append(c)
        elif c.kind in ATTACHABLE and c.parent:
            counts = adapters.setdefault(c.parent, {})
            counts[c.kind] = counts.get(c.kind, 0) + 1
    out = []
    for r in racks:
        height = int(catalog.resolve(r).get("rack_units") or 42)
        ms = []
        for c in members[r.id]:
            fig = catalog.resolve(c)
            units = int(fig.get("rack_units_used") or 1)
            extra = adapters.get(c.id, {})
            text = ", ".join(f"{n} {KIND_LABEL[k]}" for k, n in sorted(extra.items()))
            ms.append(Member(c.id, c.kind, c.model or "", int(c.slot or 1), units, text))
        ms.sort(key=lambda m: -m.slot)
        out.append(Rack(r.id, r.model or "", height, tuple(ms)))
    return out


def natural_size(racks: list[Rack], per_row: int = RACKS_PER_ROW) -> tuple[float, float]:
    """Width and height of the drawing at scale 1."""
    if not racks:
        return 2 * MARGIN + RACK_W, 2 * MARGIN + HEADER_H
    cols = min(per_row, len(racks))
    rows = -(-len(racks) // per_row)
    tallest = max(r.units for r in racks)
    rack_h = HEADER_H + tallest * U_H
    return (2 * MARGIN + cols * (LABEL_W + RACK_W) + (cols - 1) * GAP_X,
            2 * MARGIN + rows * rack_h + (rows - 1) * GAP_Y)


def draw_racks(painter, target, racks: list[Rack], per_row: int = RACKS_PER_ROW) -> None:
    """Paint ``racks`` into ``target`` (a QRectF) of ``painter``, scaled to fit, aspect kept."""
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtGui import QColor, QFont, QPen

    w, h = natural_size(racks, per_row)
    scale = min(target.width() / w, target.height() / h)
    painter.save()
    painter.translate(target.x() + (target.width() - w * scale) / 2,
                      target.y() + (target.height() - h * scale) / 2)
    painter.scale(scale, scale)
    title_font = QFont("DejaVu Sans", 9, QFont.Bold)
    font = QFont("DejaVu Sans", 7)
    small = QFont("DejaVu Sans", 5)
    tallest = max((r.units for r in racks), default=42)
    rack_h = HEADER_H + tallest * U_H
    frame = QPen(QColor("#333333"), 1.5)
    thin = QPen(QColor("#bbbbbb"), 0.5)
    for i, rack in enumerate(racks):
        col, row = i % per_row, i // per_row
        x0 = MARGIN + col * (LABEL_W + RACK_W + GAP_X)
        y0 = MARGIN + row * (rack_h + GAP_Y) + (tallest - rack.units) * U_H
        body = QRectF(x0 + LABEL_W, y0 + HEADER_H, RACK_W, rack.units * U_H)
        painter.setPen(Qt.black)
        painter.setFont(title_font)
        painter.drawText(QRectF(x0 + LABEL_W, y0, RACK_W, HEADER_H * 0.55), Qt.AlignLeft | Qt.AlignBottom,
                         rack.id)
        painter.setFont(font)
        painter.drawText(QRectF(x0 + LABEL_W, y0 + HEADER_H * 0.55, RACK_W, HEADER_H * 0.45),
                         Qt.AlignLeft | Qt.AlignVCenter, f"{rack.model}  {rack.used}/{rack.units} U used")
        painter.setPen(thin)
        for u in range(1, rack.units + 1):
            y = body.bottom() - u * U_H
            painter.drawLine(body.left(), y, body.right(), y)
        painter.setFont(small)
        painter.setPen(QColor("#666666"))
        for u in range(1, rack.units + 1):
            y = body.bottom() - u * U_H
            painter.drawText(QRectF(x0, y, LABEL_W - 3, U_H), Qt.AlignRight | Qt.AlignVCenter, str(u))
        painter.setFont(font)
        for m in rack.members:
            lo, hi = max(m.slot, 1), min(m.top, rack.units)
            if hi < lo:
                continue
            box = QRectF(body.left() + 2, body.bottom() - hi * U_H + 1, RACK_W - 4, (hi - lo + 1) * U_H - 2)
            painter.setPen(QPen(QColor("#555555"), 0.8))
            painter.setBrush(QColor(FILL.get(m.kind, "#eeeeee")))
            painter.drawRect(box)
            painter.setPen(Qt.black)
            text = f"U{m.slot}  {m.id}  {m.model}" + (f"  ({m.adapters})" if m.adapters else "")
            painter.drawText(box.adjusted(4, 0, -4, 0), Qt.AlignLeft | Qt.AlignVCenter | Qt.TextSingleLine,
                             text)
        painter.setBrush(Qt.NoBrush)
        painter.setPen(frame)
        painter.drawRect(body)
    painter.restore()
