"""Canvas geometry and positions by tier (no Qt).

The canvas (``designer.gui.items``) draws a rack as a frame ``MEMBER_W + 2 * RACK_PAD`` wide and
``RACK_HEADER + U * U_PX + RACK_PAD`` high with its GPU servers inside at their U slots; a server
shows its NICs/DPUs as small badges, so neither racks nor servers grow with attached devices.
Switches and storage are boxes ``MEMBER_W`` wide (their rack, if any, shows the U they take).

:func:`layout_by_tier` puts blocks of rows top to bottom, each block wrapped to a common width and
centred on it: core, spine and leaf switches, then the racks, then GPU servers outside racks, then
the front-end (north-south) network's leaf, spine and core switches (``frontend`` switches, below
the racks they serve, apart from the compute fabric above), then storage and loose NICs/DPUs. The common width is at least ``RACKS_PER_ROW`` racks and grows (for big
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
    """
    from designer.topology.catalog import load_catalog
    from designer.topology.validation import Resolver

    resolve = Resolver(catalog or load_catalog())
    comps = topology.components
    blocks: list[_Block] = []

    def block(items: list[Component], size) -> None:
        if items:
            blocks.append(_Block([c.id for c in items], [size(c) for c in items]))

    def box(c: Component) -> tuple[float, float]:
        return MEMBER_W, box_height(_units(resolve(c), "rack_units_used", 1))

    front = {sw.id for sw in topology.switches() if sw.props.get("frontend")}
    for tier in ("core", "spine", "leaf"):
        block([sw for sw in topology.switches(tier) if sw.id not in front], box)
    racks = topology.racks()
    block(racks, lambda r: rack_size(_units(resolve(r), "rack_units", 42)))
    in_rack = {s.id for s in topology.servers() if s.parent in comps and comps[s.parent].kind == "rack"}
    block([s for s in topology.servers() if s.id not in in_rack], box)
    for tier in ("leaf", "spine", "core"):
        block([sw for sw in topology.switches(tier) if sw.id in front], box)
    on_server = {c.id for c in comps.values()
                 if c.kind in ATTACHABLE and c.parent in comps and comps[c.parent].kind == "gpu_server"}
    loose = [c for c in comps.values() if c.kind in ATTACHABLE and c.id not in on_server]
    block(topology.storage() + loose,
          lambda c: box(c) if c.kind == "storage" else (PORT_BOX_W, MIN_H))

    natural = max((len(b.ids) * b.pitch() - GAP for b in blocks), default=0.0)
    rack_row = RACKS_PER_ROW * (rack_size(42)[0] + GAP) - GAP
    width = min(natural, max(rack_row, math.sqrt(ASPECT * sum(b.area() for b in blocks))))
    pos: dict[str, tuple[float, float]] = {}
    top = 0.0
    for b in blocks:
        top = b.place(width, top, pos) + BLOCK_GAP

    for sid in in_rack:
        server, rack = comps[sid], comps[comps[sid].parent]
        dx, dy = member_offset(_units(resolve(rack), "rack_units", 42), server.slot or 1,
                               _units(resolve(server), "rack_units_used", 1))
        pos[sid] = (pos[rack.id][0] + dx, pos[rack.id][1] + dy)
    for cid in on_server:
        pos[cid] = pos[comps[cid].parent]
    return pos
