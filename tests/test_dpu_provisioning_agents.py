"""Provisioning and infrastructure-management agents (issue 21 / #25): a scenario switch, costed on
the host's cores where the host runs them and on the DPU's Arm cores where a DPU does, shown per
task in both places. The expected figures are built from the catalog figures they derive from."""

import tomllib

import pytest

from designer.engine import pipeline
from designer.engine.dpu import DpuCapacity
from designer.engine.resources import ResourceInputs, ServerGroup, assess, cost_figures
from designer.paths import models_dir
from designer.topology.catalog import load_catalog
from designer.topology.design import SCENARIO_SPEC
from designer.topology.templates import rail_optimized

FIG = cost_figures()
CAT = load_catalog()


def _cost(name):
    with open(models_dir() / "costs" / "host_cpu.toml", "rb") as f:
        return tomllib.load(f)[name]


def test_the_switch_is_off_by_default_and_its_cost_says_it_is_assumed():
    spec = SCENARIO_SPEC["provisioning_agents"]
    assert spec.type is bool and spec.default is False
    entry = _cost("provisioning_agent_cores")
    assert entry["source"].startswith("assumed")
    assert FIG["provisioning_agent_cores"] == entry["value"] > 0


def _group(scenario, **kw):
    # BlueField-3-like DPUs: 2 per server, 16 Arm cores at 2.0 GHz, the 120 Gb/s Arm kernel path
    cap = DpuCapacity.of(2, 400, 193, 16, 2.0, arm_path_Gbps=120)
    return ServerGroup(gpus=8, cpu_cores=112, cpu_GHz=3.0, scenario=scenario, dpus=2,
                       dpu_arm_cores=16, dpu_arm_GHz=2.0, rail_capacity=cap,
                       rdma=True, rdma_bytes=1e9, comm_s=0.1, **kw)


def _run(scenario, **kw):
    return assess(ResourceInputs(groups=(_group(scenario, **kw),), iteration_s=1.0), FIG)


def test_on_the_host_the_agents_keep_their_cores_busy_the_whole_iteration():
    r = _run("host", provisioning_agents=True)
    # half a core of 112 for the whole (longer) iteration: 0.5 / 112 of the host's cycles
    assert r.host_cpu.by_task["provisioning"] == pytest.approx(FIG["provisioning_agent_cores"] / 112)
    assert r.groups[0].host_by_task["provisioning"] == FIG["provisioning_agent_cores"]
    assert r.arm_by_task == {} and "arm_by_task" not in r.to_dict()


def test_a_run_without_the_switch_reports_no_provisioning_task():
    r = _run("host")
    assert "provisioning" not in r.host_cpu.by_task and "provisioning" not in r.groups[0].host_by_task


def test_on_a_dpu_the_same_work_runs_on_the_arm_cores():
    off = _run("dpu")
    on = _run("dpu", provisioning_agents=True)
    assert on.host_cpu.by_task.get("provisioning", 0.0) == 0.0
    # the Arm kernel path's cycles per byte at its 1500-byte frames: 2 x 16 x 2.0 GHz over
    # 2 x 120 Gb/s; the same work takes that / 0.65 x86 cycles per byte as many Arm cycles
    arm_cpb = (2 * 16 * 2.0e9) / (2 * 120e9 / 8)
    arm_hz = FIG["provisioning_agent_cores"] * 3.0e9 * arm_cpb / FIG["tcp_cycles_per_byte"]
    assert on.arm_by_task["provisioning"] == pytest.approx(arm_hz / 2.0e9)
    assert on.to_dict()["arm_by_task"] == on.arm_by_task
    # and loads the Arm engine of the DPUs by that many of their 2 x 16 x 2.0 GHz cycles
    assert on.dpu["arm"] - off.dpu.get("arm", 0.0) == pytest.approx(arm_hz / (2 * 16 * 2.0e9))


def test_compare_shows_the_task_on_the_host_and_on_the_arm_cores(capsys):
    from designer.commands.compare import format_table
    from designer.engine.compare import compare
    design = rail_optimized(servers=4, dpu="bluefield-3")
    cmp = compare(design, CAT, scenario={"provisioning_agents": True}, workload="llama3-8b",
                  global_batch=32)
    host, dpu = cmp.runs["host"], cmp.runs["dpu"]
    assert host.host_cpu["by_task"]["provisioning"] > 0
    assert dpu.host_cpu["by_task"].get("provisioning", 0.0) == 0.0
    assert dpu.resources["arm_by_task"]["provisioning"] > 0
    text = format_table(cmp)
    assert "  provisioning on Arm" in text and "  provisioning " in text
    assert "provisioning and infrastructure-management agents" in cmp.vendor_claim()["verdict"]
    # the cost is an assumption and the notes say so, with the figure and where the DPU puts it
    note = next(n for n in cmp.notes if n.startswith("provisioning_agents:"))
    assert f"{FIG['provisioning_agent_cores']:g} host cores per server (ASSUMED" in note
    assert "DPU's Arm cores" in note


def test_a_pipeline_run_without_it_keeps_its_result_keys():
    design = rail_optimized(servers=4, dpu="bluefield-3")
    r = pipeline.run(design, CAT, scenario={"offload": "dpu"}, workload="llama3-8b", global_batch=32)
    assert "arm_by_task" not in r.resources


def test_the_power_note_gives_each_adapters_maximum_and_typical_with_their_kinds():
    from designer.engine.compare import compare
    from designer.topology.catalog import figure_kind
    design = rail_optimized(servers=4, dpu="bluefield-3")
    cmp = compare(design, CAT, workload="llama3-8b", global_batch=32)
    note = next(n for n in cmp.notes if n.startswith("energy counts adapter maxima"))
    bf3 = CAT.get("dpu", "bluefield-3")
    kind = figure_kind(CAT.source_of("dpu", "bluefield-3", "power_W"))
    typical = figure_kind(CAT.source_of("dpu", "bluefield-3", "typical_power_W"))
    assert f"bluefield-3 (maximum {bf3['power_W']:g} W, {kind}; typical {typical})" in note
    assert typical == "not found" and kind == "assumed"
