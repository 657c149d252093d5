"""The canvas scene: one item per component and link, kept in step with the model's ChangeEvents.

The scene only *reads* the design. Edits go through :class:`designer.gui.editor.Editor` (undo
commands); the resulting events come back here and add, remove, move or restyle items.
"""

from __future__ import annotations

import time
from itertools import repeat

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt, Signal
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QGraphicsView, QToolTip

from designer.gcpause import collector_paused, paused
from designer.gui.boxes import BoxLayer
from designer.gui.cables import BUNDLE_SHARE, MANAGEMENT, Bundle, Cable, CableLayer, util_bin
from designer.gui.items import (BADGE_H, BADGE_W, DETAIL_LOD, DRAWN_IN_RACK, ITEM_CLASS,
                                ComponentItem, PortItem, RackItem, ServerItem, anchor)
from designer.topology.design import Design
from designer.topology.layout import layout_by_tier
from designer.topology.management import is_management_switch, management_ids
from designer.topology.model import ChangeEvent, Component

SCENE_MARGIN = 2000.0  # room to pan and to zoom about the cursor near the edges
LINK_PICK_PX = 4.0     # a click or tooltip this close to a cable (screen pixels) is on it


class DesignScene(QGraphicsScene):
    """Items for a design; ``set_design`` swaps the whole document.

    Components are items; cables are :class:`Cable` records in ``link_items`` drawn by one
    :class:`CableLayer`, and their selection is kept here (``selected_links``) beside Qt's.

    With ``lazy_badges`` (the window's canvas) the NICs/DPUs on the servers of a document get no
    item when it is shown: their badges are made per server when a view shows that server at a
    zoom that draws badges (:meth:`ensure_badges`), or when one is asked for (:meth:`item_of`,
    :meth:`select_ids`, an edit of it). Zoomed out no badge is drawn anyway (``DETAIL_LOD``), and
    a 20,000-server design has 200,000 of them. Until then a badge's place is worked out from its
    server (:meth:`_badge_rects`, the same ``ServerItem.badge_corners``), so its cables end where its
    item will be. The report's scene (no view) makes them all, as before.
    """

    rebuilt = Signal()
    overlay_changed = Signal()

    def __init__(self, catalog, parent=None, lazy_badges: bool = False) -> None:
        super().__init__(parent)
        self.catalog = catalog
        self.lazy_badges = lazy_badges
        #: NICs/DPUs without an item yet (see the class doc): port ids by server, server by port
        self._lazy: dict[str, list[str]] = {}
        self._lazy_server: dict[str, str] = {}
        self._ensured = QRectF()  # the scene rect whose servers have their badges made
        self._comp_problems: dict[str, list] = {}  # the last check's problems, by component
        self._marked: set[str] = set()             # the overlay's marked components and cables
        self._groups: dict[str, str | None] = {}   # group_of, until a component changes
        self.design: Design | None = None
        self.comp_items: dict[str, ComponentItem] = {}
        self.link_items: dict[str, Cable] = {}
        self.overlay: dict[str, float] | None = None  # what the cables are coloured by
        self._overlay_mean: dict[str, float] | None = None
        #: rails of the design (0, 1, ... : the NIC/DPU slots whose cables are coloured apart);
        #: empty when the servers have fewer than two cabled NICs/DPUs
        self.rails: list[int] = []
        self._leaf_rail: dict[str, int] = {}
        self._fallback_pos: dict[str, tuple[float, float]] = {}
        self._details = True
        self._bulk = False
        self._rects: dict[str, QRectF | None] | None = None
        self._bundled: tuple | None = None  # the last bundling (:meth:`bundle_styles`)
        self.setItemIndexMethod(QGraphicsScene.BspTreeIndex)
        self.cables = CableLayer(self.link_items)
        self.cables.bundler = self.bundles
        self.cables.bundle_line = self.bundle_line
        self.cables.group_box = self.group_box
        self.cables.restyler = self.bundle_styles
        self.addItem(self.cables)
        self.boxes = BoxLayer(self.comp_items)
        self.addItem(self.boxes)
        self.sceneRectChanged.connect(self._extent_changed)
        self.selectionChanged.connect(self._selection_changed)

    def _extent_changed(self, rect: QRectF) -> None:
        self.cables.set_extent(rect)
        self.boxes.set_extent(rect)

    def _selection_changed(self) -> None:
        if self.boxes.active:  # far out the selected boxes are drawn by the box layer, on top
            self.boxes.update()

    def render(self, painter, target=QRectF(), source=QRectF(), mode=Qt.KeepAspectRatio) -> None:
        """As Qt's, with the items painting themselves (an export: its own zoom's detail), the
        box layer's pictures being for the view's zoom only."""
        active = self.boxes.active
        self.boxes.set_active(False)
        try:
            super().render(painter, target, source, mode)
        finally:
            self.boxes.set_active(active)

    # ------------------------------------------------------------- document
    def set_design(self, design: Design) -> None:
        if self.design is not None:
            self.design.unsubscribe(self.on_event)
        self.design = design
        design.subscribe(self.on_event)
        self.rebuild()

    def _drop_items(self) -> None:
        active = self.boxes.active
        self.comp_items.clear()
        self.link_items.clear()
        self._lazy.clear()
        self._lazy_server.clear()
        self._ensured = QRectF()
        self._comp_problems, self._marked = {}, set()
        self._groups.clear()
        self.clear()
        self.cables = CableLayer(self.link_items)
        self.cables.bundler = self.bundles
        self.cables.bundle_line = self.bundle_line
        self.cables.group_box = self.group_box
        self.cables.restyler = self.bundle_styles
        self.cables.set_extent(self.sceneRect())
        self.addItem(self.cables)
        self.boxes = BoxLayer(self.comp_items)
        self.boxes.set_extent(self.sceneRect())
        self.boxes.active = active  # the new items are flagged as they come (``adopt``)
        self.addItem(self.boxes)

    def detach(self) -> None:
        """Stop following the design and drop every item (the window is closing)."""
        if self.design is not None:
            self.design.unsubscribe(self.on_event)
        self._drop_items()

    def rebuild(self) -> None:
        """Items for the whole document. The garbage collector pauses meanwhile (as the loader
        does, topology/fileformat.py): the hundreds of thousands of items and cables made here
        are no garbage, and a full collection over a large design's objects costs seconds."""
        with collector_paused():
            self._rebuild()

    def _rebuild(self) -> None:
        self._drop_items()
        self.overlay = self._overlay_mean = self.overlay_peak = None
        topo = self.design.topology
        missing = [c for c in topo.components.values() if c.pos is None and c.parent is None]
        self._fallback_pos = layout_by_tier(topo, self.catalog) if missing else {}
        order = ("rack", "gpu_server", "switch", "storage", "dpu", "nic")
        self._bulk = True  # place children once per container, and size the scene once
        self._resolved = {}  # catalog figures of components without overrides, by kind and model
        try:
            for kind in order:
                lazy = self.lazy_badges and kind in ("dpu", "nic")
                for comp in topo.of_kind(kind):
                    if lazy and comp.parent and isinstance(self.comp_items.get(comp.parent), ServerItem):
                        self._lazy.setdefault(comp.parent, []).append(comp.id)
                        self._lazy_server[comp.id] = comp.parent
                    else:
                        self._add_component(comp)
        finally:
            self._bulk = False
            self._resolved = None
        lazy = self._lazy  # a server whose badges are not made has no child item to place
        for cid, item in self.comp_items.items():
            if isinstance(item, RackItem) or (isinstance(item, ServerItem) and cid not in lazy):
                self._relayout_children(cid, links=False)
        self._add_links_bulk(topo.links.values())
        self.assign_rails()
        self.fit_scene_rect()
        self.overlay_changed.emit()
        self.rebuilt.emit()

    def fit_scene_rect(self) -> None:
        rect = QRectF()
        for item in self.comp_items.values():
            if item.parentItem() is None:
                rect = rect.united(item.sceneBoundingRect())
        if rect.isNull():
            rect = QRectF(0, 0, 800, 600)
        self.setSceneRect(rect.adjusted(-SCENE_MARGIN, -SCENE_MARGIN, SCENE_MARGIN, SCENE_MARGIN))

    def content_rect(self) -> QRectF:
        """Where the components are (zoom to fit shows this)."""
        return self.sceneRect().adjusted(SCENE_MARGIN, SCENE_MARGIN, -SCENE_MARGIN, -SCENE_MARGIN)

    def _grow_scene_rect(self, item: QGraphicsItem) -> None:
        if self._bulk:
            return
        rect = item.sceneBoundingRect()
        if not self.sceneRect().contains(rect):
            self.setSceneRect(self.sceneRect().united(
                rect.adjusted(-SCENE_MARGIN, -SCENE_MARGIN, SCENE_MARGIN, SCENE_MARGIN)))

    # --------------------------------------------------------------- events
    def on_event(self, ev: ChangeEvent) -> None:
        if ev.type.startswith("component_") or ev.type == "reset":
            self._groups.clear()
            self._ensured = QRectF()  # a server may have moved into it
        if ev.id in self._lazy_server and ev.type in ("component_changed", "component_removed"):
            self._make_badges(self._lazy_server[ev.id])  # then handled as any other item
        if ev.type == "component_added":
            self._add_component(ev.new)
        elif ev.type == "component_removed":
            self._remove_component(ev.id)
        elif ev.type == "component_changed":
            self._change_component(ev.old, ev.new)
        elif ev.type == "link_added":
            self._add_link(ev.new)
        elif ev.type == "link_removed":
            self._remove_link(ev.id)
        elif ev.type == "link_changed":
            cable = self.link_items.get(ev.id)
            if cable is not None:
                cable.link = ev.new
                cable.mgmt = self._is_management(ev.new)
                if self.rails:
                    cable.rail = self._rail(ev.new)
                self._place_link(cable)
        elif ev.type == "reset":
            self.rebuild()

    _resolved: dict | None = None

    def resolve(self, comp: Component) -> dict:
        """The component's catalog figures; while the scene is rebuilt, components of one model
        without overrides share one resolution (a 250k-component design has a few dozen)."""
        if self._resolved is None or comp.props:
            return self.catalog.resolve(comp)
        key = (comp.kind, comp.model)
        found = self._resolved.get(key)
        if found is None:
            found = self._resolved[key] = self.catalog.resolve(comp)
        return found

    def _add_component(self, comp: Component) -> None:
        comp = self.design.topology.components[comp.id]
        item = ITEM_CLASS[comp.kind](comp, self.resolve(comp))
        self.comp_items[comp.id] = item
        self.addItem(item)
        self.boxes.adopt(item)
        if comp.kind in ("dpu", "nic") and not self._details:
            item.setVisible(comp.parent is None)
        self._home(comp)
        if not self._bulk:  # a new document adds parents before children: none arrived first
            for child in self.design.topology.children(comp.id):  # children that arrived first
                self._home(child)
        self._grow_scene_rect(item)

    def _remove_component(self, comp_id: str) -> None:
        self._make_badges(comp_id)  # a server's badges are re-homed below, as made ones are
        item = self.comp_items.pop(comp_id, None)
        if item is None:
            return
        self.boxes.removed(comp_id)
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
        if comp.kind == "switch" and (old.props.get("management") is True) != (new.props.get("management") is True):
            for link in self.design.topology.links_of(comp.id):  # drawn muted, or no longer
                if link.id in self.link_items:
                    self.link_items[link.id].mgmt = self._is_management(link)
            self.cables.changed()
        if self.rails and comp.kind in ("nic", "dpu") and (old.slot, old.parent) != (new.slot, new.parent):
            for link in self.design.topology.links_of(comp.id):
                if link.id in self.link_items:
                    self.link_items[link.id].rail = self._rail(link)
        self.refresh_links(self.subtree(comp.id))
        if (old.parent, old.kind) != (new.parent, new.kind) or (
                new.kind in ("nic", "dpu") and old.slot != new.slot):
            self.cables.changed()  # groups or rails changed: the bundles are worked out anew

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
            self._grow_scene_rect(item)  # moved out of the scene: fit and the map include it
            if isinstance(parent, RackItem):
                self._relayout_children(parent.cid)

    def _relayout_children(self, parent_id: str, links: bool = True) -> None:
        if self._bulk:
            return
        parent = self.comp_items.get(parent_id)
        topo = self.design.topology
        if isinstance(parent, ServerItem):
            attached = topo.attached(parent_id)
            for child, corner in zip(attached, parent.badge_corners(len(attached))):
                item = self.comp_items.get(child.id)
                if item is not None and item.parentItem() is parent:
                    item.setPos(QPointF(*corner))
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
        cable = Cable(link)
        cable.mgmt = self._is_management(link)
        if self.overlay is not None:
            cable.util = self.overlay.get(link.id, 0.0)
            mean = self._overlay_mean
            cable.mean = None if mean is None else mean.get(link.id, 0.0)
            cable.peak = None if self.overlay_peak is None else self.overlay_peak.get(link.id, 0.0)
        if self.rails:
            cable.rail = self._rail(link)
        self.link_items[link.id] = cable
        self._place_link(cable)

    def _add_links_bulk(self, links) -> None:
        """Cables for every link of a new document at once: the same lines as :meth:`_place_link`
        (``items.anchor``: the middle of the top or bottom edge of each box, toward the other),
        worked out with numpy from each box's x, y, width and height (the same double
        arithmetic as QRectF's centre and bottom), and one repaint for all. The layer is handed
        the array, so that it need not read 500k end points back (:meth:`CableLayer.known`)."""
        cids: list[str] = []
        boxes: list[tuple[float, float, float, float]] = []  # x, y, width, height in the scene
        for cid, item in self.comp_items.items():
            r = item.scene_body()
            cids.append(cid)
            boxes.append((r.x(), r.y(), r.width(), r.height()))
        for sid in self._lazy:  # badges not made yet
            for cid, x, y in self._badge_corners(sid):
                cids.append(cid)
                boxes.append((x, y, BADGE_W, BADGE_H))
        links = list(links)
        ids = [link.id for link in links]
        row = dict(zip(cids, range(len(cids))))
        a = np.fromiter(map(row.get, [link.a for link in links], repeat(-1)), dtype=np.int64,
                        count=len(links))
        b = np.fromiter(map(row.get, [link.b for link in links], repeat(-1)), dtype=np.int64,
                        count=len(links))
        box = np.array(boxes + [(0.0, 0.0, 0.0, 0.0)], dtype=float)  # row -1: no box
        x, y, w, h = (box[:, k] for k in range(4))
        cx, cy, bottom = x + w / 2, y + h / 2, y + h
        xy = np.column_stack([cx[a], np.where(cy[b] < cy[a], y[a], bottom[a]),
                              cx[b], np.where(cy[a] < cy[b], y[b], bottom[b])])
        xy[(a < 0) | (b < 0)] = 0.0  # an end without a box: the cable is drawn nowhere
        ends = list(zip(*xy.T.tolist()))
        fresh = not self.link_items
        made = list(map(Cable, links, repeat(None), ends))
        managed = management_ids(self.design.topology)
        if managed:  # management cables are drawn muted
            for cable, link in zip(made, links):
                cable.mgmt = link.a in managed or link.b in managed
        self.link_items.update(zip(ids, made))
        if fresh:
            self.cables.known(ids, ends, xy)
        self.cables.changed()

    # -------------------------------------------------------------- bundles
    def group_of(self, cid: str) -> str | None:
        """The box a component's cables are bundled at: its rack when it is drawn in one (a
        server, with its NICs/DPUs), else its server's (a NIC/DPU), else its own. Remembered
        until a component changes."""
        if cid in self._groups:
            return self._groups[cid]
        item = self.comp_items.get(cid)
        if item is None and cid in self._lazy_server:  # a badge not made yet: on its server
            item = self.comp_items.get(self._lazy_server[cid])
        if item is None:
            return None
        parent = item.parentItem()
        while parent is not None and isinstance(parent, ComponentItem):
            item, parent = parent, parent.parentItem()
        self._groups[cid] = item.cid
        return item.cid

    @paused  # tens of thousands of bundles and lines, no cycles: no collection over the design
    def bundles(self) -> list[Bundle] | None:
        """The cables between each pair of groups (:meth:`group_of`) as one :class:`Bundle`:
        its line joins the two boxes, its pen is the rail's when all its cables are of one rail,
        the busiest cable's utilization under the overlay, else the medium's. Counted with numpy
        (a 250k-component design has 500k cables)."""
        cables = list(self.link_items.values())
        if not cables:
            return []
        names: dict[str, int] = {}
        groups: list[str] = []
        index_of: dict[str, int] = {}

        lazy = self._lazy_server

        def index(cid: str) -> int:
            found = index_of.get(cid)
            if found is None:
                if cid in lazy:  # a badge not made yet: its server's group
                    found = index_of[cid] = index(lazy[cid])
                    return found
                g = self.group_of(cid)
                if g is None:
                    found = -1
                else:
                    found = names.get(g)
                    if found is None:
                        found = names[g] = len(groups)
                        groups.append(g)
                index_of[cid] = found
            return found

        # a badge not made yet stands for its server (index() would look the server up for it:
        # the same numbers); groups numbered in the order their ends first come (all a ends,
        # then all b ends); then each end looked up (a 250k-component design: 1M ends, 65k
        # distinct once the 204k badges are their servers)
        ends_a = [c.link.a for c in cables]
        ends_a = list(map(lazy.get, ends_a, ends_a))
        ends_b = [c.link.b for c in cables]
        ends_b = list(map(lazy.get, ends_b, ends_b))
        for cid in dict.fromkeys(ends_a + ends_b):
            index(cid)
        a = np.fromiter(map(index_of.__getitem__, ends_a), dtype=np.int64, count=len(cables))
        b = np.fromiter(map(index_of.__getitem__, ends_b), dtype=np.int64, count=len(cables))
        keep = (a >= 0) & (b >= 0) & (a != b)
        lo, hi = np.minimum(a, b)[keep], np.maximum(a, b)[keep]
        rows = np.nonzero(keep)[0]
        pair = lo * len(groups) + hi
        uniq, first, inverse, counts = np.unique(pair, return_index=True, return_inverse=True,
                                                 return_counts=True)
        if len(uniq) > BUNDLE_SHARE * len(cables):
            return None  # little to merge: the cables are drawn one by one
        rail = np.fromiter((-1 if c.rail is None else c.rail for c in cables), dtype=np.int64,
                           count=len(cables))[rows]
        rail_lo = np.full(len(uniq), np.iinfo(np.int64).max)
        rail_hi = np.full(len(uniq), -2)
        np.minimum.at(rail_lo, inverse, rail)
        np.maximum.at(rail_hi, inverse, rail)
        util = None
        if self.overlay is not None:
            values = np.fromiter((0.0 if c.util is None else c.util for c in cables), dtype=float,
                                 count=len(cables))[rows]
            util = np.zeros(len(uniq))
            np.maximum.at(util, inverse, values)
        # each group's box once, then every bundle's line from arrays (items.anchor's rule: the
        # middle of the top or bottom edge of each box, toward the other's centre; the same
        # double arithmetic as QRectF's centre and bottom)
        box = np.full((len(groups) + 1, 4), np.nan)  # row -1 (no group): no box
        for k, g in enumerate(groups):
            found = self.group_box(g)
            if found is not None:
                box[k] = found
        ga_rows, gb_rows = lo[first], hi[first]
        x, y, w, h = (box[:, k] for k in range(4))
        cx, cy, bottom = x + w / 2, y + h / 2, y + h
        a_x, b_x = cx[ga_rows], cx[gb_rows]
        a_y = np.where(cy[gb_rows] < cy[ga_rows], y[ga_rows], bottom[ga_rows])
        b_y = np.where(cy[ga_rows] < cy[gb_rows], y[gb_rows], bottom[gb_rows])
        drawn = ~np.isnan(box[ga_rows, 0]) & ~np.isnan(box[gb_rows, 0])
        ends = np.column_stack([a_x, a_y, b_x, b_y]).tolist()
        ga_list, gb_list = ga_rows.tolist(), gb_rows.tolist()
        out = []
        for n in np.flatnonzero(drawn).tolist():
            ga, gb = groups[ga_list[n]], groups[gb_list[n]]
            line = QLineF(*ends[n])
            one_rail = rail_lo[n] == rail_hi[n] and rail_lo[n] >= 0
            mgmt = cables[int(rows[first[n]])].mgmt  # a management switch is a group of its own
            style: str | int
            if mgmt:
                style, one_rail = MANAGEMENT, False
            elif util is not None:
                style = util_bin(float(util[n]))
            elif one_rail:
                style = f"rail:{int(rail_lo[n])}"
            else:
                style = cables[int(rows[first[n]])].link.medium
            medium = cables[int(rows[first[n]])].link.medium
            rails = frozenset((int(rail_lo[n]),)) if one_rail else frozenset()
            bundle = Bundle(ga, gb, line, int(counts[n]), style, rails)
            bundle.base_style = MANAGEMENT if mgmt else medium
            out.append(bundle)
        #: what :meth:`bundle_styles` needs to restyle these bundles without bundling anew: the
        #: cables' ids, the rows bundled, each one's bundle (among ``uniq``) and the drawn ones
        self._bundled = (list(self.link_items), rows, inverse.reshape(-1), len(uniq),
                         np.flatnonzero(drawn), out)
        return out

    def bundle_styles(self, bundles: list[Bundle]) -> bool:
        """Restyle ``bundles`` (the last :meth:`bundles`) after the cables' utilizations changed
        (the overlay), as :meth:`bundles` would style them: the busiest cable's utilization bin
        under the overlay, else the rail's or the medium's. False (nothing changed) when the
        cables are no longer those bundled: the caller bundles anew."""
        known = self._bundled
        if known is None or known[0] != list(self.link_items) or len(known[5]) != len(bundles) or any(
                (b.a, b.b) != (k.a, k.b) for b, k in zip(bundles, known[5])):
            return False
        _, rows, inverse, n_uniq, drawn, _ = known
        if self.overlay is None:
            for b in bundles:
                b.style = (f"rail:{next(iter(b.rails))}" if b.rails else b.base_style)
            return True
        cables = list(self.link_items.values())
        values = np.fromiter((0.0 if c.util is None else c.util for c in cables), dtype=float,
                             count=len(cables))[rows]
        util = np.zeros(n_uniq)
        np.maximum.at(util, inverse, values)
        for b, u in zip(bundles, util[drawn].tolist()):
            b.style = MANAGEMENT if b.base_style == MANAGEMENT else util_bin(u)
        return True

    # ---------------------------------------------------------------- rails
    def _adapter_rail(self, cid: str) -> int | None:
        """Rail of a NIC/DPU on a server: its slot (the templates number a server's NICs 0, 1, ...
        and cable NIC k of every server to the leaves of rail k)."""
        comp = self.design.topology.components.get(cid)
        if comp is None or comp.kind not in ("nic", "dpu") or not comp.parent or comp.slot is None:
            return None
        return int(comp.slot)

    def _is_management(self, link) -> bool:
        """Whether ``link`` ends on a management switch (its two ends looked at only)."""
        comps = self.design.topology.components
        return is_management_switch(comps.get(link.a)) or is_management_switch(comps.get(link.b))

    def _rail(self, link) -> int | None:
        """A cable's rail: its NIC's/DPU's; a switch-to-switch cable takes the rail of the one
        switch whose server cables are all of one rail (a rail leaf's uplink), else none."""
        for end in (link.a, link.b):
            rail = self._adapter_rail(end)
            if rail is not None:
                return rail
        rails = {self._leaf_rail[e] for e in (link.a, link.b) if e in self._leaf_rail}
        return rails.pop() if len(rails) == 1 else None

    def assign_rails(self) -> None:
        """Colour the cables by rail when the servers have two or more cabled NICs/DPUs."""
        topo = self.design.topology
        adapter = {c.id: int(c.slot) for c in topo.components.values()
                   if c.kind in ("nic", "dpu") and c.parent and c.slot is not None}
        seen: dict[str, set[int]] = {}
        rails: set[int] = set()
        for link in topo.links.values():
            ra, rb = adapter.get(link.a), adapter.get(link.b)
            if ra is not None:
                rails.add(ra)
                seen.setdefault(link.b, set()).add(ra)
            if rb is not None:
                rails.add(rb)
                seen.setdefault(link.a, set()).add(rb)
        self.rails = sorted(rails) if len(rails) > 1 else []
        self._leaf_rail = {sw: r.pop() for sw, r in seen.items() if len(r) == 1} if self.rails else {}
        if not self.rails:
            for cable in self.link_items.values():
                cable.rail = None
        else:  # as _rail: the adapter's, else the one rail leaf's at either end
            get, leaf = adapter.get, self._leaf_rail.get
            for cable in self.link_items.values():
                link = cable.link
                rail = get(link.a)
                if rail is None:
                    rail = get(link.b)
                    if rail is None:
                        la, lb = leaf(link.a), leaf(link.b)
                        rail = la if lb is None or la == lb else (lb if la is None else None)
                cable.rail = rail
        self.cables.changed()

    def _remove_link(self, lid: str) -> None:
        if self.link_items.pop(lid, None) is None:
            return
        self.cables.flagged.discard(lid)
        self.cables.changed()
        if lid in self.cables.selected:
            self.cables.selected.discard(lid)
            self.selectionChanged.emit()

    def _place_link(self, cable: Cable, moved: bool = False) -> None:
        """Set a cable's line from its ends' boxes; unless ``moved`` (the caller tells the layer
        which groups moved, :meth:`refresh_links`), the layer's bundles are worked out anew."""
        ra, rb = self._body_rect(cable.link.a), self._body_rect(cable.link.b)
        if ra is not None and rb is not None:
            cable.line = QLineF(anchor(ra, rb.center()), anchor(rb, ra.center()))
        if not moved:
            self.cables.changed()

    def group_box(self, group: str) -> tuple[float, float, float, float] | None:
        """A bundle group's box (scene x, y, width, height), or None."""
        r = self._body_rect(group)
        return None if r is None else (r.x(), r.y(), r.width(), r.height())

    def bundle_line(self, ga: str, gb: str) -> QLineF | None:
        """The line of the bundle between groups ``ga`` and ``gb`` (as :meth:`bundles` draws it)."""
        ra, rb = self._body_rect(ga), self._body_rect(gb)
        if ra is None or rb is None:
            return None
        return QLineF(anchor(ra, rb.center()), anchor(rb, ra.center()))

    def _body_rect(self, cid: str) -> QRectF | None:
        """Scene rect of a component's box (remembered while the scene is being rebuilt)."""
        if self._rects is not None and cid in self._rects:
            return self._rects[cid]
        item = self.comp_items.get(cid)
        if item is not None:
            rect = item.scene_body()
        else:
            rect = self._badge_rects(self._lazy_server[cid]).get(cid) if cid in self._lazy_server else None
        if self._rects is not None:
            self._rects[cid] = rect
        return rect

    def refresh_links(self, comp_ids) -> None:
        """Place anew the cables of components ``comp_ids`` (moved: their groups, and so the
        bundles far out, stay; only the bundles touching their groups get new lines)."""
        topo = self.design.topology
        seen = set()
        comp_ids = list(comp_ids)
        for cid in comp_ids:
            for link in topo.links_of(cid):
                if link.id not in seen:
                    seen.add(link.id)
                    cable = self.link_items.get(link.id)
                    if cable is not None:
                        self._place_link(cable, moved=True)
        if seen:
            self.cables.moved({self.group_of(cid) for cid in comp_ids}, seen)
        self.boxes.moved(comp_ids)

    def link_at(self, pos: QPointF, tolerance: float) -> str | None:
        """Id of the cable nearest to a scene point, within ``tolerance`` scene units."""
        return self.cables.cable_at(pos, tolerance)

    def links_in(self, rect: QRectF) -> list[str]:
        return self.cables.cables_in(rect)

    def bounds_of(self, ident: str) -> QRectF | None:
        """Scene rectangle of a component or cable, or None."""
        item = self.comp_items.get(ident)
        if item is not None:
            return item.sceneBoundingRect()
        if ident in self._lazy_server:
            return self._badge_rects(self._lazy_server[ident]).get(ident)
        cable = self.link_items.get(ident)
        return QRectF(cable.line.p1(), cable.line.p2()).normalized() if cable is not None else None

    def helpEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Tooltips: the component under the pointer, else the cable near it."""
        pos = event.scenePos()
        view = event.widget().parentWidget() if event.widget() is not None else None
        item = self.component_at(pos)
        text = item.tooltip() if item is not None else None
        if item is None and isinstance(view, QGraphicsView):
            lid = self.link_at(pos, LINK_PICK_PX / max(view.transform().m11(), 1e-6))
            text = self.link_items[lid].tooltip() if lid is not None else None
        if text:
            QToolTip.showText(event.screenPos(), text, event.widget())
        else:
            QToolTip.hideText()
        event.accept()

    # ------------------------------------------------------------- overlay
    #: what the overlay colours by: "mean" (each cable's utilization averaged over the
    #: iteration, ``Result.link_mean_utilization``) or "peak" (its busiest phase's)
    overlay_view = "mean"
    #: the second view's figures (link id -> 0..1), when the run gave both
    overlay_peak: dict[str, float] | None = None

    def show_utilization(self, link_util: dict[str, float] | None,
                         marked: set[str] | frozenset = frozenset(),
                         peak: dict[str, float] | None = None) -> None:
        """Colour every cable by its utilization (0..1, :data:`UTIL_COLORS`, thicker when busier)
        and outline the components and cables in ``marked`` (the bottlenecks the engine names);
        ``None`` clears both. ``link_util`` is the time-averaged utilization over the iteration
        (``Result.link_mean_utilization``) and ``peak``, when given, the phase peak
        (``Result.links``): :meth:`set_overlay_view` switches between them. A cable missing from
        a dict counts as idle."""
        self._overlay_mean = dict(link_util) if link_util is not None else None
        self.overlay_peak = dict(peak) if peak is not None and link_util is not None else None
        marked = set(marked) if link_util is not None else set()
        self._marked = marked
        for cid, item in self.comp_items.items():
            item.set_marked(cid in marked)
        self._colour_overlay()

    def set_overlay_view(self, view: str) -> None:
        """Colour by ``"mean"`` (time-averaged over the iteration) or ``"peak"`` (the busiest
        phase); the peak view needs the figures :meth:`show_utilization` was given as ``peak``."""
        if view not in ("mean", "peak"):
            raise ValueError(f"overlay view must be 'mean' or 'peak', not {view!r}")
        if view != self.overlay_view:
            self.overlay_view = view
            if self._overlay_mean is not None:
                self._colour_overlay()

    def _colour_overlay(self) -> None:
        mean, peak = self._overlay_mean, self.overlay_peak
        shown = peak if self.overlay_view == "peak" and peak is not None else mean
        self.overlay = shown
        marked = self._marked
        for lid, cable in self.link_items.items():
            cable.util = None if shown is None else float(shown.get(lid, 0.0))
            cable.mean = None if mean is None else float(mean.get(lid, 0.0))
            cable.peak = None if peak is None else float(peak.get(lid, 0.0))
            cable.marked = lid in marked
        self.cables.flagged = {lid for lid, c in self.link_items.items() if c.marked or c.problems}
        self.cables.restyled()
        self.overlay_changed.emit()

    # ----------------------------------------------------------- selection
    def selected_links(self) -> set[str]:
        return set(self.cables.selected)

    def clearSelection(self) -> None:  # noqa: N802 - Qt's name
        """Unselect everything: the items (Qt's selection) and the cables (not items, see above)."""
        super().clearSelection()
        self.set_selected_links(())

    def set_selected_links(self, lids, add: bool = False) -> None:
        """Select cables (with ``add``, on top of the current ones; else instead of them)."""
        new = set(lids) & set(self.link_items)
        if add:
            new |= self.cables.selected
        if new != self.cables.selected:
            self.cables.selected = new
            self.cables.update()
            self.selectionChanged.emit()

    def pick_link(self, lid: str, toggle: bool = False) -> None:
        """A click on a cable: select only it, or (``toggle``) add/remove it."""
        if toggle:
            self.set_selected_links(self.cables.selected ^ {lid})
            return
        blocked = self.blockSignals(True)
        self.clearSelection()
        self.blockSignals(blocked)
        self.set_selected_links({lid})

    # -------------------------------------------------------------- helpers
    def set_detail(self, scale: float) -> None:
        """Level of detail: port badges only when zoomed in enough (the cable layer has its own)."""
        details = scale >= DETAIL_LOD
        if details == self._details:
            return
        self._details = details
        self.boxes.set_active(not details)  # far out the boxes come from its picture
        for item in self.comp_items.values():
            if isinstance(item, PortItem) and item.attached:
                item.setVisible(details)

    def set_problems(self, problems) -> None:
        by_comp: dict[str, list] = {}
        by_link: dict[str, list] = {}
        for p in problems:
            if p.component:
                by_comp.setdefault(p.component, []).append(p)
            if p.link:
                by_link.setdefault(p.link, []).append(p)
        self._comp_problems = by_comp
        for cid, item in self.comp_items.items():
            if item.problems or cid in by_comp:
                item.set_problems(by_comp.get(cid, []))
        for lid, cable in self.link_items.items():
            cable.problems = by_link.get(lid, [])
        self.cables.flagged = {lid for lid, c in self.link_items.items() if c.marked or c.problems}
        self.cables.update()

    def selected_ids(self) -> list[str]:
        """Ids of the selected components and links, in model order."""
        chosen = {item.cid for item in self.selectedItems() if isinstance(item, ComponentItem)}
        chosen |= self.cables.selected
        topo = self.design.topology
        return [i for i in list(topo.components) + list(topo.links) if i in chosen]

    def select_ids(self, ids) -> None:
        ids = set(ids)
        self.clearSelection()
        for i in ids:
            item = self.item_of(i)
            if item is not None:
                item.setSelected(True)
        self.set_selected_links(ids & set(self.link_items))

    def component_at(self, pos: QPointF, kinds=None, exclude=()) -> ComponentItem | None:
        """Topmost component item under a scene point (optionally of some kinds)."""
        for item in self.items(pos):
            if isinstance(item, ComponentItem) and item.isVisible() and item.cid not in exclude:
                if item.body().contains(item.mapFromScene(pos)) and (kinds is None or item.comp.kind in kinds):
                    return item
        return None

    # ---------------------------------------------------- badges made lazily
    def item_of(self, cid: str) -> ComponentItem | None:
        """A component's item, its server's badges made first if they are not yet."""
        if cid in self._lazy_server:
            self._make_badges(self._lazy_server[cid])
        return self.comp_items.get(cid)

    def component_ids(self) -> set[str]:
        """Every component the scene shows: those with an item and the badges not made yet."""
        return set(self.comp_items) | set(self._lazy_server)

    def lazy_badge_count(self) -> int:
        return len(self._lazy_server)

    def ensure_badges(self, rect: QRectF, budget_ms: float | None = None) -> bool:
        """Make the badges of the servers that meet ``rect`` (scene; what a view shows at a zoom
        that draws badges), nearest its centre first; with ``budget_ms``, only as many servers'
        as fit in that time. True when every one is made (False: call again, the view does in
        its next frame: a jump to 50 % on 2,048 servers meets ~150 servers, 1,400 badges)."""
        if not self._lazy or self._ensured.contains(rect):
            return True
        start = time.perf_counter()
        centre = rect.center()
        todo = [item for item in self.items(rect, Qt.IntersectsItemBoundingRect)
                if isinstance(item, ServerItem) and item.cid in self._lazy]
        todo.sort(key=lambda item: (item.scenePos() - centre).manhattanLength())
        for n, item in enumerate(todo):
            if n and budget_ms is not None and (time.perf_counter() - start) * 1000 > budget_ms:
                return False
            self._make_badges(item.cid)
        self._ensured = QRectF(rect)
        return True

    def _make_badges(self, sid: str) -> None:
        """Items for the NICs/DPUs of server ``sid`` that have none yet, placed as a new document's
        are, with the problems and overlay marks they would have had."""
        pids = self._lazy.pop(sid, None)
        if not pids:
            return
        topo = self.design.topology
        bulk, self._bulk = self._bulk, True  # placed below, once
        try:
            for pid in pids:
                del self._lazy_server[pid]
                comp = topo.components.get(pid)
                if comp is not None:
                    self._add_component(comp)
        finally:
            self._bulk = bulk
        if not bulk:
            self._relayout_children(sid, links=False)
        for pid in pids:
            item = self.comp_items.get(pid)
            if item is not None:
                if pid in self._comp_problems:
                    item.set_problems(self._comp_problems[pid])
                item.set_marked(pid in self._marked)

    def _badge_rects(self, sid: str) -> dict[str, QRectF]:
        """Scene rects of the badges of server ``sid`` (as :meth:`_relayout_children` places them)."""
        return {cid: QRectF(x, y, BADGE_W, BADGE_H) for cid, x, y in self._badge_corners(sid)}

    def _badge_corners(self, sid: str) -> list[tuple[str, float, float]]:
        """(id, scene x, scene y) of the top left corner of each badge of server ``sid``."""
        server = self.comp_items.get(sid)
        if not isinstance(server, ServerItem):
            return []
        attached = self.design.topology.attached(sid)
        origin = server.scenePos()  # items are only ever moved (no scale, no rotation)
        ox, oy = origin.x(), origin.y()
        return [(comp.id, ox + x, oy + y)
                for comp, (x, y) in zip(attached, server.badge_corners(len(attached)))]
