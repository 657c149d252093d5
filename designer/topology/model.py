"""The domain model: components, links and the topology that holds them (no Qt).

Every change goes through a method of :class:`Topology`, which tells its subscribers with a
:class:`ChangeEvent`. The GUI's scene follows these events; undo commands call these methods.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Callable, Iterable, cast

import msgspec

from designer.errors import UsageError
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

#: characters an id may not hold: C0 and C1 control characters (ESC and CSI start the terminal
#: escape sequences a console would obey), DEL, the line and paragraph separators, and the
#: bidirectional embedding, override and isolate controls (text that shows other than it reads)
_UNSAFE_ID = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
#: characters a name may not hold: the same, less tab (a name is free printable text)
_UNSAFE_NAME = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _shown(text: str, limit: int = 40) -> str:
    """``text`` as Python writes a string (escapes visible, nothing a console would obey), cut to
    ``limit`` characters."""
    return ascii(text if len(text) <= limit else text[:limit] + "...")


def id_problem(ident: Any, what: str = "an id") -> str | None:
    """Why ``ident`` cannot be the id of a component or link, or None: an id is a non-empty
    string without control characters (see ``_UNSAFE_ID``): ids are echoed to consoles, CSV
    files, SVG and reports, where an escape sequence or a control character would be obeyed or
    make the file ill-formed."""
    if not isinstance(ident, str) or not ident:
        return f"{what} must be a non-empty string, not {_shown(repr(ident))}"
    bad = _UNSAFE_ID.search(ident)
    if bad:
        return (f"{what} {_shown(ident)} holds the control character U+{ord(bad.group()):04X} at "
                f"position {bad.start() + 1}; use letters, digits and printable punctuation")
    return None


def name_problem(name: Any, what: str = "the name") -> str | None:
    """Why ``name`` cannot be a component's name, or None: any printable text (tabs too), no
    other control character (as :func:`id_problem`)."""
    if not isinstance(name, str):
        return f"{what} must be a string, not {_shown(repr(name))}"
    bad = _UNSAFE_NAME.search(name)
    if bad:
        return (f"{what} {_shown(name)} holds the control character U+{ord(bad.group()):04X} at "
                f"position {bad.start() + 1}; names are printable text")
    return None


def _first_unsafe(texts: list[str], pattern: re.Pattern[str]) -> int | None:
    """Index of the first of ``texts`` (strings) that ``pattern`` finds a character in, or None.
    One search over the joined text (C speed: a few ms for a 131k-GPU design's ~400k ids); the
    strings are then scanned one by one only when it finds something."""
    if not pattern.search("".join(texts)):
        return None
    return next(i for i, t in enumerate(texts) if pattern.search(t))


class Component(msgspec.Struct, frozen=True, gc=False):
    """One box on the canvas. ``model`` names a catalog entry; ``props`` override its figures.

    Immutable: a Component is changed only through its :class:`Topology`
    (``update_component``, ``set_prop``), which puts a new Component in its place and tells the
    subscribers; setting an attribute raises ``AttributeError``. ``props`` is the model's own
    dict (copied on the way in): change it with ``Topology.set_prop``, never in place.
    (A ``msgspec.Struct``: made as fast as a slotted dataclass, and not tracked by the cycle
    collector, as a Component holds no reference cycle; a 131k-GPU design has 199k of them.)"""

    id: str
    kind: str
    model: str
    name: str = ""
    parent: str | None = None
    slot: int | None = None
    props: dict[str, Any] = {}
    pos: tuple[float, float] | None = None

    def copy(self) -> "Component":
        """A Component equal to this one with its own ``props`` dict."""
        props = self.props
        if props:  # plain values (the usual props) need no deep copy
            props = dict(props) if all(type(v) in _PLAIN for v in props.values()) else copy.deepcopy(props)
        else:
            props = {}
        return msgspec.structs.replace(self, props=props)

    @property
    def label(self) -> str:
        return self.name or self.id


class Link(msgspec.Struct, frozen=True, gc=False):
    """A cable (or bundle of ``lanes`` cables) between two components. Immutable, as
    :class:`Component`: change it with ``Topology.update_link``."""

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
        """This Link (it holds only immutable values: nothing to copy)."""
        return self

    def other(self, end: str) -> str:
        return self.b if end == self.a else self.a

    @property
    def capacity_Gbps(self) -> float:
        """Total capacity of the bundle in one direction."""
        return self.speed_Gbps * self.lanes


COMPONENT_FIELDS: tuple[str, ...] = Component.__struct_fields__
LINK_FIELDS: tuple[str, ...] = Link.__struct_fields__


def replace_item(item: Any, **changes: Any) -> Any:
    """A copy of a Component or Link with ``changes`` (for builders of items not yet in a
    Topology; an item in one changes through ``update_component`` / ``update_link``)."""
    return msgspec.structs.replace(item, **changes)


def as_dict(item: Component | Link) -> dict[str, Any]:
    """The fields of a Component or Link as a dict, in field order (``props`` the item's own
    dict: copy it before changing it)."""
    return msgspec.structs.asdict(item)


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


class TopologyError(UsageError, ValueError):
    """An edit that would make the model inconsistent (unknown id, duplicate id, bad kind, a
    control character in an id, a containment loop...). A ``UsageError``: a command that meets
    one (a design file whose items the model refuses) says it in one line, exit 2."""


_ID_NUM = re.compile(r"^(.*?)(\d+)$")


def _check_texts(ids: tuple[list[str], list[str]], components: list[Component]) -> None:
    """Refuse control characters in the ids and names of items given in bulk
    (:meth:`Topology.from_items`), with the message :func:`id_problem` or :func:`name_problem`
    gives for the first one."""
    for what, texts, pattern, problem in (
            ("component id", ids[0], _UNSAFE_ID, id_problem),
            ("link id", ids[1], _UNSAFE_ID, id_problem),
            ("name", list(map(attrgetter("name"), components)), _UNSAFE_NAME, name_problem)):
        i = _first_unsafe(texts, pattern)
        if i is not None:
            if what == "name":
                raise TopologyError(name_problem(texts[i], f"the name of '{_shown(ids[0][i])[1:-1]}'") or "")
            raise TopologyError(problem(texts[i], what) or "")


def _reordered(items: dict[str, Any], at: dict[str, int]) -> dict[str, Any]:
    """``items`` with each key of ``at`` moved to position ``at[key]`` (the positions they had
    before they were removed and re-added), the other keys in their order around them."""
    if not at:
        return items
    moved = sorted((pos, key) for key, pos in at.items() if key in items)
    rest = iter([k for k in items if k not in at])
    order: list[str] = []
    for pos, key in moved:
        while len(order) < pos:
            nxt = next(rest, None)
            if nxt is None:
                break
            order.append(nxt)
        order.append(key)
    order.extend(rest)
    return {k: items[k] for k in order}


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
        #: ids ``new_id`` handed out that no item has taken yet (see ``new_id``)
        self._reserved: set[str] = set()
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
        """A fresh id ``prefix-N``; ids are never reused within this topology (or its file).

        The id is *reserved*: no later call hands it out again, but the counters (what a file
        saves) count it only once an item with it is added. An id asked for and never used (a
        cable option not taken, an edit undone) then leaves the saved counters as they were, so
        undo back to a saved state saves the same bytes."""
        n = self._counters.get(prefix, 0)
        reserved = self._reserved
        while True:
            n += 1
            candidate = f"{prefix}-{n}"
            if candidate not in self.components and candidate not in self.links and candidate not in reserved:
                reserved.add(candidate)
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
        problem = id_problem(comp.id, "component id") or name_problem(comp.name, f"the name of '{comp.id}'")
        if problem:
            raise TopologyError(problem)
        if comp.id in self.components or comp.id in self.links:
            raise TopologyError(f"id '{comp.id}' is already used")
        if comp.parent is not None:
            self._check_parent(comp.id, comp.parent, must_exist=False)
        comp = comp.copy()
        self.components[comp.id] = comp
        self._links_of.setdefault(comp.id, set())
        if comp.parent is not None:
            self._children.setdefault(comp.parent, set()).add(comp.id)
        self._note_id(comp.id)
        self._reserved.discard(comp.id)
        self._emit(ChangeEvent("component_added", comp.id, None, comp.copy()) if self._subscribers else None)
        return comp

    def _check_parent(self, comp_id: str, parent: str, must_exist: bool = True) -> None:
        """Refuse ``parent`` for ``comp_id`` when it is not a component (``must_exist``) or when
        it is ``comp_id`` or sits, at any depth, inside ``comp_id``: placing it there would make
        a loop of containment (a rack in a rack in the first rack), which a walk up the parents
        (the canvas's subtrees, the rack of a NIC) would go round for ever. The walk up from
        ``parent`` visits each component at most once, so a loop already in the model (a file
        that held one) ends it too."""
        if must_exist and parent not in self.components:
            raise TopologyError(f"no component '{parent}' to attach '{comp_id}' to")
        seen: set[str] = set()
        at: str | None = parent
        while at is not None and at not in seen:
            if at == comp_id:
                if parent == comp_id:
                    raise TopologyError(f"'{comp_id}' cannot contain itself")
                raise TopologyError(f"'{comp_id}' cannot go into '{parent}': '{parent}' is inside "
                                    f"'{comp_id}' already (a loop of containment)")
            seen.add(at)
            up = self.components.get(at)
            at = up.parent if up is not None else None

    def remove_component(self, comp_id: str) -> tuple[Component, list[Link], list[Component]]:
        """Remove a component with its links; its children are detached (parent set to None).

        Returns ``(component, removed_links, detached_children_before)`` so that an undo command can
        restore exactly what was there.
        """
        comp = self._require(comp_id)
        removed_links = [self.links[lid] for lid in sorted(self._links_of.get(comp_id, ()))]
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
        ``props`` as a whole dict): a new Component takes its place. Returns the old one."""
        comp = self._require(comp_id)
        unknown = (set(changes) - set(COMPONENT_FIELDS)) | ({"id", "kind"} & set(changes))
        if unknown:
            raise TopologyError(f"cannot change {', '.join(sorted(unknown))} of a component")
        if changes.get("parent") is not None:
            self._check_parent(comp_id, changes["parent"])
        if "name" in changes:
            problem = name_problem(changes["name"], f"the name of '{comp_id}'")
            if problem:
                raise TopologyError(problem)
        if "props" in changes:
            changes["props"] = copy.deepcopy(changes["props"]) if changes["props"] else {}
        if changes.get("pos") is not None:
            changes["pos"] = (float(changes["pos"][0]), float(changes["pos"][1]))
        if "parent" in changes and changes["parent"] != comp.parent:
            if comp.parent is not None:
                self._children.get(comp.parent, set()).discard(comp_id)
            if changes["parent"] is not None:
                self._children.setdefault(changes["parent"], set()).add(comp_id)
        new = msgspec.structs.replace(comp, **changes)
        self.components[comp_id] = new
        self._emit(ChangeEvent("component_changed", comp_id, comp.copy(), new.copy())
                   if self._subscribers else None)
        return comp

    def move_many(self, positions: dict[str, tuple[float, float] | None]) -> None:
        """Set the canvas position of many components (id -> ``(x, y)`` or None), as
        ``update_component(id, pos=...)`` of each (a builder laying out a new design: one
        replacement per item, and events only when someone listens)."""
        comps = self.components
        for cid, xy in positions.items():
            comp = self._require(cid)
            pos = None if xy is None else (float(xy[0]), float(xy[1]))
            new = msgspec.structs.replace(comp, pos=pos)
            comps[cid] = new
            self._emit(ChangeEvent("component_changed", cid, comp.copy(), new.copy())
                       if self._subscribers else None)

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
        for builders of big designs: the same checks and event, with the id's number counted as
        it is made (not read back from the id)."""
        if a not in self.components or b not in self.components:
            raise TopologyError(f"link from '{a}' to '{b}' names no component "
                                f"'{a if a not in self.components else b}'")
        if a == b:
            raise TopologyError(f"a link cannot join '{a}' to itself")
        if medium not in MEDIA:
            raise TopologyError(f"unknown medium '{medium}' (one of {', '.join(MEDIA)})")
        counters = self._counters
        n = counters.get("link", 0)
        while True:  # new_id's choice, counted at once (the link is made here)
            n += 1
            lid = f"link-{n}"
            if lid not in self.components and lid not in self.links and lid not in self._reserved:
                break
        counters["link"] = n
        link = Link(lid, a, b, medium, speed_Gbps, lanes=lanes)
        self.links[link.id] = link
        self._links_of.setdefault(a, set()).add(link.id)
        self._links_of.setdefault(b, set()).add(link.id)
        self._emit(ChangeEvent("link_added", link.id, None, link) if self._subscribers else None)
        return link

    def add_link(self, link: Link) -> Link:
        problem = id_problem(link.id, "link id")
        if problem:
            raise TopologyError(problem)
        if link.id in self.links or link.id in self.components:
            raise TopologyError(f"id '{link.id}' is already used")
        for end in (link.a, link.b):
            if end not in self.components:
                raise TopologyError(f"link '{link.id}' names no component '{end}'")
        if link.a == link.b:
            raise TopologyError(f"link '{link.id}' joins '{link.a}' to itself")
        if link.medium not in MEDIA:
            raise TopologyError(f"link '{link.id}': unknown medium '{link.medium}' (one of {', '.join(MEDIA)})")
        self.links[link.id] = link
        self._links_of.setdefault(link.a, set()).add(link.id)
        self._links_of.setdefault(link.b, set()).add(link.id)
        self._note_id(link.id)
        self._reserved.discard(link.id)
        self._emit(ChangeEvent("link_added", link.id, None, link) if self._subscribers else None)
        return link

    def remove_link(self, link_id: str) -> Link:
        link = self.links.pop(link_id, None)
        if link is None:
            raise TopologyError(f"no link '{link_id}'")
        self._links_of.get(link.a, set()).discard(link_id)
        self._links_of.get(link.b, set()).discard(link_id)
        self._emit(ChangeEvent("link_removed", link_id, link, None))
        return link

    def update_link(self, link_id: str, **changes: Any) -> Link:
        """Change fields of a link (not its id): a new Link takes its place. Returns the old one."""
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
        new = msgspec.structs.replace(link, **changes)
        if new.a == new.b:
            raise TopologyError(f"link '{link_id}' would join '{new.a}' to itself")
        for end in ("a", "b"):
            if end in changes:
                self._links_of.get(getattr(link, end), set()).discard(link_id)
        self.links[link_id] = new
        self._links_of.setdefault(new.a, set()).add(link_id)
        self._links_of.setdefault(new.b, set()).add(link_id)
        self._emit(ChangeEvent("link_changed", link_id, link, new))
        return link

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
        _check_texts(ids, components)
        topo = cls()
        topo.components = dict(zip(ids[0], components))
        topo.links = dict(zip(ids[1], links))
        if len(topo.components) != len(components) or len(topo.links) != len(links):
            raise TopologyError("duplicate ids in the items given")
        topo._links_index = topo._children_index = None
        topo._unnoted = [] if noted else [ids[0], ids[1]]
        topo.restore_counters(counters or {})
        return topo

    def reset_counters(self, counters: dict[str, int]) -> None:
        """Set the id counters to exactly ``counters`` (undo back to a saved state: the file then
        holds the counters it held; :meth:`restore_counters` only raises them)."""
        self._counters  # noqa: B018 - read the loaded ids' numbers first, so none is read later
        self._counts = {prefix: int(n) for prefix, n in counters.items()}

    def order(self) -> tuple[list[str], list[str]]:
        """The component and link ids in their order (the order a file is saved in)."""
        return list(self.components), list(self.links)

    def restore_order(self, at: dict[str, int], link_at: dict[str, int]) -> None:
        """Put components (``at``: id -> position) and links (``link_at``) back at the positions
        they had, the others keeping their order around them: undoing a removal re-adds an item
        at the end, and this puts it where it was, so the saved file is byte for byte the one
        before. No event (the content is the same, only the order of the dicts changes), but a
        new ``version``: what is made from the order (the engine's fabric) is made again."""
        if not at and not link_at:
            return
        self.components = _reordered(self.components, at)
        self.links = _reordered(self.links, link_at)
        self.version += 1
        self._graph = None

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
            return cast("list[str] | None", nx.shortest_path(self.graph(), a, b))
        except (nx.NetworkXNoPath, nx.NodeNotFound):
            return None
