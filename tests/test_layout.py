"""Canvas positions by tier: rows of switches, racks wrapped into rows, storage below; racks and
servers keep their size however many NICs/DPUs they carry; nothing overlaps."""

import pytest

from designer.topology.catalog import load_catalog
from designer.topology.layout import (GAP, MEMBER_W, RACKS_PER_ROW, box_height, layout_by_tier,
                                      member_offset, rack_size)
from designer.topology.model import Component, Topology
from designer.topology.templates import leaf_spine, rail_optimized


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _boxes(topo, pos, catalog):
    """Scene rectangles (left, top, right, bottom) of the top-level boxes the canvas draws."""
    out = {}
    for c in topo.components.values():
        if c.parent is not None and c.kind in ("gpu_server", "dpu", "nic"):
            continue  # drawn inside its rack / on its server
        fig = catalog.resolve(c)
        w, h = rack_size(fig["rack_units"]) if c.kind == "rack" else (
            MEMBER_W, box_height(fig.get("rack_units_used", 1)))
        x, y = pos[c.id]
        out[c.id] = (x - w / 2, y - h / 2, x + w / 2, y + h / 2)
    return out


def _overlaps(boxes):
    items = sorted(boxes.items(), key=lambda kv: kv[1][0])
    bad = []
    for i, (a, ra) in enumerate(items):
        for b, rb in items[i + 1:]:
            if rb[0] >= ra[2]:
                break
            if rb[1] < ra[3] and ra[1] < rb[3]:
                bad.append((a, b))
    return bad


def test_rack_pitch_does_not_grow_with_attached_devices(catalog):
    def two_racks(dpus):
        topo = Topology()
        for r in ("rack-1", "rack-2"):
            topo.add_component(Component(r, "rack", "rack-42u"))
            topo.add_component(Component(f"srv-{r}", "gpu_server", "dgx-h100", parent=r, slot=1))
            for i in range(dpus):
                topo.add_component(Component(f"dpu-{r}-{i}", "dpu", "bluefield-3", parent=f"srv-{r}", slot=i))
        pos = layout_by_tier(topo, catalog)
        return pos["rack-2"][0] - pos["rack-1"][0], pos

    bare, _ = two_racks(0)
    loaded, pos = two_racks(10)
    assert bare == loaded == rack_size(42)[0] + GAP
    # servers sit where their rack draws them; their DPUs at their server
    dx, dy = member_offset(42, 1, 8)
    assert pos["srv-rack-1"] == (pos["rack-1"][0] + dx, pos["rack-1"][1] + dy)
    assert pos["dpu-rack-1-9"] == pos["srv-rack-1"]


def test_example_sized_design_rows_and_a_readable_extent(catalog):
    topo = leaf_spine(servers=8, catalog=catalog).topology
    pos = layout_by_tier(topo, catalog)
    assert set(pos) == set(topo.components)
    y = {name: {pos[c.id][1] for c in cs} for name, cs in
         (("spine", topo.switches("spine")), ("leaf", topo.switches("leaf")), ("rack", topo.racks()),
          ("storage", topo.storage()))}
    assert all(len(v) == 1 for v in y.values())
    assert y["spine"].pop() < y["leaf"].pop() < y["rack"].pop() < y["storage"].pop()
    boxes = _boxes(topo, pos, catalog)
    assert _overlaps(boxes) == []
    left, top = min(b[0] for b in boxes.values()), min(b[1] for b in boxes.values())
    right, bottom = max(b[2] for b in boxes.values()), max(b[3] for b in boxes.values())
    # fits a 900 x 700 pixel canvas at 60 % zoom, where the 8.5 pt labels are legible
    assert right - left <= 900 / 0.6 and bottom - top <= 700 / 0.6


def test_big_design_wraps_racks_and_switches_into_rows(catalog):
    topo = rail_optimized(servers=256, dpu="bluefield-3", catalog=catalog).topology
    pos = layout_by_tier(topo, catalog)
    rows = {}
    for r in topo.racks():
        rows.setdefault(pos[r.id][1], []).append(r.id)
    assert len(rows) >= 4
    assert all(RACKS_PER_ROW <= len(v) <= 24 for v in list(rows.values())[:-1])
    leaf_rows = {pos[s.id][1] for s in topo.switches("leaf")}
    spine_rows = {pos[s.id][1] for s in topo.switches("spine")}
    assert len(leaf_rows) > 1 and max(spine_rows) < min(leaf_rows)
    assert max(leaf_rows) < min(rows) and max(rows) < min(pos[s.id][1] for s in topo.storage())
    boxes = _boxes(topo, pos, catalog)
    assert _overlaps(boxes) == []
    width = max(b[2] for b in boxes.values()) - min(b[0] for b in boxes.values())
    height = max(b[3] for b in boxes.values()) - min(b[1] for b in boxes.values())
    assert 0.7 < width / height < 2.0  # about the shape of a canvas window, not a strip


def test_frontend_network_is_drawn_below_the_racks_apart_from_the_compute_fabric(catalog):
    from designer.topology.templates import nvl72

    topo = nvl72(servers=8, storage="none", frontend="ethernet", catalog=catalog).topology
    pos = layout_by_tier(topo, catalog)
    front = [s for s in topo.switches() if s.props.get("frontend")]
    compute = [s for s in topo.switches() if not s.props.get("frontend")]
    assert front and compute
    rack_top = min(pos[r.id][1] - rack_size(catalog.resolve(r)["rack_units"])[1] / 2 for r in topo.racks())
    rack_bottom = max(pos[r.id][1] + rack_size(catalog.resolve(r)["rack_units"])[1] / 2 for r in topo.racks())
    assert max(pos[s.id][1] for s in compute) < rack_top
    assert min(pos[s.id][1] for s in front) > rack_bottom
    # front-end leaves (next to the racks they serve) above the front-end spines
    fl = {pos[s.id][1] for s in front if s.props["tier"] == "leaf"}
    fs = {pos[s.id][1] for s in front if s.props["tier"] == "spine"}
    assert fs and max(fl) < min(fs)
    assert _overlaps(_boxes(topo, pos, catalog)) == []
