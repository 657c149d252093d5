"""Helpers for GUI tests (tests/test_gui_*.py): real mouse events on the canvas, palette drops."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent, QMouseEvent
from PySide6.QtWidgets import QApplication

from designer.gui.mainwindow import MainWindow, example_path
from designer.topology import fileformat


def open_window(qtbot, design=None, minimap: bool = False) -> MainWindow:
    """The window on ``design`` (the example), shown at 1400 x 900 and 100 % zoom; the overview
    map is off unless ``minimap`` (it covers a corner of the canvas that tests click and look at)."""
    window = MainWindow(design if design is not None else fileformat.load(example_path()))
    window.view.minimap.set_wanted(minimap)
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=2000)
    qtbot.waitUntil(lambda: not window.check_pending, timeout=5000)  # checked after the first paint
    window.view.zoom_reset()
    return window


def viewport_point(view, scene_pt: QPointF) -> QPoint:
    """Bring a scene point into view and return where it is on the viewport."""
    view.centerOn(scene_pt)
    QApplication.processEvents()
    return view.mapFromScene(scene_pt)


def _send(view, kind, pos: QPoint, button, buttons, mods=Qt.NoModifier) -> None:
    vp = view.viewport()
    event = QMouseEvent(kind, QPointF(pos), QPointF(vp.mapToGlobal(pos)), button, buttons, mods)
    QApplication.sendEvent(vp, event)


def drag(view, start: QPointF, end: QPointF, steps: int = 6, mods=Qt.NoModifier) -> None:
    """Press the left button at scene point ``start``, move to ``end`` and release."""
    view.centerOn((start + end) / 2)
    QApplication.processEvents()
    a, b = view.mapFromScene(start), view.mapFromScene(end)
    _send(view, QEvent.MouseButtonPress, a, Qt.LeftButton, Qt.LeftButton, mods)
    for i in range(1, steps + 1):
        p = a + (b - a) * (i / steps)
        _send(view, QEvent.MouseMove, p, Qt.NoButton, Qt.LeftButton, mods)
    _send(view, QEvent.MouseButtonRelease, b, Qt.LeftButton, Qt.NoButton, mods)
    QApplication.processEvents()


def click(view, scene_pt: QPointF, mods=Qt.NoModifier) -> None:
    drag(view, scene_pt, scene_pt, steps=0, mods=mods)


def palette_drop(window, kind: str, model: str, scene_pt: QPointF, tier: str | None = None) -> None:
    """Drop a palette entry on the canvas, with the palette's own drag data."""
    tree = window.palette.tree
    found = None
    for g in range(tree.topLevelItemCount()):
        group = tree.topLevelItem(g)
        for c in range(group.childCount()):
            payload = group.child(c).data(0, Qt.UserRole + 1)
            if payload["kind"] == kind and payload["model"] == model and \
                    payload["props"].get("tier", tier) == tier:
                found = group.child(c)
    assert found is not None, f"no palette entry {kind} {model} {tier}"
    mime = tree.mimeData([found])
    pos = viewport_point(window.view, scene_pt)
    vp = window.view.viewport()
    for cls in (QDragEnterEvent, QDragMoveEvent):
        QApplication.sendEvent(vp, cls(pos, Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier))
    QApplication.sendEvent(vp, QDropEvent(QPointF(pos), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier))
    QApplication.processEvents()


def center_of(window, ident: str) -> QPointF:
    return window.scene.item_of(ident).sceneBoundingRect().center()


def new_ids(before: set, window) -> list[str]:
    return [i for i in window.design.topology.components if i not in before]


def random_edit(rng, w) -> None:
    """One random edit, undo or redo through the window's editor (soak tests); an edit the
    editor refuses raises RefusedEdit, as it would for a user."""
    ed, topo = w.editor, w.design.topology
    comps = list(topo.components)
    op = rng.choice(["place", "place", "connect", "connect", "move", "delete", "field", "paste",
                     "attach", "layout_rare", "undo", "undo", "redo"])
    if op == "place":
        kind = rng.choice(["rack", "gpu_server", "dpu", "nic", "switch", "storage"])
        models = ed.catalog.ids({"gpu_server": "server"}.get(kind, kind))
        into = None
        if kind in ("dpu", "nic") and topo.servers() and rng.random() < 0.7:
            into = rng.choice(topo.servers()).id
        elif kind == "gpu_server" and topo.racks() and rng.random() < 0.5:
            into = rng.choice(topo.racks()).id
        ed.place(kind, rng.choice(models), (rng.uniform(-2000, 2000), rng.uniform(-2000, 2000)), into)
    elif op == "connect" and len(comps) > 1:
        ed.connect(*rng.sample(comps, 2))
    elif op == "move" and comps:
        ids = rng.sample(comps, min(len(comps), rng.randint(1, 3)))
        ed.move({i: (rng.uniform(-2000, 2000), rng.uniform(-2000, 2000)) for i in ids})
    elif op == "delete" and (comps or topo.links):
        pool = comps + list(topo.links)
        ed.delete(rng.sample(pool, min(len(pool), rng.randint(1, 2))))
    elif op == "field" and comps:
        cid = rng.choice(comps)
        kind = topo.components[cid].kind
        name, value = {"switch": ("ports", rng.randint(8, 128)), "gpu_server": ("gpu_count", rng.randint(1, 16)),
                       "rack": ("rack_units", rng.randint(20, 48)), "storage": ("capacity_TB", 100.0),
                       "dpu": ("arm_cores", rng.randint(8, 32)), "nic": ("ports", rng.randint(1, 4))}[kind]
        ed.set_fields([cid], name, value)
    elif op == "paste" and comps:
        ed.duplicate(rng.sample(comps, min(len(comps), 2)))
    elif op == "attach" and topo.servers():
        ports = [c.id for c in topo.components.values() if c.kind in ("dpu", "nic")]
        if ports:
            ed.attach(rng.choice(ports), rng.choice(topo.servers()).id)
    elif op == "layout_rare" and rng.random() < 0.05:
        ed.auto_layout()
    elif op == "undo":
        ed.stack.undo()
    elif op == "redo":
        ed.stack.redo()
