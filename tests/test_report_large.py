"""Large designs in the report: the topology picture becomes an overview (boxes and merged cables)
instead of the full canvas scene, and the cable summary is made once."""

from __future__ import annotations

import json

import pytest

from designer.paths import resources_dir
from designer.report import topology_picture as tp
from designer.topology.catalog import load_catalog
from designer.topology.fileformat import load

EXAMPLE = resources_dir() / "examples" / "example.json"


@pytest.fixture
def qt(qapp):
    return qapp


def test_overview_boxes_and_merged_cables(qt, monkeypatch):
    monkeypatch.setattr(tp, "OVERVIEW_ABOVE", 10)
    design, cat = load(EXAMPLE), load_catalog()
    ov = tp.topology_scene(design, cat)
    assert isinstance(ov, tp.Overview)
    raw = json.loads(EXAMPLE.read_text())
    racks = {c["id"] for c in raw["components"] if c["kind"] == "rack"}
    assert set(ov.boxes) == racks                        # every member of the example is racked
    # rack-4 holds the switches and the storage: coloured as the network rack
    assert ov.boxes["rack-4"][1] == "switch" and ov.boxes["rack-1"][1] == "gpu_server"
    # every cable between two racks is merged into its rack pair; within rack-4 none is drawn
    comps = {c["id"]: c for c in raw["components"]}

    def rack(cid):
        c = comps[cid]
        if c["kind"] in ("nic", "dpu"):
            c = comps[c["parent"]]
        return c["parent"]

    between = sum(l.get("lanes", 1) for l in raw["links"] if rack(l["a"]) != rack(l["b"]))
    assert sum(ov.pairs.values()) == between
    image = tp.topology_image(ov, 800, 600)
    assert image.width() == 800 and not image.isNull()


def test_small_designs_keep_the_canvas_scene(qt):
    from designer.gui.scene import DesignScene

    assert isinstance(tp.topology_scene(load(EXAMPLE), load_catalog(), DesignScene), DesignScene)
    # without a canvas (the report does not import the GUI) the picture is the overview
    assert isinstance(tp.topology_scene(load(EXAMPLE), load_catalog()), tp.Overview)


def test_report_of_an_overview_design(qt, monkeypatch, tmp_path):
    from designer.report import build

    calls = []
    real = build.cable_summary_of

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(tp, "OVERVIEW_ABOVE", 10)
    monkeypatch.setattr(build, "cable_summary_of", counting)
    info = build.build_report(load(EXAMPLE), load_catalog(), tmp_path / "r.pdf", png_dir=tmp_path / "png")
    assert info.pages > 5 and (tmp_path / "png" / "topology.png").stat().st_size > 1000
    assert len(calls) == 1                               # the document is laid out twice, cables once


def test_figures_set_in_the_design_are_grouped():
    """Thousands of switches setting the same tier are one row, not one row each."""
    from types import SimpleNamespace

    from designer.report.build import _grouped_overrides

    f = lambda name, value: SimpleNamespace(name=name, value=value)  # noqa: E731
    rows = _grouped_overrides([(f"sw-{i}", f("tier", "leaf")) for i in range(1, 5001)]
                              + [("sw-9", f("tier", "spine")), ("srv-1", f("gpu_count", 4))])
    assert rows == [("5,000 components: sw-1, sw-2 … sw-5000", "tier", "leaf"),
                    ("sw-9", "tier", "spine"), ("srv-1", "gpu_count", "4")]
