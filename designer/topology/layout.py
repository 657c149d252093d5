"""Canvas geometry and positions by tier (no Qt).

The canvas (``designer.gui.items``) draws a rack as a frame ``MEMBER_W + 2 * RACK_PAD`` wide and
``RACK_HEADER + U * U_PX + RACK_PAD`` high with its GPU servers inside at their U slots; a server
shows its NICs/DPUs as small badges, so neither racks nor servers grow with attached devices.
Switches and storage are boxes ``MEMBER_W`` wide (their rack, if any, shows the U they take).

:func:`layout_by_tier` puts blocks of rows top to bottom, each block wrapped to a common width and
centred on it: core, spine and leaf switches, then the racks, then GPU servers outside racks, then
the front-end (north-south) network's leaf, spine and core switches (``frontend`` switches, below
the racks they serve, apart from the compute fabric above), then the management network's leaf,
spine and core switches (``management`` switches: the out-of-band network of the BMC and DPU OOB
ports), then storage and loose NICs/DPUs. The common width is at least ``RACKS_PER_ROW`` racks and grows (for big
designs) so that the whole picture keeps about the shape of a canvas window (``ASPECT``).
Positions are item centres in scene units.
"""

from __future__ import annotations

import math

from designer.topology.model import ATTACHABLE, Component, Topology

U_PX = 10.0            # height of one rack unit
RACK_PAD = 6.0         # frame around rack members
RACK_HEADER = 20.0     # rack title bar
MEMBER_W = 140.0       # width of a server/switch/storage box
MIN_H = 40.0           # height of a box that is not in a rack
PORT_BOX_W = 100.0     # width of a NIC/DPU that is on no server

GAP = 24.0             # between neighbouring boxes of a row (boxes carry their labels inside)
LINE_GAP = 40.0        # between wrapped rows of one block
BLOCK_GAP = 160.0      # between blocks (tiers), so that cables between them fan out visibly
RACKS_PER_ROW = 16
ASPECT = 1.3           # width : height the picture aims at when it has to wrap beyond that


def rack_size(rack_units: float) -> tuple[float, float]:
    return MEMBER_W + 2 * RACK_PAD, RACK_HEADER + rack_units * U_PX + RACK_PAD


def member_offset(rack_units: float, slot: int, units: float) -> tuple[float, float]:
    """Centre of a rack member relative to the rack's centre (U 1 is at the bottom)."""
    _, h = rack_size(rack_units)
    top = RACK_HEADER + (rack_units - (slot + units - 1)) * U_PX
    return 0.0, -h / 2 + top + units * U_PX / 2


def box_height(units: float) -> float:
    """Height of a server/switch/storage box standing on its own."""
    return max(MIN_H, units * U_PX)


def _units(figures: dict, field: str, default: float) -> float:
    try:
        return float(figures.get(field) or default)
    except (TypeError, ValueError):
        return default


class _Block:
    """Items of one kind of row: ``sizes[i]`` is the (width, height) of item ``ids[i]``."""

    def __init__(self, ids: list[str], sizes: list[tuple[float, float]]) -> None:
        self.ids, self.sizes = ids, sizes

    def pitch(self) -> float:
        return max(w for w, _ in self.sizes) + GAP

    def area(self) -> float:
        return sum((w + GAP) * (h + LINE_GAP) for w, h in self.sizes)

    def place(self, width: float, top: float, out: dict) -> float:
        """Wrap into rows no wider than ``width``, centred on it; returns the bottom."""
        pitch = self.pitch()
        rows = math.ceil(len(self.ids) / max(1, int((width + GAP) // pitch)))
        per_row = math.ceil(len(self.ids) / rows)
        for first in range(0, len(self.ids), per_row):
            ids = self.ids[first:first + per_row]
            height = max(h for _, h in self.sizes[first:first + per_row])
            x0 = (width - len(ids) * pitch + GAP) / 2 - GAP / 2 + pitch / 2
            for i, ident in enumerate(ids):
                out[ident] = (x0 + i * pitch, top + height / 2)
            top += height + LINE_GAP
        return top - LINE_GAP


def layout_by_tier(topology: Topology, catalog=None) -> dict[str, tuple[float, float]]:
    """Position of every component: ``{id: (x, y)}`` (the topology is not changed).

    GPU servers in a rack get the centre where the rack draws them; NICs/DPUs on a server get
    their server's position. ``catalog`` (default: the packaged one) gives the heights in U.

    The components are sorted into their blocks in one pass (in design order, as ``switches(tier)``,
    ``racks()``, ``servers()`` and ``storage()`` list them), and a height in U is looked up once per
    kind and model (a ``props`` override of it is taken as given, as ``Catalog.resolve`` merges it):
    a 131k-GPU design has 200k components and a dozen models.
    """
    from designer.topology.catalog import load_catalog
    from designer.topology.validation import Resolver

    resolve = Resolver(catalog or load_catalog())
    comps = topology.components
    looked: dict[tuple[str, str, str], float] = {}

    def units(c: Component, field: str, default: float) -> float:
        """``_units(resolve(c), field, default)``, once per kind and model."""
        if c.props and field in c.props:
            return _units(c.props, field, default)
        key = (c.kind, c.model, field)
        if key not in looked:
            looked[key] = _units(resolve(Component("", c.kind, c.model)), field, default)
        return looked[key]

    def box(c: Component) -> tuple[float, float]:
        return MEMBER_W, box_height(units(c, "rack_units_used", 1))

    tiers = ("core", "spine", "leaf")
    fabric: dict[str, list[Component]] = {t: [] for t in tiers}
    front: dict[str, list[Component]] = {t: [] for t in tiers}
    mgmt: dict[str, list[Component]] = {t: [] for t in tiers}
    racks: list[Component] = []
    in_rack: list[Component] = []
    loose_servers: list[Component] = []
    on_server: list[Component] = []
    storage: list[Component] = []
    loose: list[Component] = []
    for c in comps.values():
        kind = c.kind
        if kind in ATTACHABLE:
            parent = comps.get(c.parent) if c.parent is not None else None
            (on_server if parent is not None and parent.kind == "gpu_server" else loose).append(c)
        elif kind == "gpu_server":
            parent = comps.get(c.parent) if c.parent is not None else None
            (in_rack if parent is not None and parent.kind == "rack" else loose_servers).append(c)
        elif kind == "switch":
            tier = c.props.get("tier", "leaf")  # a tier of another name has no row
            if isinstance(tier, str) and tier in fabric:
                (mgmt if c.props.get("management") is True else front if c.props.get("frontend")
                 else fabric)[tier].append(c)
        elif kind == "rack":
            racks.append(c)
        elif kind == "storage":
            storage.append(c)

    blocks: list[_Block] = []

    def block(items: list[Component], size) -> None:
        if items:
            blocks.append(_Block([c.id for c in items], [size(c) for c in items]))

    for tier in tiers:
        block(fabric[tier], box)
    block(racks, lambda r: rack_size(units(r, "rack_units", 42)))
    block(loose_servers, box)
    for tier in reversed(tiers):
        block(front[tier], box)
    for tier in reversed(tiers):
        block(mgmt[tier], box)
    block(storage + loose, lambda c: box(c) if c.kind == "storage" else (PORT_BOX_W, MIN_H))

    natural = max((len(b.ids) * b.pitch() - GAP for b in blocks), default=0.0)
    rack_row = RACKS_PER_ROW * (rack_size(42)[0] + GAP) - GAP
    width = min(natural, max(rack_row, math.sqrt(ASPECT * sum(b.area() for b in blocks))))
    pos: dict[str, tuple[float, float]] = {}
    top = 0.0
    for b in blocks:
        top = b.place(width, top, pos) + BLOCK_GAP

    offsets: dict[tuple[float, int, float], tuple[float, float]] = {}
    for server in in_rack:
        assert server.parent is not None  # in_rack holds only components in a rack
        rack = comps[server.parent]
        key = (units(rack, "rack_units", 42), server.slot or 1, units(server, "rack_units_used", 1))
        off = offsets.get(key)
        if off is None:
            off = offsets[key] = member_offset(*key)
        x, y = pos[rack.id]
        pos[server.id] = (x + off[0], y + off[1])
    for c in on_server:
        assert c.parent is not None  # on_server holds only components on a server
        pos[c.id] = pos[c.parent]
    return pos
