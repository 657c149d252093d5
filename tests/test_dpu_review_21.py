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
