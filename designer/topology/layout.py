"""Canvas positions by tier: core, spine and leaf switches, servers with their NICs/DPUs, storage, racks.

Rows run top to bottom; each row is spread over the width of the widest row, in the topology's order
(templates add components in fabric order, so leaves sit roughly above their servers). Gaps are wide
enough that the labels of neighbouring boxes do not overlap (scene units; the canvas draws a box of
about 120 x 50 units with its label under it).
"""

from __future__ import annotations

from designer.topology.model import ATTACHABLE, Topology

#: minimum distance between neighbouring boxes of a row, and between rows
BOX_GAP = 170.0
DEVICE_GAP = 80.0
ROW_GAP = 220.0
DEVICE_DROP = 90.0


def _spread(ids: list[str], widths: list[float], width: float, y: float, out: dict) -> None:
    """Place ``ids`` left to right, centred in ``[0, width]``, spreading spare room evenly."""
    if not ids:
        return
    spare = max(0.0, width - sum(widths)) / len(ids)
    x = 0.0
    for ident, w in zip(ids, widths):
        out[ident] = (x + (w + spare) / 2.0, y)
        x += w + spare


def layout_by_tier(topology: Topology) -> dict[str, tuple[float, float]]:
    """Position of every component: ``{id: (x, y)}`` (the topology is not changed)."""
    comps = topology.components.values()
    attached = {s.id: topology.attached(s.id) for s in topology.servers()}
    placed = {d.id for devices in attached.values() for d in devices}
    loose = [c.id for c in comps if c.kind in ATTACHABLE and c.id not in placed]
    rows: list[tuple[list[str], list[float]]] = []
    for tier in ("core", "spine", "leaf"):
        ids = [c.id for c in topology.switches(tier)]
        rows.append((ids, [BOX_GAP] * len(ids)))
    servers = [s.id for s in topology.servers()]
    rows.append((servers, [max(BOX_GAP, len(attached[s]) * DEVICE_GAP) for s in servers]))
    bottom = [c.id for c in topology.storage()] + loose
    rows.append((bottom, [BOX_GAP] * len(bottom)))
    racks = [r.id for r in topology.racks()]
    rows.append((racks, [BOX_GAP] * len(racks)))
    rows = [r for r in rows if r[0]]
    width = max((sum(w) for _, w in rows), default=0.0)
    pos: dict[str, tuple[float, float]] = {}
    y = 0.0
    for ids, widths in rows:
        _spread(ids, widths, width, y, pos)
        if ids is servers:
            for s in servers:
                devices = attached[s]
                x0 = pos[s][0] - (len(devices) - 1) * DEVICE_GAP / 2.0
                for i, d in enumerate(devices):
                    pos[d.id] = (x0 + i * DEVICE_GAP, y + DEVICE_DROP)
            y += DEVICE_DROP if any(attached.values()) else 0.0
        y += ROW_GAP
    return pos
