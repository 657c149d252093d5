"""Issue #24: far out ("zoom to fit") the component boxes come from one picture of them
(designer/gui/boxes.py), so a frame paints a handful of boxes, not thousands of items. On a
256-server rail design at fit: dragging a server paints no item and draws only the moved box over
the picture; the picture is drawn anew only where the server was (once, when the drag starts) and
is (when the moves stop), and then holds the very pixels of a picture drawn from scratch; the
selection and the overlay marks still show; an export still draws every item itself."""

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QImage, QPainter

from designer.gui import items as items_mod
from designer.gui.testing import open_window
from designer.topology.templates import rail_optimized


#: settings in a folder of its own; a window closed with changes discards them (conftest)
pytestmark = pytest.mark.usefixtures("gui_settings")


@pytest.fixture
def counts(monkeypatch):
    """Calls of the items' ``paint`` (Qt painting an item) and of ``paint_far`` (a box drawn)."""
    seen = {"paint": 0, "paint_far": 0}
    for cls in (items_mod.ComponentItem, items_mod.RackItem, items_mod.PortItem):
        for name in ("paint", "paint_far"):
            if name in cls.__dict__:
                original = cls.__dict__[name]

                def wrapper(self, *args, _original=original, _name=name, **kwargs):
                    seen[_name] += 1
                    return _original(self, *args, **kwargs)

                monkeypatch.setattr(cls, name, wrapper)
    return seen


def _pixels(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format_RGB32)
    raw = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())
    return raw[:, :image.width() * 4].reshape(image.height(), image.width(), 4)[:, :, :3].copy()


def _at(view, image: np.ndarray, scene_pt: QPointF) -> QColor:
    p = view.mapFromScene(scene_pt)
    b, g, r = image[p.y(), p.x()]
    return QColor(int(r), int(g), int(b))


def _fit(qtbot):
    w = open_window(qtbot, rail_optimized(servers=256, storage="none"))
    w.view.zoom_to_fit()
    w.view.viewport().grab()
    assert w.view.scale_factor() < items_mod.DETAIL_LOD
    assert w.scene.boxes.active
    return w


def test_dragging_a_server_at_fit_paints_one_box_and_redraws_only_where_it_was_and_is(qtbot, counts):
    w = _fit(qtbot)
    scene, view, boxes = w.scene, w.view, w.scene.boxes
    server = next(c for c in w.design.topology.servers() if c.parent)
    item = scene.comp_items[server.id]
    shown = len([i for i in scene.comp_items.values() if i.isVisible()])
    assert shown > 256  # the racks, servers, switches: far more than a frame paints below
    pictures = boxes.pictures_drawn
    assert pictures >= 1
    start, old = item.scenePos(), item.sceneBoundingRect()
    patches = len(boxes.patches)
    counts["paint"] = counts["paint_far"] = 0
    frames = 5
    for step in range(1, frames + 1):  # as the view drags (bench/bench_canvas.py does the same)
        item.setPos(start + QPointF(0.0, -120.0 * step))  # up out of its rack
        scene.refresh_links(scene.subtree(server.id))
        image = _pixels(view.viewport().grab().toImage())
    assert counts["paint"] == 0  # Qt painted no item
    assert counts["paint_far"] <= 2 * frames  # the moved box on top (a few a frame at most)
    assert boxes.pictures_drawn == pictures  # no picture drawn whole
    # drawn anew only where the server was, once (left out while it moves)
    assert boxes.patches[patches:] == [old]
    colour = QColor(items_mod.KIND_COLOR["gpu_server"])
    assert _at(view, image, item.sceneBoundingRect().center()) == colour  # shown where it is now
    assert _at(view, image, old.center()) != colour  # and no longer where it was
    boxes.fold()  # what its timer does once the moves stop
    view.viewport().grab()
    assert boxes.patches[patches + 1:] == [item.sceneBoundingRect()]  # where it is now, only
    assert boxes.pictures_drawn == pictures
    assert counts["paint"] == 0
    # the patched picture holds the pixels of one drawn from scratch
    key = boxes._key(view.viewportTransform())
    folded, bounds = boxes._pictures[key]
    folded = _pixels(folded)
    boxes._pictures.clear()
    view.viewport().grab()
    assert boxes.pictures_drawn == pictures + 1
    fresh, fresh_bounds = boxes._pictures[key]
    assert fresh_bounds == bounds
    # (to a level of rounding: a rack's frame, a fraction of a pixel wide here, blends its edge
    # pixels one level apart when drawn again clipped)
    diff = np.abs(folded.astype(int) - _pixels(fresh).astype(int))
    assert diff.max() <= 2, diff.max()
    assert (diff > 0).sum() < 0.01 * diff[:, :, 0].size


def test_selection_and_marks_show_at_fit_and_an_export_draws_the_items(qtbot, counts):
    w = _fit(qtbot)
    scene, view, boxes = w.scene, w.view, w.scene.boxes
    topo = w.design.topology
    server = next(c for c in topo.servers() if c.parent)
    other = next(c for c in topo.servers() if c.parent and c.id != server.id)
    item = scene.comp_items[server.id]
    center = item.sceneBoundingRect().center()
    plain = _pixels(view.viewport().grab().toImage())
    assert _at(view, plain, center) == QColor(items_mod.KIND_COLOR["gpu_server"])
    counts["paint"] = counts["paint_far"] = 0
    scene.select_ids([server.id])
    selected = _pixels(view.viewport().grab().toImage())
    assert _at(view, selected, center) == QColor(items_mod.SELECT)
    scene.clearSelection()
    scene.show_utilization({}, {other.id})  # the overlay outlines a bottleneck
    marked = _pixels(view.viewport().grab().toImage())
    ring = scene.comp_items[other.id].sceneBoundingRect()
    edge = QPointF(ring.center().x(), ring.top() + 8 - 3)  # on the outline, 3 units off the body
    assert _at(view, marked, edge) == QColor(items_mod.BOTTLENECK)
    assert _at(view, marked, center) == QColor(items_mod.KIND_COLOR["gpu_server"])  # unselected
    assert counts["paint"] == 0
    assert 0 < counts["paint_far"] <= 8  # the few boxes on top, not the design's
    # an export paints the items themselves (at its own zoom), then the view goes on as before
    source = scene.content_rect()
    image = QImage(400, 300, QImage.Format_ARGB32_Premultiplied)
    image.fill(0)
    painter = QPainter(image)
    scene.render(painter, QRectF(image.rect()), source)
    painter.end()
    assert counts["paint"] > 256
    assert boxes.active
    counts["paint"] = 0
    view.viewport().grab()
    assert counts["paint"] == 0


def test_a_mouse_drag_of_a_switch_at_fit_moves_it_and_the_picture_follows(qtbot, counts):
    from designer.gui.testing import drag

    w = _fit(qtbot)
    scene, view, boxes = w.scene, w.view, w.scene.boxes
    switch = next(c for c in w.design.topology.switches() if c.pos is not None)
    item = scene.comp_items[switch.id]
    start = item.sceneBoundingRect().center()
    end = start + QPointF(0.0, -400.0)
    view.viewport().grab()
    pictures = boxes.pictures_drawn
    counts["paint"] = 0
    drag(view, start, end)
    frame = _pixels(view.viewport().grab().toImage())
    assert w.design.topology.components[switch.id].pos[1] < switch.pos[1] - 300  # the edit happened
    moved = item.sceneBoundingRect().center()
    assert _at(view, frame, moved) in (QColor(items_mod.SELECT),)  # selected by the press, on top
    boxes.fold()
    scene.clearSelection()
    frame = _pixels(view.viewport().grab().toImage())
    assert _at(view, frame, moved) == item._color  # back in the picture where it is now
    assert _at(view, frame, start) != item._color
    assert counts["paint"] == 0
    # moved above the picture's edge: the picture is drawn whole once, taking it in
    assert boxes.pictures_drawn == pictures + 1
