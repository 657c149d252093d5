"""Review findings on the merged DPU engine (issue 21 follow-up): each test fails without its fix.

Figures come from the catalog entries they name (models/hardware/{dpu,nic}.toml) and their
sources: BlueField-3 inline IPsec 193 Gb/s measured (strongSwan, blog.amododesign.com), the
BlueField-3/ConnectX-7 eSwitch ~90 Mpps measured (arXiv 2509.21656), ConnectX-6's 215 M
*messages* per second (product brief: no packet rate)."""

import json

import pytest

from designer.cli import main
from designer.engine import network, pipeline, resources
from designer.engine.cache import EngineCache
from designer.engine.compare import compare
from designer.errors import UsageError
from designer.topology.catalog import load_catalog
from designer.topology.design import SCENARIO_SPEC
from designer.topology.fileformat import save
from designer.topology.templates import rail_optimized

CAT = load_catalog()


@pytest.fixture(scope="module")
def small():
    return rail_optimized(servers=2)


# --- 1. one rule for the tenants' packet size --------------------------------------------------

@pytest.mark.parametrize("value, ok", [(0, True), (1, False), (10, False), (63, False), (64, True),
                                       (1500, True), (65536, True), (65537, False)])
def test_the_packet_size_rule_is_zero_or_64_to_65536(value, ok):
    assert (SCENARIO_SPEC["tenant_packet_bytes"].problem(value) is None) is ok


@pytest.mark.parametrize("value", [1, 10, 63])
def test_set_refuses_a_packet_size_the_engine_refuses(small, tmp_path, capsys, value):
    path = tmp_path / "d.json"
    save(small, path)
    code = main(["run", str(path), "--set", f"scenario.tenant_packet_bytes={value}"])
    err = capsys.readouterr().err
    assert code == 2
    assert "tenant_packet_bytes" in err and "0 or from 64 to 65536" in err
    assert "Traceback" not in err


def test_the_engine_says_the_same_rule(small):
    with pytest.raises(UsageError, match="0 or from 64 to 65536"):
        pipeline.run(small, CAT, scenario={"offload": "dpu", "tenants": 1, "tenant_packet_bytes": 10})


# --- 5. one engine cache for a comparison ------------------------------------------------------

def test_one_compare_builds_the_fabric_once(small, monkeypatch):
    built = []
    real = network.new_fabric

    def counting(*a, **k):
        built.append(1)
        return real(*a, **k)

    monkeypatch.setattr(network, "new_fabric", counting)
    compare(small, CAT)
    assert len(built) == 1
    cache = EngineCache()
    compare(small, CAT, cache=cache)
    compare(small, CAT, scenario={"encryption": True}, cache=cache)
    assert len(built) == 2  # the caller's cache: its second comparison builds nothing


# --- 6. catalog --json carries the kind of each figure the text prints -------------------------

@pytest.mark.parametrize("kind", ["dpu", "nic"])
def test_catalog_json_gives_each_limit_the_kind_the_text_prints(kind, capsys):
    assert main(["catalog", kind]) == 0
    text = capsys.readouterr().out
    assert main(["catalog", kind, "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    shown = {}  # (entry id, figure) -> kind, read from the text's limit lines
    current = None
    for line in text.splitlines():
        if line.startswith("  ") and not line.startswith("    ") and len(line.split()) == 1:
            current = line.strip()
        elif line.startswith("    ") and current:
            figure, _value, rest = line.split(None, 2)
            shown[(current, figure)] = rest.split("  ")[0].strip()
    assert shown
    for e in entries:
        for figure, k in e["kinds"].items():
            assert shown[(e["id"], figure)] == k
    bf3 = next(e for e in entries if e["id"] == "bluefield-3") if kind == "dpu" else None
    if bf3:
        assert bf3["kinds"]["eswitch_Mpps"] == "measured"
        assert bf3["kinds"]["crypto_Gbps"].startswith("measured")


# --- 2. one eSwitch demand in every mode, and it limits the reads ------------------------------

BF3_PPS = 90e6  # models/hardware/dpu.toml bluefield-3 eswitch_Mpps (measured, arXiv 2509.21656)


def _reading(scenario, **kw):
    """A server that reads 4.8 GB per 1 s iteration (samples of 4.8 MB, no collectives) as 64-byte
    tenant packets: 75 Mpps, under one 90 Mpps eSwitch."""
    cap = resources.DpuCapacity(50e9, 24e9, 0.0, eswitch_pps=BF3_PPS)
    fields = dict(count=1, scenario=scenario, isolated=True, tenant_packet_bytes=64, eswitch_pps=BF3_PPS)
    if scenario == "smartnic":
        fields["smartnic_capacity"] = cap
    if scenario == "dpu":
        fields.update(dpus=1, rail_dpus=1, rail_capacity=resources.DpuCapacity.of(
            1, 400, 193, 16, 2.0, 120, 83.2, BF3_PPS / 1e6))
    fields.update(kw)
    return resources.assess(resources.ResourceInputs(
        groups=(resources.ServerGroup(**fields),), iteration_s=1.0, samples_per_iteration=1000,
        sample_bytes=4.8e6, storage_read_GBps=1000.0))


def test_storage_read_packets_load_the_eswitch_in_every_mode():
    want = 4.8e9 / 64 / BF3_PPS  # packets/s of the reads over the packet rate
    for mode in ("host", "smartnic", "dpu"):
        g = _reading(mode).groups[0]
        # the same switch leaves the reads the same 90 Mpps x 64 B = 5.76 GB/s in every mode
        owner = {"host": "NIC", "smartnic": "SmartNIC", "dpu": "DPU"}[mode]
        assert (g.read_limit, g.read_achieved_GBps) == (f"{owner} eSwitch", pytest.approx(5.76)), mode
        assert g.dpu_utilization["eswitch"] == pytest.approx(want), mode  # host was missing


def test_an_overloaded_eswitch_limits_the_reads_and_says_so():
    # an eSwitch of 30 Mpps forwards 30e6 x 64 B = 1.92 GB/s of the 4.8 GB/s asked
    for mode in ("host", "smartnic", "dpu"):
        kw = {"eswitch_pps": 30e6}
        if mode == "smartnic":
            kw["smartnic_capacity"] = resources.DpuCapacity(50e9, 24e9, 0.0, eswitch_pps=30e6)
        if mode == "dpu":
            kw["rail_capacity"] = resources.DpuCapacity.of(1, 400, 193, 16, 2.0, 120, 83.2, 30)
        rep = _reading(mode, **kw)
        g = rep.groups[0]
        owner = {"host": "NIC", "smartnic": "SmartNIC", "dpu": "DPU"}[mode]
        assert g.read_limit == f"{owner} eSwitch", mode
        assert g.read_achieved_GBps == pytest.approx(30e6 * 64 / 1e9), mode


def test_reads_arrive_on_the_storage_adapters_switch_where_the_server_has_them():
    # two storage adapters of 90 Mpps each: the reads' 75 Mpps load them, not the rails
    g = _reading("smartnic", storage_eswitch_pps=2 * BF3_PPS).groups[0]
    assert g.dpu_utilization["eswitch"] == pytest.approx(4.8e9 / 64 / (2 * BF3_PPS))


def test_compare_gives_smartnic_and_dpu_one_eswitch_load_for_the_same_packets():
    from designer.topology.fileformat import load
    from designer.paths import resources_dir

    design = load(resources_dir() / "examples" / "example.json")
    c = compare(design, CAT, scenario={"tenants": 4, "tenant_packet_bytes": 64}, workload="unet3d-kits19")
    smart, dpu_run = c.runs["smartnic"].dpu, c.runs["dpu"].dpu
    assert smart["eswitch"] == pytest.approx(dpu_run["eswitch"])
    assert "eswitch" in c.runs["host"].dpu


# --- 4. eSwitch figures of one kind: a message rate is no packet rate --------------------------

def test_the_215_million_message_rate_is_not_an_eswitch_packet_rate():
    for kind, model in (("dpu", "bluefield-2"), ("nic", "connectx-6"), ("nic", "connectx-6-dx")):
        e = CAT.get(kind, model)
        src = CAT.source_of(kind, model, "eswitch_Mpps")
        assert e["eswitch_Mpps"] == 0, model  # not compared with a measured packet rate
        assert "215 million messages" in src and "not a packet rate" in src
    assert CAT.get("dpu", "bluefield-3")["eswitch_Mpps"] == 90


def test_the_eswitch_sentence_names_the_adapters_figure_and_source():
    from designer.engine.resources_adapter import eswitch_figure

    bf2, bf3 = eswitch_figure([CAT.get("dpu", "bluefield-2")]), eswitch_figure([CAT.get("dpu", "bluefield-3")])
    assert "bluefield-2" in bf2 and "no packet rate" in bf2 and "not found" in bf2
    assert "bluefield-3" in bf3 and "90 Mpps per adapter, measured" in bf3 and "2509.21656" in bf3
    # an over-subscribed eSwitch (the reads at 75 Mpps against 30 Mpps) says the server's figure
    figure = "my-nic eswitch_Mpps: 30 Mpps per adapter, assumed: a test figure"
    rep = _reading("smartnic", eswitch_pps=30e6, eswitch_figure=figure,
                   smartnic_capacity=resources.DpuCapacity(50e9, 24e9, 0.0, eswitch_pps=30e6))
    said = [b for b in rep.bottlenecks if "storage reads limited by SmartNIC eSwitch" in b]
    assert said and figure in said[0] and "64-byte packets" in said[0]
    assert "BlueField-3" not in said[0]
    # a group whose collectives the eSwitch slows says the same figure
    slow = resources.assess(resources.ResourceInputs(groups=(resources.ServerGroup(
        count=1, scenario="smartnic", rdma_bytes=11.52e9, comm_s=0.5, isolated=True,
        tenant_packet_bytes=64, eswitch_figure=figure,
        smartnic_capacity=resources.DpuCapacity(50e9, 24e9, 0.0, eswitch_pps=30e6)),), iteration_s=1.0))
    assert any("eswitch engine" in b for b in slow.bottlenecks)


# --- 3. one ConnectX-7 crypto engine, one figure -------------------------------------------------

def test_the_connectx7_engine_has_one_crypto_rate_as_dpu_and_as_smartnic():
    from designer.engine.resources_adapter import crypto_Gbps, smartnic_crypto_Gbps

    fraction = resources.cost_figures(CAT)["inline_crypto_fraction_of_line"]
    bf3, cx7 = CAT.get("dpu", "bluefield-3"), CAT.get("nic", "connectx-7")
    measured = bf3["crypto_Gbps"]  # 193 Gb/s, strongSwan between two BlueField-3 (the one measurement)
    assert measured == 193 and bf3["max_bandwidth_Gbps"] == cx7["max_bandwidth_Gbps"] == 400
    assert crypto_Gbps(bf3) == measured
    # the DGX ConnectX-7 has no crypto; as a SmartNIC it is the crypto-enabled OPN of the same engine
    assert cx7["crypto_Gbps"] == 0
    assert smartnic_crypto_Gbps(cx7, fraction) == pytest.approx(measured, rel=1e-12)  # was 198
    assert smartnic_crypto_Gbps(CAT.get("nic", "connectx-7-crypto"), fraction) == measured


def test_scenario_problems_names_each_setting_that_breaks_its_rule():
    from designer.topology.design import SCENARIO_DEFAULTS, scenario_problems

    assert scenario_problems(dict(SCENARIO_DEFAULTS)) == []
    found = scenario_problems({**SCENARIO_DEFAULTS, "tenant_packet_bytes": 10, "unknown_key": 1})
    assert [name for name, _ in found] == ["tenant_packet_bytes"]
    assert "0 or from 64 to 65536" in found[0][1] and "got 10" in found[0][1]


def test_a_design_file_with_a_packet_size_in_the_gap_is_refused_by_validate(tmp_path, capsys):
    """tenant_packet_bytes 1-63 is refused where the file is read (validate, run, the app's open),
    with the setting's own words, as --set and the engine refuse it."""
    import json

    from designer import cli
    from designer.paths import resources_dir

    d = json.loads((resources_dir() / "examples" / "example.json").read_text())
    d["scenario"]["tenant_packet_bytes"] = 10
    f = tmp_path / "p10.json"
    f.write_text(json.dumps(d))
    assert cli.main(["validate", str(f)]) == 2
    err = capsys.readouterr().err
    assert "scenario.tenant_packet_bytes" in err and "0 or from 64 to 65536" in err
    d["scenario"]["tenant_packet_bytes"] = 64
    f.write_text(json.dumps(d))
    assert cli.main(["validate", str(f)]) == 0
