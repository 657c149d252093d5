"""The palette: catalog models by kind (switches by tier), searchable, dragged onto the canvas."""

from __future__ import annotations

import json
import re

from PySide6.QtCore import QMimeData, Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QLineEdit, QTreeWidget, QTreeWidgetItem,
                               QVBoxLayout, QWidget)

from designer.gui.icons import kind_icon
from designer.gui.view import PALETTE_MIME
from designer.topology.kinds import CATALOG_KIND, TIERS

#: palette groups: (title, component kind, switch tier or None)
GROUPS = (
    ("Racks", "rack", None),
    ("GPU servers", "gpu_server", None),
    ("DPUs", "dpu", None),
    ("NICs", "nic", None),
    *((f"Switches: {tier}", "switch", tier) for tier in reversed(TIERS)),
    ("Storage", "storage", None),
)

_PAYLOAD = Qt.UserRole + 1

#: the short names planners type for a family (vendor usage: "BF3", "CX7" in NVIDIA's own docs and
#: forums), made from the catalog's names: "bluefield-3" is also found as "bf3", "connectx-7" as "cx7"
_FAMILY = ((re.compile(r"bluefield-?(\d)"), "bf{} bf-{}"), (re.compile(r"connectx-?(\d)"), "cx{} cx-{}"),
           (re.compile(r"quantum-?(\d)"), "q{} quantum{}"), (re.compile(r"spectrum-?(\d)"), "sp{} spectrum{}"))
#: words a planner searches for that a model's name says otherwise
_WORDS = {"infiniband": "ib", "quantum": "ib infiniband", "ethernet": "eth", "spectrum": "eth ethernet", "gbe": "ethernet eth", "nvme": "flash ssd",
          "all-flash": "afa", "dpu": "smartnic", "supernic": "smartnic", "nvl72": "rack-scale"}


def _compact(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "", text.lower())


def search_text(group: str, payload: dict) -> str:
    """What a palette search looks in: the group, name and model id, their family short names
    (:data:`_FAMILY`) and planners' words (:data:`_WORDS`)."""
    hay = f"{group} {payload['name']} {payload['model']}".lower()
    extra = [fmt.format(m.group(1), m.group(1)) for rx, fmt in _FAMILY for m in rx.finditer(hay)]
    extra += [alias for word, alias in _WORDS.items() if word in hay]
    return " ".join([hay, *extra])


def matches(words: list[str], hay: str) -> bool:
    """Every word of the search is in ``hay``, as typed or without its punctuation ("cx-7", "h100")."""
    flat = _compact(hay)
    return all(w in hay or (_compact(w) and _compact(w) in flat) for w in words)


def payloads(catalog) -> list[tuple[str, str, list[dict]]]:
    """(group title, kind, [payload]) for every palette group; a payload is what a drop places."""
    out = []
    for title, kind, tier in GROUPS:
        items = []
        for entry in catalog.entries(CATALOG_KIND[kind]):
            props = {"tier": tier} if tier is not None and entry.get("tier", "leaf") != tier else {}
            items.append({"kind": kind, "model": entry["id"], "name": entry.get("name", entry["id"]),
                          "props": props, "source": entry.get("source", "")})
        out.append((title, kind, items))
    return out


class _Tree(QTreeWidget):
    def mimeData(self, items):  # noqa: N802 - Qt's name
        payload = next((i.data(0, _PAYLOAD) for i in items if i.data(0, _PAYLOAD)), None)
        data = QMimeData()
        if payload:
            data.setData(PALETTE_MIME, json.dumps(payload).encode())
            data.setText(payload["model"])
        return data

    def mimeTypes(self):  # noqa: N802
        return [PALETTE_MIME]


class Palette(QWidget):
    """Search box over a tree of catalog models; ``activated(payload)`` on double-click/Enter."""

    activated = Signal(dict)

    def __init__(self, catalog, parent=None) -> None:
        super().__init__(parent)
        self.search = QLineEdit(placeholderText="Search models… (bf3, cx7, h100, 800G)")
        self.search.setToolTip("Words of a model's name or id, or a short name: bf3 (BlueField-3), "
                               "cx7 (ConnectX-7), h100, ib / eth, 400g")
        self.search.setClearButtonEnabled(True)
        self.tree = _Tree()
        self.tree.setHeaderHidden(True)
        self.tree.setDragEnabled(True)
        self.tree.setDragDropMode(QAbstractItemView.DragOnly)
        self.tree.setRootIsDecorated(True)
        self.tree.setIndentation(14)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.search)
        layout.addWidget(self.tree)
        self.search.textChanged.connect(self.filter)
        self.tree.itemActivated.connect(self._activated)
        self.set_catalog(catalog)

    def set_catalog(self, catalog) -> None:
        self.tree.clear()
        for title, kind, items in payloads(catalog):
            group = QTreeWidgetItem([title])
            group.setIcon(0, kind_icon(kind))
            group.setFlags(Qt.ItemIsEnabled)
            font = group.font(0)
            font.setBold(True)
            group.setFont(0, font)
            for payload in items:
                child = QTreeWidgetItem([payload["name"]])
                child.setData(0, _PAYLOAD, payload)
                child.setIcon(0, kind_icon(kind, payload["props"].get("tier")))
                child.setToolTip(0, f"{payload['name']} ({payload['model']})\n{payload['source']}\nDrag onto the canvas "
                                    "(a server into a rack, a DPU/NIC onto a server)")
                child.setFlags(Qt.ItemIsEnabled | Qt.ItemIsSelectable | Qt.ItemIsDragEnabled)
                group.addChild(child)
            self.tree.addTopLevelItem(group)
            group.setExpanded(True)
        self.filter(self.search.text())

    def filter(self, text: str) -> None:
        words = text.lower().split()
        for g in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(g)
            group_hit = all(w in group.text(0).lower() for w in words)
            shown = 0
            for c in range(group.childCount()):
                child = group.child(c)
                payload = child.data(0, _PAYLOAD)
                hit = group_hit or matches(words, search_text(group.text(0), payload))
                child.setHidden(not hit)
                shown += hit
            group.setHidden(shown == 0)

    def _activated(self, item: QTreeWidgetItem) -> None:
        payload = item.data(0, _PAYLOAD)
        if payload:
            self.activated.emit(payload)

    def visible_models(self) -> list[str]:
        out = []
        for g in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(g)
            for c in range(group.childCount()):
                if not group.isHidden() and not group.child(c).isHidden():
                    out.append(group.child(c).data(0, _PAYLOAD)["model"])
        return out
