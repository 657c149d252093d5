"""Design rules: one breaking and one clean case per rule, with the real catalog."""

import json
from pathlib import Path

import pytest

from designer.topology.catalog import load_catalog
from designer.topology.design import Design
from designer.topology.fileformat import from_dict
from designer.topology.model import Component, Link, Topology, replace_item
from designer.topology.validation import validate

SAMPLE = Path(__file__).parent / "data" / "design_v1_sample.json"


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def pair() -> Topology:
    """Two DGX H100 in a rack, one ConnectX-7 each, one leaf, one storage appliance: all clean."""
    t = Topology()
    t.add_component(Component("rack-1", "rack", "rack-42u"))
    for i in (1, 2):
        t.add_component(Component(f"srv-{i}", "gpu_server", "dgx-h100", parent="rack-1", slot=1 + 8 * (i - 1)))
        t.add_component(Component(f"nic-{i}", "nic", "connectx-7", parent=f"srv-{i}", slot=0))
    t.add_component(Component("sw-1", "switch", "qm9700", parent="rack-1", slot=17))
    t.add_component(Component("stor-1", "storage", "generic-nvmeof-afa", parent="rack-1", slot=18))
    t.add_link(Link("link-1", "nic-1", "sw-1", speed_Gbps=400))
    t.add_link(Link("link-2", "nic-2", "sw-1", speed_Gbps=400))
    t.add_link(Link("link-3", "stor-1", "sw-1", medium="ethernet", speed_Gbps=200, lanes=8))
    return t


def codes(problems):
    return sorted({(p.code, p.component or p.link) for p in problems})


def test_clean_design_has_no_problems(catalog):
    assert validate(pair(), catalog) == []
    assert validate(Design(pair()), catalog) == []
    assert validate(from_dict(json.loads(SAMPLE.read_text())), catalog) == []


def test_unknown_model(catalog):
    t = pair()
    t.update_component("nic-2", model="connectx-77")
    (p,) = validate(t, catalog)
    assert (p.code, p.component, p.severity) == ("unknown-model", "nic-2", "error")
    assert "connectx-7" in p.hint


def test_unattached_dpu_and_nic(catalog):
    t = pair()
    t.add_component(Component("dpu-1", "dpu", "bluefield-3"))
    t.update_component("nic-1", parent=None)
    assert ("unattached", "dpu-1") in codes(validate(t, catalog))
    assert ("unattached", "nic-1") in codes(validate(t, catalog))
    t.update_component("dpu-1", parent="srv-1")
    assert ("unattached", "dpu-1") not in codes(validate(t, catalog))


def test_parent_of_the_wrong_kind(catalog):
    t = pair()
    t.update_component("nic-1", parent="sw-1")
    problems = [p for p in validate(t, catalog) if p.code == "bad-parent"]
    assert [p.component for p in problems] == ["nic-1"] and "GPU server" in problems[0].message


def test_parent_loop(catalog):
    p = pair()  # a file holding the loop (the model's edits refuse one)
    t = Topology.from_items([replace_item(c, parent="srv-1") if c.id == "rack-1" else c
                             for c in p.components.values()], list(p.links.values()))
    loops = [p for p in validate(t, catalog) if "loops" in p.message]
    assert len(loops) == 1


def test_more_cables_than_ports(catalog):
    t = pair()
    t.update_link("link-3", lanes=9)  # the appliance has 8 ports
    (p,) = validate(t, catalog)
    assert (p.code, p.component) == ("ports-exceeded", "stor-1") and "9 cables on a 8-port" in p.message
    t.update_link("link-3", lanes=8)
    t.add_link(Link("link-4", "nic-1", "sw-1"))  # ConnectX-7: one port
    assert codes(validate(t, catalog)) == [("ports-exceeded", "nic-1")]


def test_link_faster_than_a_port(catalog):
    t = pair()
    t.update_link("link-3", speed_Gbps=400)  # appliance ports are 200 Gb/s
    (p,) = validate(t, catalog)
    assert (p.code, p.component, p.link) == ("link-too-fast", "stor-1", "link-3")
    assert "200 Gb/s" in p.hint


def test_server_without_path_to_the_others(catalog):
    t = pair()
    t.remove_link("link-2")
    found = codes(validate(t, catalog))
    assert ("server-isolated", "srv-2") in found and ("no-storage-path", "srv-2") in found
    assert not any(c == "srv-1" for _, c in found)


def test_storage_nobody_reaches(catalog):
    t = pair()
    t.remove_link("link-3")
    found = codes(validate(t, catalog))
    assert ("storage-unreachable", "stor-1") in found
    assert ("no-storage-path", "srv-1") in found and ("no-storage-path", "srv-2") in found


def test_rack_height_and_slots(catalog):
    t = pair()
    t.update_component("stor-1", slot=41)  # 2U at U41-U42: fits exactly
    assert validate(t, catalog) == []
    t.update_component("stor-1", slot=42)
    assert codes(validate(t, catalog)) == [("rack-slot", "stor-1")]
    t.update_component("stor-1", slot=5)  # inside srv-1 (U1-U8)
    (p,) = validate(t, catalog)
    assert p.code == "rack-slot" and "srv-1" in p.message
    t.update_component("stor-1", slot=18)
    for i in range(3, 8):  # 5 more 8U servers: 7 x 8 + 1 + 2 = 59U > 42U
        t.add_component(Component(f"srv-{i}", "gpu_server", "dgx-h100", parent="rack-1"))
    assert ("rack-units", "rack-1") in codes(validate(t, catalog))


def test_rack_power_budget(catalog):
    # DGX H100: 4,100 W base + 8 x 700 W GPUs + 25 W ConnectX-7 = 9,725 W each (catalog figures)
    t = pair()
    t.set_prop("rack-1", "power_budget_kW", 24.0)  # 2 x 9.725 + 1.72 switch + 2.4 storage = 23.57 kW
    assert validate(t, catalog) == []
    t.set_prop("rack-1", "power_budget_kW", 23.5)
    (p,) = validate(t, catalog)
    assert (p.code, p.component) == ("rack-power", "rack-1") and "23.6 kW" in p.message


def test_duplicate_ids_in_a_file_dict(catalog):
    data = json.loads(SAMPLE.read_text())
    assert validate(data, catalog) == []
    data["links"][1]["id"] = "link-1"
    problems = validate(data, catalog)
    assert [(p.code, p.component) for p in problems] == [("duplicate-id", "link-1")]
    data["links"][1]["id"] = "link-2"
    data["links"][0]["b"] = "sw-9"
    (p,) = validate(data, catalog)
    assert p.code == "file" and "links[0].b" in p.message


def test_errors_come_before_warnings_and_print_with_hint(catalog):
    t = pair()
    t.update_link("link-3", speed_Gbps=400)
    text = str(validate(t, catalog)[0])
    assert text.startswith("error: stor-1: 400 Gb/s link") and "(fix: set the link speed" in text
