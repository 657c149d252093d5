"""Issue #24: a jump to a zoom that draws badges makes the NIC/DPU badges of the servers in view a
few milliseconds' worth a frame, nearest the centre first, until all are made."""

import pytest
from PySide6.QtCore import Qt

from designer.gui.items import ServerItem
from designer.gui.testing import open_window
from designer.topology.templates import rail_optimized


#: settings in a folder of its own; a window closed with changes discards them (conftest)
pytestmark = pytest.mark.usefixtures("gui_settings")


def test_badges_in_view_are_made_within_a_budget_nearest_first_until_all_are(qtbot):
    w = open_window(qtbot, rail_optimized(servers=256, storage="none"))
    scene, view, topo = w.scene, w.view, w.design.topology
    view.zoom_reset()
    view.zoom(0.5)
    rect = view.mapToScene(view.viewport().rect()).boundingRect()
    in_view = [i for i in scene.items(rect, Qt.IntersectsItemBoundingRect) if isinstance(i, ServerItem)]
    lazy = [i for i in in_view if topo.attached(i.cid) and topo.attached(i.cid)[0].id not in scene.comp_items]
    assert len(lazy) > 3
    centre = rect.center()
    nearest = min(lazy, key=lambda i: (i.scenePos() - centre).manhattanLength())
    # no time at all: one server a call (the nearest first), then the next ...
    assert scene.ensure_badges(rect, budget_ms=0.0) is False
    assert all(c.id in scene.comp_items for c in topo.attached(nearest.cid))
    made = sum(all(c.id in scene.comp_items for c in topo.attached(i.cid)) for i in lazy)
    assert made == 1
    calls = 1
    while not scene.ensure_badges(rect, budget_ms=0.0):
        calls += 1
        assert calls <= len(lazy)
    assert all(c.id in scene.comp_items for i in lazy for c in topo.attached(i.cid))
    # the view does the same in its frames, and says when some are left for the next one
    view.zoom_reset()
    view.centerOn(scene.content_rect().bottomRight())
    view.BADGE_BUDGET_MS = 0.0
    view.viewport().grab()
    frames = 1
    while view.badges_pending:
        view.viewport().grab()
        frames += 1
        assert frames < 500
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    for item in scene.items(shown, Qt.IntersectsItemBoundingRect):
        if isinstance(item, ServerItem):
            assert all(c.id in scene.comp_items for c in topo.attached(item.cid))
