"""Helpers for GUI tests (tests/test_gui_*.py): real mouse events on the canvas, palette drops."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent, QMouseEvent
from PySide6.QtWidgets import QApplication

from designer.gui.mainwindow import MainWindow, example_path
from designer.topology import fileformat


def open_window(qtbot, design=None) -> MainWindow:
    window = MainWindow(design if design is not None else fileformat.load(example_path()))
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=2000)
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
    return window.scene.comp_items[ident].sceneBoundingRect().center()


def new_ids(before: set, window) -> list[str]:
    return [i for i in window.design.topology.components if i not in before]
