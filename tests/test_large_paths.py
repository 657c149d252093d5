"""The fast paths a 250k-component design takes through the canvas (issue #14) give what the
general ones give: a new document's cables made at once end where one-by-one placement puts them,
their rails are each cable's own rail, the cable layer draws segments straight from its array with
the pixels of a list of QLineFs, and the bundles are those of the cables."""

import numpy as np
import pytest
from PySide6.QtCore import QLineF, QPointF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPen

from designer.gui.cables import Cable, draw_segments
from designer.gui.items import anchor
from designer.gui.scene import DesignScene
from designer.topology.catalog import load_catalog
from designer.topology.model import Link
from designer.topology.templates import rail_optimized


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _scene(design, catalog, lazy: bool) -> DesignScene:
    scene = DesignScene(catalog, lazy_badges=lazy)
    scene.set_design(design)
    return scene


def _placed(scene: DesignScene, link) -> tuple[float, float, float, float]:
    """Where :meth:`DesignScene._place_link` (an edit's path) puts a cable's ends."""
    ra, rb = scene._body_rect(link.a), scene._body_rect(link.b)
    p, q = anchor(ra, rb.center()), anchor(rb, ra.center())
    return (p.x(), p.y(), q.x(), q.y())


@pytest.mark.parametrize("lazy", [True, False])
def test_a_new_documents_cables_end_where_placing_them_one_by_one_puts_them(qapp, catalog, lazy):
    design = rail_optimized(servers=32, dpu="bluefield-3", storage="none", catalog=catalog)
    scene = _scene(design, catalog, lazy)
    assert (scene.lazy_badge_count() > 0) == lazy
    links = design.topology.links
    assert set(scene.link_items) == set(links)
    for lid, cable in scene.link_items.items():
        assert cable.ends == _placed(scene, links[lid]), lid
        line = cable.line
        assert (line.x1(), line.y1(), line.x2(), line.y2()) == cable.ends


def test_the_rails_given_at_once_are_each_cables_own_rail(qapp, catalog):
    design = rail_optimized(servers=64, storage="none", catalog=catalog)
    scene = _scene(design, catalog, lazy=True)
    assert len(scene.rails) == 8  # a DGX H100's eight compute NICs, one rail each
    kinds = {c.rail is None for c in scene.link_items.values()}
    assert kinds == {False} or kinds == {False, True}
    for cable in scene.link_items.values():
        assert cable.rail == scene._rail(cable.link), cable.lid


def test_setting_a_line_replaces_the_ends_the_layer_watches():
    cable = Cable(Link("l1", "a", "b"))
    assert cable.ends == (0.0, 0.0, 0.0, 0.0)
    before = cable.ends
    cable.line = QLineF(1.0, 2.0, 3.0, 4.5)
    assert cable.ends == (1.0, 2.0, 3.0, 4.5) and cable.ends is not before
    assert Cable(Link("l2", "a", "b"), ends=(5.0, 6.0, 7.0, 8.0)).line == QLineF(5, 6, 7, 8)


@pytest.mark.parametrize("antialiased", [False, True])
def test_segments_drawn_from_an_array_have_the_pixels_of_a_list_of_lines(qapp, antialiased):
    rng = np.random.default_rng(7)
    xy = rng.uniform(-20, 320, size=(3000, 4))
    rows = np.sort(rng.choice(len(xy), 1200, replace=False))  # a subset, as a pen's group

    def picture(draw) -> QImage:
        image = QImage(300, 300, QImage.Format_ARGB32_Premultiplied)
        image.fill(Qt.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.Antialiasing, antialiased)
        painter.setPen(QPen(QColor("#117733"), 1.5))
        draw(painter)
        painter.end()
        return image

    expected = picture(lambda p: p.drawLines([QLineF(*r) for r in xy[rows].tolist()]))
    got = picture(lambda p: draw_segments(p, xy[rows]))
    assert got == expected
    assert picture(lambda p: draw_segments(p, xy[:0])) == picture(lambda p: None)


def test_bundles_count_every_cable_between_two_groups_once(qapp, catalog):
    design = rail_optimized(servers=64, storage="none", catalog=catalog)
    scene = _scene(design, catalog, lazy=True)
    bundles = scene.bundles()
    assert bundles is not None
    counted: dict[frozenset, int] = {}
    for cable in scene.link_items.values():
        ga, gb = scene.group_of(cable.link.a), scene.group_of(cable.link.b)
        if ga != gb:
            key = frozenset((ga, gb))
            counted[key] = counted.get(key, 0) + 1
    assert {frozenset((b.a, b.b)): b.count for b in bundles} == counted


def test_the_cable_summary_counted_with_arrays_is_the_summary_of_every_cable(catalog):
    """Racks and free-standing boxes (placed by tier), multi-lane links, NVLink (not cabled),
    several speeds: the same counts as summarising each cable (``cabling.cables``)."""
    from designer.topology.model import replace_item as replace

    from designer.services import cabling
    from designer.topology.templates import fat_tree, leaf_spine, nvl72

    designs = [leaf_spine(servers=8, catalog=catalog), fat_tree(k=4, catalog=catalog),
               nvl72(servers=2, catalog=catalog),
               rail_optimized(servers=32, dpu="bluefield-3", catalog=catalog)]
    multi = rail_optimized(servers=32, storage="none", catalog=catalog)
    topo = multi.topology
    for n, lid in enumerate(list(topo.links)[::7]):  # every 7th link a bundle of 2 to 4 lanes
        topo.links[lid] = replace(topo.links[lid], lanes=2 + n % 3)
    for c in list(topo.components.values())[::5]:  # some boxes without a canvas position
        if c.parent is None:
            topo.components[c.id] = replace(c, pos=None)
    designs.append(multi)
    for design in designs:
        want = cabling.summarize(cabling.cables(design, catalog))
        got = cabling.summary_of(design, catalog)
        assert got == want
        assert list(got.cables) == list(want.cables)  # the tables' order too
    assert any(k[0] != "DAC" for k in got.cables)  # lengths that reach past copper were counted


def test_the_reports_results_keep_every_figure_and_the_busiest_links_in_order(catalog):
    """``build.result_json``: ``Result.to_json()`` but for the links, which are the busiest
    BUSIEST_LINKS of a stable sort of all of them (none and non-finite as idle)."""
    from dataclasses import replace

    from designer.engine import pipeline
    from designer.engine.result import LinkResults
    from designer.report import build
    from designer.topology.fileformat import load

    from designer.paths import resources_dir

    run = pipeline.run(load(resources_dir() / "examples" / "example.json"), catalog)
    util = np.array([0.5, np.nan, 0.9, -0.0, 0.9, np.inf, 0.0, 0.2, 0.5, 0.9, 0.1, 0.3, 0.5, 0.05])
    ids = [f"l{n}" for n in range(len(util))]
    run = replace(run, links=LinkResults(ids, util, ["fwd" if n % 2 else "bwd" for n in range(len(util))]))
    full = run.to_json()
    got = build.result_json(run)
    assert {k: v for k, v in got.items() if k != "links"} == {k: v for k, v in full.items() if k != "links"}
    want = sorted(full["links"], key=lambda l: -(l["utilization"] or 0))[:build.BUSIEST_LINKS]
    assert got["links"] == want
    assert [l["id"] for l in got["links"][:4]] == ["l2", "l4", "l9", "l0"]  # ties in link order
    as_list = replace(run, links=list(run.links))  # links given as objects: the same
    assert build.result_json(as_list)["links"] == want


def test_compare_notes_of_alike_servers_grouped_are_those_of_every_server(catalog):
    """``compare.server_layouts``: notes worked out per group of alike servers, counts times the
    group's size, say what looking at every server says (servers with and without DPUs, a NIC
    and a server with figures of their own, counts that differ per layout)."""
    from designer.topology.model import replace_item as replace

    from designer.engine import compare

    design = rail_optimized(servers=24, dpu="bluefield-3", storage="none", catalog=catalog)
    topo = design.topology
    servers = topo.servers()
    for srv in servers[:5]:  # five servers with NICs instead: priced as DPUs in the DPU run
        for c in topo.attached(srv.id):
            topo.remove_component(c.id)
            topo.add_component(replace(c, kind="nic", model="connectx-7"))
    nic = next(c for c in topo.attached(servers[3].id) if c.kind == "nic")
    topo.set_prop(nic.id, "max_bandwidth_Gbps", 200.0)
    topo.set_prop(servers[9].id, "power_W", 9000.0)
    layouts = compare.server_layouts(design)
    assert sum(n for _, _, n in layouts) == len(servers) and 3 <= len(layouts) < len(servers)
    each = [(s, topo.attached(s.id), 1) for s in topo.servers()]
    for notes in (compare._nic_notes, compare._smartnic_notes, compare._assumption_notes):
        assert notes(design, catalog, layouts) == notes(design, catalog, each)
    notes = compare._nic_notes(design, catalog)
    assert any("of the 39 connectx-7 NICs" in n for n in notes), notes  # 5 servers x 8, one apart
    assert any("each of the 152 bluefield-3" in n for n in notes), notes  # 19 servers x 8


def test_the_overviews_merged_cables_are_the_lanes_counted_link_by_link(catalog):
    """``topology_picture.merged_cables``: per pair of boxes (ids in order), the lanes of the
    links between them, in the order the pairs first come; links inside one box left out."""
    from collections import Counter
    from designer.topology.model import replace_item as replace

    from designer.report.topology_picture import Overview

    design = rail_optimized(servers=64, dpu="bluefield-3", catalog=catalog)
    topo = design.topology
    for n, lid in enumerate(list(topo.links)[::9]):
        topo.links[lid] = replace(topo.links[lid], lanes=1 + n % 4)
    picture = Overview(design, catalog)
    comps = topo.components

    def box(cid: str) -> str:
        c = comps[cid]
        if c.kind in ("nic", "dpu") and c.parent in comps:
            c = comps[c.parent]
        return c.parent if c.parent in comps and comps[c.parent].kind == "rack" else c.id

    want: Counter = Counter()
    for link in topo.links.values():
        a, b = box(link.a), box(link.b)
        if a != b and a in picture.boxes and b in picture.boxes:
            want[(a, b) if a < b else (b, a)] += max(1, int(link.lanes))
    assert picture.pairs == want and list(picture.pairs) == list(want)
    assert len(want) > 10 and max(want.values()) > 1


def test_the_status_counts_every_servers_gpus_overrides_too(qtbot, catalog, tmp_path, monkeypatch):
    """The status bar's GPU count: each server's catalog figure, looked up once per model, and a
    server's own ``gpu_count`` where it sets one."""
    from designer.gui.mainwindow import MainWindow

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    design = rail_optimized(servers=16, storage="none", catalog=catalog)  # DGX H100: 8 GPUs each
    design.topology.set_prop(design.topology.servers()[3].id, "gpu_count", 4)
    window = MainWindow(design)
    qtbot.addWidget(window)
    assert "16 servers · 124 GPUs" in window._counts.text()  # 15 x 8 + 4
    window.autosaver.discard()
