"""The domain model: components, links and the topology that holds them (no Qt).

Every change goes through a method of :class:`Topology`, which tells its subscribers with a
:class:`ChangeEvent`. The GUI's scene follows these events; undo commands call these methods.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Callable

from designer.topology.kinds import ID_PREFIX, KIND_LABEL, KINDS, MEDIA

if TYPE_CHECKING:  # networkx is imported when a graph is asked for (it costs ~0.1 s to import)
    import networkx as nx

#: component kinds that sit in a rack; NICs and DPUs are attached to a server instead
RACKABLE = ("gpu_server", "switch", "storage")
ATTACHABLE = ("nic", "dpu")


def parent_problem(kind: str, parent_kind: str) -> str | None:
    """Why a ``kind`` component cannot sit in a ``parent_kind`` one, or None if it can (the rule
    of the file loader and of the design rules, ``validation``)."""
    if kind in ATTACHABLE:
        ok = parent_kind == "gpu_server"
        where = "a GPU server"
    elif kind in RACKABLE:
        ok = parent_kind == "rack"
        where = "a rack"
    else:
        return f"a {KIND_LABEL[kind].lower()} is not placed inside anything"
    return None if ok else f"a {KIND_LABEL[kind]} belongs in {where}, not in a {KIND_LABEL[parent_kind]}"


#: immutable value types: a props dict holding only these is copied without deepcopy
_PLAIN = (str, int, float, bool, type(None))


@dataclass(slots=True)
class Component:
    """One box on the canvas. ``model`` names a catalog entry; ``props`` override its figures.
    (Slots: no ``__dict__`` per item, so a 131k-GPU design's 199k components take less memory
    and are made faster; an item holds only its fields.)"""

    id: str
    kind: str
    model: str
    name: str = ""
    parent: str | None = None
    slot: int | None = None
    props: dict[str, Any] = field(default_factory=dict)
    pos: tuple[float, float] | None = None

    def copy(self) -> "Component":
        props = self.props
        if props:  # plain values (the usual props) need no deep copy
            props = dict(props) if all(type(v) in _PLAIN for v in props.values()) else copy.deepcopy(props)
        else:
            props = {}
        return Component(self.id, self.kind, self.model, self.name, self.parent, self.slot, props, self.pos)

    @property
    def label(self) -> str:
        return self.name or self.id


@dataclass(slots=True)
class Link:
    """A cable (or bundle of ``lanes`` cables) between two components (slots, as
    :class:`Component`)."""

    id: str
    a: str
    b: str
    medium: str = "infiniband"
    speed_Gbps: float = 400.0
    latency_us: float = 0.0
    lanes: int = 1
    a_port: int | None = None
    b_port: int | None = None

    def copy(self) -> "Link":
        return Link(self.id, self.a, self.b, self.medium, self.speed_Gbps, self.latency_us, self.lanes,
                    self.a_port, self.b_port)

    def other(self, end: str) -> str:
        return self.b if end == self.a else self.a

    @property
    def capacity_Gbps(self) -> float:
        """Total capacity of the bundle in one direction."""
        return self.speed_Gbps * self.lanes


COMPONENT_FIELDS = tuple(f.name for f in fields(Component))
LINK_FIELDS = tuple(f.name for f in fields(Link))


@dataclass(frozen=True)
class ChangeEvent:
    """What changed: ``type`` is one of ``EVENT_TYPES``; ``old``/``new`` are copies (or None)."""

    type: str
    id: str | None = None
    old: Any = None
    new: Any = None


EVENT_TYPES = (
    "component_added",
    "component_removed",
    "component_changed",
    "link_added",
    "link_removed",
    "link_changed",
    "reset",
)


class TopologyError(ValueError):
    """An edit that would make the model inconsistent (unknown id, duplicate id, bad kind...)."""


_ID_NUM = re.compile(r"^(.*?)(\d+)$")


class Topology:
    """Components and links, with change events, a networkx view and queries."""

    def __init__(self) -> None:
        self.components: dict[str, Component] = {}
        self.links: dict[str, Link] = {}
        #: the indexes behind ``_links_of`` and ``_children`` (None: made from the items when first
        #: needed, see :meth:`from_items`)
        self._links_index: dict[str, set[str]] | None = {}
        self._children_index: dict[str, set[str]] | None = {}
        #: highest id number per prefix, less the ids of ``_unnoted`` (see ``_counters``)
        self._counts: dict[str, int] = {}
        self._unnoted: list[list[str]] = []
        self._subscribers: list[Callable[[ChangeEvent], None]] = []
        self._graph: nx.MultiGraph | None = None
        self.version = 0

    # ----------------------------------------------------------------- events
    def subscribe(self, callback: Callable[[ChangeEvent], None]) -> None:
        if callback not in self._subscribers:
            self._subscribers.append(callback)

    def unsubscribe(self, callback: Callable[[ChangeEvent], None]) -> None:
        if callback in self._subscribers:
            self._subscribers.remove(callback)

    def _emit(self, event: ChangeEvent | None) -> None:
        """Tell the subscribers (``event`` None: there are none, so no copy was made for it)."""
        self.version += 1
        self._graph = None
        if event is None:
            return
        for cb in list(self._subscribers):
            cb(event)

    # ---------------------------------------------------------------- indexes
    @property
    def _links_of(self) -> dict[str, set[str]]:
        """The link ids of each component. A topology built by :meth:`from_items` (a loaded file)
        makes it when first asked, from the links as they are then: every method that changes
        links or components asks for it before its change, so it is always the one that adding
        the items one by one would have kept (the ``run`` command of a 131k-GPU design never
        edits, and a loaded design that is only solved or saved may never need it)."""
        if self._links_index is None:
            index: dict[str, set[str]] = {cid: set() for cid in self.components}
            for link in self.links.values():
                index[link.a].add(link.id)
                index[link.b].add(link.id)
            self._links_index = index
        return self._links_index

    @property
    def _children(self) -> dict[str, set[str]]:
        """The ids of the components placed in each component (made when first asked, as
        :attr:`_links_of`)."""
        if self._children_index is None:
            index: dict[str, set[str]] = {}
            for c in self.components.values():
                if c.parent is not None:
                    if c.parent in index:
                        index[c.parent].add(c.id)
                    else:
                        index[c.parent] = {c.id}
            self._children_index = index
        return self._children_index

    @property
    def _counters(self) -> dict[str, int]:
        """Highest id number handed out per prefix, with the numbers of the ids a loaded file
        brought (:meth:`from_items` leaves them to be read here, when an id is first made or the
        counters are first asked for: ``max`` does not depend on when a number is taken in)."""
        if self._unnoted:
            unnoted, self._unnoted = self._unnoted, []
            for idents in unnoted:
                self._note_ids(idents)
        return self._counts

    # -------------------------------------------------------------------- ids
    def new_id(self, prefix: str) -> str:
        """A fresh id ``prefix-N``; ids are never reused within this topology (or its file)."""
        n = self._counters.get(prefix, 0)
        while True:
            n += 1
            candidate = f"{prefix}-{n}"
            if candidate not in self.components and candidate not in self.links:
                self._counters[prefix] = n
                return candidate

    def new_component_id(self, kind: str) -> str:
        return self.new_id(ID_PREFIX.get(kind, kind))

    def _note_ids(self, idents) -> None:
        """:meth:`_note_id` of many ids: the highest number of each prefix, found with string
        methods (the same split as ``_ID_NUM``: trailing digits, the prefix without its '-')."""
        best: dict[str, int] = {}
        digits = "0123456789"
        for ident in idents:
            if not ident.isascii() or "\n" in ident:
                self._note_id(ident)  # Unicode digits, line ends: the regex's own rule
                continue
            head = ident.rstrip(digits)
            if len(head) == len(ident):
                continue
            prefix = head.rstrip("-")
            num = int(ident[len(head):])
            if num > best.get(prefix, 0):
                best[prefix] = num
        counts = self._counts
        for prefix, num in best.items():
            if num > counts.get(prefix, 0):
                counts[prefix] = num

    def _note_id(self, ident: str) -> None:
        if ident.isascii() and "\n" not in ident:  # the regex's split with string methods
            head = ident.rstrip("0123456789")
            if len(head) != len(ident):
                prefix, num = head.rstrip("-"), int(ident[len(head):])
                if num > self._counts.get(prefix, 0):
                    self._counts[prefix] = num
            return
        m = _ID_NUM.match(ident)
        if m:
            prefix = m.group(1).rstrip("-")
            num = int(m.group(2))
            if num > self._counts.get(prefix, 0):
                self._counts[prefix] = num

    @property
    def counters(self) -> dict[str, int]:
        """Highest id number handed out per prefix (saved in files so ids stay unique)."""
        return dict(self._counters)

    def restore_counters(self, counters: dict[str, int]) -> None:
        for prefix, n in counters.items():
            if n > self._counts.get(prefix, 0):
                self._counts[prefix] = int(n)

    # ------------------------------------------------------------- components
    def add_component(self, comp: Component) -> Component:
        if comp.kind not in KINDS:
            raise TopologyError(f"unknown component kind '{comp.kind}' (one of {', '.join(KINDS)})")
        if comp.id in self.components or comp.id in self.links:
            raise TopologyError(f"id '{comp.id}' is already used")
        comp = comp.copy()
        self.components[comp.id] = comp
        self._links_of.setdefault(comp.id, set())
        if comp.parent is not None:
            self._children.setdefault(comp.parent, set()).add(comp.id)
        self._note_id(comp.id)
        self._emit(ChangeEvent("component_added", comp.id, None, comp.copy()) if self._subscribers else None)
        return comp

    def remove_component(self, comp_id: str) -> tuple[Component, list[Link], list[Component]]:
        """Remove a component with its links; its children are detached (parent set to None).

        Returns ``(component, removed_links, detached_children_before)`` so that an undo command can
        restore exactly what was there.
        """
        comp = self._require(comp_id)
        removed_links = [self.links[lid].copy() for lid in sorted(self._links_of.get(comp_id, ()))]
        for link in removed_links:
            self.remove_link(link.id)
        detached = [self.components[c].copy() for c in sorted(self._children.get(comp_id, ()))]
        for child in detached:
            self.update_component(child.id, parent=None, slot=None)
        del self.components[comp_id]
        self._links_of.pop(comp_id, None)
        self._children.pop(comp_id, None)
        if comp.parent is not None:
            self._children.get(comp.parent, set()).discard(comp_id)
        self._emit(ChangeEvent("component_removed", comp_id, comp.copy(), None))
        return comp, removed_links, detached

    def update_component(self, comp_id: str, **changes: Any) -> Component:
        """Change attributes of a component (``name``, ``model``, ``parent``, ``slot``, ``pos``,
        ``props`` as a whole dict). Returns the old copy."""
        comp = self._require(comp_id)
        unknown = (set(changes) - set(COMPONENT_FIELDS)) | ({"id", "kind"} & set(changes))
        if unknown:
            raise TopologyError(f"cannot change {', '.join(sorted(unknown))} of a component")
        if "parent" in changes and changes["parent"] is not None:
            if changes["parent"] not in self.components:
                raise TopologyError(f"no component '{changes['parent']}' to attach '{comp_id}' to")
            if changes["parent"] == comp_id:
                raise TopologyError(f"'{comp_id}' cannot contain itself")
        old = comp.copy()
        if "parent" in changes and changes["parent"] != comp.parent:
            if comp.parent is not None:
                self._children.get(comp.parent, set()).discard(comp_id)
            if changes["parent"] is not None:
                self._children.setdefault(changes["parent"], set()).add(comp_id)
        for key, value in changes.items():
            if key == "props":
                value = copy.deepcopy(value)
            elif key == "pos" and value is not None:
                value = (float(value[0]), float(value[1]))
            setattr(comp, key, value)
        self._emit(ChangeEvent("component_changed", comp_id, old, comp.copy()))
        return old

    def set_prop(self, comp_id: str, name: str, value: Any) -> Component:
        """Override one catalog figure of a component; ``None`` removes the override."""
        comp = self._require(comp_id)
        props = copy.deepcopy(comp.props)
        if value is None:
            props.pop(name, None)
        else:
            props[name] = value
        return self.update_component(comp_id, props=props)

    # ------------------------------------------------------------------ links
    def add_new_link(self, a: str, b: str, medium: str, speed_Gbps: float, lanes: int = 1) -> Link:
        """``add_link(Link(new_id("link"), a, b, medium, speed_Gbps, lanes=lanes))`` in one step,
        for builders of big designs: the same checks and event, without the defensive copy (the
        Link is made here) or noting an id that ``new_id`` has just counted."""
        if a not in self.components or b not in self.components:
            raise TopologyError(f"link from '{a}' to '{b}' names no component "
                                f"'{a if a not in self.components else b}'")
        if a == b:
            raise TopologyError(f"a link cannot join '{a}' to itself")
        if medium not in MEDIA:
            raise TopologyError(f"unknown medium '{medium}' (one of {', '.join(MEDIA)})")
        link = Link(self.new_id("link"), a, b, medium, speed_Gbps, lanes=lanes)
        self.links[link.id] = link
        self._links_of.setdefault(a, set()).add(link.id)
        self._links_of.setdefault(b, set()).add(link.id)
        self._emit(ChangeEvent("link_added", link.id, None, link.copy()) if self._subscribers else None)
        return link

    def add_link(self, link: Link) -> Link:
        if link.id in self.links or link.id in self.components:
            raise TopologyError(f"id '{link.id}' is already used")
        for end in (link.a, link.b):
            if end not in self.components:
                raise TopologyError(f"link '{link.id}' names no component '{end}'")
        if link.a == link.b:
            raise TopologyError(f"link '{link.id}' joins '{link.a}' to itself")
        if link.medium not in MEDIA:
            raise TopologyError(f"link '{link.id}': unknown medium '{link.medium}' (one of {', '.join(MEDIA)})")
        link = link.copy()
        self.links[link.id] = link
        self._links_of.setdefault(link.a, set()).add(link.id)
        self._links_of.setdefault(link.b, set()).add(link.id)
        self._note_id(link.id)
        self._emit(ChangeEvent("link_added", link.id, None, link.copy()) if self._subscribers else None)
        return link

    def remove_link(self, link_id: str) -> Link:
        link = self.links.pop(link_id, None)
        if link is None:
            raise TopologyError(f"no link '{link_id}'")
        self._links_of.get(link.a, set()).discard(link_id)
        self._links_of.get(link.b, set()).discard(link_id)
        self._emit(ChangeEvent("link_removed", link_id, link.copy(), None))
        return link

    def update_link(self, link_id: str, **changes: Any) -> Link:
        link = self.links.get(link_id)
        if link is None:
            raise TopologyError(f"no link '{link_id}'")
        bad = (set(changes) - set(LINK_FIELDS)) | ({"id"} & set(changes))
        if bad:
            raise TopologyError(f"cannot change {', '.join(sorted(bad))} of a link")
        for end in ("a", "b"):
            if end in changes and changes[end] not in self.components:
                raise TopologyError(f"link '{link_id}' names no component '{changes[end]}'")
        if "medium" in changes and changes["medium"] not in MEDIA:
            raise TopologyError(f"unknown medium '{changes['medium']}' (one of {', '.join(MEDIA)})")
        old = link.copy()
        for end in ("a", "b"):
            if end in changes:
                self._links_of.get(getattr(link, end), set()).discard(link_id)
        for key, value in changes.items():
            setattr(link, key, value)
        self._links_of.setdefault(link.a, set()).add(link_id)
        self._links_of.setdefault(link.b, set()).add(link_id)
        self._emit(ChangeEvent("link_changed", link_id, old, link.copy()))
        return old

    # ------------------------------------------------------------------ whole
    @classmethod
    def from_items(cls, components: list[Component], links: list[Link],
                   counters: dict[str, int] | None = None,
                   ids: tuple[list[str], list[str]] | None = None, *, noted: bool = False) -> "Topology":
        """Build a topology in one go from checked items (the file loader's fast path): no events,
        no copies. The caller guarantees unique ids, known kinds and media, and link ends that
        exist; :func:`designer.topology.fileformat.from_dict` checks all of these first. ``ids``:
        the components' and the links' ids in item order, when the caller holds them already
        (the loader's columns; each item's id is then not read again). ``noted``: ``counters``
        already hold the highest number of every prefix the ids use (a builder that numbered
        the ids from them), so the ids are not read for their numbers at all (~0.4 s of saving
        a 131k-GPU design).

        The two dicts are made here; the link and placement indexes and the id counters of the
        items are made when first needed (``_links_of``, ``_children``, ``_counters``): the same
        contents, later, and not at all by a run that never asks."""
        if ids is None:
            ids = (list(map(attrgetter("id"), components)), list(map(attrgetter("id"), links)))
        topo = cls()
        topo.components = dict(zip(ids[0], components))
        topo.links = dict(zip(ids[1], links))
        if len(topo.components) != len(components) or len(topo.links) != len(links):
            raise TopologyError("duplicate ids in the items given")
        topo._links_index = topo._children_index = None
        topo._unnoted = [] if noted else [ids[0], ids[1]]
        topo.restore_counters(counters or {})
        return topo

    def clear(self) -> None:
        self.components.clear()
        self.links.clear()
        self._links_index, self._children_index = {}, {}
        self._emit(ChangeEvent("reset"))

    def copy(self) -> "Topology":
        """A deep copy without subscribers."""
        other = Topology()
        other.components = {k: c.copy() for k, c in self.components.items()}
        other.links = {k: l.copy() for k, l in self.links.items()}
        other._links_index = {k: set(v) for k, v in self._links_of.items()}
        other._children_index = {k: set(v) for k, v in self._children.items()}
        other._counts = dict(self._counters)
        return other

    def snapshot(self) -> tuple[tuple, tuple]:
        """A hashable picture of the content (for equality checks in tests and soak runs)."""
        comps = tuple(
            sorted(
                (c.id, c.kind, c.model, c.name, c.parent, c.slot, repr(sorted(c.props.items())), c.pos)
                for c in self.components.values()
            )
        )
        links = tuple(
            sorted(
                (l.id, l.a, l.b, l.medium, l.speed_Gbps, l.latency_us, l.lanes, l.a_port, l.b_port)
                for l in self.links.values()
            )
        )
        return comps, links

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Topology) and self.snapshot() == other.snapshot()

    __hash__ = None  # type: ignore[assignment]

    def __len__(self) -> int:
        return len(self.components)

    # ---------------------------------------------------------------- queries
    def _require(self, comp_id: str) -> Component:
        comp = self.components.get(comp_id)
        if comp is None:
            raise TopologyError(f"no component '{comp_id}'")
        return comp

    def get(self, comp_id: str) -> Component | None:
        return self.components.get(comp_id)

    def of_kind(self, kind: str) -> list[Component]:
        return [c for c in self.components.values() if c.kind == kind]

    def servers(self) -> list[Component]:
        return self.of_kind("gpu_server")

    def racks(self) -> list[Component]:
        return self.of_kind("rack")

    def storage(self) -> list[Component]:
        return self.of_kind("storage")

    def switches(self, tier: str | None = None) -> list[Component]:
        """Switches, optionally of one tier (``props['tier']``; the kind default is 'leaf')."""
        result = self.of_kind("switch")
        if tier is None:
            return result
        return [c for c in result if c.props.get("tier", "leaf") == tier]

    def children(self, comp_id: str) -> list[Component]:
        return [self.components[c] for c in sorted(self._children.get(comp_id, ()))]

    def attached(self, server_id: str) -> list[Component]:
        """NICs and DPUs attached to a server, in slot order (then by id: ids are unique, so the
        order is total and the children need no sorting first)."""
        ids = self._children.get(server_id)
        if not ids:
            return []
        comps = self.components
        kids = [c for c in map(comps.__getitem__, ids) if c.kind in ATTACHABLE]
        kids.sort(key=lambda c: (c.slot if c.slot is not None else 1 << 30, c.id))
        return kids

    def members(self, rack_id: str) -> list[Component]:
        """Components in a rack, by U position."""
        kids = [c for c in self.children(rack_id) if c.kind in RACKABLE]
        return sorted(kids, key=lambda c: (c.slot if c.slot is not None else 1 << 30, c.id))

    def links_of(self, comp_id: str) -> list[Link]:
        return [self.links[l] for l in sorted(self._links_of.get(comp_id, ()))]

    def neighbors(self, comp_id: str) -> list[str]:
        return sorted({l.other(comp_id) for l in self.links_of(comp_id)})

    def gpus(self, resolve: Callable[[Component], dict[str, Any]]) -> list[tuple[str, int]]:
        """Every GPU as ``(server_id, index)``; ``resolve`` gives a server's effective figures
        (normally ``Catalog.resolve``), whose ``gpu_count`` says how many it holds."""
        return [(s.id, i) for s in self.servers() for i in range(int(resolve(s)["gpu_count"]))]

    def graph(self) -> nx.MultiGraph:
        """A networkx view: nodes are components (attribute ``kind``), edges are links (key = link
        id, attributes of the link) plus attachment edges NIC/DPU–server (``medium='pcie'``,
        ``attach=True``). Cached until the next change; do not modify it."""
        if self._graph is None:
            import networkx as nx

            g = nx.MultiGraph()
            for c in self.components.values():
                g.add_node(c.id, kind=c.kind)
            for l in self.links.values():
                g.add_edge(l.a, l.b, key=l.id, medium=l.medium, speed_Gbps=l.speed_Gbps,
                           lanes=l.lanes, latency_us=l.latency_us, attach=False)
            for c in self.components.values():
                if c.kind in ATTACHABLE and c.parent in self.components:
                    g.add_edge(c.id, c.parent, key=f"attach:{c.id}", medium="pcie", attach=True)
            self._graph = g
        return self._graph

    def shortest_path(self, a: str, b: str) -> list[str] | None:
        """Fewest-hop path of component ids from a to b, or None if there is none."""
        import networkx as nx

        try:
            return nx.shortest_path(self.graph(), a, b)
        except (nx.NetworkXNoPath, nx.NodeNotFound):
            return None
