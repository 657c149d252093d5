"""The window's canvas makes the NIC/DPU badges of a server only when a view shows that server at a
zoom that draws badges, or when one is asked for (selection, problems list, an edit): zoomed out, a
large design has no badge items at all. Made late, a badge is where its cables already end, and
carries the problems and overlay marks set while it had no item (issue #14: a 250k-component
design's screenshot, 204k of whose items were badges)."""

import pytest
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QApplication

from designer.gui.items import DETAIL_LOD, PortItem, anchor
from designer.gui.mainwindow import MainWindow
from designer.topology.templates import rail_optimized
from designer.topology.validation import Problem


#: settings in a folder of its own; a window closed with changes discards them (conftest)
pytestmark = pytest.mark.usefixtures("gui_settings")


@pytest.fixture
def far(qtbot):
    """A window on 32 rail-optimized servers (8 NICs each), zoomed out below the badges' zoom."""
    w = MainWindow(rail_optimized(servers=32, storage="none"))
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.view.zoom_reset()
    w.view.zoom(DETAIL_LOD / 3)  # before the window shows: it is not fitted
    w.show()
    qtbot.waitExposed(w)
    w.view.viewport().grab()
    QApplication.processEvents()
    yield w
    w.editor.stack.clear()
    w.autosaver.discard()


def _ports(topo) -> list[str]:
    return [c.id for c in topo.components.values() if c.kind in ("nic", "dpu")
            and c.parent and topo.components[c.parent].kind == "gpu_server"]


def test_zoomed_out_no_badge_has_an_item_and_the_scene_still_knows_them(far):
    w, topo = far, far.design.topology
    ports = _ports(topo)
    assert len(ports) == 32 * 8
    assert not any(isinstance(i, PortItem) and i.attached for i in w.scene.comp_items.values())
    assert w.scene.lazy_badge_count() == len(ports)
    assert w.scene.component_ids() == set(topo.components)


def test_zooming_in_on_a_server_makes_its_badges_where_its_cables_end(far):
    w, scene, topo = far, far.scene, far.design.topology
    ends = {lid: (c.line.p1(), c.line.p2()) for lid, c in scene.link_items.items()}
    server = topo.servers()[5]
    w.view.zoom_reset()  # 100 %: badges drawn
    w.view.centerOn(scene.comp_items[server.id].sceneBoundingRect().center())
    w.view.viewport().grab()
    made = [c.id for c in topo.attached(server.id)]
    assert all(pid in scene.comp_items for pid in made)
    assert 0 < scene.lazy_badge_count() < len(_ports(topo)) - len(made) + 1  # not the others
    far_server = max(topo.servers(), key=lambda s: scene.comp_items[s.id].scenePos().manhattanLength()
                     if s.id != server.id else -1.0)
    visible = w.view.mapToScene(w.view.viewport().rect()).boundingRect()
    if not visible.intersects(scene.comp_items[far_server.id].sceneBoundingRect()):
        assert topo.attached(far_server.id)[0].id not in scene.comp_items
    for pid in made:
        item = scene.comp_items[pid]
        assert item.attached and item.isVisible() and item.parentItem() is scene.comp_items[server.id]
        for link in topo.links_of(pid):
            other = link.b if link.a == pid else link.a
            far_end = scene.comp_items[other].scene_body() if other in scene.comp_items else None
            assert far_end is not None
            mine = anchor(item.scene_body(), far_end.center())  # the item's own cable end
            p1, p2 = ends[link.id]
            assert min((p1 - mine).manhattanLength(), (p2 - mine).manhattanLength()) < 1e-6, link.id


def test_a_badge_asked_for_is_made_selected_and_keeps_its_problems_and_marks(far):
    w, scene, topo = far, far.scene, far.design.topology
    first, second, third = _ports(topo)[:3]
    assert first not in scene.comp_items
    scene.set_problems([Problem("error", "test", "a bad NIC", component=second)])
    scene.show_utilization({}, marked={third})
    w.goto(first)  # a click in the problems list: zoomed in on it, selected, in the inspector
    assert scene.selected_ids() == [first] and scene.comp_items[first].isSelected()
    assert w.view.scale_factor() >= DETAIL_LOD and scene.comp_items[first].isVisible()
    assert w.inspector.ids == [first]
    for pid in (second, third):
        item = scene.item_of(pid)
        assert isinstance(item, PortItem) and item.attached
    assert [p.message for p in scene.comp_items[second].problems] == ["a bad NIC"]
    assert scene.comp_items[third].marked and not scene.comp_items[second].marked


def test_editing_a_badge_without_an_item_deletes_and_undoes_it(far):
    w, scene, topo = far, far.scene, far.design.topology
    pid = _ports(topo)[-1]
    server = topo.components[pid].parent
    assert pid not in scene.comp_items
    cables = [link.id for link in topo.links_of(pid)]
    w.editor.delete([pid])
    assert pid not in scene.component_ids() and not any(c in scene.link_items for c in cables)
    w.editor.stack.undo()
    assert pid in scene.comp_items and scene.comp_items[pid].parentItem() is scene.comp_items[server]
    assert all(c in scene.link_items for c in cables)
    assert scene.component_ids() == set(topo.components)
    w.view.zoom_reset()
    w.view.centerOn(QPointF(scene.comp_items[pid].scenePos()))
    w.view.viewport().grab()  # the server's other badges made beside it, in slot order
    xs = [scene.comp_items[c.id].scenePos().x() for c in topo.attached(server)]
    assert xs == sorted(xs) and len(set(xs)) == len(xs)


def test_a_screenshot_of_a_design_too_large_to_check_says_it_was_not_checked(qapp, tmp_path,
                                                                              monkeypatch):
    import designer.gui.app as app_module
    import designer.gui.mainwindow as mainwindow_module
    from designer.paths import resources_dir

    checked, shown, windows = [], [], []  # designs checked; notes shown; windows made
    real = mainwindow_module.validate
    monkeypatch.setattr(mainwindow_module, "validate", lambda d, *a: checked.append(d) or real(d, *a))
    monkeypatch.setattr(MainWindow, "leave_unchecked",
                        lambda self, note, real=MainWindow.leave_unchecked: (shown.append(note),
                                                                             real(self, note)))
    real_init = MainWindow.__init__

    def init(self, *a, **k):
        real_init(self, *a, **k)
        windows.append(self.design)

    monkeypatch.setattr(MainWindow, "__init__", init)
    example = resources_dir() / "examples" / "example.json"
    assert app_module.run_gui(str(example), screenshot=str(tmp_path / "a.png"), size="800x600") == 0
    assert any(d is windows[0] for d in checked) and not shown  # this small: checked first
    monkeypatch.setattr(app_module, "SCREENSHOT_CHECK_MAX", 10)
    assert app_module.run_gui(str(example), screenshot=str(tmp_path / "b.png"), size="800x600") == 0
    assert len(windows) == 2 and not any(d is windows[1] for d in checked)
    assert len(shown) == 1 and "Not checked" in shown[0] and "validate" in shown[0]
    assert (tmp_path / "b.png").stat().st_size > 0

