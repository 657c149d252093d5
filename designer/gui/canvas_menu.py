"""Canvas context menu and find-by-name (issue 23: editing as in draw.io and KiCad).

* A right click on the canvas selects what is under the pointer (a component, else a link near
  it; the selection stays when the click is on a selected item, as in draw.io) and opens a menu
  of the window's own actions for it: Inspect, Cut, Copy, Paste here, Duplicate, Delete, Find,
  Zoom to fit. The menu holds the main window's QActions, so a shortcut, a menu entry and the
  context menu run the same code.
* Edit → Find (Ctrl+F) lists the components and links whose id or name holds the typed text
  (:func:`find_matches`); Enter or a double click brings the chosen one into view and selects it.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (QDialog, QLabel, QLineEdit, QListWidget, QListWidgetItem, QMenu,
                               QVBoxLayout)

from designer.topology.kinds import KIND_LABEL

#: most matches the find list shows (the first ones by the order of :func:`find_matches`)
FIND_LIMIT = 200


def find_matches(topology: Any, text: str, limit: int = FIND_LIMIT) -> list[tuple[str, str]]:
    """``(id, description)`` of the components (then links) whose id or name holds ``text``
    (case ignored), exact id or name matches first, then those that start with it, then the rest,
    each group in model order; at most ``limit``."""
    needle = text.strip().lower()
    if not needle:
        return []
    ranked: list[tuple[int, int, str, str]] = []
    for n, comp in enumerate(topology.components.values()):
        cid, name = comp.id.lower(), (comp.name or "").lower()
        if needle in cid or needle in name:
            rank = 0 if needle in (cid, name) else 1 if cid.startswith(needle) or name.startswith(needle) else 2
            label = comp.name if comp.name and comp.name != comp.id else ""
            where = f" in {comp.parent}" if comp.parent else ""
            ranked.append((rank, n, comp.id, f"{KIND_LABEL[comp.kind]} {comp.id}"
                           + (f" “{label}”" if label else "") + f" ({comp.model}){where}"))
    base = len(topology.components)
    for n, link in enumerate(topology.links.values()):
        if needle in link.id.lower():
            rank = 0 if link.id.lower() == needle else 1 if link.id.lower().startswith(needle) else 2
            ranked.append((rank, base + n, link.id, f"Link {link.id}: {link.a} – {link.b} "
                           f"({link.medium}, {link.speed_Gbps:g} Gb/s × {link.lanes})"))
    ranked.sort(key=lambda r: (r[0], r[1]))
    return [(ident, text) for _, _, ident, text in ranked[:limit]]


class FindDialog(QDialog):
    """Type part of a name or id; Enter (or a double click) goes to the chosen match."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        self.setWindowTitle("Find component or link")
        self.text = QLineEdit(placeholderText="name or id, e.g. srv-12, leaf, rack-3")
        self.text.setClearButtonEnabled(True)
        self.text.setToolTip("Part of a component's or link's id or name; case is ignored")
        self.list = QListWidget()
        self.count = QLabel()
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(self.count)
        layout.addWidget(self.list, 1)
        self.text.textChanged.connect(self.search)
        self.text.returnPressed.connect(self.go)
        self.list.itemActivated.connect(lambda item: self.go(item))
        self.resize(520, 420)

    def search(self, text: str) -> None:
        found = find_matches(self.window.design.topology, text, FIND_LIMIT + 1)
        self.list.clear()
        for ident, label in found[:FIND_LIMIT]:
            item = QListWidgetItem(label)
            item.setData(Qt.UserRole, ident)
            self.list.addItem(item)
        if found:
            self.list.setCurrentRow(0)
        more = f"; the first {FIND_LIMIT} shown" if len(found) > FIND_LIMIT else ""
        self.count.setText("" if not text.strip() else
                           f"{min(len(found), FIND_LIMIT)} match(es){more}" if found else "no match")

    def go(self, item: QListWidgetItem | None = None) -> None:
        item = item or self.list.currentItem()
        if item is None:
            return
        ident = item.data(Qt.UserRole)
        self.window.goto(ident)
        self.window.show_message(f"Found {ident}")


class CanvasMenu(QObject):
    """The canvas's context menu (an event filter on the view's viewport)."""

    #: the window actions the menu offers, in order (None: a separator)
    ENTRIES = ("inspect", None, "cut", "copy", "paste_here", "duplicate", "delete", None, "find", "fit")

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        self.last_menu: QMenu | None = None  #: the menu last built (tests read its actions)
        window.view.viewport().installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.ContextMenu:
            self.open_at(event.pos(), event.globalPos())
            return True
        return False

    def select_under(self, pos) -> list[str]:
        """Select what is under the viewport point ``pos`` unless it is selected already;
        the ids then selected."""
        w = self.window
        scene_pos = w.view.mapToScene(pos)
        item = w.scene.component_at(scene_pos)
        ident = item.cid if item is not None else w.scene.link_at(scene_pos, 6.0 / max(w.view.scale_factor(), 1e-6))
        if ident is not None and ident not in w.scene.selected_ids():
            w.scene.select_ids([ident])
        elif ident is None:
            w.scene.clearSelection()
        return w.scene.selected_ids()

    def build(self, ids: list[str]) -> QMenu:
        w = self.window
        menu = QMenu(w.view)
        actions = w.actions_by_name
        was: dict = {}
        for name in self.ENTRIES:
            if name is None:
                menu.addSeparator()
                continue
            action = actions.get(name)
            if action is None:
                continue
            if name in ("inspect", "cut", "copy", "duplicate", "delete"):
                was[action] = action.isEnabled()
                action.setEnabled(bool(ids))  # for this menu only: restored when it closes
            menu.addAction(action)

        def restore() -> None:
            for action, enabled in was.items():
                action.setEnabled(enabled)

        menu.aboutToHide.connect(restore)
        if ids:
            what = ids[0] if len(ids) == 1 else f"{len(ids)} items"
            menu.insertSection(menu.actions()[0], what)
        self.last_menu = menu
        return menu

    def open_at(self, pos, global_pos) -> None:
        ids = self.select_under(pos)
        self.window._context_point = self.window.view.mapToScene(pos)
        self.build(ids).popup(global_pos)
