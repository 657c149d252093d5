"""The Engine VI parts wired through the pipeline (issue 22): the NVLink generation from the
catalog, the hidden time per dimension in the Result, Megatron-Core's rank order for Megatron
recipes and expert-parallel groups kept inside an NVL72 rack's NVLink domain."""

from __future__ import annotations

import json

import pytest

from designer.commands.run import format_table
from designer.engine import network as net
from designer.engine import pipeline, plan
from designer.engine.placement import (MEGATRON_CORE_ORDER, parse_order, place, servers_of,
                                       workload_order)
from designer.engine.workload import Workload
from designer.errors import UsageError
from designer.topology.catalog import load_catalog
from designer.topology.templates import nvl72, rail_optimized

from engine_fixtures import single_server

CAT = load_catalog()


# ---------------------------------------------------------------- 1. NVLink generation
@pytest.mark.parametrize("server, gen", [("hgx-b200", 5), ("dgx-h100", 4), ("dgx-a100", 3)])
def test_the_shape_carries_the_catalog_nvlink_generation(server, gen):
    shape = pipeline.group_shape_for(single_server(server), CAT)
    assert shape.nvlink_gen == gen and shape.generation == gen


class _SlowB200Catalog:
    """The catalog with B200's NVLink rate below NVLink 4's (as a design override might give):
    the generation must still be 5, not guessed from the rate."""

    def __init__(self, cat):
        self._cat = cat

    def get(self, kind, model):
        fig = self._cat.get(kind, model)
        return {**fig, "nvlink_GBps": 400.0} if kind == "gpu" and model == "b200" else fig

    def __getattr__(self, name):
        return getattr(self._cat, name)


def test_a_slow_nvlink_5_keeps_its_generation_in_run_and_plan():
    cat = _SlowB200Catalog(CAT)
    design = single_server("hgx-b200")
    shape = pipeline.group_shape_for(design, cat)
    assert shape.nvlink_GBps == 400.0 and shape.generation == 5  # 0 when inferred from the rate
    assert shape.nvls_cap_algbw(8) < float("inf")  # the NVLink 5 measured ceiling applies
    servers = servers_of(design, cat, net.fabric_of(design.topology))
    pl = place(Workload(tp=1, pp=1, dp=8, global_batch=8), servers)
    est = plan._shape_of(pl, "dp", 8, servers[0], 0.0, False)
    assert est.generation == 5 and est.nvlink_gen == 5


# ---------------------------------------------------------------- 2. hidden time per dimension
def _overlapped(**switches):
    design = rail_optimized(servers=8, catalog=CAT)
    design.workload = {"preset": "gpt3-175b", **switches}
    return design, pipeline.run(design, CAT, tp=8, pp=4)


def test_hidden_plus_exposed_is_each_dimensions_communication():
    design, r = _overlapped(tp_comm_overlap=True, pp_overlap=True, dp_overlap=True)
    assert set(r.hidden_s) == {"tp", "pp", "cp", "ep", "dp"}
    assert r.hidden_s["tp"] > 0 and r.hidden_s["pp"] > 0 and r.hidden_s["dp"] > 0
    exposed = {"tp": "tp_comm", "pp": "pp_comm", "dp": "dp_exposed"}
    for dim, part in exposed.items():
        total = sum(c.time_s * c.calls_per_iteration for c in r.collectives if c.name.startswith(dim))
        assert r.breakdown_s[part] + r.hidden_s[dim] == pytest.approx(total, rel=1e-9), dim
    data = json.loads(r.json_text())
    assert data["hidden_s"] == pytest.approx(r.hidden_s)
    line = next(l for l in format_table(r, design).splitlines() if "hidden by overlap" in l)
    assert f"tp {r.hidden_s['tp']:.3f} s" in line and f"dp {r.hidden_s['dp']:.3f} s" in line
    assert "cp " not in line  # nothing hidden, not printed


def test_with_the_overlaps_off_nothing_is_hidden_and_no_line_is_printed():
    design, r = _overlapped(tp_comm_overlap=False, pp_overlap=False, dp_overlap=False)
    assert r.hidden_s["tp"] == 0 and r.hidden_s["pp"] == 0
    on = _overlapped(tp_comm_overlap=True, pp_overlap=False, dp_overlap=False)[1]
    assert on.breakdown_s["tp_comm"] + on.hidden_s["tp"] == pytest.approx(r.breakdown_s["tp_comm"], rel=1e-9)
    if not any(r.hidden_s.values()):
        assert "hidden by overlap" not in format_table(r, design)


# ---------------------------------------------------------------- 3. Megatron-Core rank order
#: presets whose layout is a Megatron recipe (name, source or layout sources name Megatron-LM,
#: Megatron-Core or NeMo) and get tp-cp-ep-dp-pp; Llama 3 (Meta's own order, [TP, CP, PP, DP]),
#: DeepSeek-V3 (HAI-LLM) and the MLPerf Storage vision workloads keep tp,pp,dp
MEGATRON_PRESETS = {"gpt3-175b", "mixtral-8x7b", "megatron-gpt-1.7b", "megatron-gpt-3.6b",
                    "megatron-gpt-7.5b", "megatron-gpt-18.4b", "megatron-gpt-39.1b", "megatron-gpt-76.1b",
                    "megatron-gpt-145.6b", "megatron-gpt-310.1b", "megatron-gpt-529.6b", "megatron-gpt-1t"}


def test_which_presets_get_megatron_cores_order():
    ids = [e["id"] for e in CAT.workloads()]
    got = {i for i in ids if workload_order(CAT.workload(i)) == MEGATRON_CORE_ORDER}
    assert got == MEGATRON_PRESETS
    assert {"llama3-8b", "llama3-405b", "deepseek-v3", "resnet50-imagenet"} <= set(ids) - got


def test_megatron_core_order_places_as_tp_dp_pp_with_cp_and_ep_inside_dp():
    assert parse_order(MEGATRON_CORE_ORDER) == ("tp", "dp", "pp")
    assert parse_order("tp-ep-dp-pp") == ("tp", "dp", "pp")
    for bad in ("ep-tp-dp-pp", "tp-ep-cp-dp-pp", "tp-cp-dp-ep-pp", "tp-dp-dp-pp"):
        with pytest.raises(UsageError, match="placement order"):
            parse_order(bad)


def test_mixtral_keeps_its_expert_groups_on_one_server_under_megatrons_order():
    design = rail_optimized(servers=8, catalog=CAT)
    design.workload = {"preset": "mixtral-8x7b"}
    r = pipeline.run(design, CAT)
    assert r.placement["order"] == "tp,dp,pp"
    ep = next(c for c in r.collectives if c.name == "ep_alltoall")
    assert ep.servers == 1  # EP 8 = 8 consecutive ranks of one DGX's NVLink
    old = pipeline.run(design, CAT, placement="tp,pp,dp")  # the order before: EP strided by pp
    assert next(c for c in old.collectives if c.name == "ep_alltoall").servers == 4
    assert r.breakdown_s["ep_comm"] < old.breakdown_s["ep_comm"]


def test_a_presets_own_placement_is_honoured(monkeypatch):
    orig = CAT.workload
    monkeypatch.setattr(CAT, "workload", lambda i: {**orig(i), "placement": "tp,dp,pp"} if i == "llama3-8b"
                        else orig(i))
    design = rail_optimized(servers=4, catalog=CAT)
    design.workload = {"preset": "llama3-8b"}
    assert pipeline.run(design, CAT, tp=2, pp=2).placement["order"] == "tp,dp,pp"
    monkeypatch.undo()
    assert pipeline.run(design, CAT, tp=2, pp=2).placement["order"] == "tp,pp,dp"  # not a Megatron recipe


def test_a_workload_without_a_preset_keeps_tp_pp_dp():
    design = rail_optimized(servers=4, catalog=CAT)
    design.workload = {k: v for k, v in CAT.workload("megatron-gpt-18.4b").items()
                       if k not in ("source", "name", "sources", "id")}
    assert pipeline.run(design, CAT).placement["order"] == "tp,pp,dp"


# ---------------------------------------------------------------- 4. EP inside NVL72 domains
def _nvl72_moe(within):
    design = nvl72(servers=2, catalog=CAT)  # 2 GB200 NVL72 racks, 144 GPUs
    design.workload = {"preset": "mixtral-8x7b", "experts": 16, "ep_within_domain": within}
    return pipeline.run(design, CAT, tp=1, pp=1, ep=16, global_batch=1152)


def test_ep_within_domain_leaves_the_rack_edge_gpus_idle():
    split = _nvl72_moe(False)
    kept = _nvl72_moe(True)
    a2a = [next(c for c in r.collectives if c.name == "ep_alltoall") for r in (split, kept)]
    assert split.gpus == 144 and a2a[0].servers == 2  # 72 = 4.5 groups of 16: one crosses racks
    assert kept.gpus == 128 and kept.workload["dp"] == 128 and a2a[1].servers == 1
    assert any("16 of the job's 144 GPUs stay idle" in w and "64 of 72" in w for w in kept.warnings)
    assert kept.breakdown_s["ep_comm"] < split.breakdown_s["ep_comm"]


def test_ep_within_domain_is_refused_when_a_group_cannot_fit_a_domain():
    design = nvl72(servers=2, catalog=CAT)
    design.workload = {"preset": "mixtral-8x7b", "experts": 16, "ep_within_domain": True}
    with pytest.raises(UsageError, match="larger than the 72 GPUs"):
        pipeline.run(design, CAT, tp=1, pp=8, ep=16, interleave=1, global_batch=1152, placement="tp,pp,dp")
    design.workload["ep_within_domain"] = "yes"
    with pytest.raises(UsageError, match="'ep_within_domain' must be true or false"):
        pipeline.run(design, CAT, tp=1, pp=1, ep=16, global_batch=1152)


def test_plan_fits_an_ep_within_domain_layout_to_the_gpus_it_leaves():
    from designer.engine.cache import EngineCache
    from designer.engine.workload import from_dict

    design = nvl72(servers=2, catalog=CAT)
    design.workload = {"preset": "mixtral-8x7b", "experts": 16, "global_batch": 1152, "gpus": 144,
                       "ep_within_domain": True}
    sp = plan._space(design, CAT, EngineCache())
    lay = {"tp": 1, "pp": 1, "dp": 144, "ep": 16, "micro_batch": 1, "interleave": 1, "recompute": False}
    w = from_dict({**sp.base, **lay}, sp.job_gpus, gpu=sp.gpu)
    fitted, w2 = plan._fit_domains(sp, lay, w)
    assert fitted["dp"] == 128 and w2.gpus == 128  # 64 of each rack's 72 GPUs
    assert plan._fit_domains(sp, {**lay, "ep": 8}, from_dict({**sp.base, **lay, "ep": 8}, sp.job_gpus,
                                                               gpu=sp.gpu))[1].gpus == 144  # 72 = 9 x 8
    with pytest.raises(UsageError, match="dp 128.*not a multiple"):
        plan._fit_domains(sp, {**lay, "micro_batch": 2}, from_dict({**sp.base, **lay, "micro_batch": 2},
                                                                     sp.job_gpus, gpu=sp.gpu))
