"""Issue 21, fair power: adapters carry a typical power beside their maximum (``typical_power_W``,
0 = not given), the scenario's ``adapter_power`` chooses which one the energy counts (auto: typical
where every adapter has one, else maxima), and compare shows both."""

import re
from pathlib import Path

import pytest

from designer.commands.compare import format_table
from designer.engine import resources
from designer.engine.compare import compare
from designer.engine.resources import ResourceInputs, ServerGroup, adapter_power_basis
from designer.paths import models_dir
from designer.topology.catalog import figure_kind, load_catalog
from designer.topology.design import SCENARIO_SPEC
from designer.topology.templates import rail_optimized

CAT = load_catalog()
KW = dict(workload="llama3-8b", global_batch=64)


def test_the_basis_follows_the_setting_and_auto_needs_every_adapter():
    assert adapter_power_basis("auto", 4, ()) == "typical"
    assert adapter_power_basis("auto", 4, ("connectx-7",)) == "max"
    assert adapter_power_basis("auto", 0, ()) == "max"  # no adapter: nothing to choose
    assert adapter_power_basis("typical", 4, ("connectx-7",)) == "typical"
    assert adapter_power_basis("max", 4, ()) == "max"
    with pytest.raises(ValueError, match="auto, typical or max"):
        adapter_power_basis("mean", 4, ())
    assert SCENARIO_SPEC["adapter_power"].choices == ("auto", "typical", "max")
    assert SCENARIO_SPEC["adapter_power"].default == "auto"


def _energy(setting, typical, missing=()):
    g = ServerGroup(count=3, gpus=8, gpu_power_W=700.0, base_power_W=2500.0, adapters_power_W=1200.0,
                    adapters_typical_power_W=typical, adapters_without_typical=missing)
    return resources.assess(ResourceInputs(groups=(g,), iteration_s=2.0, iterations=1000,
                                           switch_power_W=500.0, adapter_power=setting)).energy


def test_energy_counts_typical_power_where_chosen_and_keeps_both_figures():
    typ = _energy("auto", 480.0)
    mx = _energy("max", 480.0)
    assert typ.adapter_power == "typical" and mx.adapter_power == "max"
    assert typ.power_W["adapters"] == 3 * 480.0 and mx.power_W["adapters"] == 3 * 1200.0
    for e in (typ, mx):  # both figures reported whichever is counted
        assert e.adapters_max_W == 3 * 1200.0 and e.adapters_typical_W == 3 * 480.0
    # the total and the energy follow the counted adapter power: kWh = W x s / 3.6e6
    base = 3 * 8 * 700.0 + 3 * 2500.0 + 500.0
    assert typ.power_W["total"] == pytest.approx(base + 3 * 480.0)
    # kWh = W x s / 3.6e6 over the same iteration in both, times the run's iterations
    it_s = typ.iteration_kWh * 3.6e6 / typ.power_W["total"]
    assert mx.iteration_kWh * 3.6e6 / mx.power_W["total"] == pytest.approx(it_s)
    assert typ.run_kWh == pytest.approx(1000 * typ.iteration_kWh)
    assert mx.run_kWh - typ.run_kWh == pytest.approx(3 * (1200.0 - 480.0) * it_s * 1000 / 3.6e6)


def test_an_adapter_without_a_typical_figure_keeps_the_maxima_under_auto():
    part = _energy("auto", 900.0, ("connectx-7",))  # some adapters had one, one model had none
    assert part.adapter_power == "max" and part.power_W["adapters"] == 3 * 1200.0
    assert part.adapters_without_typical == ("connectx-7",)
    # asked for typical: typical where given (the sum already holds the maximum of the others)
    assert _energy("typical", 900.0, ("connectx-7",)).power_W["adapters"] == 3 * 900.0


def test_packaged_adapters_carry_a_sourced_typical_figure_or_say_where_none_was_found():
    # a typical figure is a vendor "typical power" row or a measurement, never above the maximum;
    # 0 says "not found" and names where it was searched
    for kind in ("nic", "dpu"):
        for e in CAT.entries(kind):
            src = CAT.source_of(kind, e["id"], "typical_power_W")
            if e["typical_power_W"]:
                assert figure_kind(src) in ("datasheet", "measured"), (e["id"], src)
                assert 0 < e["typical_power_W"] <= e["power_W"], e["id"]
            else:
                assert figure_kind(src) == "not found" and "searched" in src, (e["id"], src)
    # ConnectX-7 MCX75310AAS-NEAT: the user manual's "Typical power with passive cables in PCIe
    # Gen 5.0 x16" row (issue 21); no BlueField part has one
    cx7 = CAT.get("nic", "connectx-7")
    assert cx7["typical_power_W"] == 24.9 and "MCX75310AAS-NEAT" in cx7["name"]
    assert "Typical power with passive cables" in CAT.source_of("nic", "connectx-7", "typical_power_W")
    assert all(e["typical_power_W"] == 0 for e in CAT.entries("dpu"))


def test_a_design_of_packaged_parts_counts_maxima_while_a_mode_lacks_a_typical_figure():
    d = rail_optimized(servers=2, dpu="bluefield-3")
    c = compare(d, CAT, **KW)
    cx7 = CAT.get("nic", "connectx-7")
    for r in c.runs.values():
        e = r.resources["energy"]
        assert e["adapter_power"] == "max"  # the BlueField-3 has no typical figure
        assert r.power_W["adapters"] == e["adapters_max_W"]
    # 20 BlueField-3 at their 150 W maximum; the host run prices them as ConnectX-7 at 25 W,
    # whose 24.9 W typical figure is shown beside it, not counted
    assert c.modes["dpu"]["adapters_W"] == 20 * 150.0 and c.modes["host"]["adapters_W"] == 20 * 25.0
    assert c.modes["host"]["adapters_typical_W"] == pytest.approx(20 * cx7["typical_power_W"])
    assert c.modes["dpu"]["adapters_typical_W"] == c.modes["dpu"]["adapters_max_W"]
    # the note names the adapter without a typical figure, with its maximum and the kinds
    assert any("adapter maxima" in n and "bluefield-3 (maximum 150 W, assumed; typical not found)" in n
               and "connectx-7 (" not in n for n in c.notes)
    table = format_table(c)
    assert re.search(r"adapter power \(kW, typical\)\s+0\.50\s+0\.50\s+-", table), table
    assert "cluster power (kW, max)" in table


def test_a_run_of_connectx_7_adapters_alone_counts_their_typical_power():
    # the plain run of a SmartNIC design: every adapter is a ConnectX-7 with a typical figure, so
    # auto counts 24.9 W each instead of the 25 W maximum
    d = rail_optimized(servers=2)
    r = compare(d, CAT, **KW).runs["host"]
    e = r.resources["energy"]
    n = round(e["adapters_max_W"] / 25.0)
    assert n > 0 and e["adapters_max_W"] == pytest.approx(n * 25.0)
    assert e["adapter_power"] == "max"  # compare: the DPU mode has none, so every mode counts maxima
    from designer.engine import pipeline
    run = pipeline.run(d, CAT, **KW)
    en = run.resources["energy"]
    assert en["adapter_power"] == "typical" and not en["adapters_without_typical"]
    assert run.power_W["adapters"] == pytest.approx(n * 24.9) == en["adapters_typical_W"]
    assert en["adapters_max_W"] == pytest.approx(n * 25.0)


def _typical_catalog(tmp_path: Path, watts: dict[str, float]):
    """The packaged NIC and DPU files with ``typical_power_W`` set for some models, as a user
    catalog (its entries replace the packaged ones)."""
    for kind in ("nic", "dpu"):
        text = (models_dir() / "hardware" / f"{kind}.toml").read_text()
        parts = re.split(r"(?m)^(?=\[\[entry\]\])", text)
        for i, part in enumerate(parts):
            m = re.search(r'(?m)^id = "([^"]+)"', part)
            if m and m.group(1) in watts:
                part = re.sub(r"(?m)^typical_power_W = [0-9.]+$", f"typical_power_W = {watts[m.group(1)]}",
                              part)
                src = "measured: test figure" if watts[m.group(1)] else "not found: searched nowhere, test"
                parts[i] = re.sub(r'(?m)^typical_power_W = ".*"$', f'typical_power_W = "{src}"', part)
        (tmp_path / f"{kind}.toml").write_text(f'kind = "{kind}"\n' + "".join(parts))
    return load_catalog([tmp_path])


def test_typical_power_where_every_adapter_of_every_mode_has_one(tmp_path):
    cat = _typical_catalog(tmp_path, {"bluefield-3": 60.0, "connectx-7": 15.0})
    d = rail_optimized(servers=2, dpu="bluefield-3")
    c = compare(d, cat, **KW)
    assert {r.resources["energy"]["adapter_power"] for r in c.runs.values()} == {"typical"}
    assert c.modes["dpu"]["adapters_W"] == 20 * 60.0 and c.modes["host"]["adapters_W"] == 20 * 15.0
    assert c.modes["dpu"]["adapters_max_W"] == 20 * 150.0
    # the energy delta shrinks by exactly the adapters' watts saved, over the training time
    mx = compare(d, cat, scenario={"adapter_power": "max"}, **KW)
    secs = 86400 * c.runs["dpu"].training_time_days
    saved = (20 * (150.0 - 60.0)) * secs / 3.6e6
    assert mx.runs["dpu"].energy_kwh - c.runs["dpu"].energy_kwh == pytest.approx(saved, rel=1e-9)
    assert any("typical adapter power" in n for n in c.notes)
    table = format_table(c)
    assert "cluster power (kW, typical)" in table
    assert re.search(r"adapter power \(kW, typical\)\s+0\.30\s+0\.30\s+1\.20", table)


def test_auto_falls_back_to_maxima_in_every_mode_when_one_mode_lacks_a_figure(tmp_path):
    # only the DPU has a typical figure: its run alone would count 60 W beside ConnectX-7 maxima
    cat = _typical_catalog(tmp_path, {"bluefield-3": 60.0, "connectx-7": 0})
    d = rail_optimized(servers=2, dpu="bluefield-3")
    c = compare(d, cat, **KW)
    assert {r.resources["energy"]["adapter_power"] for r in c.runs.values()} == {"max"}
    assert c.modes["dpu"]["adapters_W"] == 20 * 150.0
    assert c.modes["dpu"]["adapters_typical_W"] == 20 * 60.0  # still shown
    assert any("adapter maxima" in n and "adapter_power=auto" in n and "connectx-7" in n
               for n in c.notes)
