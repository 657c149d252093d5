"""The canvas driven through real widgets: palette drops, connect drags, moves, delete, undo/redo,
copy/paste, inspector edits, zoom, problems list."""

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QSpinBox

from designer.gui.items import GRID, PortItem
from designer.gui.testing import (center_of, click, drag, new_ids, open_window, palette_drop,
                                  viewport_point)
from designer.topology.design import Design
from designer.topology.model import Component, Link, Topology


#: settings in a folder of its own; a window closed with changes discards them (conftest)
pytestmark = pytest.mark.usefixtures("gui_settings")


EMPTY = QPointF(-3000, -3000)   # left of and above everything in the example design


def test_place_connect_move_delete_then_undo_all_and_redo_all(qtbot):
    w = open_window(qtbot)
    topo = w.design.topology
    original = topo.snapshot()

    before = set(topo.components)
    palette_drop(w, "switch", "qm9700", EMPTY, tier="leaf")
    (switch,) = new_ids(before, w)
    assert topo.components[switch].pos == (-3000 - GRID, -3000 - GRID)  # snapped to the grid

    before = set(topo.components)
    palette_drop(w, "rack", "rack-42u", EMPTY + QPointF(600, 400))
    (rack,) = new_ids(before, w)
    before = set(topo.components)
    palette_drop(w, "gpu_server", "dgx-h100", center_of(w, rack))      # a server dropped on a rack
    (server,) = new_ids(before, w)
    assert topo.components[server].parent == rack and topo.components[server].slot == 1
    before = set(topo.components)
    palette_drop(w, "dpu", "bluefield-3", center_of(w, server))        # a DPU dropped on a server
    (dpu,) = new_ids(before, w)
    assert topo.components[dpu].parent == server
    assert isinstance(w.scene.item_of(dpu), PortItem) and w.scene.item_of(dpu).attached

    # a BlueField DPU is VPI (its ports run InfiniBand or Ethernet): it joins an InfiniBand
    # switch on InfiniBand, as the example design and the design check have it
    w.actions_by_name["connect"].trigger()
    assert w.view.connect_mode
    drag(w.view, center_of(w, server) + QPointF(-20, -20), center_of(w, switch))
    (ib,) = [l for l in topo.links.values() if switch in (l.a, l.b)]
    assert {ib.a, ib.b} == {dpu, switch} and ib.medium == "infiniband"
    n_links = len(topo.links)

    # a server to a rack frame is refused too (no port on a rack)
    drag(w.view, center_of(w, server), center_of(w, rack) + QPointF(0, -200))
    assert len(topo.links) == n_links
    assert "no network port" in w._status.text()

    # an Ethernet switch takes the server's DPU: dragging from the server picks its DPU
    before = set(topo.components)
    palette_drop(w, "switch", "sn5600", EMPTY + QPointF(0, 200), tier="spine")
    (eth,) = new_ids(before, w)
    drag(w.view, center_of(w, server) + QPointF(0, -20), center_of(w, eth))
    (link,) = [l for l in topo.links.values() if eth in (l.a, l.b)]
    assert {link.a, link.b} == {dpu, eth} and link.medium == "ethernet"
    w.view.setFocus()
    qtbot.keyClick(w.view, Qt.Key_Escape)
    assert not w.view.connect_mode

    # move the switch by dragging it
    start = center_of(w, switch)
    drag(w.view, start, start + QPointF(203, 98))
    assert topo.components[switch].pos == (-3000 - GRID + 200, -3000 - GRID + 100)
    assert w.scene.comp_items[switch].scenePos() == QPointF(*topo.components[switch].pos)

    # delete the Ethernet switch with the Delete key: its cable goes with it
    click(w.view, center_of(w, eth))
    assert w.scene.selected_ids() == [eth]
    w.view.setFocus()
    qtbot.keyClick(w.view, Qt.Key_Delete)
    assert eth not in topo.components and link.id not in topo.links
    assert eth not in w.scene.comp_items and link.id not in w.scene.link_items

    edited = topo.snapshot()
    assert w.isWindowModified()
    while w.editor.stack.canUndo():
        w.editor.stack.undo()
    assert topo.snapshot() == original
    assert w.scene.component_ids() == set(topo.components)
    assert set(w.scene.link_items) == set(topo.links)
    assert not w.isWindowModified()
    while w.editor.stack.canRedo():
        w.editor.stack.redo()
    assert topo.snapshot() == edited
    assert w.scene.component_ids() == set(topo.components)


def test_esc_cancels_a_connection_drag(qtbot):
    w = open_window(qtbot)
    topo = w.design.topology
    w.view.set_connect_mode(True)
    n = len(topo.links)
    a = viewport_point(w.view, center_of(w, "sw-1"))
    qtbot.mousePress(w.view.viewport(), Qt.LeftButton, pos=a)
    qtbot.mouseMove(w.view.viewport(), a + QPoint(80, 80))
    assert w.view._wire is not None
    qtbot.keyClick(w.view, Qt.Key_Escape)
    assert w.view._wire is None
    qtbot.mouseRelease(w.view.viewport(), Qt.LeftButton, pos=a + QPoint(80, 80))
    assert len(topo.links) == n and w.view.connect_mode


def test_rubber_band_and_ctrl_click_selection(qtbot):
    w = open_window(qtbot)
    sw = [center_of(w, f"sw-{i}") for i in (1, 2)]
    click(w.view, sw[0])
    click(w.view, sw[1], mods=Qt.ControlModifier)
    assert set(w.scene.selected_ids()) == {"sw-1", "sw-2"}
    click(w.view, sw[1], mods=Qt.ControlModifier)
    assert w.scene.selected_ids() == ["sw-1"]
    # rubber band around the spine switch only
    spine = center_of(w, "sw-3")
    drag(w.view, spine + QPointF(-120, -60), spine + QPointF(120, 60))
    assert w.scene.selected_ids() == ["sw-3"]


def test_copy_paste_gives_new_ids_and_keeps_attached_ports(qtbot):
    w = open_window(qtbot)
    topo = w.design.topology
    server = topo.servers()[0]
    attached = topo.attached(server.id)
    w.scene.select_ids([server.id])
    w.view.setFocus()
    before = set(topo.components)
    qtbot.keyClick(w.view, Qt.Key_C, Qt.ControlModifier)
    qtbot.keyClick(w.view, Qt.Key_V, Qt.ControlModifier)
    added = new_ids(before, w)
    assert len(added) == 1 + len(attached)
    copy = [topo.components[i] for i in added if topo.components[i].kind == "gpu_server"][0]
    assert copy.id != server.id and copy.model == server.model
    assert sorted(c.model for c in topo.attached(copy.id)) == sorted(c.model for c in attached)
    assert copy.parent is None  # the original's rack slot is taken; the copy stands alone
    assert w.scene.selected_ids() == added
    w.editor.stack.undo()
    assert set(topo.components) == before
    # the offscreen platform crashes at exit when the clipboard still holds mime data (PySide6 6.11)
    QApplication.clipboard().clear()


def test_property_spin_drag_is_one_undo_step_and_marks_the_change(qtbot):
    w = open_window(qtbot)
    topo = w.design.topology
    server = topo.servers()[0].id
    w.scene.select_ids([server])
    spin = w.inspector.editors["gpu_count"]
    assert isinstance(spin, QSpinBox) and spin.value() == 8 and spin.maximum() == 72
    count = w.editor.stack.count()
    for v in (9, 10, 11, 12):
        spin.setValue(v)
    assert topo.components[server].props["gpu_count"] == 12
    assert w.editor.stack.count() == count + 1
    assert spin.property("label").font().bold() and spin.property("reset").isVisibleTo(w.inspector)
    w.editor.stack.undo()
    assert "gpu_count" not in topo.components[server].props
    qtbot.waitUntil(lambda: spin.value() == 8, timeout=1000)  # the inspector follows the model
    assert spin.value() == 8 and not spin.property("label").font().bold()


def test_multi_selection_edits_shared_fields(qtbot):
    w = open_window(qtbot)
    topo = w.design.topology
    w.scene.select_ids(["sw-1", "sw-3"])
    assert "ports" in w.inspector.editors and "name" not in w.inspector.editors
    w.inspector.editors["ports"].setValue(48)
    assert topo.components["sw-1"].props["ports"] == 48 == topo.components["sw-3"].props["ports"]
    w.scene.select_ids(["sw-1", topo.servers()[0].id])  # switch + server share no figure
    assert "ports" not in w.inspector.editors


def test_wheel_zooms_about_the_cursor_and_hides_details_when_far(qtbot):
    w = open_window(qtbot)
    target = center_of(w, "sw-3")
    vp = viewport_point(w.view, target) + QPoint(60, 40)
    under = w.view.mapToScene(vp)
    event = QWheelEvent(QPointF(vp), QPointF(w.view.viewport().mapToGlobal(vp)), QPoint(0, 0),
                        QPoint(0, -480), Qt.NoButton, Qt.NoModifier, Qt.NoScrollPhase, False)
    QApplication.sendEvent(w.view.viewport(), event)
    assert w.view.scale_factor() < 0.6
    after = w.view.mapToScene(vp)
    assert abs(after.x() - under.x()) < 3 / w.view.scale_factor()
    assert abs(after.y() - under.y()) < 3 / w.view.scale_factor()
    w.view.zoom(0.3)
    badge = next(i for i in w.scene.comp_items.values() if isinstance(i, PortItem) and i.attached)
    assert not badge.isVisible()
    w.view.zoom_reset()
    assert badge.isVisible()


def test_auto_layout_is_one_undo_step(qtbot):
    w = open_window(qtbot)
    topo = w.design.topology
    w.editor.delete(["sw-1"])
    topo_before = topo.snapshot()
    for c in ("sw-2", "sw-3"):
        w.editor.move({c: (5000.0, 5000.0)})
    moved = topo.snapshot()
    count = w.editor.stack.count()
    w.actions_by_name["layout"].trigger()
    assert w.editor.stack.count() == count + 1
    assert topo.components["sw-2"].pos != (5000.0, 5000.0)
    w.editor.stack.undo()
    assert topo.snapshot() == moved != topo_before


def test_problems_are_marked_on_items_and_the_list_jumps_to_them(qtbot):
    topo = Topology()
    topo.add_component(Component("sw-1", "switch", "qm9700", pos=(0.0, 0.0)))
    topo.add_component(Component("nic-1", "nic", "connectx-7", pos=(0.0, 300.0)))
    topo.add_link(Link("link-1", "sw-1", "nic-1", "infiniband", speed_Gbps=800.0))
    w = open_window(qtbot, Design(topo, "broken"))
    assert w.problems.topLevelItemCount() >= 1
    row = next(w.problems.topLevelItem(i) for i in range(w.problems.topLevelItemCount())
               if "800" in w.problems.topLevelItem(i).text(2))
    target = row.text(1)
    item = w.scene.comp_items[target]
    assert item.problems and "800" in item.tooltip()
    w.problems.itemActivated.emit(row, 0)
    assert w.scene.selected_ids() == [target]
    view_center = w.view.mapToScene(w.view.viewport().rect().center())
    assert (view_center - item.sceneBoundingRect().center()).manhattanLength() < 5
    # fixing the problem clears the marker
    w.editor.set_fields(["link-1"], "speed_Gbps", 400.0)
    w.revalidate()
    assert not any("800" in p.message for p in w.scene.comp_items[target].problems)


def test_cables_are_picked_by_click_ctrl_click_and_rubber_band(qtbot):
    topo = Topology()
    for i, (x, y) in enumerate([(0, 0), (400, 0), (0, 600), (400, 600)], 1):
        topo.add_component(Component(f"sw-{i}", "switch", "qm9700", pos=(float(x), float(y))))
    topo.add_link(Link("link-1", "sw-1", "sw-3", "infiniband", speed_Gbps=400.0))
    topo.add_link(Link("link-2", "sw-2", "sw-4", "infiniband", speed_Gbps=400.0))
    w = open_window(qtbot, Design(topo, "cables"))
    click(w.view, QPointF(2, 300))                      # 2 px beside the cable at 100 %
    assert w.scene.selected_ids() == ["link-1"]
    click(w.view, QPointF(400, 300), mods=Qt.ControlModifier)
    assert w.scene.selected_ids() == ["link-1", "link-2"]
    click(w.view, QPointF(200, 300))                    # empty canvas clears
    assert w.scene.selected_ids() == []
    click(w.view, center_of(w, "sw-1"))
    assert w.scene.selected_ids() == ["sw-1"]
    drag(w.view, QPointF(-100, -60), QPointF(100, 660))  # a band around the left column
    assert w.scene.selected_ids() == ["sw-1", "sw-3", "link-1"]
    w.scene.select_ids(["link-1"])
    w.view.setFocus()
    qtbot.keyClick(w.view, Qt.Key_Delete)
    assert "link-1" not in topo.links and "link-1" not in w.scene.link_items
    assert w.scene.selected_ids() == []


def test_clear_selection_and_esc_also_unselect_cables(qtbot):
    topo = Topology()
    for i, (x, y) in enumerate([(0, 0), (0, 600)], 1):
        topo.add_component(Component(f"sw-{i}", "switch", "qm9700", pos=(float(x), float(y))))
    topo.add_link(Link("link-1", "sw-1", "sw-2", "infiniband", speed_Gbps=400.0))
    w = open_window(qtbot, Design(topo, "cables"))
    w.scene.select_ids(["sw-1", "link-1"])
    with qtbot.waitSignal(w.scene.selectionChanged):
        w.scene.clearSelection()
    assert w.scene.selected_ids() == [] and w.scene.selected_links() == set()
    assert w.inspector.ids == []                        # the inspector followed
    w.scene.select_ids(["link-1"])
    w.view.setFocus()
    qtbot.keyClick(w.view, Qt.Key_Escape)
    assert w.scene.selected_ids() == []
