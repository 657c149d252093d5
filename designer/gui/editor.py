"""Edits of a design as undoable commands: place, connect, move, delete, paste, set fields, layout.

The canvas, the inspector, the palette and the menus call these methods; each one is a single undo
step (see :mod:`designer.gui.commands`). Edits that the model would accept but that make no sense
(a cable into a full switch, a rack into a rack) are refused with :class:`RefusedEdit`, whose text
says what is wrong and what to do instead.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack

from designer.gui.commands import push
from designer.gui.items import DRAWN_IN_RACK, GRID, snap
from designer.topology.design import Design
from designer.topology.kinds import CATALOG_KIND, KIND_LABEL, field_spec
from designer.topology.layout import layout_by_tier
from designer.topology.management import is_management_switch
from designer.topology.model import ATTACHABLE, RACKABLE, Component, Link, as_dict, replace_item
from designer.topology.validation import PORTED, parent_problem

CLIPBOARD_MIME = "application/x-dpu-designer-selection"
#: fields that say what a component does in this design rather than what the model is: a new
#: model keeps them (a spine switch given another model stays a spine)
KEEP_ON_MODEL_CHANGE = {"switch": ("tier",)}
NETWORK_KINDS = ("nic", "dpu", "switch", "storage", "gpu_server")


class RefusedEdit(ValueError):
    """An edit that is not made, with the reason (shown to the user)."""


class Editor(QObject):
    """Holds the design being edited, its undo stack and the catalog."""

    refused = Signal(str)

    def __init__(self, design: Design, catalog, parent=None) -> None:
        super().__init__(parent)
        self.design = design
        self.catalog = catalog
        self.stack = QUndoStack(self)

    @property
    def topo(self):
        return self.design.topology

    def _push(self, text: str, action, merge_key: Any = None):
        return push(self.stack, self.design, text, action, merge_key)

    def refuse(self, reason: str):
        self.refused.emit(reason)
        raise RefusedEdit(reason)

    # ------------------------------------------------------------ placement
    def place(self, kind: str, model: str, pos: tuple[float, float], into: str | None = None,
              props: dict | None = None) -> str:
        """Add a component of catalog ``model`` at ``pos`` (snapped to the grid), or into the rack
        / onto the server ``into``. Returns the new id."""
        if model not in self.catalog.ids(CATALOG_KIND[kind]):
            self.refuse(f"the catalog has no {KIND_LABEL[kind]} model '{model}'")
        cid = self.topo.new_component_id(kind)
        comp = Component(cid, kind, model, name=cid, props=dict(props or {}), pos=(snap(pos[0]), snap(pos[1])))
        if into is not None:
            parent, slot = self._check_into(comp, into)
            comp = replace_item(comp, parent=parent, slot=slot)
        self._push(f"Add {KIND_LABEL[kind]} {comp.id}", lambda d: d.topology.add_component(comp))
        return comp.id

    def _check_into(self, comp: Component, target_id: str, ignore: Iterable[str] = ()) -> tuple[str, int]:
        """Parent and slot for putting ``comp`` into ``target_id``, or a refusal."""
        target = self.topo.components.get(target_id)
        if target is None:
            self.refuse(f"no component '{target_id}'")
        problem = parent_problem(comp.kind, target.kind)
        if problem:
            self.refuse(problem)
        if comp.kind in ATTACHABLE:
            used = {c.slot for c in self.topo.attached(target_id) if c.id != comp.id}
            return target_id, next(s for s in range(len(used) + 2) if s not in used)
        slot = self.free_slot(target_id, comp, ignore)
        if slot is None:
            rack = self.catalog.resolve(target)
            self.refuse(f"rack {target.label} has no {self._units(comp)} free U "
                        f"(height {rack.get('rack_units')}U); use another rack or a taller one")
        return target_id, slot

    def _units(self, comp: Component) -> int:
        return int(self.catalog.resolve(comp).get("rack_units_used", 1) or 1)

    def free_slot(self, rack_id: str, comp: Component, ignore: Iterable[str] = (),
                  wanted: int | None = None) -> int | None:
        """The lowest slot (or ``wanted``, if free) where ``comp`` fits in the rack."""
        rack = self.topo.components[rack_id]
        height = int(self.catalog.resolve(rack).get("rack_units", 42) or 42)
        need = self._units(comp)
        skip = set(ignore) | {comp.id}
        taken = set()
        for m in self.topo.members(rack_id):
            if m.id not in skip and m.slot is not None:
                taken.update(range(m.slot, m.slot + self._units(m)))
        starts = range(1, height - need + 2)
        if wanted is not None:
            starts = sorted(starts, key=lambda s: (abs(s - wanted), s))
        for s in starts:
            if not taken.intersection(range(s, s + need)):
                return s
        return None

    # ----------------------------------------------------------- connecting
    def endpoint(self, comp_id: str) -> str:
        """The component a cable from ``comp_id`` plugs into: a server's first NIC/DPU with a free
        port (a server without any NIC or DPU uses its on-board port)."""
        comp = self.topo.components[comp_id]
        if comp.kind != "gpu_server":
            return comp_id
        attached = self.topo.attached(comp_id)
        if not attached:
            return comp_id
        for port in attached:
            if self.free_ports(port.id) > 0:
                return port.id
        return attached[0].id

    def _is_mgmt_link(self, link: Link) -> bool:
        comps = self.topo.components
        return is_management_switch(comps.get(link.a)) or is_management_switch(comps.get(link.b))

    def port_count(self, comp: Component, management: bool = False) -> int:
        """The ports a cable can take: with ``management`` (the other end a management switch),
        a server's ``bmc_ports`` and a DPU's ``oob_ports``; else the network ports (a switch's
        ``ports`` and ``uplink_ports``)."""
        fig = self.catalog.resolve(comp)
        if management and comp.kind in ("gpu_server", "dpu"):
            return int(fig.get("bmc_ports" if comp.kind == "gpu_server" else "oob_ports") or 0)
        ports = int(fig.get("ports", 1) or 1)
        return ports + int(fig.get("uplink_ports") or 0) if comp.kind == "switch" else ports

    def free_ports(self, comp_id: str, management: bool = False) -> int:
        """Unused ports (a server's on-board port is not counted: no port figure). A management
        cable takes a server's BMC port or a DPU's OOB port (``management``), never a network port
        (``validation``'s ``ports-exceeded`` counts them so)."""
        comp = self.topo.components[comp_id]
        own = management and comp.kind in ("gpu_server", "dpu")
        if comp.kind not in PORTED and not own:
            return 1 << 30
        links = self.topo.links_of(comp_id)
        if comp.kind in ("gpu_server", "dpu"):
            links = [l for l in links if self._is_mgmt_link(l) == own]
        return self.port_count(comp, management) - sum(l.lanes for l in links)

    def _host(self, comp: Component) -> str:
        return comp.parent if comp.kind in ATTACHABLE and comp.parent else comp.id

    def media(self, comp: Component) -> tuple[str, ...]:
        """The fabrics a component's ports can run, its own (catalog ``medium``) first.

        A switch runs only its fabric (a Quantum switch is InfiniBand, a Spectrum switch Ethernet).
        NICs and DPUs run either: ConnectX and BlueField adapters are VPI, each port configurable
        as InfiniBand or Ethernet (NVIDIA ConnectX-7 and BlueField-3 user manuals: "Virtual
        Protocol Interconnect", port type set with mlxconfig LINK_TYPE_P1/P2); a storage system
        and a server's on-board port are taken to have such adapters too (the templates cable
        storage to either fabric, and the design check accepts every pairing)."""
        own = self.catalog.resolve(comp).get("medium") or "ethernet"
        if comp.kind == "switch":
            return (own,)
        return (own,) + tuple(m for m in ("infiniband", "ethernet") if m != own)

    def _ends(self, comp_id: str, management: bool = False) -> list[Component]:
        """The components a cable from ``comp_id`` can plug into: a server's NICs/DPUs (those
        with a free port first; its on-board port if it has none), else the component itself. To
        a management switch (``management``): a server's BMC port, then its DPUs' OOB ports."""
        comp = self.topo.components[comp_id]
        if comp.kind == "gpu_server" and management:
            ends = [comp] + [c for c in self.topo.attached(comp_id)
                             if c.kind == "dpu" and self.port_count(c, True) > 0]
            return sorted(ends, key=lambda c: self.free_ports(c.id, True) <= 0)
        if comp.kind != "gpu_server":
            return [comp]
        attached = self.topo.attached(comp_id)
        if not attached:
            return [comp]
        return sorted(attached, key=lambda c: self.free_ports(c.id) <= 0)

    def link_options(self, a_id: str, b_id: str) -> list[Link]:
        """Every cable that could join ``a_id`` and ``b_id``: each pair of ports (a server's
        NICs/DPUs) with a free port, on each fabric both ends can run (a switch's fabric first,
        else the first end's own). A refusal with the reason when there is none."""
        topo = self.topo
        a, b = topo.components.get(a_id), topo.components.get(b_id)
        if a is None or b is None:
            self.refuse("both ends of a cable must be components")
        for c in (a, b):
            if c.kind not in NETWORK_KINDS:
                self.refuse(f"a {KIND_LABEL[c.kind]} has no network port; connect the NICs, DPUs, "
                            "switches or storage inside it")
        options: list[Link] = []
        reasons: list[str] = []
        mgmt = is_management_switch(a) or is_management_switch(b)
        for ea in self._ends(a_id, mgmt):
            for eb in self._ends(b_id, mgmt):
                reason = self._pair_problem(ea, eb, mgmt)
                if reason:
                    reasons.append(reason)
                    continue
                ma, mb = self.media(ea), self.media(eb)
                first = ma if len(ma) <= len(mb) else mb  # a switch's fabric leads
                media = [m for m in first if m in ma and m in mb]
                if not media:
                    reasons.append(f"{ea.label} runs only {ma[0]} and {eb.label} only {mb[0]}: a "
                                   f"switch port carries its own fabric only; connect them through "
                                   f"servers or a gateway, or pick a {ma[0]} switch")
                    continue
                ra, rb = self.catalog.resolve(ea), self.catalog.resolve(eb)
                speeds = [r.get("port_speed_Gbps") for r in (ra, rb) if r.get("port_speed_Gbps")]
                if ea.kind == eb.kind == "switch":  # on uplink ports where a switch has them
                    speeds = [max(r.get("port_speed_Gbps") or 0, r.get("uplink_speed_Gbps") or 0)
                              for r in (ra, rb)]
                for medium in media:
                    options.append(Link(topo.new_id("link"), ea.id, eb.id, medium=medium,
                                        speed_Gbps=float(min(speeds)) if speeds else 400.0,
                                        a_port=self._next_port(ea.id), b_port=self._next_port(eb.id)))
        if not options:
            self.refuse(reasons[0])
        return options

    def _pair_problem(self, a: Component, b: Component, management: bool = False) -> str | None:
        if self._host(a) == self._host(b):
            return f"{a.label} and {b.label} are in the same server; connect it to a switch"
        for c in (a, b):
            if self.free_ports(c.id, management) <= 0:
                if management and c.kind in ("gpu_server", "dpu"):
                    words = "BMC port" if c.kind == "gpu_server" else "OOB management port"
                    n = self.port_count(c, True)
                    return (f"{c.label} has no free {words} ({n} in all) for a management cable"
                            if n else f"{c.label} has no {words}; connect its server's BMC port instead")
                return (f"all {self.port_count(c)} ports of "
                        f"{c.label} are in use; add a NIC/DPU or use a switch with more ports")
        if b.id in self.topo.neighbors(a.id):
            return (f"{a.label} and {b.label} are already connected; raise the link's lanes "
                    "for more bandwidth")
        return None

    def check_link(self, a_id: str, b_id: str) -> Link:
        """The cable that joining ``a_id`` to ``b_id`` adds by default (the first of
        :meth:`link_options`), or a refusal with the reason."""
        return self.link_options(a_id, b_id)[0]

    def _next_port(self, comp_id: str) -> int:
        used = set()
        for l in self.topo.links_of(comp_id):
            used.add(l.a_port if l.a == comp_id else l.b_port)
        return next(p for p in range(1, len(used) + 2) if p not in used)

    def connect(self, a_id: str, b_id: str, option: Link | None = None) -> str:
        """Lay a cable between ``a_id`` and ``b_id``: ``option`` (one of :meth:`link_options`) or
        the default one."""
        link = option if option is not None else self.check_link(a_id, b_id)
        self._push(f"Connect {link.a} – {link.b}", lambda d: d.topology.add_link(link))
        return link.id

    # --------------------------------------------------------------- moving
    def move(self, moves: dict[str, tuple[float, float]], into: str | None = None) -> None:
        """Move components to scene positions (snapped). With ``into`` (a rack id), rackable ones go
        into that rack; servers drawn in a rack and moved elsewhere leave it."""
        plan = []
        for cid, pos in moves.items():
            comp = self.topo.components[cid]
            pos = (snap(pos[0]), snap(pos[1]))
            if into is not None and into != cid and comp.kind in RACKABLE:
                parent, slot = self._check_into(comp, into, ignore=moves)
                plan.append((cid, {"parent": parent, "slot": slot, "pos": pos}))
            elif comp.parent is not None and comp.kind in DRAWN_IN_RACK:
                plan.append((cid, {"parent": None, "slot": None, "pos": pos}))
            elif comp.pos != pos:
                plan.append((cid, {"pos": pos}))

        def action(d: Design) -> None:
            for cid, changes in plan:
                d.topology.update_component(cid, **changes)

        self._push("Move" if len(plan) != 1 else f"Move {plan[0][0]}", action)

    def attach(self, comp_id: str, server_id: str) -> None:
        """Attach a NIC/DPU to a server (or put a rackable component into a rack)."""
        comp = self.topo.components[comp_id]
        parent, slot = self._check_into(comp, server_id)
        self._push(f"Put {comp_id} into {server_id}",
                   lambda d: d.topology.update_component(comp_id, parent=parent, slot=slot))

    def set_slot(self, comp_id: str, rack_id: str, wanted: int) -> None:
        """Move a rack member to (near) slot ``wanted``."""
        comp = self.topo.components[comp_id]
        slot = self.free_slot(rack_id, comp, wanted=wanted)
        if slot is None:
            self.refuse(f"rack {rack_id} has no room for {comp.label}")
        if (comp.parent, comp.slot) == (rack_id, slot):
            return
        self._push(f"Move {comp_id} to U{slot}",
                   lambda d: d.topology.update_component(comp_id, parent=rack_id, slot=slot))

    # ------------------------------------------------------------- deleting
    def delete(self, ids: Iterable[str], keep_at: dict[str, tuple[float, float]] | None = None,
               contents: bool = True) -> None:
        """Delete components and links; a server's NICs/DPUs go with it. A deleted rack's members
        go with it too (``contents``, as a container's contents go with it in draw.io and KiCad:
        a rack's servers left outside any rack are a design nobody meant), or, with ``contents``
        False, stay at ``keep_at[member]`` (where the canvas drew them) or at the rack's position."""
        ids = list(ids)
        topo = self.topo
        comps = [i for i in ids if i in topo.components]
        links = [i for i in ids if i in topo.links]
        doomed = set(comps)
        if contents:
            for cid in comps:
                if topo.components[cid].kind == "rack":
                    doomed.update(m.id for m in topo.members(cid))
        for cid in list(doomed):
            if topo.components[cid].kind == "gpu_server":
                doomed.update(c.id for c in topo.attached(cid))
        if not doomed and not links:
            return

        def action(d: Design) -> None:
            t = d.topology
            for lid in links:
                if lid in t.links:
                    t.remove_link(lid)
            for cid in [c for c in t.components if c in doomed]:
                comp = t.components[cid]
                if comp.kind == "rack":
                    for m in t.members(cid):
                        if m.id not in doomed:
                            where = (keep_at or {}).get(m.id) or comp.pos
                            t.update_component(m.id, parent=None, slot=None, pos=where)
                t.remove_component(cid)

        n = len(doomed) + len(links)
        self._push(f"Delete {ids[0]}" if n == 1 else f"Delete {n} items", action)

    # ------------------------------------------------------ copy and paste
    def copy_data(self, ids: Iterable[str]) -> str:
        """The selection (with the NICs/DPUs of its servers, the members of its racks and the
        links among all these) as JSON text for the clipboard."""
        topo = self.topo
        chosen = [i for i in ids if i in topo.components]
        todo = list(chosen)
        keep: list[str] = []
        while todo:
            cid = todo.pop(0)
            if cid in keep:
                continue
            keep.append(cid)
            todo.extend(c.id for c in topo.children(cid))
        kept = set(keep)
        links = [l for l in topo.links.values() if l.a in kept and l.b in kept]
        comps = [topo.components[c] for c in topo.components if c in kept]
        return json.dumps({"components": [as_dict(c) for c in comps],
                           "links": [as_dict(l) for l in links]})

    def paste_data(self, text: str, offset: tuple[float, float] = (2 * GRID, 2 * GRID),
                   at: tuple[float, float] | None = None) -> list[str]:
        """Add a copy of clipboard JSON with new ids, shifted by ``offset``, or with ``at`` so that
        the top left of the copied top-level components lands there (a paste at the pointer, as
        in draw.io and KiCad); returns the new ids."""
        try:
            data = json.loads(text)
            comps = [Component(**{**c, "pos": tuple(c["pos"]) if c.get("pos") else None})
                     for c in data["components"]]
            links = [Link(**l) for l in data["links"]]
        except (ValueError, KeyError, TypeError) as exc:
            self.refuse(f"the clipboard does not hold designer components ({exc})")
        if not comps:
            return []
        if at is not None:
            copied = {c.id for c in comps}
            tops = [c.pos for c in comps if c.pos and c.parent not in copied]
            if tops:
                offset = (at[0] - min(p[0] for p in tops), at[1] - min(p[1] for p in tops))
        new_ids: dict[str, str] = {}

        def action(d: Design) -> None:
            t = d.topology
            for c in comps:
                new_ids[c.id] = t.new_component_id(c.kind)
            for c in comps:
                parent = new_ids.get(c.parent, c.parent if c.parent in t.components else None)
                inside = parent is not None and c.parent in new_ids
                pos = (c.pos[0] + offset[0], c.pos[1] + offset[1]) if c.pos else None
                name = c.name if c.name != c.id else new_ids[c.id]
                if parent is not None and not inside and c.kind in RACKABLE:
                    parent, slot = None, None  # the copy does not fit in the original's rack slot
                else:
                    slot = c.slot if parent is not None else None
                t.add_component(Component(new_ids[c.id], c.kind, c.model, name, parent, slot,
                                          dict(c.props), pos))
            for l in links:
                if l.a in new_ids and l.b in new_ids:
                    t.add_link(Link(t.new_id("link"), new_ids[l.a], new_ids[l.b], l.medium,
                                    l.speed_Gbps, l.latency_us, l.lanes, l.a_port, l.b_port))

        self._push(f"Paste {len(comps)} components", action)
        return [new_ids[c.id] for c in comps]

    def duplicate(self, ids: Iterable[str]) -> list[str]:
        return self.paste_data(self.copy_data(ids))

    # ------------------------------------------------------------- fields
    def set_fields(self, ids: list[str], name: str, value: Any) -> None:
        """Set one field on every selected component or link; merges with the previous edit of
        the same field of the same selection (one undo step per spin-box drag)."""
        topo = self.topo
        attrs = ("name", "model")

        def action(d: Design) -> None:
            t = d.topology
            for i in ids:
                if i in t.links:
                    t.update_link(i, **{name: value})
                elif name == "model":
                    comp = t.components[i]
                    kept = {f: self.catalog.resolve(comp).get(f)
                            for f in KEEP_ON_MODEL_CHANGE.get(comp.kind, ())}
                    t.update_component(i, model=value)
                    for field, old in kept.items():
                        comp = t.components[i]
                        entry = self.catalog.get(CATALOG_KIND[comp.kind], comp.model) \
                            if comp.model in self.catalog.ids(CATALOG_KIND[comp.kind]) else {}
                        spec = field_spec(comp.kind, field)
                        base = entry.get(field, spec.default if spec else None)
                        t.set_prop(i, field, None if _same(base, old) else old)
                elif name in attrs:
                    t.update_component(i, **{name: value})
                else:
                    comp = t.components[i]
                    spec = field_spec(comp.kind, name)
                    if value is None or spec is None:
                        t.set_prop(i, name, value)
                        continue
                    entry = self.catalog.get(CATALOG_KIND[comp.kind], comp.model) if comp.model in \
                        self.catalog.ids(CATALOG_KIND[comp.kind]) else {}
                    base = entry.get(name, spec.default)
                    t.set_prop(i, name, None if _same(base, value) else value)

        for i in ids:
            if i not in topo.components and i not in topo.links:
                self.refuse(f"no component or link '{i}'")
        label = ids[0] if len(ids) == 1 else f"{len(ids)} items"
        self._push(f"Set {name} of {label}", action, merge_key=("field", tuple(ids), name))

    def set_design(self, key: str, value: Any, label: str | None = None) -> None:
        """Change the design's ``name``, ``workload`` or ``scenario`` (merging repeated edits)."""
        if getattr(self.design, key) == value:
            return
        self._push(f"Change {label or key}", lambda d: d.set(key, value), merge_key=("design", key, label))

    # --------------------------------------------------------------- layout
    def auto_layout(self) -> None:
        """Place every top-level component by tier (core, spine, leaf, servers, storage)."""
        positions = layout_by_tier(self.topo, self.catalog)

        def action(d: Design) -> None:
            t = d.topology
            for cid, pos in positions.items():
                comp = t.components.get(cid)
                inside = comp is not None and comp.parent is not None and (
                    comp.kind in DRAWN_IN_RACK or comp.kind in ATTACHABLE)
                if comp is not None and not inside and comp.pos != tuple(map(float, pos)):
                    t.update_component(cid, pos=pos)

        self._push("Auto-layout by tier", action)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return float(a) == float(b)
    return a == b
