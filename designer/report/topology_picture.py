"""The topology picture of a report: the canvas scene built for a design without any window.

The report draws exactly what the canvas shows when its caller hands it the canvas scene class
(``canvas``: the window's and the ``report`` command's :class:`designer.gui.scene.DesignScene`; the
report does not import the GUI, which sits above it), so there is one renderer of the topology.
The scene follows a *copy* of the design (it subscribes to the design it shows; the user's design
must not keep a report's scene alive). Without a canvas the picture is the :class:`Overview`.

Above :data:`OVERVIEW_ABOVE` components the picture is an :class:`Overview` drawn straight from
the model instead: racks, switches, storage and loose servers as boxes at their canvas places,
cables merged into one line per pair of boxes. Derived: the picture is at most ~2,050 x 2,700 px
(A4 text width at 300 dpi, 55% of its height), about 5.5 Mpx; at 20,000 components that is ~275 px²
(a 16 px square) each, below which badges and labels cannot be read anyway, while building the
full canvas scene costs ~1 ms per component (24,498 components: ~20 s of the report).
"""

from __future__ import annotations

from collections import Counter
from itertools import repeat
from operator import attrgetter
from typing import Any, Callable

import numpy as np
from PySide6.QtCore import QLineF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPen

from designer.report.export import fit, scene_source_rect
from designer.topology.design import Design


#: designs with more components get the :class:`Overview` picture (see the module docstring)
OVERVIEW_ABOVE = 20_000
_FILL = {"rack": "#f4f4f4", "switch": "#f7dcb4", "storage": "#d7efd0", "gpu_server": "#cfe3f7"}


class Overview:
    """A large design drawn as boxes and merged cables (module docstring); duck-types what
    :func:`paint_scene` and :func:`topology_image` need of a scene."""

    def __init__(self, design: Design, catalog) -> None:
        from designer.topology import layout
        from designer.topology.model import ATTACHABLE

        comps = design.topology.components
        pos = {cid: c.pos for cid, c in comps.items() if c.pos is not None}
        if len(pos) < len(comps):
            pos = {**layout.layout_by_tier(design.topology, catalog), **pos}

        owners: dict[str, str] = {}  # component -> its box: its rack's, its server's, or its own
        for cid, c in comps.items():
            if c.kind in ATTACHABLE and c.parent in comps:
                c = comps[c.parent]
            owners[cid] = c.parent if c.parent in comps and comps[c.parent].kind == "rack" else c.id

        self.boxes: dict[str, tuple[QRectF, str]] = {}
        figures: dict[tuple[str, str], dict] = {}  # catalog figures of a model without overrides
        for cid, c in comps.items():
            if owners[cid] != cid or c.kind in ATTACHABLE or cid not in pos:
                continue
            if c.props:
                fig = catalog.resolve(c)
            else:
                fig = figures.get((c.kind, c.model))
                if fig is None:
                    fig = figures[(c.kind, c.model)] = catalog.resolve(c)
            if c.kind == "rack":
                w, h = layout.rack_size(float(fig.get("rack_units") or 42))
            else:
                w, h = layout.MEMBER_W, layout.box_height(float(fig.get("rack_units_used") or 1))
            x, y = pos[cid]
            self.boxes[cid] = (QRectF(x - w / 2, y - h / 2, w, h), c.kind)
        # a rack is coloured by what it holds: switches, else storage, else servers
        holds: dict[str, set[str]] = {}
        for c in comps.values():
            if c.parent in self.boxes and c.kind not in ATTACHABLE:
                holds.setdefault(c.parent, set()).add(c.kind)
        for rid, kinds_held in holds.items():
            kind = next((k for k in ("switch", "storage", "gpu_server") if k in kinds_held), "rack")
            self.boxes[rid] = (self.boxes[rid][0], kind)
        self.pairs = merged_cables(design, owners, list(self.boxes))
        rect = QRectF()
        for box, _ in self.boxes.values():
            rect = rect.united(box)
        self.rect = rect.adjusted(-20, -20, 20, 20) if not rect.isEmpty() else QRectF(0, 0, 100, 100)

    def paint(self, painter: QPainter, target: QRectF) -> None:
        from designer.report.export import fit

        box = fit(self.rect.size(), target)
        scale = box.width() / self.rect.width()
        painter.save()
        painter.translate(box.x(), box.y())
        painter.scale(scale, scale)
        painter.translate(-self.rect.x(), -self.rect.y())
        painter.setPen(QPen(QColor("#555555"), 0))  # cosmetic: one device pixel whatever the scale
        for kind in ("rack", "gpu_server", "storage", "switch"):
            painter.setBrush(QColor(_FILL[kind]))
            rects = [r for r, k in self.boxes.values() if k == kind]
            if rects:
                painter.drawRects(rects)
        # cables over the boxes, fainter the more there are (derived: ~3,000 merged lines at
        # alpha 60 leave the boxes readable; alpha falls as 1/lines beyond, to 4 at least)
        alpha = max(4, min(60, round(60 * 3000 / max(1, len(self.pairs)))))
        painter.setPen(QPen(QColor(40, 70, 120, alpha), 0))
        # one-pixel lines without antialiasing: the same faint strokes at a fraction of the cost
        # (24,579 merged lines of a 250k-component design: 2.7 s antialiased)
        painter.setRenderHint(QPainter.Antialiasing, False)
        centres = {cid: r.center() for cid, (r, _) in self.boxes.items()}
        painter.drawLines([QLineF(centres[a], centres[b]) for a, b in self.pairs])
        painter.restore()


def merged_cables(design: Design, owners: dict[str, str], boxes: list[str]) -> Counter:
    """Lanes between each two boxes: ``(a, b)`` (ids, ``a < b``) -> cables, in the order the
    pairs first come among the links (as counting link by link gives). Counted with numpy: the
    ends looked up once each, a pair is one integer (the ranks of its ids in sorted order)."""
    links = list(design.topology.links.values())  # an end without a box is -1 below
    if not links or not boxes:
        return Counter()
    ranked = sorted(boxes)
    rank = dict(zip(ranked, range(len(ranked))))
    box_of = {cid: rank[box] for cid, box in owners.items() if box in rank}
    a = np.fromiter(map(box_of.get, [link.a for link in links], repeat(-1)), dtype=np.int64,
                    count=len(links))
    b = np.fromiter(map(box_of.get, [link.b for link in links], repeat(-1)), dtype=np.int64,
                    count=len(links))
    lanes = np.maximum(np.fromiter(map(int, map(attrgetter("lanes"), links)), dtype=np.int64,
                                   count=len(links)), 1)
    keep = (a >= 0) & (b >= 0) & (a != b)
    lo, hi = np.minimum(a, b)[keep], np.maximum(a, b)[keep]
    pair, first, inverse = np.unique(lo * len(ranked) + hi, return_index=True, return_inverse=True)
    counts = np.bincount(inverse.ravel(), weights=lanes[keep], minlength=len(pair))
    order = np.argsort(first, kind="stable")
    return Counter({(ranked[int(k) // len(ranked)], ranked[int(k) % len(ranked)]): int(n)
                    for k, n in zip(pair[order].tolist(), counts[order].tolist())})


def topology_scene(design: Design, catalog, canvas: Callable[[Any], Any] | None = None):
    """The canvas scene of ``design`` (``canvas(catalog)``, a scene class such as the GUI's
    ``DesignScene``), or an :class:`Overview` without a canvas or above OVERVIEW_ABOVE components."""
    if canvas is None or len(design.topology.components) > OVERVIEW_ABOVE:
        return Overview(design, catalog)
    scene = canvas(catalog)
    scene.set_design(design.copy())
    scene.set_detail(1.0)  # show NIC/DPU badges, as the canvas does at 100 %
    return scene


def paint_scene(scene: Any, painter: QPainter, target: QRectF) -> None:
    """Draw the whole scene centred in ``target``, keeping its aspect ratio."""
    if isinstance(scene, Overview):
        scene.paint(painter, target)
        return
    source = scene_source_rect(scene)
    scene.render(painter, fit(source.size(), target), source, Qt.KeepAspectRatio)


def topology_image(scene: Any, width_px: int, max_height_px: int) -> QImage:
    """The scene as an image ``width_px`` wide and as tall as its aspect ratio asks (capped)."""
    source = scene.rect if isinstance(scene, Overview) else scene_source_rect(scene)
    height = min(max_height_px, max(16, round(width_px * source.height() / source.width())))
    image = QImage(QSize(width_px, height), QImage.Format_ARGB32_Premultiplied)  # the format Qt paints fastest
    image.fill(Qt.white)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.Antialiasing)
    painter.setRenderHint(QPainter.TextAntialiasing)
    paint_scene(scene, painter, QRectF(0, 0, width_px, height))
    painter.end()
    return image
