"""dpu-designer export: cabling plan, planner BOM, rack elevation; the cable rules of the LinkX guides."""

from __future__ import annotations

import csv
import json
import os
from collections import Counter

import pytest

from designer.cli import main
from designer.paths import resources_dir
from designer.services import cabling
from designer.topology.catalog import load_catalog
from designer.topology.fileformat import load

EXAMPLE = resources_dir() / "examples" / "example.json"
RAW = json.loads(EXAMPLE.read_text())


@pytest.mark.parametrize("speed, length, expect", [
    # NVIDIA LinkX 100G-PAM4 overview: DAC reach up to 3 m at 400/800G; multimode 50 m maximum
    (400, 3.0, "DAC"), (400, 3.01, "SR"), (400, 50.0, "SR"), (800, 50.01, "DR"),
    # structured cabling requirements: MPO single-mode straight up to 500 m, LC single-mode to 2,000 m
    (400, 500.0, "DR"), (400, 500.5, "FR"), (400, 2000.0, "FR"), (400, 2000.5, "too long"),
    # cable management FAQ: DAC 2-5 m by rate; AOCs from 3 m to about 100 m
    (200, 3.0, "DAC"), (200, 3.5, "AOC"), (200, 100.0, "AOC"), (200, 100.5, "DR"),
    (100, 5.0, "DAC"), (100, 5.5, "AOC"),
])
def test_cable_type_by_length_class(speed, length, expect):
    assert cabling.cable_type(speed, length) == expect


def test_length_classes_round_up_to_orderable_lengths():
    assert [cabling.length_class(x) for x in (0.2, 1.0, 1.01, 2.6, 3.2, 7.5, 49, 2500)] == \
        [0.5, 1.0, 1.5, 3.0, 5.0, 10.0, 50.0, 2000.0]


def test_run_length_geometry():
    """In one rack: the U distance (1U = 44.45 mm, EIA-310) plus 0.5 m; between racks: the floor
    distance plus the climb from each device to its rack top and 0.5 m into the tray."""
    a = cabling.Place(0.0, 0.0, "r1", 1, 42)
    b = cabling.Place(0.0, 0.0, "r1", 11, 42)
    assert cabling.run_length_m(a, b) == pytest.approx(10 * 0.04445 + 0.5)
    c = cabling.Place(1.2, 2.4, "r2", 42, 42)
    assert cabling.run_length_m(a, c) == pytest.approx(1.2 + 2.4 + (41 * 0.04445 + 0.5) + 0.5)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("export")
    out = {k: folder / n for k, n in (("cabling", "cab.csv"), ("bom", "bom.csv"), ("elevation", "rack.svg"))}
    assert main(["export", str(EXAMPLE), "--cabling", str(out["cabling"]), "--bom", str(out["bom"]),
                 "--elevation", str(out["elevation"])]) == 0
    return out


def test_cabling_plan_has_one_row_per_cable_and_unique_ports(exported):
    rows = list(csv.DictReader(exported["cabling"].open()))
    lanes = sum(int(l.get("lanes", 1)) for l in RAW["links"] if l.get("medium") not in ("nvlink", "pcie"))
    assert len(rows) == lanes
    ends = Counter()
    for r in rows:
        ends[(r["from"], r["from_port"])] += 1
        ends[(r["to"], r["to_port"])] += 1
        assert r["type"] in cabling.TYPES and float(r["length_class_m"]) >= float(r["estimated_length_m"])
    assert max(ends.values()) == 1                        # no port carries two cables
    # a DPU in rack-1 and a leaf switch in rack-4: both racked, so the ends name their racks and U
    first = rows[0]
    assert first["from_rack"] == "rack-1" and first["to_rack"] == "rack-4" and first["to_U"]


def test_bom_counts_match_the_design(exported):
    rows = list(csv.DictReader(exported["bom"].open()))
    by = Counter()
    for r in rows:
        by[r["category"]] += int(r["count"])
    kinds = Counter(c["kind"] for c in RAW["components"])
    assert by["GPU servers"] == kinds["gpu_server"]
    assert by["DPUs"] == kinds["dpu"] and by["Switches"] == kinds["switch"]
    assert by["Storage"] == kinds["storage"] and by["Racks"] == kinds["rack"]
    plan = list(csv.DictReader(exported["cabling"].open()))
    assert by["Cables"] == len(plan)
    assert by["Transceivers"] == 2 * sum(1 for r in plan if r["type"] in cabling.OPTICS)


def test_prices_come_from_a_user_catalog(tmp_path, monkeypatch):
    from designer.services.bom import bill_of_materials, planner_rows

    (tmp_path / "switch.toml").write_text(
        '[[entry]]\nid = "qm9700"\nname = "QM9700"\nports = 64\nport_speed_Gbps = 400\n'
        'medium = "infiniband"\npower_W = 1720\nrack_units_used = 1\nprice_USD = 30000\n')
    cat = load_catalog(extra_dirs=[tmp_path])
    assert cat.problems == []
    design = load(EXAMPLE)
    rows = planner_rows(design, cat, bill_of_materials(design, cat), cabling.summarize(cabling.cables(design, cat)))
    sw = next(r for r in rows if r["category"] == "Switches")
    assert sw["unit_price_USD"] == "30000.00" and sw["total_price_USD"] == f"{30000 * sw['count']:.2f}"
    assert next(r for r in rows if r["category"] == "GPU servers")["unit_price_USD"] == ""


def test_elevation_svg_names_every_rack_and_member(exported):
    svg = exported["elevation"].read_text()
    assert svg.lstrip().startswith("<?xml") and "</svg>" in svg
    for c in RAW["components"]:
        if c["kind"] == "rack" or (c.get("parent", "").startswith("rack-")):
            assert c["id"] in svg, c["id"]


def test_elevation_png_and_rack_choice(tmp_path, capsys):
    out = tmp_path / "r.png"
    assert main(["export", str(EXAMPLE), "--elevation", str(out), "--racks", "rack-4"]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "1 racks" in capsys.readouterr().out
    assert main(["export", str(EXAMPLE), "--elevation", str(out), "--racks", "rack-9"]) == 2
    err = capsys.readouterr().err
    assert "no rack 'rack-9'" in err and err.count("\n") == 1


@pytest.mark.parametrize("argv, words", [
    ([], "at least one of"),
    (["--bom", "x.txt"], "name the file .csv"),
    (["--elevation", "x.jpg"], ".svg or .png"),
    (["--bom", "same.csv", "--cabling", "same.csv"], "the same file"),
])
def test_bad_export_options_are_one_line(argv, words, tmp_path, capsys):
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main(["export", str(EXAMPLE), *argv]) == 2
    finally:
        os.chdir(cwd)
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


def test_report_bom_page_lists_cables(tmp_path):
    """The PDF's bill of materials includes the cables and optics summary."""
    pypdf = pytest.importorskip("pypdf")
    out = tmp_path / "r.pdf"
    assert main(["report", str(EXAMPLE), "-o", str(out)]) == 0
    text = " ".join(p.extract_text() for p in pypdf.PdfReader(str(out)).pages)
    text = " ".join(text.split())
    assert "Cables and optics" in text and "Transceivers" in text


def test_fast_summary_equals_the_summary_of_every_cable():
    from designer.topology.templates import rail_optimized

    cat = load_catalog()
    for design in (load(EXAMPLE), rail_optimized(servers=64, dpu="bluefield-3", catalog=cat)):
        assert cabling.summary_of(design, cat) == cabling.summarize(cabling.cables(design, cat))


def test_elevation_of_too_many_racks_asks_for_a_choice(tmp_path, monkeypatch, capsys):
    from designer.commands import export

    monkeypatch.setattr(export, "MAX_ELEVATION_RACKS", 3)
    assert main(["export", str(EXAMPLE), "--elevation", str(tmp_path / "r.svg")]) == 2
    err = capsys.readouterr().err
    assert "4 racks are more than one picture shows (3)" in err and "--racks rack-1,rack-2" in err
    assert main(["export", str(EXAMPLE), "--elevation", str(tmp_path / "r.svg"), "--racks", "rack-1,rack-2"]) == 0


def test_transceivers_are_split_by_switch_and_adapter_ends(exported):
    plan = list(csv.DictReader(exported["cabling"].open()))
    ends = Counter()
    for r in plan:
        if r["type"] in cabling.OPTICS:
            for kind in (r["from_kind"], r["to_kind"]):
                ends["switch" if kind == "switch" else "adapter"] += 1
    bom = [r for r in csv.DictReader(exported["bom"].open()) if r["category"] == "Transceivers"]
    got = Counter()
    for r in bom:
        got["switch" if "switch ports" in r["name"] else "adapter"] += int(r["count"])
    assert got == ends and ends["switch"] > 0 and ends["adapter"] > 0
