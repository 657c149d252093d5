"""Fuzzing the engine with random valid designs and workloads: it never raises, and the physical
invariants hold. Impossible designs give a UsageError that names the cause.

Designs: a random template (leaf-spine, fat-tree, rail-optimized) with 2..64 servers, with or without
DPUs, random server model and oversubscription. Workloads: a catalog preset with tp/pp/dp and the
batch adjusted to fit the design; a random scenario. Default mode: fixed examples (``derandomize``);
``--run-slow``: many more.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from designer.engine.pipeline import run
from designer.engine.result import BREAKDOWN_KEYS
from designer.engine.workload import gpu_peak_tflops
from designer.errors import UsageError
from designer.topology.catalog import load_catalog
from designer.topology.templates import fat_tree, leaf_spine, rail_optimized

CATALOG = load_catalog()
#: CI mode: no shrinking, so that a failure costs no more time than a pass (the cases print as
#: template options and overrides, readable without it); the long mode shrinks
FAST = settings(max_examples=150, derandomize=True, deadline=None, database=None,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
LONG = settings(max_examples=3000, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

TRANSFORMERS = [w["id"] for w in CATALOG.workloads() if w.get("kind", "transformer") != "vision"]
VISION = [w["id"] for w in CATALOG.workloads() if w.get("kind") == "vision"]
SERVERS = [e["id"] for e in CATALOG.entries("server")]


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


TEMPLATES = {"leaf-spine": leaf_spine, "fat-tree": fat_tree, "rail-optimized": rail_optimized}


@st.composite
def designs(draw):
    """(template name, options): shown as such when an example fails."""
    servers = draw(st.integers(2, 64))
    options = dict(server=draw(st.sampled_from(SERVERS)), dpu=draw(st.sampled_from(["", "bluefield-2", "bluefield-3"])),
                   gpus_per_server=draw(st.sampled_from([0, 0, 1, 2, 4, 8])))
    kind = draw(st.sampled_from(sorted(TEMPLATES)))
    oversub = draw(st.sampled_from([1.0, 1.5, 2.0, 4.0]))
    storage = draw(st.sampled_from(["separate", "converged", "none"]))
    if kind == "leaf-spine":
        options.update(servers=servers, oversubscription=oversub, storage=storage)
    elif kind == "fat-tree":
        options.update(k=draw(st.sampled_from([2, 4])), storage=draw(st.sampled_from(["separate", "none"])))
    else:
        options.update(servers=servers, oversubscription=oversub, su_size=draw(st.sampled_from([4, 8, 32])),
                       storage=storage if servers <= 32 else "separate")
    return kind, options


def _build(kind: str, options: dict):
    return TEMPLATES[kind](catalog=CATALOG, **options)


def _gpus(design) -> tuple[int, int, str]:
    """Total GPUs, GPUs of the smallest server, GPU model of the first server."""
    figures = [CATALOG.resolve(s) for s in design.topology.servers()]
    counts = [int(f["gpu_count"]) for f in figures]
    return sum(counts), min(counts), figures[0]["gpu_model"]


@st.composite
def workloads(draw, total: int, per_server: int, gpu: str):
    """Overrides for ``run``: a preset, then tp | heads (within a server), pp | layers, dp, a global
    batch that dp x micro-batch divides, and the preset's interleave where pp leaves it possible."""
    vision = [v for v in VISION if CATALOG.workload(v).get("samples_per_s_" + gpu.replace("-", "_"))]
    if vision and draw(st.integers(0, 5)) == 0:
        dp = draw(st.integers(1, total))
        return {"workload": draw(st.sampled_from(vision)), "tp": 1, "pp": 1, "dp": dp,
                "micro_batch": 1, "global_batch": dp * draw(st.integers(1, 64))}
    preset = CATALOG.workload(draw(st.sampled_from(TRANSFORMERS)))
    tp = draw(st.sampled_from([d for d in _divisors(preset["heads"]) if d <= per_server
                               and preset["hidden"] % preset["heads"] == 0]))
    pp = draw(st.sampled_from([d for d in _divisors(preset["layers"]) if tp * d <= total]))
    dp = draw(st.integers(1, total // (tp * pp)))
    micro = draw(st.sampled_from([1, 2]))
    interleave = int(preset.get("interleave") or 1)
    return {"workload": preset["id"], "tp": tp, "pp": pp, "dp": dp, "micro_batch": micro,
            "global_batch": dp * micro * draw(st.integers(1, 32)),
            "interleave": interleave if preset["layers"] % (pp * interleave) == 0 else 1}


SCENARIOS = st.fixed_dictionaries({
    "offload": st.sampled_from(["host", "dpu"]), "routing": st.sampled_from(["ecmp", "adaptive"]),
    "encryption": st.booleans(), "tenants": st.integers(1, 4), "tenant_placement": st.sampled_from(["packed", "scattered"]),
    "checkpoint_interval_s": st.sampled_from([600.0, 3600.0, 86400.0])})


def _check_invariants(template, overrides, scenario, seed) -> None:
    design = _build(*template)
    try:
        result = run(design, CATALOG, scenario=scenario, seed=seed, **overrides)
    except UsageError as exc:
        # the one refusal a generated case may get: samples to read, and no storage to read them from
        assert not design.topology.storage() and "storage" in str(exc), exc
        return
    w = result.workload
    it = result.iteration_time_s
    assert math.isfinite(it) and it > 0
    assert set(result.breakdown_s) == set(BREAKDOWN_KEYS)
    assert all(math.isfinite(v) and v >= 0 for v in result.breakdown_s.values()), result.breakdown_s
    assert sum(result.breakdown_s.values()) == pytest.approx(it, rel=1e-6)
    assert all(0.0 <= l.utilization <= 1.0 for l in result.links), [l for l in result.links if l.utilization > 1]
    assert all(math.isfinite(c.time_s) and c.time_s >= 0 for c in result.collectives)
    cpu = result.host_cpu
    shares = [cpu["infra_fraction"], cpu["training_fraction"], *cpu["by_task"].values()]
    assert all(0.0 <= f <= 1.0 for f in shares), cpu
    # a DPU engine's figure is its offered load (demand / capacity): above 1 means over-subscribed
    assert all(math.isfinite(v) and v >= 0 for v in result.dpu.values()), result.dpu
    total, _, gpu = _gpus(design)
    assert result.gpus == w["tp"] * w["pp"] * w["dp"] <= total
    peak = gpu_peak_tflops(CATALOG.get("gpu", gpu), w["precision"])
    assert 0 <= result.tflops_per_gpu <= peak and 0 <= result.mfu <= 1
    if w["kind"] == "transformer":
        assert result.tflops_per_gpu > 0
        # no training run beats every GPU at its peak on the 6·N·D model FLOPs (Kaplan et al. 2020;
        # N = the parameters a token passes: a mixture of experts counts its active ones)
        lower_s = 6 * active_parameters(result) * w["tokens"] / (result.gpus * peak * 1e12)
        assert result.training_time_days * 86400 >= lower_s * (1 - 1e-9)
    json.dumps(result.to_json(), allow_nan=False)
    again = run(design, CATALOG, scenario=scenario, seed=seed, **overrides)
    assert again.to_json() == result.to_json()  # deterministic for a seed


def active_parameters(result) -> float:
    """The parameters one token passes: all of them for a dense model; for a mixture of experts the
    routed experts count top_k / experts of their weights (Jiang et al., "Mixtral of Experts",
    arXiv 2401.04088: 13B active of 47B)."""
    from dataclasses import fields

    from designer.engine.workload import Workload, expert_parameters

    w = result.workload
    if not w.get("experts"):
        return result.parameters
    names = {f.name for f in fields(Workload)}
    routed = expert_parameters(Workload(**{k: v for k, v in w.items() if k in names}))
    return result.parameters - routed * (1 - w["top_k"] / w["experts"])


def test_active_parameters_of_mixtral_match_the_paper():
    """Mixtral 8x7B shapes (arXiv 2401.04088, Table 1): 46.7B parameters, 12.9B active per token."""
    from types import SimpleNamespace

    from designer.engine.workload import Workload, parameters

    shape = dict(kind="transformer", layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14336,
                 vocab=32000, seq_len=4096, experts=8, top_k=2, moe_ffn_hidden=14336, global_batch=8,
                 micro_batch=1)
    result = SimpleNamespace(workload=shape, parameters=parameters(Workload(**shape)))
    assert result.parameters / 1e9 == pytest.approx(46.7, abs=0.05)
    assert active_parameters(result) / 1e9 == pytest.approx(12.9, abs=0.05)


@st.composite
def cases(draw):
    template = draw(designs())
    design = _build(*template)
    total, per_server, gpu = _gpus(design)
    scenario = draw(SCENARIOS)
    servers = len(design.topology.servers())
    scenario["tenants"] = min(scenario["tenants"], servers)
    job = servers // scenario["tenants"] * per_server
    return template, draw(workloads(job, per_server, gpu)), scenario, draw(st.integers(0, 2**16))


def _check_case(case):
    _check_invariants(*case)


test_random_designs_keep_the_invariants = FAST(given(cases())(_check_case))
test_random_designs_keep_the_invariants_long = pytest.mark.slow(LONG(given(cases())(_check_case)))

_SCENARIO = {"offload": "host", "routing": "ecmp", "encryption": False, "tenants": 1,
             "checkpoint_interval_s": 600.0}


@pytest.mark.parametrize("template, overrides", [
    # a pipeline group spanning two servers whose stage-to-stage sends stay inside the servers:
    # ValueError "no algorithm can run sendrecv on this group (no network path?)"
    (("leaf-spine", {"server": "hgx-h200", "servers": 2, "storage": "separate"}),
     {"workload": "gpt3-175b", "tp": 1, "pp": 6, "dp": 2, "micro_batch": 1, "global_batch": 2}),
    (("leaf-spine", {"server": "hgx-h200", "servers": 2, "storage": "separate"}),
     {"workload": "gpt3-175b", "tp": 2, "pp": 8, "dp": 1, "micro_batch": 1, "global_batch": 1}),
    # TP groups of 6 on 8-GPU servers, one of them across two servers:
    # ValueError "no algorithm can run allreduce on this group (no network path?)"
    (("leaf-spine", {"server": "dgx-h100", "servers": 2}),
     {"workload": "megatron-gpt-145.6b", "tp": 6, "pp": 1, "dp": 2, "micro_batch": 1, "global_batch": 2,
      "interleave": 1}),
    # a vision workload that reads samples, on a design without storage: iteration time NaN
    # (data_stall inf, straggler nan); a UsageError naming the missing storage would do as well
    (("leaf-spine", {"server": "dgx-a100", "servers": 2, "storage": "none"}),
     {"workload": "resnet50-imagenet", "tp": 1, "pp": 1, "dp": 1, "micro_batch": 1, "global_batch": 1}),
    # link utilization 1.0000000000000007 (the engine caps at 1 + 1e-9, the contract says 0..1)
    (("leaf-spine", {"server": "hgx-h200", "servers": 8, "storage": "converged"}),
     {"workload": "llama3-8b", "tp": 1, "pp": 32, "dp": 2, "micro_batch": 1, "global_batch": 2}),
], ids=["pp-inside-servers-6", "pp-inside-servers-8", "tp-across-servers", "vision-without-storage",
        "utilization-above-1"])
def test_inputs_found_by_fuzzing(template, overrides):
    _check_invariants(template, overrides, _SCENARIO, 0)


# ----------------------------------------------------------------------------- impossible designs
def _small():
    design = leaf_spine(servers=4, catalog=CATALOG)
    design.workload = {"preset": "llama3-8b"}
    return design


def _unlinked_server():
    design = _small()
    topo = design.topology
    for dev in topo.attached(topo.servers()[0].id):
        for link in topo.links_of(dev.id):
            topo.remove_link(link.id)
    return design


def _no_servers():
    design = _small()
    design.topology.clear()
    return design


@pytest.mark.parametrize("make, overrides, cause", [
    (_unlinked_server, {}, "has no network link"),
    (_small, {"tp": 8, "pp": 4, "dp": 4}, "tp x pp x dp = 128 GPUs, but the design has only 32"),
    (_small, {"tp": 64, "pp": 1}, "needs more GPUs than the design has"),
    (_no_servers, {}, "no GPU server"),
    (_small, {"workload": "no-such-model"}, "no workload 'no-such-model'"),
], ids=["unlinked-server", "more-ranks-than-gpus", "tp-too-big",
        "no-servers", "unknown-workload"])
def test_impossible_designs_name_the_cause(make, overrides, cause):
    with pytest.raises(UsageError, match=cause):
        run(make(), CATALOG, **overrides)


@pytest.mark.parametrize("field, value", [("speed_Gbps", 0.0), ("lanes", 0)])
def test_zero_capacity_link_is_named(field, value):
    """The model accepts such a link (the file loader does not); the engine must say which it is."""
    design = _small()
    topo = design.topology
    link = topo.links_of(topo.attached(topo.servers()[0].id)[0].id)[0].id
    topo.update_link(link, **{field: value})
    with pytest.raises(UsageError, match=link):
        run(design, CATALOG)


@pytest.mark.parametrize("workload, cause", [
    ({"preset": "llama3-8b", "recompute": "yes"}, "recompute"),
    ({"preset": "llama3-8b", "tokens": -1.0}, "tokens"),
    ({"preset": "llama3-8b", "tflops_per_gpu": 5000.0}, "tflops_per_gpu"),
    ({"preset": "llama3-8b", "bytes_per_sample": -5.0}, "bytes_per_sample"),
], ids=["recompute-not-bool", "negative-tokens", "tflops-above-peak", "negative-bytes"])
def test_impossible_workload_values_name_the_field(workload, cause):
    design = _small()
    design.workload = workload
    with pytest.raises(UsageError, match=cause):
        run(design, CATALOG)


def test_unknown_server_model_is_a_usage_error():
    design = _small()
    design.topology.update_component(design.topology.servers()[0].id, model="no-such-server")
    with pytest.raises(UsageError, match="no-such-server"):
        run(design, CATALOG)


def _split_fabric():
    """Two compute leaves whose spines are gone: servers under one leaf cannot reach the other."""
    design = leaf_spine(servers=8, storage="none", catalog=CATALOG)
    design.workload = {"preset": "llama3-8b"}
    for spine in design.topology.switches("spine"):
        design.topology.remove_component(spine.id)
    return design


def _storage_cut_off():
    """Storage exists, but one server has lost its storage-network link (a DGX A100 has no
    storage DPU: the separate storage fabric reaches its on-board port, the server itself)."""
    design = leaf_spine(servers=4, server="dgx-a100", catalog=CATALOG)
    design.workload = {"preset": "resnet50-imagenet", "tp": 1, "pp": 1, "dp": 32, "global_batch": 32}
    topo = design.topology
    for link in topo.links_of(topo.servers()[1].id):
        topo.remove_link(link.id)
    return design


@pytest.mark.parametrize("make, overrides, scenario, cause", [
    (_split_fabric, {}, {}, r"dp traffic from '\S+' to '\S+' has no network path"),
    (_storage_cut_off, {}, {}, r"server '\S+' has no network path to a storage system"),
    (_small, {}, {"tenants": 0}, "tenants must be a whole number of at least 1, got 0"),
    (_small, {"tp": 1e300}, {}, r"'tp' = 1e\+300 is beyond any cluster"),
], ids=["no-path-between-servers", "server-without-storage-path", "zero-tenants", "huge-tp"])
def test_more_impossible_inputs_name_the_cause(make, overrides, scenario, cause):
    with pytest.raises(UsageError, match=cause) as info:
        run(make(), CATALOG, scenario=scenario, **overrides)
    assert len(str(info.value)) < 300  # one readable line, not a 300-digit number


@pytest.mark.parametrize("storage", ["separate", "converged"])
def test_training_traffic_stays_off_the_storage_fabric(storage):
    """A separate storage fabric's DPUs carry storage reads only; the GPUs' rails are the compute
    NICs (one per GPU on an HGX H200). On a converged fabric every adapter does both."""
    from designer.engine.placement import servers_of

    design = leaf_spine(servers=2, server="hgx-h200", storage=storage, catalog=CATALOG)
    topo = design.topology
    for info in servers_of(design, CATALOG):
        kinds = {c.id: c.kind for c in topo.attached(info.id)}
        if storage == "separate":
            assert [kinds[e] for e in info.rails] == ["nic"] * 8
            assert info.storage_ports and all(kinds[e] == "dpu" for e in info.storage_ports)
        else:
            assert info.rails == info.storage_ports and len(info.rails) == 8
        assert info.storage_targets == tuple(s.id for s in topo.storage())
