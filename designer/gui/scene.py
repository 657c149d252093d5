"""The canvas scene: one item per component and link, kept in step with the model's ChangeEvents.

The scene only *reads* the design. Edits go through :class:`designer.gui.editor.Editor` (undo
commands); the resulting events come back here and add, remove, move or restyle items.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QTimer, Signal
from PySide6.QtGui import QColor, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem, QGraphicsScene

from designer.gui.items import (DETAIL_LOD, DRAWN_IN_RACK, ITEM_CLASS, MEDIUM_COLOR, ComponentItem,
                                LinkItem, PortItem, RackItem, ServerItem)
from designer.topology.design import Design
from designer.topology.layout import layout_by_tier
from designer.topology.model import ChangeEvent, Component

SCENE_MARGIN = 2000.0  # room to pan and to zoom about the cursor near the edges


class DesignScene(QGraphicsScene):
    """Items for a design; ``set_design`` swaps the whole document."""

    rebuilt = Signal()

    def __init__(self, catalog, parent=None) -> None:
        super().__init__(parent)
        self.catalog = catalog
        self.design: Design | None = None
        self.comp_items: dict[str, ComponentItem] = {}
        self.link_items: dict[str, LinkItem] = {}
        self._fallback_pos: dict[str, tuple[float, float]] = {}
        self._details = True
        self._bulk = False
        self._layers: list[QGraphicsPathItem] = []
        self._layers_dirty = True
        self._layers_timer = QTimer(self, singleShot=True, interval=50)
        self._layers_timer.timeout.connect(self._refresh_layers)
        self.setItemIndexMethod(QGraphicsScene.BspTreeIndex)
        self.selectionChanged.connect(self._restyle_selected_links)
        self._selected_links: set[str] = set()

    # ------------------------------------------------------------- document
    def set_design(self, design: Design) -> None:
        if self.design is not None:
            self.design.unsubscribe(self.on_event)
        self.design = design
        design.subscribe(self.on_event)
        self.rebuild()

    def detach(self) -> None:
        """Stop following the design and drop every item (the window is closing)."""
        if self.design is not None:
            self.design.unsubscribe(self.on_event)
        self.clear()
        self.comp_items.clear()
        self.link_items.clear()
        self._selected_links.clear()
        self._layers = []

    def rebuild(self) -> None:
        self.clear()
        self.comp_items.clear()
        self.link_items.clear()
        self._selected_links.clear()
        topo = self.design.topology
        missing = [c for c in topo.components.values() if c.pos is None and c.parent is None]
        self._fallback_pos = layout_by_tier(topo) if missing else {}
        order = ("rack", "gpu_server", "switch", "storage", "dpu", "nic")
        self._bulk = True  # place children once per container, not once per child
        try:
            for kind in order:
                for comp in topo.of_kind(kind):
                    self._add_component(comp)
        finally:
            self._bulk = False
        for cid, item in self.comp_items.items():
            if isinstance(item, (RackItem, ServerItem)):
                self._relayout_children(cid, links=False)
        for link in topo.links.values():
            self._add_link(link)
        self._layers = []
        self._layers_dirty = True
        if not self._details:
            self._show_layers(True)
        self.fit_scene_rect()
        self.rebuilt.emit()

    def fit_scene_rect(self) -> None:
        rect = self.itemsBoundingRect()
        if rect.isNull():
            rect = QRectF(0, 0, 800, 600)
        self.setSceneRect(rect.adjusted(-SCENE_MARGIN, -SCENE_MARGIN, SCENE_MARGIN, SCENE_MARGIN))

    def _grow_scene_rect(self, item: QGraphicsItem) -> None:
        rect = item.sceneBoundingRect()
        if not self.sceneRect().contains(rect):
            self.setSceneRect(self.sceneRect().united(
                rect.adjusted(-SCENE_MARGIN, -SCENE_MARGIN, SCENE_MARGIN, SCENE_MARGIN)))

    # --------------------------------------------------------------- events
    def on_event(self, ev: ChangeEvent) -> None:
        if ev.type == "component_added":
            self._add_component(ev.new)
        elif ev.type == "component_removed":
            self._remove_component(ev.id)
        elif ev.type == "component_changed":
            self._change_component(ev.old, ev.new)
        elif ev.type == "link_added":
            self._add_link(ev.new)
        elif ev.type == "link_removed":
            item = self.link_items.pop(ev.id, None)
            if item is not None:
                self._selected_links.discard(ev.id)
                self.removeItem(item)
                self._layers_dirty = True
                if self._layers and not self._details:
                    self._layers_timer.start()
        elif ev.type == "link_changed":
            item = self.link_items.get(ev.id)
            if item is not None:
                item.set_link(ev.new)
                self._place_link(item)
        elif ev.type == "reset":
            self.rebuild()

    def resolve(self, comp: Component) -> dict:
        return self.catalog.resolve(comp)

    def _add_component(self, comp: Component) -> None:
        comp = self.design.topology.components[comp.id]
        item = ITEM_CLASS[comp.kind](comp, self.resolve(comp))
        item.set_problems([])
        self.comp_items[comp.id] = item
        self.addItem(item)
        if comp.kind in ("dpu", "nic") and not self._details:
            item.setVisible(comp.parent is None)
        self._home(comp)
        for child in self.design.topology.children(comp.id):  # children that arrived first
            self._home(child)
        self._grow_scene_rect(item)

    def _remove_component(self, comp_id: str) -> None:
        item = self.comp_items.pop(comp_id, None)
        if item is None:
            return
        for child in list(item.childItems()):
            if isinstance(child, ComponentItem):  # re-homed by their own change events
                child.setParentItem(None)
        self.removeItem(item)

    def _change_component(self, old: Component, new: Component) -> None:
        item = self.comp_items.get(new.id)
        if item is None:
            return
        comp = self.design.topology.components[new.id]
        item.refresh(comp, self.resolve(comp))
        self._home(comp)
        if old.parent != new.parent and old.parent in self.comp_items:
            self._relayout_children(old.parent)
        if isinstance(item, RackItem | ServerItem):
            self._relayout_children(comp.id)
        self.refresh_links(self.subtree(comp.id))

    def _home(self, comp: Component) -> None:
        """Put a component's item where the model says: in its rack, on its server, or at pos."""
        item = self.comp_items.get(comp.id)
        if item is None:
            return
        parent = self.comp_items.get(comp.parent) if comp.parent else None
        fits = (isinstance(parent, RackItem) and comp.kind in DRAWN_IN_RACK) or (
            isinstance(parent, ServerItem) and isinstance(item, PortItem))
        if isinstance(item, PortItem):
            item.set_attached(bool(fits))
            item.setVisible(not fits or self._details)
        else:
            item.set_in_rack(bool(fits))
        if fits:
            if item.parentItem() is not parent:
                item.setParentItem(parent)
            item.setFlag(QGraphicsItem.ItemIsMovable, isinstance(parent, RackItem))
            self._relayout_children(parent.cid)
        else:
            if item.parentItem() is not None:
                item.setParentItem(None)
            item.setFlag(QGraphicsItem.ItemIsMovable, True)
            pos = comp.pos or self._fallback_pos.get(comp.id) or (0.0, 0.0)
            item.setPos(QPointF(*pos))
            if isinstance(parent, RackItem):
                self._relayout_children(parent.cid)

    def _relayout_children(self, parent_id: str, links: bool = True) -> None:
        if self._bulk:
            return
        parent = self.comp_items.get(parent_id)
        topo = self.design.topology
        if isinstance(parent, ServerItem):
            attached = topo.attached(parent_id)
            for i, child in enumerate(attached):
                item = self.comp_items.get(child.id)
                if item is not None and item.parentItem() is parent:
                    item.setPos(parent.badge_pos(i, len(attached)))
        elif isinstance(parent, RackItem):
            next_slot = 1
            ghosts = []
            for child in topo.members(parent_id):
                item = self.comp_items.get(child.id)
                if item is None:
                    continue
                slot = child.slot if child.slot is not None else next_slot
                next_slot = max(next_slot, slot + int(item.units()))
                if item.parentItem() is parent:
                    item.setPos(parent.member_pos(slot, item.units()))
                else:
                    ghosts.append((slot, item.units(), f"{child.label} ({child.kind})"))
            if ghosts != parent.ghosts:
                parent.ghosts = ghosts
                parent.update()
        else:
            return
        if links:
            self.refresh_links(self.subtree(parent_id))

    def subtree(self, comp_id: str) -> list[str]:
        """A component and everything inside it (rack members, their NICs/DPUs)."""
        ids, todo = [], [comp_id]
        topo = self.design.topology
        while todo:
            cid = todo.pop()
            ids.append(cid)
            todo.extend(c.id for c in topo.children(cid))
        return ids

    # ---------------------------------------------------------------- links
    def _add_link(self, link) -> None:
        item = LinkItem(link)
        item.setVisible(self._details)
        self.link_items[link.id] = item
        self.addItem(item)
        self._place_link(item)

    def _place_link(self, item: LinkItem) -> None:
        self._layers_dirty = True
        if self._layers and not self._details:  # keep the far-out picture current
            self._layers_timer.start()
        a = self.comp_items.get(item.link.a)
        b = self.comp_items.get(item.link.b)
        if a is None or b is None:
            return
        ca, cb = a.sceneBoundingRect().center(), b.sceneBoundingRect().center()
        item.set_ends(a.anchor(cb), b.anchor(ca))

    def refresh_links(self, comp_ids) -> None:
        topo = self.design.topology
        seen = set()
        for cid in comp_ids:
            for link in topo.links_of(cid):
                if link.id not in seen:
                    seen.add(link.id)
                    item = self.link_items.get(link.id)
                    if item is not None:
                        self._place_link(item)

    def _restyle_selected_links(self) -> None:
        now = {i.lid for i in self.selectedItems() if isinstance(i, LinkItem)}
        for lid in now ^ self._selected_links:
            item = self.link_items.get(lid)
            if item is not None:
                item.restyle()
        self._selected_links = now

    # -------------------------------------------------------------- helpers
    def set_detail(self, scale: float) -> None:
        """Level of detail: port badges and individual cables only when zoomed in enough; far out,
        the cables are drawn as one batched path per medium."""
        details = scale >= DETAIL_LOD
        if details == self._details:
            return
        self._details = details
        for item in self.comp_items.values():
            if isinstance(item, PortItem) and item.attached:
                item.setVisible(details)
        for item in self.link_items.values():
            item.setVisible(details)
        self._show_layers(not details)

    def _refresh_layers(self) -> None:
        self._show_layers(not self._details)

    def _show_layers(self, on: bool) -> None:
        if on and self._layers_dirty:
            for layer in self._layers:
                self.removeItem(layer)
            self._layers = []
            paths: dict[str, QPainterPath] = {}
            for item in self.link_items.values():
                line = item.line()
                path = paths.setdefault(item.link.medium, QPainterPath())
                path.moveTo(line.p1())
                path.lineTo(line.p2())
            for medium, path in paths.items():
                layer = QGraphicsPathItem(path)
                pen = QPen(MEDIUM_COLOR.get(medium, QColor("#666")), 0)
                pen.setCosmetic(True)
                layer.setPen(pen)
                layer.setZValue(-1)
                self.addItem(layer)
                self._layers.append(layer)
            self._layers_dirty = False
        for layer in self._layers:
            layer.setVisible(on)

    def set_problems(self, problems) -> None:
        by_comp: dict[str, list] = {}
        by_link: dict[str, list] = {}
        for p in problems:
            if p.component:
                by_comp.setdefault(p.component, []).append(p)
            if p.link:
                by_link.setdefault(p.link, []).append(p)
        for cid, item in self.comp_items.items():
            if item.problems or cid in by_comp:
                item.set_problems(by_comp.get(cid, []))
        for lid, item in self.link_items.items():
            if item.problems or lid in by_link:
                item.set_problems(by_link.get(lid, []))

    def selected_ids(self) -> list[str]:
        """Ids of the selected components and links, in model order."""
        chosen = set()
        for item in self.selectedItems():
            chosen.add(item.cid if isinstance(item, ComponentItem) else item.lid)
        topo = self.design.topology
        return [i for i in list(topo.components) + list(topo.links) if i in chosen]

    def select_ids(self, ids) -> None:
        ids = set(ids)
        self.clearSelection()
        for i in ids:
            item = self.comp_items.get(i) or self.link_items.get(i)
            if item is not None:
                item.setSelected(True)

    def component_at(self, pos: QPointF, kinds=None, exclude=()) -> ComponentItem | None:
        """Topmost component item under a scene point (optionally of some kinds)."""
        for item in self.items(pos):
            if isinstance(item, ComponentItem) and item.isVisible() and item.cid not in exclude:
                if item.body().contains(item.mapFromScene(pos)) and (kinds is None or item.comp.kind in kinds):
                    return item
        return None
