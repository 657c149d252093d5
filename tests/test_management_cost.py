"""Issue 25, the management plane in the bill: its switches, copper cables by length class and their
power and rack units are counted, priced on lines of their own, and added up in one "management
network" line that ``cost``, its JSON, the report and the app print alike."""

import json

import pytest

from designer.cli import main
from designer.services import cost
from designer.services.bom import bill_of_materials
from designer.services.cabling import summary_of
from designer.topology import fileformat
from designer.topology.catalog import load_catalog
from designer.topology.management import management_ids
from designer.topology.templates import leaf_spine

CAT = load_catalog()


@pytest.fixture(scope="module")
def design():
    return leaf_spine(servers=16, management="oob")


def test_the_bom_counts_management_switches_power_and_rack_units_on_rows_of_their_own(design):
    bom = bill_of_materials(design, CAT)
    rows = [r for r in bom.rows if r.network == "management"]
    assert {r.model: r.count for r in rows} == {"sn2201": 4, "sn2700": 1}
    assert {r.label for r in rows} == {"Management switch"}
    assert sum(r.power_kW for r in rows) == pytest.approx((4 * 100 + 250) / 1000)
    assert sum(r.rack_U for r in rows) == 5
    plain = bill_of_materials(leaf_spine(servers=16), CAT)
    assert bom.power_kW - plain.power_kW == pytest.approx(0.65)
    assert bom.rack_U - plain.rack_U == 5


def test_management_cables_are_1gbe_copper_by_length_class_and_the_split_adds_up(design):
    every = summary_of(design, CAT)
    mgmt, rest = summary_of(design, CAT, "management"), summary_of(design, CAT, "traffic")
    assert mgmt.total_cables + rest.total_cables == every.total_cables
    rj45 = {k: n for k, n in mgmt.cables.items() if k[0] == "RJ45"}
    assert sum(rj45.values()) == 16 + 32  # 16 BMC ports and 32 BlueField-3 OOB ports
    assert {k[1] for k in rj45} == {1.0} and all(k[3] > 0 for k in rj45)  # 1 Gb/s, a length class
    assert summary_of(leaf_spine(servers=16), CAT) == rest  # the other cables are those of the plain design


def test_the_management_network_line_is_the_sum_of_the_bills_management_lines(design):
    bill = cost.bill(design, CAT)
    assert bill.capex_USD == pytest.approx(sum(l.total_USD for l in bill.lines if l.total_USD is not None))
    mine = [l for l in bill.lines if l.category in cost.MANAGEMENT_CATEGORIES]
    net = cost.management_network(design, CAT, bill)
    assert net.capex_USD == pytest.approx(sum(l.total_USD for l in mine)) and net.capex_USD > 0
    assert net.switches == len(management_ids(design.topology)) == 5
    assert net.ports == 48 and net.cables["RJ45"] == 48
    assert net.text().startswith("management network: 5 switches, 56 cables (")
    assert "48 BMC/OOB ports, 0.65 kW nameplate, 5 U, $" in net.text()
    # without a management network: no Management lines, and the line says so
    plain = leaf_spine(servers=16)
    assert not [l for l in cost.bill(plain, CAT).lines if l.category.startswith("Management")]
    assert "none drawn" in cost.management_network(plain, CAT, cost.bill(plain, CAT)).text()


def test_cost_prints_the_management_network_line_and_its_json(tmp_path, capsys, design):
    path = tmp_path / "d.json"
    fileformat.save(design, path)
    args = ["cost", str(path), "--workload", "llama3-8b", "--tp", "8", "--pp", "1"]
    assert main(args) == 0
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.startswith("management network:"))
    assert main(args + ["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["management_network"]["text"] == line
    assert data["management_network"]["switches"] == 5
    assert "Management switches sn2201" in out and "Management cables RJ45" in out


def test_the_report_prints_the_same_management_network_line(qapp, tmp_path):
    import re
    import unicodedata

    from pypdf import PdfReader

    from designer.report.build import build_report

    d = leaf_spine(servers=4, storage="none", management="oob")
    d.workload = {"preset": "llama3-8b", "tp": 8, "pp": 1, "global_batch": 32}
    info = build_report(d, CAT, tmp_path / "r.pdf", date="2026-12-04")
    text = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", " ".join(
        p.extract_text() for p in PdfReader(str(info.pdf)).pages)))
    line = cost.management_network(d, CAT, cost.bill(d, CAT)).text()
    assert "M" + line[1:] in text


def test_the_planners_bill_lists_management_switches_and_rj45_cables(design):
    from designer.services.bom import planner_rows

    rows = planner_rows(design, CAT, bill_of_materials(design, CAT), summary_of(design, CAT))
    mgmt = {r["model"]: r["count"] for r in rows if r["category"] == "Management switches"}
    assert mgmt == {"sn2201": 4, "sn2700": 1}
    rj45 = [r for r in rows if r["category"] == "Cables" and r["model"] == "RJ45"]
    assert sum(r["count"] for r in rj45) == 48 and {r["speed_Gbps"] for r in rj45} == {"1"}
    assert all("1GbE management" in r["name"] for r in rj45)
