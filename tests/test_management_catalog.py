"""Issue 25, the management plane: the catalog's management switch, aggregation switch, server BMC
ports and DPU OOB ports, each figure with its kind (datasheet / assumed / derived) and source, and
their prices."""

from designer.services.cabling import RJ45_MAX_M, cable_type
from designer.services.cost import PriceBook
from designer.topology.catalog import figure_kind, load_catalog

CAT = load_catalog()


def _kind(kind, model, field):
    return figure_kind(CAT.source_of(kind, model, field))


def test_the_management_switch_is_48_x_1gbe_with_4_x_100g_uplinks_in_1u():
    sw = CAT.get("switch", "sn2201")
    assert (sw["ports"], sw["port_speed_Gbps"], sw["uplink_ports"], sw["uplink_speed_Gbps"],
            sw["rack_units_used"], sw["medium"]) == (48, 1, 4, 100, 1, "ethernet")
    assert _kind("switch", "sn2201", "ports") == "datasheet"
    assert _kind("switch", "sn2201", "power_W") == "assumed"
    agg = CAT.get("switch", "sn2700")
    assert (agg["ports"], agg["port_speed_Gbps"]) == (32, 100)


def test_bluefield_dpus_have_one_oob_port_and_servers_their_bmc_ports():
    for model in ("bluefield-2", "bluefield-3"):
        assert CAT.get("dpu", model)["oob_ports"] == 1
        assert _kind("dpu", model, "oob_ports") == "datasheet"
    assert _kind("dpu", "bluefield-4", "oob_ports") == "assumed"
    assert CAT.get("server", "dgx-h100")["bmc_ports"] == 1
    assert _kind("server", "dgx-h100", "bmc_ports") == "datasheet"
    # an NVL72 rack cables its trays to its own OOB switches (in its price and height)
    assert CAT.get("server", "gb200-nvl72")["bmc_ports"] == 0
    # a NIC has no management port of its own
    assert "oob_ports" not in CAT.get("nic", "connectx-7")


def test_management_parts_and_their_copper_cable_are_priced_with_a_source():
    book = PriceBook(CAT)
    for model in ("sn2201", "sn2700"):
        p = book.part("switch", model)
        assert p.USD and p.USD > 0 and p.basis == "assumed" and p.source and p.date
    cable = book.cable("RJ45")
    assert cable.USD and cable.source.startswith("assumed")


def test_1gbe_links_are_twisted_pair_up_to_100_m_and_faster_ones_keep_their_types():
    assert cable_type(1, 3.0) == "RJ45" and cable_type(1, RJ45_MAX_M) == "RJ45"
    assert cable_type(1, RJ45_MAX_M + 1) == "too long"
    assert cable_type(100, 3.0) == "DAC" and cable_type(400, 20.0) == "SR"
